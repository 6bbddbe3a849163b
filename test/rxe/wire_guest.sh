#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs inside the rxe VM (test/rxe/run.sh -g): the soft NIC on the wire
# against Linux Soft-RoCE, each row an unmodified ibverbs-utils tool
# (ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong) on rxe0 (veth0,
# 10.0.77.1) and qpio-verbs-pingpong on the other end of the veth pair
# (veth1 through DPDK's net_af_packet, a soft wire device at 10.0.77.2).
# Two RC rows run on VLAN 100: the kernel's VLAN device veth0.100
# (10.0.78.1, whose RoCEv2 GID rxe0 lists with VLAN 100) against a soft
# wire device with vlan=100 (10.0.78.2); the capture must hold their
# tagged RoCE frames.
# The address exchange runs over TCP on the loopback; the RDMA traffic,
# ARP included, crosses the veth pair. A capture of veth0 is then opened
# with tshark: every UDP 4791 frame must decode as RoCE, none malformed.
# Writes 0 (every row passed) or 1 to /tmp/out/rc.
set -u
. /tmp/out/env
. "$QPIO_ROOT/test/rxe/rxe_up.sh"
rc=0
t0=$(date +%s)
step() { echo "== rxe-wire [$(( $(date +%s) - t0 ))s] $*"; }
fail() { echo "== rxe-wire: FAIL: $*"; rc=1; }
pp=$QPIO_BUILD/examples/verbs_pingpong/qpio-verbs-pingpong

step "kernel $(uname -r), $(nproc) CPUs"
rxe_up fail || fail "rxe0 not active"
# veth checksum offload would leave the UDP checksum of the kernel's own
# frames (ARP has none; rxe's RoCEv2 frames carry 0) unfilled: off, as on
# a real wire.
ethtool -K veth0 tx off >/dev/null 2>&1
ethtool -K veth1 tx off >/dev/null 2>&1
gidx=$(rxe_gid_index ::ffff:10.0.77.1)
if [ -z "$gidx" ]; then
	fail "rxe0 has no GID ::ffff:10.0.77.1"
	ibv_devinfo -v -d rxe0 | grep GID
	echo "$rc" > /tmp/out/rc
	exit 0
fi
echo "rxe0: GID index $gidx is ::ffff:10.0.77.1"
# On veth0: net_af_packet sends past the qdisc (qdisc_bypass), out of
# sight of a capture on veth1; veth0 sees both directions.
# (Linux hands the taps a VLAN frame's tag beside it, where "udp port
# 4791" matches; the vlan clause also takes one left in the frame.)
tcpdump -i veth0 -w /tmp/wire.pcap -U "udp port 4791 or arp or (vlan and (udp port 4791 or arp))" 2>/tmp/tcpdump.log &
tcpd=$!
capture_claim wire
sleep 1

# qpio's end: one lcore, no hugepages, the af_packet PMD on veth1
# (PMD_ARGS: more of its keys; QPIO_ADDR: its address and more devargs;
# RXE_GIDX: the GID index the rxe tool sends from).
PMD_ARGS=
QPIO_ADDR=ip=10.0.77.2
RXE_GIDX=$gidx
qpio_pp() {
	local prefix=$1
	shift
	timeout 120 "$pp" -l 0 --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix="$prefix" --log-level=lib.eal:error \
		--vdev=net_af_packet0,iface=veth1$PMD_ARGS -- \
		--dev "soft0,wire=net_af_packet0,$QPIO_ADDR" -g 1 --validate \
		--timeout 60 "$@"
}

# row NAME TRANSPORT SIZE ITERS QPIO_ROLE: ibv_<transport>_pingpong on
# rxe0 against qpio-verbs-pingpong, qpio as "client" (it sends first) or
# "server"; RC and UC at path MTU 1024 on both ends (the tools' default).
row() {
	local name=$1 tr=$2 size=$3 iters=$4 role=$5 ok=0 try tool qst
	tool=ibv_$(echo "$tr" | tr 'A-Z' 'a-z')_pingpong
	step "$name: $tool (rxe0) <-> qpio-verbs-pingpong -c $tr ($role), $size bytes x $iters"
	if [ "$role" = client ]; then
		timeout 120 "$tool" -d rxe0 -g "$RXE_GIDX" -s "$size" \
			-n "$iters" > /tmp/rxe.log 2>&1 &
		local peer=$!
		for try in 1 2 3 4 5; do
			sleep 1
			if qpio_pp "w-$name-$try" -c "$tr" -s "$size" -n "$iters" \
				127.0.0.1 > /tmp/qpio.log 2>&1; then
				ok=1
				break
			fi
			grep -q "cannot connect" /tmp/qpio.log || break
		done
		[ "$ok" = 1 ] || kill "$peer" 2>/dev/null
		wait "$peer" || ok=0
	else
		qpio_pp "w-$name" -c "$tr" -s "$size" -n "$iters" > /tmp/qpio.log 2>&1 &
		local peer=$!
		for try in 1 2 3 4 5; do
			sleep 1
			if timeout 120 "$tool" -d rxe0 -g "$RXE_GIDX" -s "$size" \
				-n "$iters" 127.0.0.1 > /tmp/rxe.log 2>&1; then
				ok=1
				break
			fi
			grep -q "Couldn't connect" /tmp/rxe.log || break
		done
		[ "$ok" = 1 ] || kill "$peer" 2>/dev/null
		wait "$peer"
		qst=$?
		# 3: all done but qpio's last SEND, whose ACK was lost after
		# rxe closed (examples/verbs_pingpong): rxe's "iters in" line
		# says it arrived
		if [ "$qst" = 3 ] && [ "$ok" = 1 ] &&
			grep -q "$iters iters in" /tmp/rxe.log; then
			echo "   qpio's last SEND was not ACKed before rxe closed; rxe's '$iters iters' says it arrived"
		elif [ "$qst" != 0 ]; then
			ok=0
		fi
	fi
	if [ "$ok" = 1 ] && grep -q "validate: 0 of $iters messages wrong" /tmp/qpio.log &&
		grep -q "$iters iters in" /tmp/rxe.log; then
		grep -h "iters in\|validate:\|wire:\|^qp:" /tmp/qpio.log /tmp/rxe.log | sed "s/^/   /"
		echo "== rxe-wire: $name PASS"
	else
		sed 's/^/   rxe: /' /tmp/rxe.log
		sed 's/^/   qpio: /' /tmp/qpio.log
		fail "$name"
	fi
}

