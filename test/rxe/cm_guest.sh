#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs inside the rxe VM (test/rxe/run.sh -g): lib/cm's IB CM on a soft
# wire device against the kernel's, each row an unmodified rdmacm-utils
# tool (ucmatose over RC, udaddy over UD through SIDR, rping: RDMA READ
# and WRITE between SENDs) on rxe0 (veth0,
# 10.0.77.1, the kernel's rdma_cm) and qpio-cmatose or qpio-rping on the other end of
# the veth pair (veth1 through DPDK's net_af_packet, a soft wire device
# at 10.0.77.2), qpio as client and as server. Everything, the CM's MADs
# on QP1 and ARP included, crosses the veth pair. Then each of REQ, REP,
# RTU and DREQ is lost once in each direction (a tc filter on veth0) and
# the CM's resends must recover it (SIDR REQ and REP too). Connections to a port nobody listens
# on are refused both ways (REJ "invalid service ID"). A qpio client killed
# without a word comes back with the same QP number and gets the kernel's
# REJ "stale connection", then connects. A capture of veth0 is
# then opened with tshark: every UDP 4791 frame must decode as RoCE, none
# malformed, no REJ, and each of the rows' CM messages there.
# Writes 0 (every row passed) or 1 to /tmp/out/rc.
set -u
. /tmp/out/env
. "$QPIO_ROOT/test/rxe/rxe_up.sh"
rc=0
t0=$(date +%s)
step() { echo "== rxe-cm [$(( $(date +%s) - t0 ))s] $*"; }
fail() { echo "== rxe-cm: FAIL: $*"; rc=1; }
cm=$QPIO_BUILD/examples/cmatose/qpio-cmatose

step "kernel $(uname -r), $(nproc) CPUs"
rxe_up fail || fail "rxe0 not active"
# checksum offload off, as on a real wire (test/rxe/wire_guest.sh)
ethtool -K veth0 tx off >/dev/null 2>&1
ethtool -K veth1 tx off >/dev/null 2>&1
for t in ucmatose udaddy rping; do
	command -v "$t" >/dev/null || fail "$t not installed (rdmacm-utils, usertools/install-deps.sh)"
done
# veth0 sees both directions (net_af_packet sends past veth1's qdisc)
tcpdump -i veth0 -w /tmp/wire.pcap -U udp port 4791 or arp 2>/tmp/tcpdump.log &
tcpd=$!
capture_claim cm
sleep 1

# qpio's end: one lcore, no hugepages, the af_packet PMD on veth1
# (PMD_ARGS: more of its keys; DEV_ARGS: more of the soft wire device's).
PMD_ARGS=
DEV_ARGS=
qpio_cm() {
	local prefix=$1
	shift
	timeout 120 "$cm" -l 0 --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix="$prefix" --log-level=lib.eal:error \
		--vdev=net_af_packet0,iface=veth1$PMD_ARGS -- \
		--dev soft0,wire=net_af_packet0,ip=10.0.77.2$DEV_ARGS \
		--timeout "${QPIO_TIMEOUT:-60}" "$@"
}

# wait_listening: up to 20 s for the qpio server (its output in
# /tmp/qpio.log) to say it listens.
wait_listening() {
	local _
	for _ in $(seq 1 100); do
		grep -q "listening on port" /tmp/qpio.log && return 0
		sleep 0.2
	done
}

