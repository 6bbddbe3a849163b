#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs inside the rxe VM (test/rxe/run.sh -g): perftest, unmodified, on
# Linux Soft-RoCE against qpio-perf --perftest on a soft wire device. Each
# row is one perftest tool (ib_send_bw, ib_write_bw, ib_read_bw,
# ib_atomic_bw, ib_send_lat, ib_write_lat, ib_read_lat, ib_atomic_lat) on
# rxe0 (veth0, 10.0.77.1) and qpio-perf on the other end of the veth pair (veth1
# through DPDK's net_af_packet, a soft wire device at 10.0.77.2), qpio as
# server and as client. perftest's TCP exchange runs over the loopback;
# the RDMA traffic, ARP included, crosses the veth pair. A row passes when
# both exit 0, perftest prints its result line for the size and
# iterations, and qpio-perf's --validate found nothing wrong.
# Rows at path MTU 1024 (qpio's port at MTU 1500) and 512 (-m), RC, UC
# and UD where the tool has them, four tools with -R (rdma_cm: lib/cm's
# IB CM on qpio's side), IPv4 and IPv6 (NDP both ways), then
# tshark over the capture of veth0 (every UDP 4791 frame RoCE, none
# malformed), then rows under netem loss.
# ROWS (in /tmp/out/env, run.sh -e ROWS=...) limits the run to the rows
# whose name matches that extended regular expression.
# Writes 0 (every row passed) or 1 to /tmp/out/rc.
set -u
. /tmp/out/env
. "$QPIO_ROOT/test/rxe/rxe_up.sh"
rc=0
t0=$(date +%s)
step() { echo "== rxe-perftest [$(( $(date +%s) - t0 ))s] $*"; }
fail() { echo "== rxe-perftest: FAIL: $*"; rc=1; }
perf=$QPIO_BUILD/app/perf/qpio-perf
rows=${ROWS:-.}

step "kernel $(uname -r), $(nproc) CPUs, $(ib_send_bw --version 2>&1 | head -n 1)"
rxe_up fail || fail "rxe0 not active"
ethtool -K veth0 tx off >/dev/null 2>&1
ethtool -K veth1 tx off >/dev/null 2>&1
gidx=$(rxe_gid_index ::ffff:10.0.77.1)
if [ -z "$gidx" ]; then
	fail "rxe0 has no GID ::ffff:10.0.77.1"
	echo "$rc" > /tmp/out/rc
	exit 0
fi
echo "rxe0: GID index $gidx is ::ffff:10.0.77.1"
tcpdump -i veth0 -w /tmp/wire.pcap -U udp port 4791 or arp 2>/tmp/tcpdump.log &
tcpd=$!
# the tshark row: the host judges the capture (rows of ROWS only)
tshark_row=
echo tshark | grep -Eq "$rows" && tshark_row=1
[ -n "$tshark_row" ] && capture_claim perftest
sleep 1

# PMD_ARGS: more keys of net_af_packet; DEV_ARGS: more of the soft
# wire device (mtu=9000: path MTU 4096).
PMD_ARGS=
DEV_ARGS=
# IBV=1: qpio-perf on rxe0 itself (the ibv driver, lib/cm through
# librdmacm) instead of the wire device.
IBV=
qpio_perf() {
	local prefix=$1
	shift
	if [ -n "$IBV" ]; then
		timeout 150 "$perf" -l 0 --no-huge --no-shconf --no-pci -m 256 \
			--file-prefix="$prefix" --log-level=lib.eal:error -- \
			--dev ibv0,dev=rxe0 --perftest --timeout 60 $QPIO_ARGS "$@"
		return
	fi
	timeout 150 "$perf" -l 0 --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix="$prefix" --log-level=lib.eal:error \
		--vdev=net_af_packet0,iface=veth1$PMD_ARGS -- \
		--dev soft0,wire=net_af_packet0,ip=10.0.77.2$DEV_ARGS --perftest \
		--timeout 60 $QPIO_ARGS "$@"
}
# QPIO_ARGS: more options of qpio-perf's; PT_GID: perftest's -x (the GID
# of 10.0.77.1 unless set)
QPIO_ARGS=
PT_GID=
RCM=

