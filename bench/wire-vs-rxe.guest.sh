#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs inside the Soft-RoCE VM for bench/wire-vs-rxe.sh (started by
# test/rxe/run.sh -g). Two RoCEv2 pairs over the one veth pair veth0/veth1,
# in alternating order for QPIO_BENCH_ROUNDS rounds:
#
#   rxe   ib_send_bw / ib_send_lat on rxe1 (veth1, 10.0.77.2, server)
#         and rxe0 (veth0, 10.0.77.1, client);
#   qpio  qpio-perf --server on a soft wire device on veth1 (10.0.77.12)
#         and qpio-perf --connect on one on veth0 (10.0.77.11), both
#         through net_af_packet.
#
# Both exchange their QPs over TCP on the loopback; the RoCE frames cross
# the veth pair, which each run's line shows (the frames veth0 and veth1
# received during it). Prints one "wire-vs-rxe:" line per pair and writes
# 0 to /tmp/out/rc when every run gave a number and crossed the veth, 1
# otherwise.
#
# rxe1 cannot sit in a network namespace of its own: Linux 6.1's rdma_rxe
# opens its UDP 4791 socket and looks up its routes in the initial
# namespace only, so an rxe device on a netdev moved elsewhere sends but
# never receives. Both rxe devices stay in one namespace, and policy
# routing sends what each device sends out of its own netdev: a rule per
# veth end for lookups bound to it (rxe binds each route lookup to its
# netdev) ahead of the local table, which otherwise routes 10.0.77.2 from
# 10.0.77.1 through lo. accept_local lets each end take packets from the
# other's local address.
set -u
# the console's last line before this script is the firmware's "Booting
# from ROM..." without a newline: a line of its own for the first note
echo
. /tmp/out/env
# rxe_up, PATH and HOME
. "$QPIO_ROOT/test/rxe/rxe_up.sh"
. "$QPIO_ROOT/test/veth.sh"
rc=0
note() { echo "wire-vs-rxe: $*"; }
fail() { note "FAIL: $*"; rc=1; }
finish() { echo "$rc" > /tmp/out/rc; exit 0; }

ROUNDS=${QPIO_BENCH_ROUNDS:-3}
SIZE=${QPIO_BENCH_SIZE:-64}
LAT_N=${QPIO_BENCH_LAT_N:-2000}
BW_N=${QPIO_BENCH_BW_N:-20000}
perf=$QPIO_BUILD/app/perf/qpio-perf

rxe_up fail || fail "rxe0 is not PORT_ACTIVE after 5 s"
command -v ib_send_bw > /dev/null ||
	{ fail "perftest is not installed (usertools/install-deps.sh)"; finish; }
[ -x "$perf" ] || { fail "$perf is not built"; finish; }
# veth checksum offload would leave the UDP checksum of the kernel's
# frames unfilled: off, as on a real wire (as test/rxe/wire_guest.sh)
ethtool -K veth0 tx off > /dev/null 2>&1
ethtool -K veth1 tx off > /dev/null 2>&1

# --- rxe1 on veth1, and routes that take the veth -------------------------
ip addr add 10.0.77.2/24 dev veth1 || fail "ip addr on veth1"
rdma link add rxe1 type rxe netdev veth1 || fail "rdma link add rxe1"
for c in all default veth0 veth1; do
	sysctl -qw "net.ipv4.conf.$c.accept_local=1" "net.ipv4.conf.$c.rp_filter=0" ||
		fail "sysctl accept_local, rp_filter on $c"
done
ip route add 10.0.77.0/24 dev veth0 src 10.0.77.1 table 100 &&
	ip route add 10.0.77.0/24 dev veth1 src 10.0.77.2 table 101 &&
	ip rule add pref 100 oif veth0 lookup 100 &&
	ip rule add pref 101 oif veth1 lookup 101 &&
	ip rule add pref 1000 lookup local &&
	ip rule del pref 0 || fail "policy routing"
via=$(ip route get 10.0.77.2 from 10.0.77.1 oif veth0 | head -n 1)
case "$via" in
*"dev veth0"*) ;;
*) fail "10.0.77.2 from rxe0's netdev does not go out of veth0: $via" ;;
esac
for _ in $(seq 50); do
	ibv_devinfo -d rxe1 2>/dev/null | grep -q PORT_ACTIVE && break
	sleep 0.1
