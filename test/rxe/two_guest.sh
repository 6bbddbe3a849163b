#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs inside each VM of test/rxe/two_vms.sh (as run.sh -g), chrooted
# into the host's read-only root like guest.sh. QPIO_VM_ROLE is a (the
# sender, 10.0.78.1) or b (the listener, 10.0.78.2); QPIO_VM_MAC names
# the VM's virtio NIC, whose only link is the other VM's NIC. rxe0 is
# made on that NIC, so RoCEv2 crosses between the two kernels. Writes the
# status to /tmp/out/rc: 0 every step passed, 1 a step failed.
set -u
. /tmp/out/env
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp
rc=0
t0=$(date +%s)
step() { echo "== vm-$QPIO_VM_ROLE [$(( $(date +%s) - t0 ))s] $*"; }
fail() { echo "== vm-$QPIO_VM_ROLE: FAIL: $*"; rc=1; }
finish() { step "done, status $rc"; echo "$rc" > /tmp/out/rc; sync; exit 0; }

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
		"$pmd"/librte_bus_vdev.so* /tmp/pmds/
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
finish