# row NAME TOOL SIZE ITERS QPIO_ROLE [ARGS...]: TOOL on rxe0 against
# qpio-perf --test TOOL, qpio as "client" or "server"; ARGS (-c UC, ...)
# go to both. SIZE "all" gives both -a (every power of two from 2 to
# 2^23): the result row checked is the last size's.
port=18600
row() {
	local name=$1 tool=$2 size=$3 iters=$4 role=$5 ok=0 try peer
	local sz ptx="-x ${PT_GID:-$gidx}" rq= at_rxe=127.0.0.1 at_qpio=127.0.0.1
	shift 5
	echo "$name" | grep -Eq "$rows" || return 0
	# RCM=1: both with -R, perftest's exchange and test QP connected by
	# rdma_cm (no TCP): to rxe0's or qpio's address on the veth pair,
	# the GIDs rdma_cm's
	if [ -n "$RCM" ]; then
		ptx=-R
		rq=-R
		at_rxe=10.0.77.1
		at_qpio=10.0.77.2
		[ -n "$IBV" ] && at_qpio=10.0.77.1
	fi
	if [ "$size" = all ]; then
		sz="-a"
		size=8388608
	else
		sz="-s $size"
	fi
	port=$((port + 1))
	step "$name: $tool (rxe0) <-> qpio-perf --perftest ($role), $size bytes x $iters $*"
	if [ "$role" = client ]; then
		timeout 150 "$tool" -d rxe0 $ptx $sz -n "$iters" \
			-F -p "$port" "$@" > /tmp/rxe.log 2>&1 &
		peer=$!
		sleep 1
		qpio_perf "p-$name" --test "$tool" $sz -n "$iters" $rq \
			--validate --connect "$at_rxe" -p "$port" "$@" \
			> /tmp/qpio.log 2>&1 && ok=1
		[ "$ok" = 1 ] || kill "$peer" 2>/dev/null
		wait "$peer" || ok=0
	else
		qpio_perf "p-$name" --test "$tool" $sz -n "$iters" $rq \
			--validate --server -p "$port" "$@" > /tmp/qpio.log 2>&1 &
		peer=$!
		for try in 1 2 3 4 5 6 7 8 9 10; do
			sleep 1
			grep -q "listening on .* port" /tmp/qpio.log && break
		done
		timeout 150 "$tool" -d rxe0 $ptx $sz -n "$iters" \
			-F -p "$port" "$@" "$at_qpio" > /tmp/rxe.log 2>&1 && ok=1
		[ "$ok" = 1 ] || kill "$peer" 2>/dev/null
		wait "$peer" || ok=0
	fi
	# perftest's result row: the size and the iterations first (a bw
	# server of write/read/atomic prints its client's numbers; the
	# read_lat and atomic_lat servers print none)
	if [ "$ok" = 1 ] && ! grep -Eq "^ *$size +$iters " /tmp/rxe.log &&
		! { [ "$role" = client ] && { [ "$tool" = ib_read_lat ] ||
					    [ "$tool" = ib_atomic_lat ]; }; }; then
		echo "   no result row '$size $iters' from $tool"
		ok=0
	fi
	if [ "$ok" = 1 ] && grep -q "validate:.* [1-9][0-9]* mismatch" /tmp/qpio.log; then
		echo "   qpio-perf --validate found mismatches"
		ok=0
	fi
	if [ "$ok" = 1 ]; then
		grep -hE "^ *$size +[0-9]+ |validate:|^ (qp|wire): " /tmp/rxe.log /tmp/qpio.log |
			sed "s/^/   /"
		echo "== rxe-perftest: $name PASS"
	else
		sed 's/^/   rxe: /' /tmp/rxe.log
		sed 's/^/   qpio: /' /tmp/qpio.log
		fail "$name"
	fi
}

