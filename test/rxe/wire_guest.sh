#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs inside the rxe VM (test/rxe/run.sh -g): the soft NIC on the wire
# against Linux Soft-RoCE, each row an unmodified ibverbs-utils tool on
# rxe0 (veth0, 10.0.77.1) and qpio on the other end of the veth pair
# (veth1 through DPDK's net_af_packet, a soft wire device at 10.0.77.2).
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
pp=$QPIO_BUILD/examples/ud_pingpong/qpio-ud-pingpong

step "kernel $(uname -r), $(nproc) CPUs"
rxe_up fail || fail "rxe0 not active"
# veth checksum offload would leave the UDP checksum of the kernel's own
# frames (ARP has none; rxe's RoCEv2 frames carry 0) unfilled: off, as on
# a real wire.
ethtool -K veth0 tx off >/dev/null 2>&1
ethtool -K veth1 tx off >/dev/null 2>&1
gidx=$(ibv_devinfo -v -d rxe0 | sed -n 's/.*GID\[ *\([0-9]*\)\]:[[:space:]]*::ffff:10\.0\.77\.1.*/\1/p' | head -n 1)
if [ -z "$gidx" ]; then
	fail "rxe0 has no GID ::ffff:10.0.77.1"
	ibv_devinfo -v -d rxe0 | grep GID
	echo "$rc" > /tmp/out/rc
	exit 0
fi
echo "rxe0: GID index $gidx is ::ffff:10.0.77.1"
# On veth0: net_af_packet sends past the qdisc (qdisc_bypass), out of
# sight of a capture on veth1; veth0 sees both directions.
tcpdump -i veth0 -w /tmp/wire.pcap -U udp port 4791 or arp 2>/tmp/tcpdump.log &
tcpd=$!
sleep 1

# qpio's end: one lcore, no hugepages, the af_packet PMD on veth1.
qpio_pp() {
	local prefix=$1
	shift
	timeout 120 "$pp" -l 0 --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix="$prefix" --log-level=lib.eal:error \
		--vdev=net_af_packet0,iface=veth1 -- \
		--dev soft0,wire=net_af_packet0,ip=10.0.77.2 -g 1 --validate \
		--timeout 60 "$@"
}

# row NAME SIZE ITERS QPIO_ROLE: ibv_ud_pingpong on rxe0 against
# qpio-ud-pingpong, qpio as "client" (it sends first) or "server".
row() {
	local name=$1 size=$2 iters=$3 role=$4 ok=0 try
	step "$name: ibv_ud_pingpong (rxe0) <-> qpio-ud-pingpong ($role), $size bytes x $iters"
	if [ "$role" = client ]; then
		timeout 120 ibv_ud_pingpong -d rxe0 -g "$gidx" -s "$size" \
			-n "$iters" > /tmp/rxe.log 2>&1 &
		local peer=$!
		for try in 1 2 3 4 5; do
			sleep 1
			if qpio_pp "w-$name-$try" -s "$size" -n "$iters" 127.0.0.1 \
				> /tmp/qpio.log 2>&1; then
				ok=1
				break
			fi
			grep -q "cannot connect" /tmp/qpio.log || break
		done
		[ "$ok" = 1 ] || kill "$peer" 2>/dev/null
		wait "$peer" || ok=0
	else
		qpio_pp "w-$name" -s "$size" -n "$iters" > /tmp/qpio.log 2>&1 &
		local peer=$!
		for try in 1 2 3 4 5; do
			sleep 1
			if timeout 120 ibv_ud_pingpong -d rxe0 -g "$gidx" -s "$size" \
				-n "$iters" 127.0.0.1 > /tmp/rxe.log 2>&1; then
				ok=1
				break
			fi
			grep -q "Couldn't connect" /tmp/rxe.log || break
		done
		[ "$ok" = 1 ] || kill "$peer" 2>/dev/null
		wait "$peer" || ok=0
	fi
	if [ "$ok" = 1 ] && grep -q "validate: 0 of $iters messages wrong" /tmp/qpio.log &&
		grep -q "$iters iters in" /tmp/rxe.log; then
		grep -h "iters in\|validate:\|wire:" /tmp/qpio.log /tmp/rxe.log | sed 's/^/   /'
		echo "== rxe-wire: $name PASS"
	else
		sed 's/^/   rxe: /' /tmp/rxe.log
		sed 's/^/   qpio: /' /tmp/qpio.log
		fail "$name"
	fi
}

row ud-qpio-client-1024 1024 500 client
row ud-qpio-server-1024 1024 500 server
row ud-qpio-client-1 1 200 client
row ud-qpio-server-333 333 200 server

sleep 1
kill "$tcpd" 2>/dev/null
wait "$tcpd" 2>/dev/null
step "tshark over the capture of veth0"
if ! command -v tshark >/dev/null; then
	fail "tshark not installed (usertools/install-deps.sh)"
else
	roce=$(tshark -r /tmp/wire.pcap -Y "infiniband" 2>/dev/null | wc -l)
	udp=$(tshark -r /tmp/wire.pcap -Y "udp.dstport == 4791" 2>/dev/null | wc -l)
	bad=$(tshark -r /tmp/wire.pcap -Y "_ws.malformed || _ws.expert.severity >= error" 2>/dev/null | wc -l)
	arp=$(tshark -r /tmp/wire.pcap -Y "arp" 2>/dev/null | wc -l)
	# 500 + 500 each way of the first two rows, 200 + 200 of the others
	want=$(( 2 * 500 * 2 + 2 * 200 * 2 ))
	echo "   capture: $udp UDP 4791 frames, $roce decoded as InfiniBand, $arp ARP, $bad malformed (want $want, $want, >= 2, 0)"
	[ "$udp" = "$want" ] && [ "$roce" = "$want" ] && [ "$bad" = 0 ] && [ "$arp" -ge 2 ] ||
		fail "tshark: the capture is not $want well-formed RoCE frames"
	tshark -r /tmp/wire.pcap -Y infiniband -T fields -e ip.src -e ip.dst \
		-e infiniband.bth.opcode -e infiniband.bth.destqp \
		-e infiniband.deth.srcqp -e infiniband.deth.q_key 2>/dev/null | head -n 2 |
		sed 's/^/   /'
fi
cp /tmp/wire.pcap /tmp/out/ 2>/dev/null
echo "$rc" > /tmp/out/rc
exit 0