done
# gid DEV IP: the index of DEV's GID ::ffff:IP
gid() {
	ibv_devinfo -v -d "$1" 2>/dev/null |
		sed -n "s/.*GID\[ *\([0-9]*\)\]:[[:space:]]*::ffff:${2//./\\.},.*/\1/p" | head -n 1
}
g0=$(gid rxe0 10.0.77.1)
g1=$(gid rxe1 10.0.77.2)
[ -n "$g0" ] && [ -n "$g1" ] ||
	{ fail "no IPv4 GID on rxe0 ('$g0') or rxe1 ('$g1')"; finish; }
[ "$rc" = 0 ] || finish

# frames that veth0 and veth1 received, both directions of the pair
frames() {
	echo $(($(cat /sys/class/net/veth0/statistics/rx_packets) +
		$(cat /sys/class/net/veth1/statistics/rx_packets)))
}

# positive V: V is a number above 0 (not perftest's inf)
positive() {
	[[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v v="$1" 'BEGIN { exit !(v > 0) }'
}

port=18600
# rxe TOOL ARGS...: perftest, server on rxe1, client on rxe0, the client's
# result line (bytes iterations ...) in $out, or nothing. perftest times
# with a TSC rate it measures at start (a regression of rdtsc against
# gettimeofday); when the samples do not fit (r^2 below 0.9, as happens
# on an emulated CPU that the host preempts) it takes 0 MHz and prints
# inf: such a run is made again, at most twice, and said so.
rxe() {
	local tool=$1 srv try _
	shift
	for try in 1 2 3; do
		port=$((port + 1))
		timeout 300 "$tool" -d rxe1 -x "$g1" -F -p "$port" "$@" > /tmp/rxe-s.log 2>&1 &
		srv=$!
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			sleep 0.5
			timeout 300 "$tool" -d rxe0 -x "$g0" -F -p "$port" "$@" 127.0.0.1 \
				> /tmp/rxe-c.log 2>&1 && break
			grep -q "Couldn't connect" /tmp/rxe-c.log || { kill "$srv" 2>/dev/null; break; }
		done
		wait "$srv"
		out=$(awk 'f && $1 ~ /^[0-9]+$/ { print; exit } /^ *#bytes/ { f = 1 }' /tmp/rxe-c.log)
		positive "$(echo "$out" | awk '{ print $5 }')" && return 0
		grep -q "Correlation coefficient" /tmp/rxe-c.log /tmp/rxe-s.log || break
		[ "$try" = 3 ] || note "  $tool: perftest could not measure its TSC rate (r^2 < 0.9), run again"
	done
	tail -n 5 /tmp/rxe-c.log /tmp/rxe-s.log | sed 's/^/wire-vs-rxe:   /'
}

# qpio TEST ARGS...: qpio-perf, server on veth1 (lcore 1), client on veth0
# (lcore 0); the client's JSON t_typical (us) and msg_rate_mpps in $out,
# or nothing. The client starts once the server listens, and again (a
# new pid) when its net_af_packet port drew the number of the server's
# PACKET_FANOUT group (test/veth.sh says why: the probe fails, EINVAL).
qpio() {
	local test=$1 srv ok=1 _
	shift
	port=$((port + 1))
	rm -f /tmp/qpio.json
	timeout 300 "$perf" -l 1 --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix=wvr-s --log-level=lib.eal:error --no-telemetry \
		--vdev=net_af_packet0,iface=veth1 -- \
		--dev soft0,wire=net_af_packet0,ip=10.0.77.12 -x 1 \
		--test "$test" --server -p "$port" --timeout 60 "$@" \
		> /tmp/qpio-s.log 2>&1 &
	srv=$!
	for _ in $(seq 600); do
		grep -q "listening on TCP port" /tmp/qpio-s.log && break
		kill -0 "$srv" 2>/dev/null || break
		sleep 0.1
	done
	for _ in 1 2 3; do
		ok=1
		timeout 300 "$perf" -l 0 --no-huge --no-shconf --no-pci -m 256 \
			--file-prefix=wvr-c --log-level=lib.eal:error --no-telemetry \
			--vdev=net_af_packet0,iface=veth0 -- \
			--dev soft0,wire=net_af_packet0,ip=10.0.77.11 -x 1 \
			--test "$test" --connect 127.0.0.1 -p "$port" --timeout 60 \
			--json /tmp/qpio.json "$@" > /tmp/qpio-c.log 2>&1 || ok=0
		af_packet_fanout_clash /tmp/qpio-c.log || break
	done
	wait "$srv" || ok=0
	out=
	[ "$ok" = 1 ] && out=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["latency_us"]["t_typical"], r["msg_rate_mpps"])' /tmp/qpio.json)
	[ -n "$out" ] || tail -n 12 /tmp/qpio-c.log /tmp/qpio-s.log | sed 's/^/wire-vs-rxe:   /'

}

# run SIDE MODE: one run; sets the number (Mpps or t_typical us) and the
# frames that crossed the veth in ${SIDE}_v and ${SIDE}_f
run() {
	local side=$1 mode=$2 f0 args
	if [ "$mode" = bw ]; then
		args=(-s "$SIZE" -n "$BW_N")
	else
		args=(-s "$SIZE" -n "$LAT_N")
	fi
	f0=$(frames)
	if [ "$side" = rxe ]; then
		rxe "ib_send_$mode" "${args[@]}"
		# perftest: bw bytes iters peak avg msgrate; lat bytes iters
		# t_min t_max t_typical ...
		rxe_v=$(echo "$out" | awk '{ print $5 }')
		rxe_f=$(($(frames) - f0))
	else
		qpio "ib_send_$mode" "${args[@]}"
		if [ "$mode" = bw ]; then
			qpio_v=$(echo "$out" | awk '{ print $2 }')
		else
			qpio_v=$(echo "$out" | awk '{ print $1 }')
		fi
		qpio_f=$(($(frames) - f0))
		# how often the client's QP sent again (a timeout or a NAK)
		qpio_r=$(sed -n 's/^ qp: transport_retries \([0-9]*\).*/\1/p' /tmp/qpio-c.log | head -n 1)
	fi
}

for i in $(seq 1 "$ROUNDS"); do
	for mode in bw lat; do
		if [ $((i % 2)) = 1 ]; then
			run rxe $mode; run qpio $mode; order="rxe first"
		else
			run qpio $mode; run rxe $mode; order="qpio first"
		fi
		if ! positive "$rxe_v" || ! positive "$qpio_v"; then
			fail "round $i send_$mode: no number (rxe '$rxe_v', qpio '$qpio_v')"
			continue
		fi
		# every message crossed as a frame (and was answered)
		n=$LAT_N
		[ "$mode" = bw ] && n=$BW_N
		for f in "$rxe_f" "$qpio_f"; do
			[ "$f" -ge "$n" ] || fail "round $i send_$mode: $f frames crossed the veth for $n messages"
		done
		if [ "$mode" = bw ]; then
			note "$(awk -v i="$i" -v o="$order" -v a="$rxe_v" -v b="$qpio_v" \
				-v fa="$rxe_f" -v fb="$qpio_f" -v r="${qpio_r:-0}" 'BEGIN {
				printf "round %d send_bw  (%s): MsgRate rxe %.6f Mpps, qpio %.6f Mpps, qpio/rxe %.2f (veth frames %d, %d; qpio retries %d)",
					i, o, a, b, (a > 0 ? b / a : 0), fa, fb, r }')"
		else
			note "$(awk -v i="$i" -v o="$order" -v a="$rxe_v" -v b="$qpio_v" \
				-v fa="$rxe_f" -v fb="$qpio_f" -v r="${qpio_r:-0}" 'BEGIN {
				printf "round %d send_lat (%s): t_typical rxe %.2f us, qpio %.2f us, qpio/rxe %.2f (veth frames %d, %d; qpio retries %d)",
					i, o, a, b, (a > 0 ? b / a : 0), fa, fb, r }')"
		fi
	done
done
# the rxe devices' own counters: what they sent and received, all runs
for d in rxe0 rxe1; do
	h=/sys/class/infiniband/$d/ports/1/hw_counters
	note "$d: sent_pkts $(cat "$h/sent_pkts"), rcvd_pkts $(cat "$h/rcvd_pkts"), duplicate_request $(cat "$h/duplicate_request"), retry_exceeded_err $(cat "$h/retry_exceeded_err")"
done
note "VM: kernel $(uname -r), $(nproc) vCPUs; $SIZE B, send_bw $BW_N and send_lat $LAT_N iterations, $ROUNDS rounds; load after $(cut -d' ' -f1-3 /proc/loadavg)"
finish