# row NAME TOOL QPIO_ROLE [ARGS...]: TOOL (ucmatose or udaddy) on rxe0
# against qpio-cmatose (with --ud for udaddy), both given ARGS (-C, -S).
row() {
	local name=$1 tool=$2 role=$3 ok=0 try peer ud= tr=RC count=10 size=100 conns=1
	shift 3
	[ "$tool" = udaddy ] && { ud=--ud; tr=UD; }
	# the count, size and connections the row gives, for the summary
	local args=("$@") i want
	for ((i = 0; i < ${#args[@]}; i++)); do
		case ${args[$i]} in
		-C) count=${args[$((i + 1))]} ;;
		-S) size=${args[$((i + 1))]} ;;
		-c) conns=${args[$((i + 1))]} ;;
		esac
	done
	want="$count messages of $size bytes each way over $tr"
	[ "$conns" = 1 ] ||
		want="$conns connections, $count messages of $size bytes each way on each over $tr"
	step "$name: $tool (rxe0) <-> qpio-cmatose ${ud:+$ud }($role), $conns x $count x $size bytes"
	if [ "$role" = client ]; then
		timeout 120 "$tool" -b 10.0.77.1 "$@" > /tmp/rxe.log 2>&1 &
		peer=$!
		for try in 1 2 3 4 5; do
			sleep 1
			if qpio_cm "c-$name-$try" $ud -s 10.0.77.1 "$@" > /tmp/qpio.log 2>&1; then
				ok=1
				break
			fi
			# the tool not listening yet: the kernel's REJ
			grep -q "REJECTED\|UNREACHABLE" /tmp/qpio.log || break
		done
		[ "$ok" = 1 ] || kill "$peer" 2>/dev/null
		wait "$peer" || ok=0
	else
		qpio_cm "s-$name" $ud "$@" > /tmp/qpio.log 2>&1 &
		peer=$!
		wait_listening
		timeout 120 "$tool" -s 10.0.77.2 "$@" > /tmp/rxe.log 2>&1 && ok=1
		wait "$peer" || ok=0
	fi
	if [ "$ok" = 1 ] &&
		grep -q "^qpio-cmatose: $role: $want, every completion a success$" /tmp/qpio.log &&
		grep -q "^data transfers complete" /tmp/rxe.log &&
		grep -q "^return status 0" /tmp/rxe.log; then
		grep -h "^qpio-cmatose: $role:\|^return status" /tmp/qpio.log /tmp/rxe.log | sed "s/^/   /"
		echo "== rxe-cm: $name PASS"
	else
		sed 's/^/   rxe: /' /tmp/rxe.log
		sed 's/^/   qpio: /' /tmp/qpio.log
		fail "$name"
	fi
}