for role in client server; do
	row send-bw-$role-2 ib_send_bw 2 500 $role
	row send-bw-$role-65536 ib_send_bw 65536 100 $role
	row send-bw-$role-1m ib_send_bw 1048576 5 $role
	row write-bw-$role-65536 ib_write_bw 65536 100 $role
	row read-bw-$role-65536 ib_read_bw 65536 100 $role
	row atomic-bw-$role-8 ib_atomic_bw 8 500 $role
	row send-lat-$role-2 ib_send_lat 2 300 $role
	row write-lat-$role-2 ib_write_lat 2 300 $role
	row read-lat-$role-2 ib_read_lat 2 300 $role
	row atomic-lat-$role-8 ib_atomic_lat 8 300 $role
	row write-bw-all-$role ib_write_bw all 5 $role
	row send-bw-uc-$role-4000 ib_send_bw 4000 200 $role -c UC
	row write-bw-uc-$role-65536 ib_write_bw 65536 50 $role -c UC
	row send-bw-ud-$role-1024 ib_send_bw 1024 300 $role -c UD
	row send-lat-ud-$role-512 ib_send_lat 512 200 $role -c UD
done
# perftest's READ sweep against qpio's server; qpio as the client of it
# fails in this VM at 2 MiB (RETRY_EXC_ERR: rxe, slowed by TCG, is still
# sending a 2048-packet response stream that net_af_packet's ring of 512
# frames lost the head of, while qpio's seven timeouts of 67 ms pass
# without a response in order; doc/guides/nics/soft.rst)
row read-bw-all-server ib_read_bw all 5 server
# Path MTU 512 (-m to both: each takes the smaller of the two).
for role in client server; do
	row mtu512-send-bw-$role-65536 ib_send_bw 65536 50 $role -m 512
	row mtu512-write-lat-$role-4096 ib_write_lat 4096 100 $role -m 512
	row mtu512-read-bw-$role-65536 ib_read_bw 65536 50 $role -m 512
	row mtu512-send-bw-ud-$role-512 ib_send_bw 512 200 $role -c UD -m 512
done
# Path MTU 4096: the veths at MTU 9000 (rxe takes its active MTU from
# its netdev's), net_af_packet's ring frames of 12288 bytes (a 9014-byte
# frame after the kernel's 66), the wire device at mtu=9000.
if echo mtu4096- | grep -Eq "$rows"; then
	veth_mtu fail 9000 4096
	PMD_ARGS=,framesz=12288,blocksz=12288
	DEV_ARGS=,mtu=9000
	for role in client server; do
		row mtu4096-send-bw-$role-65536 ib_send_bw 65536 50 $role -m 4096
		row mtu4096-write-lat-$role-8192 ib_write_lat 8192 100 $role -m 4096
		row mtu4096-read-bw-$role-65536 ib_read_bw 65536 50 $role -m 4096
		row mtu4096-send-bw-ud-$role-4096 ib_send_bw 4096 200 $role -c UD -m 4096
	done
	PMD_ARGS=
	DEV_ARGS=
	veth_mtu fail 1500 1024
fi

# perftest -R: its exchange on an RC QP and its test QP, both connected
# by rdma_cm; qpio's end is lib/cm's IB CM on the soft wire device (REQ,
# REP, RTU; the test QP's DREQ and DREP at the end). rdma_cm's path MTU
# is rxe0's active MTU, which perftest's -m does not change: the veths
# at 1500 (1024, as qpio's port; a REQ at 4096 would be refused with REJ
# "invalid MTU").
if printf "%s\n" rcm- rcm-ibv- | grep -Eq "$rows"; then
	veth_mtu fail 1500 1024
	RCM=1
	for role in client server; do
		row rcm-send-bw-$role-65536 ib_send_bw 65536 100 $role
		row rcm-write-lat-$role-2 ib_write_lat 2 300 $role
		row rcm-read-bw-$role-65536 ib_read_bw 65536 50 $role
		row rcm-atomic-lat-$role-8 ib_atomic_lat 8 200 $role
	done
	# both on rxe0 (rdma_cm's loopback): qpio's ibv driver, lib/cm
	# through librdmacm
	IBV=1
	for role in client server; do
		row rcm-ibv-send-bw-$role-65536 ib_send_bw 65536 100 $role
		row rcm-ibv-read-bw-$role-65536 ib_read_bw 65536 50 $role
	done
	IBV=
	RCM=