row ud-qpio-client-1024 UD 1024 500 client
row ud-qpio-server-1024 UD 1024 500 server
row ud-qpio-client-1 UD 1 200 client
row ud-qpio-server-333 UD 333 200 server
row rc-qpio-client-4096 RC 4096 500 client
row rc-qpio-server-4096 RC 4096 500 server
row rc-qpio-client-1 RC 1 200 client
row rc-qpio-server-3000 RC 3000 200 server
row uc-qpio-client-4096 UC 4096 200 client
row uc-qpio-server-1 UC 1 200 server

# VLAN 100: rxe0 sends from the GID of veth0.100, tagged by the kernel's
# VLAN device; qpio tags its own (vlan=100,pcp=3)
ip link add link veth0 name veth0.100 type vlan id 100 &&
	ip addr add 10.0.78.1/24 dev veth0.100 && ip link set veth0.100 up ||
	fail "VLAN device veth0.100"
vgidx=$(rxe_gid_index ::ffff:10.0.78.1)
if [ -z "$vgidx" ]; then
	fail "rxe0 lists no GID ::ffff:10.0.78.1 for veth0.100"
	ibv_devinfo -v -d rxe0 | grep GID
else
	echo "rxe0: GID index $vgidx is ::ffff:10.0.78.1 (veth0.100, VLAN 100)"
	QPIO_ADDR=ip=10.0.78.2,vlan=100,pcp=3 RXE_GIDX=$vgidx
	row rc-vlan100-qpio-client-4096 RC 4096 200 client
	row rc-vlan100-qpio-server-1 RC 1 200 server
	QPIO_ADDR=ip=10.0.77.2 RXE_GIDX=$gidx
fi

sleep 1
kill "$tcpd" 2>/dev/null
wait "$tcpd" 2>/dev/null
# tshark judges it on the host after the VM (natively: TCG took minutes)
capture_hand_over
# Loss and reordering (netem on both ends of the pair; qpio's PMD sends
# through the qdisc for it, qdisc_bypass=0): RC still delivers every
# byte; both sides send again, and say so (qpio's counters, rxe's
# hw_counters).
hw=/sys/class/infiniband/rxe0/ports/1/hw_counters
hw_snap() { for f in "$hw"/*; do printf '%s %s\n' "$(basename "$f")" "$(cat "$f")"; done; }
netem_row() {
	local name=$1 spec=$2 role=$3
	step "$name: netem $spec on veth0 and veth1"
	tc qdisc add dev veth0 root netem $spec || { fail "$name: tc netem"; return; }
	tc qdisc add dev veth1 root netem $spec || { fail "$name: tc netem"; return; }
	hw_snap > /tmp/hw.before
	PMD_ARGS=,qdisc_bypass=0
	row "$name" RC 4096 300 "$role"
	PMD_ARGS=
	hw_snap > /tmp/hw.after
	tc qdisc del dev veth0 root
	tc qdisc del dev veth1 root
	echo "   rxe hw_counters that moved:"
	join /tmp/hw.before /tmp/hw.after | awk '$3 != $2 { printf "     %s +%d\n", $1, $3 - $2 }'
	grep -q "^qp: transport_retries [1-9]" /tmp/qpio.log ||
		fail "$name: qpio sent nothing again under $spec"
}
if command -v tc >/dev/null; then
	netem_row rc-loss1-qpio-client "loss 1%" client
	netem_row rc-loss1-qpio-server "loss 1%" server
	netem_row rc-reorder-qpio-client "delay 2ms reorder 25% 50%" client
else
	fail "netem: tc (iproute2) missing"
fi
echo "$rc" > /tmp/out/rc
exit 0