# Path MTU 1024 (the veths at 1500): the tools' defaults, then more and
# longer messages.
veth_mtu fail 1500 1024
row rc-qpio-client ucmatose client
row rc-qpio-server ucmatose server
row rc-qpio-client-3000 ucmatose client -C 200 -S 3000
row rc-qpio-server-3000 ucmatose server -C 200 -S 3000
row ud-qpio-client udaddy client
row ud-qpio-server udaddy server
row ud-qpio-client-1024 udaddy client -C 100 -S 1024
# several connections at once (the tools' -c): each its own QP, REQ and
# exchange, all up before any data moves
row rc-qpio-client-4-conns ucmatose client -c 4 -C 20 -S 1000
row rc-qpio-server-4-conns ucmatose server -c 4 -C 20 -S 1000
row ud-qpio-client-4-conns udaddy client -c 4 -C 20 -S 500
row ud-qpio-server-4-conns udaddy server -c 4 -C 20 -S 500
# rping_row NAME QPIO_ROLE COUNT SIZE: rping on rxe0 against qpio-rping
# (RDMA READ of the client's buffer, RDMA WRITE back, SENDs between),
# -V: the client checks every byte; -v: each ping's data, counted.
rping_row() {
	local name=$1 role=$2 count=$3 size=$4 ok=0 try peer qlog rlog
	step "$name: rping (rxe0) <-> qpio-rping ($role), $count pings of $size bytes"
	qpio_rp() {
		local prefix=$1
		shift
		timeout 120 "$QPIO_BUILD/examples/rping/qpio-rping" -l 0 --no-huge \
			--no-shconf --no-pci -m 256 --file-prefix="$prefix" \
			--log-level=lib.eal:error --vdev=net_af_packet0,iface=veth1$PMD_ARGS -- \
			--dev soft0,wire=net_af_packet0,ip=10.0.77.2$DEV_ARGS --timeout 60 "$@"
	}
	if [ "$role" = client ]; then
		timeout 120 rping -s -a 10.0.77.1 -S "$size" -v > /tmp/rxe.log 2>&1 &
		peer=$!
		for try in 1 2 3 4 5; do
			sleep 1
			if qpio_rp "rc-$name-$try" -c -a 10.0.77.1 -C "$count" -S "$size" -V -v > /tmp/qpio.log 2>&1; then
				ok=1
				break
			fi
			grep -q "REJECTED\|UNREACHABLE" /tmp/qpio.log || break
		done
		[ "$ok" = 1 ] || kill "$peer" 2>/dev/null
		wait "$peer" || ok=0
		qlog="qpio-rping: client: $count pings of $size bytes, every byte written back as it was read"
		[ "$(grep -c '^ping data: rdma-ping-' /tmp/qpio.log)" = "$count" ] || ok=0
		[ "$(grep -c '^server ping data: rdma-ping-' /tmp/rxe.log)" = "$count" ] || ok=0
	else
		qpio_rp "rs-$name" -s -S "$size" -v > /tmp/qpio.log 2>&1 &
		peer=$!
		wait_listening
		timeout 120 rping -c -a 10.0.77.2 -C "$count" -S "$size" -V -v > /tmp/rxe.log 2>&1 && ok=1
		wait "$peer" || ok=0
		qlog="qpio-rping: server: $count pings served, the client disconnected"
		[ "$(grep -c '^ping data: rdma-ping-' /tmp/rxe.log)" = "$count" ] || ok=0
		[ "$(grep -c '^server ping data: rdma-ping-' /tmp/qpio.log)" = "$count" ] || ok=0
		grep -q "data mismatch" /tmp/rxe.log && ok=0
	fi
	if [ "$ok" = 1 ] && grep -qx "$qlog" /tmp/qpio.log; then
		echo "   $qlog"
		grep -h "rdma-ping-$((count - 1)):" /tmp/qpio.log /tmp/rxe.log | cut -c 1-72 | sed "s/^/   /"
		echo "== rxe-cm: $name PASS"
	else
		sed 's/^/   rxe: /' /tmp/rxe.log | tail -20
		sed 's/^/   qpio: /' /tmp/qpio.log | tail -20
		fail "$name"
	fi
}
rping_row rping-qpio-client client 20 64
rping_row rping-qpio-server server 20 64
rping_row rping-qpio-client-16384 client 50 16384
rping_row rping-qpio-server-65535 server 50 65535

# Path MTU 4096: the veths at 9000, net_af_packet's ring frames of 12288
# bytes, the wire device at mtu=9000 (test/rxe/perftest_guest.sh).
veth_mtu fail 9000 4096
PMD_ARGS=,framesz=12288,blocksz=12288
DEV_ARGS=,mtu=9000
row rc-qpio-server-4096 ucmatose server -C 100 -S 8192
row rc-qpio-client-4096 ucmatose client -C 100 -S 8192
row ud-qpio-server-4096 udaddy server -C 100 -S 4096
PMD_ARGS=
DEV_ARGS=
# The kernel's REQ at path MTU 4096 to a wire device whose port takes
# 1024: REJ "invalid MTU" (26), and qpio's log says why and what to do.
step "rc-mtu-refused: ucmatose -s 10.0.77.2 (path MTU 4096) -> qpio-cmatose at MTU 1024"
QPIO_TIMEOUT=8 qpio_cm s-mtu > /tmp/qpio.log 2>&1 &
peer=$!
wait_listening
timeout 60 ucmatose -s 10.0.77.2 > /tmp/rxe.log 2>&1
wait "$peer"
if grep -q "RDMA_CM_EVENT_REJECTED, error: 26" /tmp/rxe.log &&
	grep -q "REQ at path MTU 4096 bytes, above the port's active MTU (1024 bytes): refused" /tmp/qpio.log; then
	grep -h "REJECTED\|REQ at path MTU" /tmp/rxe.log /tmp/qpio.log | sed "s/^/   /"
	echo "== rxe-cm: rc-mtu-refused PASS"
else
	sed 's/^/   rxe: /' /tmp/rxe.log
	sed 's/^/   qpio: /' /tmp/qpio.log
	fail "rc-mtu-refused"
