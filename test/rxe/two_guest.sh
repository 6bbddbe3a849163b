#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs inside each VM of test/rxe/two_vms.sh (as run.sh -g), chrooted
# into the host's read-only root like guest.sh. QPIO_VM_ROLE is a (the
# sender, 10.0.78.1) or b (the listener, 10.0.78.2); QPIO_VM_MAC names
# the VM's virtio NIC, whose only link is the other VM's NIC. rxe0 is
# made on that NIC, so RoCEv2 crosses between the two kernels. Writes the
# status to /tmp/out/rc: 0 every step passed, 1 a step failed. After the
# steps of two_vms_guest.py, VM a deletes rxe0 and its address and runs
# qpio alone on the NIC (a soft wire device through net_af_packet)
# against VM b's rxe0: qpio-rping to rping -s, qpio-perf --perftest -R to
# ib_send_bw -R and ib_write_lat -R.
set -u
. /tmp/out/env
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp
rc=0
t0=$(date +%s)
step() { echo "== vm-$QPIO_VM_ROLE [$(( $(date +%s) - t0 ))s] $*"; }
fail() { echo "== vm-$QPIO_VM_ROLE: FAIL: $*"; rc=1; }
finish() { step "done, status $rc"; echo "$rc" > /tmp/out/rc; sync; exit 0; }
# verdict OK WHAT LOG WHO [SHOW]: OK 1 prints "ok: WHAT" and the lines of
# LOG that match the regex SHOW; else LOG's last lines, prefixed WHO, and
# WHAT fails.
verdict() {
	if [ "$1" = 1 ]; then
		echo "ok: $2"
		[ -z "${5:-}" ] || grep -E "$5" "$3" | sed 's/^/   /'
	else
		tail -n 20 "$3" | sed "s/^/   $4: /"
		fail "$2"
	fi
}

step "kernel $(uname -r), $(nproc) CPUs"
for d in "$QPIO_ROOT" "$QPIO_BUILD"; do
	[ -d "$d" ] || { fail "$d is not visible in the VM"; finish; }
