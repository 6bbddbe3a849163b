# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# Sourced by the scripts that run inside the rxe VM (test/rxe/guest.sh and
# the bench/*.guest.sh scripts), after /tmp/out/env. Sets the PATH and
# HOME the guest scripts run with.
#
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp

# rxe_up FAIL: creates rxe0 on veth0 of a veth pair, both ends up (MTU
# 9000, room for 4096-byte RoCE payloads), gives veth0 10.0.77.1/24 (its
# RoCEv2 GID, for librdmacm), and waits up to 5 s for PORT_ACTIVE. QPs
# talk through rxe0 loopback: two rxe devices on the two ends of one pair
# do not connect with these routes (bench/wire-vs-rxe.guest.sh connects
# them with policy routing). FAIL is a command called with a message for
# each step that fails; rxe_up goes on after it. Returns 0 when rxe0 is
# active.
rxe_up() {
	local fail=$1 pmd _
	# EAL dlopens every driver in DPDK's plugin directory at each start,
	# and under TCG that is seconds per process: the VM sees only the
	# mempool drivers, the vdev bus that the eth port driver links and
	# net_af_packet (the soft wire device's port in wire_guest.sh) with
	# the PCI bus library it links, and net_ring (the unit tests link
	# it: the wire tests' ethdevs).
	pmd=$(ls -d /usr/lib/*/dpdk/pmds-* 2>/dev/null | head -n 1)
	if [ -n "$pmd" ]; then
		mkdir -p /tmp/pmds
		cp -a "$pmd"/librte_mempool_ring.so* "$pmd"/librte_mempool_stack.so* \
			"$pmd"/librte_bus_vdev.so* "$pmd"/librte_net_af_packet.so* \
			"$pmd"/librte_bus_pci.so* "$pmd"/librte_net_ring.so* /tmp/pmds/
		mount --bind /tmp/pmds "$pmd" || "$fail" "bind mount over $pmd"
	fi
	ip link set lo up
	ip link add veth0 mtu 9000 type veth peer name veth1 mtu 9000 || "$fail" "veth"
	ip link set veth1 up
	ip link set veth0 up
	rdma link add rxe0 type rxe netdev veth0 || "$fail" "rdma link add rxe0"
	ip addr add 10.0.77.1/24 dev veth0 || "$fail" "ip addr on veth0"
	for _ in $(seq 50); do
		ibv_devinfo -d rxe0 2>/dev/null | grep -q PORT_ACTIVE && return 0
		sleep 0.1
	done
	return 1
}

# veth_mtu FAIL MTU ACTIVE: both veths at MTU, then up to 5 s for rxe0's
# active MTU to read ACTIVE (its path MTU for rdma_cm: 1024 at 1500, 4096
# at 9000), which it prints. FAIL is called when the MTU is not taken.
veth_mtu() {
	local fail=$1 mtu=$2 want=$3 _
	ip link set veth0 mtu "$mtu" && ip link set veth1 mtu "$mtu" ||
		"$fail" "mtu $mtu on the veths"
	for _ in $(seq 50); do
		ibv_devinfo -d rxe0 | grep -q "active_mtu:.*$want" && break
		sleep 0.1
	done
	ibv_devinfo -d rxe0 | grep -E "active_mtu" | sed 's/^[[:space:]]*/   rxe0 /'
}

# rxe_gid_index ADDR: the index of rxe0's GID ADDR as ibv_devinfo prints
# it (::ffff:10.0.77.1, fd77::1), waiting up to 5 s for the kernel to list
# it (an address just added, one of a VLAN device on veth0); prints the
# index, or nothing and returns 1 when it never comes.
rxe_gid_index() {
	local re i _
	re=$(printf '%s' "$1" | sed 's/[.]/\\./g')
	for _ in $(seq 50); do
		i=$(ibv_devinfo -v -d rxe0 | sed -n "s/.*GID\[ *\([0-9]*\)\]:[[:space:]]*$re.*/\1/p" | head -n 1)
		[ -n "$i" ] && { echo "$i"; return 0; }
		sleep 0.1
	done
	return 1
}

# The capture of veth0 that tcpdump writes to /tmp/wire.pcap (its stderr
# in /tmp/tcpdump.log), judged by tshark on the host after the VM
# (test/rxe/run.sh runs test/rxe/capture_check.sh when /tmp/out holds
# capture-check). Both call the guest script's fail and step.
# capture_claim SUITE: once tcpdump runs, names the rules the host applies
# (wire, perftest or cm); without it the host would not look.
capture_claim() {
	echo "$1" > /tmp/out/capture-check || fail "cannot write /tmp/out/capture-check"
}

# capture_hand_over: once tcpdump has stopped, its log and the capture
# into /tmp/out (the capture leaves the guest's tmpfs).
capture_hand_over() {
	cp /tmp/tcpdump.log /tmp/out/ || fail "tcpdump's log could not be handed to the host"
	if cp /tmp/wire.pcap /tmp/out/; then
		step "capture of veth0: $(stat -c %s /tmp/wire.pcap) bytes, for tshark on the host"
		rm -f /tmp/wire.pcap
	else
		fail "the capture of veth0 could not be handed to the host"
	fi
}