fi
veth_mtu fail 1500 1024

# Nobody listening on the port asked for: the first message is answered
# at once with REJ "invalid service ID" (8), as Linux answers it, both
# ways: qpio's listener device to the kernel's REQ (rdma_cm's REJECTED,
# status 8), the kernel to qpio's REQ (lib/cm's UNREACHABLE,
# -ECONNREFUSED), never a timeout.
step "rc-no-listener-qpio: ucmatose -s 10.0.77.2 -p 7999 -> qpio-cmatose listening on 7471"
# (the listener gives up by itself after 4 s without a request: it must
# be gone before the next row takes the interface and the address)
QPIO_TIMEOUT=4 qpio_cm s-nolisten > /tmp/qpio.log 2>&1 &
peer=$!
wait_listening
timeout 60 ucmatose -s 10.0.77.2 -p 7999 > /tmp/rxe.log 2>&1
wait "$peer"
if grep -Eq "RDMA_CM_EVENT_REJECTED, error: 8([^0-9]|$)" /tmp/rxe.log; then
	grep -h "REJECTED" /tmp/rxe.log | sed "s/^/   /"
	echo "== rxe-cm: rc-no-listener-qpio PASS"
else
	sed 's/^/   rxe: /' /tmp/rxe.log
	sed 's/^/   qpio: /' /tmp/qpio.log
	fail "rc-no-listener-qpio"
fi
step "rc-no-listener-kernel: qpio-cmatose -s 10.0.77.1 -p 7999, nobody listening on rxe0"
QPIO_TIMEOUT=20 qpio_cm c-nolisten -s 10.0.77.1 -p 7999 > /tmp/qpio.log 2>&1
st=$?
if [ "$st" != 0 ] && grep -q "UNREACHABLE (Connection refused), expected ESTABLISHED" /tmp/qpio.log; then
	grep -h "UNREACHABLE" /tmp/qpio.log | sed "s/^/   /"
	echo "== rxe-cm: rc-no-listener-kernel PASS"
else
	echo "   qpio-cmatose exited $st"
	sed 's/^/   qpio: /' /tmp/qpio.log
	fail "rc-no-listener-kernel"
fi

# A peer that disappears: qpio-cmatose's client is killed (SIGKILL, no
# DREQ) while ucmatose's server (-c 2) waits for a second connection, the
# first one idle. The next qpio-cmatose has the same QP number: the
# kernel's CM answers its REQ with REJ "stale connection" (10) and ends
# the old connection with a DREQ, which the new process's agent answers
# (DREP for an ID it does not know); qpio reports UNREACHABLE and says
# why, and a next try connects, exchanges the messages and ucmatose ends
# with status 0. A try lives only until its REJ: the kernel's DREQ (and
# its retries, some 4 s apart) may reach no live process for several
# tries, until one answers it or the kernel gives the old connection
# up: up to 20 tries, a second apart.
step "rc-qpio-client-killed: qpio-cmatose killed while connected to ucmatose -c 2, then again"
cm_exec() {
	local prefix=$1
	shift
	exec "$cm" -l 0 --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix="$prefix" --log-level=lib.eal:error \
		--vdev=net_af_packet0,iface=veth1 -- \
		--dev soft0,wire=net_af_packet0,ip=10.0.77.2 --timeout 30 "$@"
}
timeout 90 ucmatose -b 10.0.77.1 -c 2 > /tmp/rxe.log 2>&1 &
peer=$!
sleep 1
# (exec: $! is qpio-cmatose itself, not a shell around it)
( cm_exec c-killed-1 -s 10.0.77.1 ) > /tmp/qpio-killed.log 2>&1 &
k1=$!
sleep 3
kill -9 "$k1"
wait "$k1" 2>/dev/null
rm -rf /var/run/dpdk/c-killed-1
ok=0 stale=0
for try in $(seq 1 20); do
	if ( cm_exec "c-killed-2-$try" -s 10.0.77.1 ) > /tmp/qpio.log 2>&1; then
		ok=1
		break
	fi
	grep -q "connect: REJ stale connection: the peer still had a connection to this QP number" /tmp/qpio.log &&
		stale=$((stale + 1))
	sleep 1
