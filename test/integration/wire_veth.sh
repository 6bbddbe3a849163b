#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two soft wire devices, each in its own qpio-verbs-pingpong process, on
# the two ends of a veth pair through DPDK's net_af_packet: ARP, then
# messages as RoCEv2 packets through the kernel's veth, every message
# checked (--validate) and the counters of both ends: UD exactly one
# datagram per message; RC (2100 bytes: FIRST, MIDDLE, LAST at path MTU
# 1024, then an ACK) and UC (the same without ACKs) at least those
# packets, more only when an ACK timeout sent some again. RC4096: RC at
# path MTU 4096 over veths of MTU 9000 (net_af_packet with ring frames of
# 12288 bytes, the devices' mtu=9000): 8300 bytes, FIRST, MIDDLE, LAST
# and an ACK. RCVLAN: RC as above with both devices on VLAN 100
# (vlan=100,pcp=3): every frame, ARP included, crosses the veth with an
# IEEE 802.1Q tag, which Linux hands to net_af_packet beside the frame.
# UD starts the client first: it must say that its TCP connect was
# refused, ask again until the server listens, and then run.
# RCQ2: RC as above on devices of two queues (queues=2) over
# net_af_packet ports of two queue pairs (qpairs=2: the kernel's fanout
# puts each frame on a socket by the flow's symmetric hash, so the flow
# comes in on one queue index at both ends). The server's CQ is of
# completion vector 1, the client's of 0: each QP's packets leave on its
# own queue, and exactly one side receives the flow on the other queue
# than its QP's and hands every packet of it over (rx_steered equal to
# its rx_packets; the other side none); the queue whose CQ nobody polls
# is stepped by the polled one. Every message checked, nothing dropped
# between the queues, the queues' counters adding up to the device's.
#
#   wire_veth.sh PINGPONG_BINARY UD|RC|UC|RC4096|RCVLAN|RCQ2
#
# Root only (veth); exits 77 (skipped) with the reason otherwise.
set -u
pp=$1
tr=${2:-UD}
skip() { echo "wire-veth: SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root for a veth pair"
command -v ip >/dev/null || skip "ip (iproute2) not installed"
a=qwv$$a
b=qwv$$b
mtu=1500 pmtu=1024 afp= vl= dq= svec=
case "$tr" in
UD) size=700 per=1 ;;          # one datagram per message
RC) size=2100 per=4 ;;         # 3 packets and the peer's ACK of them
UC) size=2100 per=3 ;;         # 3 packets
RC4096) size=8300 per=4 tr=RC mtu=9000 pmtu=4096 afp=,framesz=12288,blocksz=12288 ;;
RCVLAN) size=2100 per=4 tr=RC vl=,vlan=100,pcp=3 ;;
RCQ2) size=2100 per=4 tr=RC afp=,qpairs=2 dq=,queues=2 svec=1 ;;
*) echo "wire-veth: transport $tr: want UD, RC, UC, RC4096, RCVLAN or RCQ2"; exit 2 ;;
esac
port=$((20000 + $$ % 20000))
work=$(mktemp -d /tmp/qpio-wire-veth.XXXXXX)
# a process in the background (a subshell of run(), the timeout and the
# program under it): stopped with its children
bg=
stop_bg() {
	[ -n "$bg" ] || return 0
	{ pkill -TERM -P "$bg"; kill "$bg"; wait "$bg"; } 2>/dev/null
	bg=
}
# the side in the background once the foreground one is done: waited
# for (its status fails the run) when that one passed, else stopped
finish_bg() {
	if [ "$ok" = 1 ]; then
		wait "$bg" || ok=0
		bg=
	else
		stop_bg
	fi
}
cleanup() {
	stop_bg
	ip link del "$a" 2>/dev/null
	rm -rf "$work" "/var/run/dpdk/wv-s-$$" "/var/run/dpdk/wv-c-$$"
}
trap cleanup EXIT
. "$(dirname "$0")/../veth.sh"
veth_up "$a" "$b" || skip "cannot create a veth pair"
ip link set "$a" mtu "$mtu" && ip link set "$b" mtu "$mtu" ||
	{ echo "wire-veth: FAIL: mtu $mtu on the veths"; exit 1; }