done
# Only the mempool drivers and the vdev bus in DPDK's plugin directory,
# as guest.sh does (each EAL start loads them all under TCG).
pmd=$(ls -d /usr/lib/*/dpdk/pmds-* 2>/dev/null | head -n 1)
if [ -n "$pmd" ]; then
	mkdir -p /tmp/pmds
	cp -a "$pmd"/librte_mempool_ring.so* "$pmd"/librte_mempool_stack.so* \
		"$pmd"/librte_bus_vdev.so* "$pmd"/librte_net_af_packet.so* \
		"$pmd"/librte_bus_pci.so* /tmp/pmds/
	mount --bind /tmp/pmds "$pmd" || fail "bind mount over $pmd"
fi
ip link set lo up
nic=""
for n in /sys/class/net/*; do
	[ "$(cat "$n/address" 2>/dev/null)" = "$QPIO_VM_MAC" ] && nic="$(basename "$n")"
done
[ -n "$nic" ] || { fail "no NIC with MAC $QPIO_VM_MAC (virtio_net loaded?)"; finish; }
if [ "$QPIO_VM_ROLE" = a ]; then me=10.0.78.1; else me=10.0.78.2; fi
ip link set "$nic" up
ip addr add "$me/24" dev "$nic" || fail "ip addr on $nic"
rdma link add rxe0 type rxe netdev "$nic" || { fail "rdma link add rxe0 on $nic"; finish; }
for i in $(seq 50); do
	ibv_devinfo -d rxe0 2>/dev/null | grep -q PORT_ACTIVE && break
	sleep 0.1
done
ibv_devinfo -d rxe0 | grep -E "hca_id|state|active_mtu|link_layer" || fail "ibv_devinfo"
step "rxe0 on $nic ($me), peer $( [ "$QPIO_VM_ROLE" = a ] && echo 10.0.78.2 || echo 10.0.78.1)"
timeout 900 python3 "$QPIO_ROOT/test/rxe/two_vms_guest.py" "$QPIO_VM_ROLE" \
	"$QPIO_BUILD" /tmp/out/captures || rc=1

# Then VM a gives up rxe0 and its address: qpio alone on the virtio NIC
# (net_af_packet, a soft wire device at 10.0.78.1 answering ARP, the IB
# CM on its QP1) against VM b's rxe0, where the unmodified rping and
# perftest -R are the servers. Each client tries again while its server
# is not there yet (the kernel's REJ, or no answer while VM b is busy).
step "qpio alone in VM a: rping, ib_send_bw -R, ib_write_lat -R on VM b's rxe0"
if [ "$QPIO_VM_ROLE" = a ]; then
	rdma link delete rxe0 || fail "rdma link delete rxe0"
	ip addr del "$me/24" dev "$nic" || fail "ip addr del on $nic"
	qa() { # PREFIX PROGRAM ARGS...: one qpio process on the NIC
		local prefix=$1 prog=$2
		shift 2
		timeout 300 "$prog" -l 0 --no-huge --no-shconf --no-pci -m 256 \
			--file-prefix="$prefix" --log-level=lib.eal:error \
			--vdev="net_af_packet0,iface=$nic" -- \
			--dev "soft0,wire=net_af_packet0,ip=$me" "$@"
	}
	ok=0
	for try in $(seq 1 60); do
		if qa "rp-$try" "$QPIO_BUILD/examples/rping/qpio-rping" --timeout 60 \
			-c -a 10.0.78.2 -C 10 -S 64 -V -v > /tmp/qrping.log 2>&1; then
			ok=1
			break
		fi
		grep -q "REJECTED\|UNREACHABLE" /tmp/qrping.log || break
		sleep 2
	done
	[ "$ok" = 1 ] &&
		grep -qx "qpio-rping: client: 10 pings of 64 bytes, every byte written back as it was read" /tmp/qrping.log &&
		[ "$(grep -c '^ping data: rdma-ping-' /tmp/qrping.log)" = 10 ] || ok=0
	verdict "$ok" "qpio-rping (no rxe here) -> rping on VM b: 10 pings, every byte checked" \
		/tmp/qrping.log qpio
	for r in "ib_send_bw 65536 100 18600" "ib_write_lat 2 300 18601"; do
		set -- $r
		ok=0
		qa "pf-$1" "$QPIO_BUILD/app/perf/qpio-perf" --perftest -R \
			--test "$1" -s "$2" -n "$3" --validate --connect 10.0.78.2 \
			-p "$4" --timeout 240 > /tmp/qperf.log 2>&1 &&
			grep -Eq "^ *$2 +$3 " /tmp/qperf.log &&
			! grep -q "validate:.* [1-9][0-9]* mismatch" /tmp/qperf.log && ok=1
		verdict "$ok" "qpio-perf --perftest -R (no rxe here) -> $1 -R on VM b" \
			/tmp/qperf.log qpio "^ *$2 +$3 |validate:|^ (qp|wire): "
	done
else
	ok=0
	timeout 300 rping -s -a "$me" -S 64 -v > /tmp/rping.log 2>&1 &&
		[ "$(grep -c '^server ping data: rdma-ping-' /tmp/rping.log)" = 10 ] &&
		ok=1
	verdict "$ok" "rping -s on rxe0 served VM a's qpio-rping: 10 pings" \
		/tmp/rping.log rxe
	for r in "ib_send_bw 65536 100 18600" "ib_write_lat 2 300 18601"; do
		set -- $r
		ok=0
		timeout 300 "$1" -d rxe0 -R -s "$2" -n "$3" -F -p "$4" \
			> /tmp/pt.log 2>&1 && grep -Eq "^ *$2 +$3 " /tmp/pt.log && ok=1
		verdict "$ok" "$1 -R on rxe0 against VM a's qpio-perf" /tmp/pt.log \
			rxe "^ *$2 +$3 "
	done
fi
finish