done
wait "$peer" || ok=0
echo "   the killed client's successor: $stale stale-connection REJ, then connected on try $try"
if [ "$ok" = 1 ] && [ "$stale" -ge 1 ] &&
	grep -q "^qpio-cmatose: client: 10 messages of 100 bytes each way over RC, every completion a success$" /tmp/qpio.log &&
	grep -q "^return status 0" /tmp/rxe.log; then
	echo "== rxe-cm: rc-qpio-client-killed PASS"
else
	sed 's/^/   rxe: /' /tmp/rxe.log
	sed 's/^/   qpio: /' /tmp/qpio.log
	fail "rc-qpio-client-killed (stale REJs $stale, connected $ok)"
fi

# Lost CM messages: a tc filter on veth0 drops the first MAD of one
# attribute (gact's deterministic mode: of the matching frames, the 1st,
# 3rd, ... dropped, the 2nd, 4th, ... passed), on ingress for what qpio
# sends (before rxe0 takes it), on egress for what the kernel sends
# (before veth1 and qpio). The CM's resends recover each (qpio's every
# 537 ms; the kernel's REQ after its response timeout, about 4 s, its
# REP, RTU and DREQ sooner), the exchange and its data complete, and the
# filter dropped exactly one frame.
lost_row() {
	local name=$1 dir=$2 attr=$3 tool_role=$4 tool=${5:-ucmatose} stats dropped
	tc qdisc show dev veth0 | grep -q clsact || tc qdisc add dev veth0 clsact
	# IPv4 (no options): UDP 4791 at byte 22; the MAD after BTH and
	# DETH at byte 48: its class at 49 (0x07, CM), attribute at 64
	if ! tc filter add dev veth0 "$dir" protocol ip pref 10 u32 \
		match u8 17 0xff at 9 match u16 4791 0xffff at 22 \
		match u8 0x07 0xff at 49 match u16 "$attr" 0xffff at 64 \
		action gact drop random determ pass 2; then
		fail "$name: tc filter (act_gact, cls_u32, sch_ingress)"
		return
	fi
	row "$name" "$tool" "$tool_role"
	stats=$(tc -s filter show dev veth0 "$dir")
	tc filter del dev veth0 "$dir" pref 10
	dropped=$(echo "$stats" | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -1)
	echo "   tc: $attr on veth0 $dir: dropped ${dropped:-?}"
	[ "$dropped" = 1 ] || fail "$name: the filter dropped ${dropped:-no} frames, want 1"
}
lost_row rc-qpio-client-lost-req ingress 0x0010 client
lost_row rc-qpio-client-lost-rep egress 0x0013 client
lost_row rc-qpio-client-lost-rtu ingress 0x0014 client
lost_row rc-qpio-client-lost-dreq egress 0x0015 client
lost_row rc-qpio-server-lost-req egress 0x0010 server
lost_row rc-qpio-server-lost-rep ingress 0x0013 server
lost_row rc-qpio-server-lost-rtu egress 0x0014 server
lost_row rc-qpio-server-lost-dreq ingress 0x0015 server
# UD: a SIDR REQ lost each way (qpio's sent again after 537 ms, the
# kernel's after its timeout) and qpio's SIDR REP lost (the kernel asks
# again; the listener answers the same request, no second one)
lost_row ud-qpio-client-lost-sidr-req ingress 0x0017 client udaddy
lost_row ud-qpio-server-lost-sidr-req egress 0x0017 server udaddy
lost_row ud-qpio-server-lost-sidr-rep ingress 0x0018 server udaddy
tc qdisc del dev veth0 clsact 2>/dev/null

sleep 1
kill "$tcpd" 2>/dev/null
wait "$tcpd" 2>/dev/null
# tshark judges it on the host after the VM (natively: TCG took minutes)
capture_hand_over
echo "$rc" > /tmp/out/rc
exit 0