fi

# IPv6: rxe0 at fd77::1 (its GID), qpio's device at fd77::2 (its GID 2,
# -x 2); each side finds the other's MAC by NDP (the kernel's, qpio's)
if echo ipv6 | grep -Eq "$rows"; then
	ip -6 addr add fd77::1/64 dev veth0 nodad || fail "ip -6 addr on veth0"
	gidx6=$(rxe_gid_index fd77::1)
	if [ -z "$gidx6" ]; then
		fail "rxe0 has no GID fd77::1"
	else
		echo "rxe0: GID index $gidx6 is fd77::1"
		PT_GID=$gidx6
		QPIO_ARGS="-x 2"
		DEV_ARGS=,ip6=fd77::2
		nd_seen=0
		for role in client server; do
			for r in "send-bw-$role-65536 ib_send_bw 65536 50" \
				 "read-lat-$role-2 ib_read_lat 2 200" \
				 "send-bw-ud-$role-1024 ib_send_bw 1024 200 -c UD"; do
				set -- $r
				n=$1 t=$2 sz=$3 it=$4
				shift 4
				row "ipv6-$n" "$t" "$sz" "$it" "$role" "$@"
				# qpio asked the kernel for fd77::1, or answered it
				grep -q "^ wire: .* nd_rx [1-9]" /tmp/qpio.log && nd_seen=1
			done
		done
		[ "$nd_seen" = 1 ] || fail "ipv6: qpio took no NDP message in any row"

		PT_GID=
		QPIO_ARGS=
		DEV_ARGS=
	fi
fi

sleep 1
kill "$tcpd" 2>/dev/null
wait "$tcpd" 2>/dev/null
if [ -n "$tshark_row" ]; then
	# tshark judges it on the host after the VM (natively: TCG took minutes)
	capture_hand_over
fi

# Loss (netem on both ends of the pair; qpio's PMD sends through the
# qdisc for it, qdisc_bypass=0): RC still completes, qpio's --validate
# finds nothing wrong; both sides send again (rxe's hw_counters, qpio's
# qp: line).
hw=/sys/class/infiniband/rxe0/ports/1/hw_counters
hw_snap() { for f in "$hw"/*; do printf '%s %s\n' "$(basename "$f")" "$(cat "$f")"; done; }
loss_row() {
	local name=$1 tool=$2 size=$3 iters=$4 role=$5
	echo "$name" | grep -Eq "$rows" || return 0
	tc qdisc add dev veth0 root netem loss 1% || { fail "$name: tc netem"; return; }
	tc qdisc add dev veth1 root netem loss 1% || { fail "$name: tc netem"; return; }
	hw_snap > /tmp/hw.before
	PMD_ARGS=,qdisc_bypass=0
	row "$name" "$tool" "$size" "$iters" "$role"
	PMD_ARGS=
	hw_snap > /tmp/hw.after
	tc qdisc del dev veth0 root
	tc qdisc del dev veth1 root
	echo "   rxe hw_counters that moved:"
	join /tmp/hw.before /tmp/hw.after | awk '$3 != $2 { printf "     %s +%d\n", $1, $3 - $2 }'
	# qpio sent the data: it sent some of it again
	if [ "$role" = client ] && ! grep -q "^ qp: transport_retries [1-9]" /tmp/qpio.log; then
		fail "$name: qpio sent nothing again under 1 % loss"
	fi
}
loss_row loss1-send-bw-client-65536 ib_send_bw 65536 100 client
loss_row loss1-send-bw-server-65536 ib_send_bw 65536 100 server
loss_row loss1-read-bw-client-65536 ib_read_bw 65536 100 client

echo "$rc" > /tmp/out/rc
exit 0