n=300
tmo=30
run() {
	local prefix=$1 vdev=$2 dev=$3
	shift 3
	timeout 60 "$pp" -l 0 --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix="$prefix" --log-level=lib.eal:error \
		--vdev="$vdev$afp" -- --dev "$dev,mtu=$mtu$vl$dq" -c "$tr" -g 1 \
		-s "$size" -n "$n" -m "$pmtu" -p "$port" --validate --timeout "$tmo" "$@"
}
client() {
	run "wv-c-$$" "net_af_packet1,iface=$b" "soft1,wire=net_af_packet1,ip=10.0.0.2" \
		127.0.0.1 > "$work/client.log" 2>&1
}
server() {
	run "wv-s-$$" "net_af_packet0,iface=$a" "soft0,wire=net_af_packet0,ip=10.0.0.1" \
		${svec:+--comp-vector "$svec"} > "$work/server.log" 2>&1
}
ok=0
if [ "$tr" = UD ]; then
	# The client first: its TCP connect is refused until the server
	# listens, and asked again every 10 ms. The server starts once the
	# client says it was refused; the client must then connect.
	refused="^connect: 127\.0\.0\.1:$port not listening yet; asking again every 10 ms for up to $tmo s$"
	for _ in 1 2 3; do
		client &
		bg=$!
		for _ in $(seq 400); do
			grep -q "$refused" "$work/client.log" 2>/dev/null && break
			kill -0 "$bg" 2>/dev/null || break
			sleep 0.05
		done
		grep -q "$refused" "$work/client.log" && break
		# the client ended first: again when its af_packet port drew
		# another process's fanout group number (test/veth.sh)
		stop_bg
		af_packet_fanout_clash "$work/client.log" || break
	done
	grep -q "$refused" "$work/client.log" || {
		stop_bg
		sed 's/^/  client: /' "$work/client.log"
		echo "wire-veth: FAIL: the client, started first, never said it was refused"
		exit 1
	}
	# again when this server's af_packet port drew the client's
	# fanout group number
	for _ in 1 2 3; do
		server && { ok=1; break; }
		af_packet_fanout_clash "$work/server.log" || break
	done
	finish_bg
	grep -q "^connect: connected after [1-9][0-9]* refusals$" "$work/client.log" || {
		ok=0
		echo "wire-veth: FAIL: the client's connect after its refusals not reported"
	}
else
	server &
	bg=$!
	for _ in 1 2 3 4 5; do
		sleep 1
		client && { ok=1; break; }
		# again while the server is not up yet, or when this client's
		# af_packet port drew the server's fanout group number
		# (test/veth.sh)
		grep -q "cannot connect" "$work/client.log" ||
			af_packet_fanout_clash "$work/client.log" || break
	done
	finish_bg
fi
rc=0
check() {
	local log=$1 want=$2
	if ! grep -q "^$want" "$log"; then
		echo "wire-veth: FAIL: $(basename "$log" .log) wants '$want'"
		rc=1
	fi
}
if [ "$ok" != 1 ]; then
	echo "wire-veth: FAIL: a side did not finish"
	rc=1
fi
for side in server client; do
	log=$work/$side.log
	check "$log" "validate: 0 of $n messages wrong"
	check "$log" "$n iters in"
	if [ "$tr" = UD ]; then
		check "$log" "wire: rx_packets $n tx_packets $n arp_rx 1 arp_tx 1 rx_bad_icrc 0 rx_no_qp 0 "
	else
		# each side asks ARP at RTR unless the other's request came
		# first (it then knows the sender): 1 or 2 each way
		check "$log" "wire: rx_packets [0-9]* tx_packets [0-9]* arp_rx [12] arp_tx [12] rx_bad_icrc 0 rx_no_qp 0 rx_not_roce [0-9]* tx_no_neigh 0 "
		tx=$(sed -n 's/^wire: rx_packets [0-9]* tx_packets \([0-9]*\) .*/\1/p' "$log")
		if [ -z "$tx" ] || [ "$tx" -lt $((n * per)) ]; then
			echo "wire-veth: FAIL: $side sent ${tx:-no} packets, want at least $((n * per))"
			rc=1
		fi
	fi
	if [ -n "$dq" ]; then
		# each queue's line; the sum of their rx_packets and
		# tx_packets is the device's; nothing dropped between them
		sum=$(awk '/^wire queue [01]: /{rx+=$5; tx+=$7; q++}
			END{print q, rx, tx}' "$log")
		dev=$(sed -n 's/^wire: rx_packets \([0-9]*\) tx_packets \([0-9]*\) .*/\1 \2/p' "$log")
		if [ "$sum" != "2 $dev" ]; then
			echo "wire-veth: FAIL: $side: queues (count, rx, tx) '$sum' against the device's '$dev'"
			rc=1
		fi
		# the QP's queue (server 1, client 0) sends it all
		if [ $side = server ]; then qq=1 oq=0; else qq=0 oq=1; fi
		check "$log" "wire queue $oq: rx_packets 0 tx_packets 0 "
		check "$log" "wire queue $qq: rx_packets [0-9]* tx_packets ${dev#* } "
		check "$log" "wire queue [01]: .* rx_steer_dropped 0"
		steered=$(awk '/^wire queue [01]: /{s+=$9} END{print s+0}' "$log")
		eval "st_$side=\$steered rx_$side=\${dev% *}"
	fi
done
if [ -n "$dq" ] && ! { [ "$st_server" = "$rx_server" ] && [ "$st_client" = 0 ]; } &&
	! { [ "$st_client" = "$rx_client" ] && [ "$st_server" = 0 ]; }; then
	echo "wire-veth: FAIL: steered server $st_server of $rx_server, client $st_client of $rx_client: want one side all, the other none"
	rc=1
fi
if [ "$rc" != 0 ]; then
	sed 's/^/  server: /' "$work/server.log"
	sed 's/^/  client: /' "$work/client.log"
	exit 1
fi
grep -h "^wire:" "$work/server.log" "$work/client.log"
grep -h "^wire queue" "$work/server.log" "$work/client.log"
echo "wire-veth: PASS ($tr${vl:+ on VLAN 100}${dq:+ on two queues}: $n messages of $size bytes each way, ARP once each way)"
