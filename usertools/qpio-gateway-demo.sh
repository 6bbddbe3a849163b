#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-gateway between two sites, checked with real tools.
#
#   usertools/qpio-gateway-demo.sh [--build DIR] [--pmd auto|af_xdp|af_packet]
#                                  [--seconds N] [--mtu A,B] [--queues N]
#                                  [--keep-log FILE]
#
# Builds this, as root, and removes all of it at exit (also on Ctrl-C):
#
#   netns qgwA<id>: host 10.1.0.2/24 fd00:1::2/64 ---veth--+
#                                                          | netns qgwG<id>:
#                                        qpio-gateway (eth0 <-> qp0 ==RC== qp1 <-> eth1)
#                                                          |
#   netns qgwB<id>: host 10.2.0.2/24 fd00:2::2/64 ---veth--+
#
# The gateway process runs in its own namespace, whose kernel has no
# address and no route, so no packet leaves the three namespaces. Veth
# offloads are switched off with ethtool: a PMD that reads frames off an
# interface sees what the kernel handed to the wire, and with checksum
# offload on that is a TCP/UDP checksum not yet computed, with TSO/GSO on
# frames of up to 64 KiB.
#
# --mtu A,B sets the MTU of site a's and site b's veth pair (default
# 1500,1500). --queues N (2..8) runs the gateway with N queues per port
# on N worker lcores (net_af_packet; the workers go round the CPUs after
# the main lcore's) and checks as well that every queue of site a
# received traffic.
#
# Checks, each must pass: ping and ping -6 both ways with 0 % loss, an
# iperf3 TCP run each way, a UDP run, an HTTP GET, ICMP time exceeded and
# unreachable. With both MTUs 8100 or more: ping -s 8000 -M do both ways
# (jumbo frames end to end). With A 8100 or more and B below A: path MTU
# discovery through the gateway (ping -M do gets fragmentation needed /
# packet too big with mtu = B; then ping -s 8000 passes both ways, the
# gateway fragmenting at B). Exit 0 when all pass, 1 when one fails, 77
# when network namespaces cannot be made here (not root, no netns
# support) or a tool is missing.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build
pmd=auto
secs=3
keep_log=
mtu_a=1500 mtu_b=1500
queues=1
while [ $# -gt 0 ]; do
	case $1 in
	--queues)
		case ${2:-} in
		[2-8]) queues=$2 ;;
		*) echo "qpio-gateway-demo: --queues ${2:-}: want 2..8" >&2; exit 2 ;;
		esac
		shift 2 ;;
	--build) build=$2; shift 2 ;;
	--mtu)
		case $2 in
		[0-9]*,[0-9]*) mtu_a=${2%,*} mtu_b=${2#*,} ;;
		*) echo "qpio-gateway-demo: --mtu $2: want A,B (two MTUs in bytes)" >&2
			exit 2 ;;
		esac
		shift 2 ;;
	--pmd) pmd=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--keep-log) keep_log=$2; shift 2 ;;
	-h|--help) sed -n '3,42p' "$0"; exit 0 ;;
	*) echo "qpio-gateway-demo: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done

gw_bin=$build/examples/gateway/qpio-gateway
conf=$here/examples/gateway/gateway.conf
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces"
for t in ip ethtool ping iperf3 timeout python3; do
	command -v $t >/dev/null || skip "$t missing (usertools/install-deps.sh)"
done
[ -x "$gw_bin" ] || { echo "FAIL: $gw_bin not built"; exit 1; }

id=$(printf '%05d' $(($$ % 100000)))
nsa=qgwA$id nsb=qgwB$id nsg=qgwG$id
va=qga$id vb=qgb$id            # gateway ends; host ends get an "h"
log=$(mktemp)
gw_pid=

cleanup() {
	trap - EXIT INT TERM
	# a check still running in the background (run_bg)
	jobs -p | xargs -r kill 2>/dev/null
	if [ -n "$gw_pid" ] && kill -0 "$gw_pid" 2>/dev/null; then
		kill -TERM "$gw_pid" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$gw_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$gw_pid" 2>/dev/null
		wait "$gw_pid" 2>/dev/null
	fi
	for ns in "$nsa" "$nsb" "$nsg"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	if [ -n "$keep_log" ]; then cp "$log" "$keep_log"; fi
	rm -f "$log" "${out_file:-}"
	# a gateway killed above had no time to remove its runtime directory
	rm -rf "/var/run/dpdk/qpio-gw-$id"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM

ip netns add "$nsg" 2>/dev/null || skip "cannot create network namespaces here"
ip netns add "$nsa" && ip netns add "$nsb" || { echo "FAIL: netns add"; exit 1; }

# site <ns> <gateway end> <host addr4> <gw addr4> <host addr6> <gw addr6> <mtu>
site() {
	local ns=$1 v=$2
	ip link add "$v" mtu "$7" type veth peer name "${v}h" mtu "$7" || return 1
	ip link set "${v}h" netns "$ns" && ip link set "$v" netns "$nsg" || return 1
	ip netns exec "$nsg" sysctl -qw "net.ipv6.conf.$v.disable_ipv6=1"
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" ip addr add "$3/24" dev "${v}h"
	ip netns exec "$ns" ip -6 addr add "$5/64" dev "${v}h" nodad
	ip netns exec "$ns" ip link set "${v}h" up
	ip netns exec "$nsg" ip link set "$v" up
	ip netns exec "$ns" ip route add default via "$4"
	ip netns exec "$ns" ip -6 route add default via "$6"
	# Frames on the wire complete: no checksum or segmentation offload.
	ip netns exec "$ns" ethtool -K "${v}h" tx off tso off gso off gro off >/dev/null 2>&1
	ip netns exec "$nsg" ethtool -K "$v" tx off tso off gso off gro off >/dev/null 2>&1
}
site "$nsa" "$va" 10.1.0.2 10.1.0.1 fd00:1::2 fd00:1::1 "$mtu_a" &&
site "$nsb" "$vb" 10.2.0.2 10.2.0.1 fd00:2::2 fd00:2::1 "$mtu_b" ||
	{ echo "FAIL: veth setup"; exit 1; }

lcores="-l 0-1"
if [ "$queues" -gt 1 ]; then
	lcores=--lcores=0@0
	for i in $(seq "$queues"); do
		lcores="$lcores,$i@$((i % $(nproc)))"
	done
fi
# shellcheck disable=SC2086  # lcores is one or two words
ip netns exec "$nsg" "$gw_bin" $lcores --no-huge --no-pci -m 512 \
	--file-prefix="qpio-gw-$id" --log-level=lib.eal:error \
	-- --conf "$conf" --iface-a "$va" --iface-b "$vb" --pmd "$pmd" \
	--queues "$queues" >"$log" 2>&1 &
gw_pid=$!
for _ in $(seq 200); do
	grep -q '^gateway running' "$log" && break
	kill -0 "$gw_pid" 2>/dev/null || break
	sleep 0.1
done
grep -q '^gateway running' "$log" || { echo "FAIL: gateway did not start"; cat "$log"; exit 1; }
grep -E '^site .: port|^RC link' "$log"

fails=0
# run_bg <out file> <command...>: the command in the background, waited
# for with the wait builtin, which a signal interrupts at once (bash runs
# a trap only after a foreground command ends: Ctrl-C or kill -INT would
# otherwise wait for an iperf3 run).
run_bg() {
	local out=$1; shift
	"$@" >"$out" 2>&1 &
	local pid=$!
	wait "$pid"
}
out_file=$(mktemp)
check() {
	local what=$1; shift
	if run_bg "$out_file" "$@"; then
		echo "PASS: $what"
		sed 's/^/    /' "$out_file"
	else
		echo "FAIL: $what"; tail -5 "$out_file"
		fails=$((fails + 1))
	fi
}
# ping_ok <ns> <ping args...>: 0 % loss wanted.
ping_ok() {
	local ns=$1; shift
	local out
	out=$(ip netns exec "$ns" ping -c 5 -i 0.2 -W 2 "$@" 2>&1)
	echo "$out" | tail -2
	echo "$out" | grep -q ' 0% packet loss'
}
iperf_run() {
	local mode=$1; shift
	ip netns exec "$nsb" timeout $((secs + 15)) iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
	local srv=$!
	sleep 0.5
	local out rc
	out=$(ip netns exec "$nsa" timeout $((secs + 10)) iperf3 -c 10.2.0.2 \
		-p 5201 -t "$secs" --connect-timeout 3000 "$@" 2>&1)
	rc=$?
	wait $srv 2>/dev/null
	echo "$out" | grep -E 'sender|receiver' | sed "s/^/  $mode /"
	[ $rc = 0 ] && echo "$out" | grep -q receiver
}
check "ping a -> b (10.2.0.2)" ping_ok "$nsa" 10.2.0.2
check "ping b -> a (10.1.0.2)" ping_ok "$nsb" 10.1.0.2
check "ping -6 a -> b (fd00:2::2)" ping_ok "$nsa" -6 fd00:2::2
check "ping -6 b -> a (fd00:1::2)" ping_ok "$nsb" -6 fd00:1::2
check "iperf3 TCP a -> b, ${secs}s" iperf_run tcp-a2b
check "iperf3 TCP b -> a, ${secs}s" iperf_run tcp-b2a -R
check "iperf3 UDP a -> b 20 Mbit/s, ${secs}s" iperf_run udp-a2b -u -b 20M
# Several queues: eight TCP flows, which the kernel spreads by their hash
# (all eight on one of two queues: 1 run in 128).
if [ "$queues" -gt 1 ]; then
	check "iperf3 TCP a -> b, 8 streams, ${secs}s" iperf_run tcp8-a2b -P 8
fi
# An HTTP exchange: python3's http.server in b, a GET of a 256 KiB file
# from a, checked byte for byte.
http_get() {
	local dir out
	dir=$(mktemp -d)
	head -c 262144 /dev/urandom >"$dir/blob"
	(cd "$dir" && exec ip netns exec "$nsb" timeout 50 python3 -m http.server \
		8080 --bind 10.2.0.2) >/dev/null 2>&1 &
	local srv=$!
	out=$(ip netns exec "$nsa" timeout 45 python3 - "$dir/blob" <<'PY'
import hashlib, sys, time, urllib.request
want = hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest()
for _ in range(300):
    try:
        body = urllib.request.urlopen("http://10.2.0.2:8080/blob", timeout=5).read()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("no answer from 10.2.0.2:8080")
got = hashlib.sha256(body).hexdigest()
print("%d bytes, sha256 %s" % (len(body), "equal" if got == want else "DIFFERENT"))
sys.exit(0 if got == want else 1)
PY
)
	local rc=$?
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	rm -rf "$dir"
	echo "$out"
	return $rc
}
check "HTTP GET a -> b (256 KiB)" http_get
# TTL 2 leaves the first router half with TTL 1: the second drops it
# and answers time exceeded (RFC 1812 5.3.1) from its address; a
# destination without a route gets net / no-route unreachable from the
# first (ICMP errors: doc/guides/sample_app_ug/gateway.rst).
# icmp_err_ok <what> <text wanted> <ping args...>
icmp_err_ok() {
	local what=$1 want=$2
	shift 2
	run_bg "$out_file" ip netns exec "$nsa" ping -c 1 -W 2 "$@"
	if grep -q "$want" "$out_file"; then
		echo "PASS: $what: $want"
	else
		echo "FAIL: $what: no '$want' in:"; cat "$out_file"
		fails=$((fails + 1))
	fi
}
icmp_err_ok "ping -t 2 a -> b" "From 10.2.0.1 .*Time to live exceeded" \
	-t 2 10.2.0.2
icmp_err_ok "ping -6 -t 2 a -> b" "From fd00:2::1 .*Time exceeded: Hop limit" \
	-6 -t 2 fd00:2::2
icmp_err_ok "ping a -> 10.9.9.9 (no route)" \
	"From 10.1.0.1 .*Destination Net Unreachable" 10.9.9.9
icmp_err_ok "ping -6 a -> fd00:9::1 (no route)" \
	"From fd00:1::1 .*Destination unreachable: No route" -6 fd00:9::1
# Jumbo frames end to end, and path MTU discovery through the gateway:
# site b's half answers a datagram above B with DF set with
# fragmentation needed (RFC 1191), an IPv6 packet with packet too big
# (RFC 4443 3.2); once host a knows the path MTU it fragments itself,
# and the datagrams b -> a (reassembled by net_af_packet's fanout) and
# a -> b come out of site b's half cut to B.
pmtud=0
if [ "$mtu_a" -ge 8100 ] && [ "$mtu_b" -ge 8100 ]; then
	check "ping -s 8000 -M do a -> b (jumbo)" ping_ok "$nsa" -s 8000 -M do 10.2.0.2
	check "ping -s 8000 -M do b -> a (jumbo)" ping_ok "$nsb" -s 8000 -M do 10.1.0.2
	check "ping -6 -s 8000 -M do a -> b (jumbo)" ping_ok "$nsa" -6 -s 8000 -M do fd00:2::2
elif [ "$mtu_a" -ge 8100 ] && [ "$mtu_b" -lt "$mtu_a" ]; then
	pmtud=1
	icmp_err_ok "ping -s 8000 -M do a -> b" \
		"From 10.2.0.1 .*Frag needed and DF set (mtu = $mtu_b)" \
		-s 8000 -M do 10.2.0.2
	icmp_err_ok "ping -6 -s 8000 a -> b" \
		"From fd00:2::1 .*Packet too big: mtu=$mtu_b" -6 -s 8000 fd00:2::2
	check "ping -s 8000 a -> b after path MTU discovery" ping_ok "$nsa" -s 8000 10.2.0.2
	check "ping -s 8000 b -> a" ping_ok "$nsb" -s 8000 10.1.0.2
	check "ping -6 -s 8000 a -> b after path MTU discovery" ping_ok "$nsa" -6 -s 8000 fd00:2::2
fi

kill -TERM "$gw_pid"
wait "$gw_pid"
gw_rc=$?
gw_pid=
grep -E '^site .( queue [0-9]+ \(lcore [0-9]+\))?: (eth|arp|drops|ipv4|icmp|before)|^mbufs not returned' "$log"
for q in $(seq 0 $((queues - 1))); do
	[ "$queues" -gt 1 ] || break
	grep -Eq "^site a queue $q \(lcore [0-9]+\): eth rx [1-9]" "$log" ||
		{ echo "FAIL: site a queue $q received nothing"; fails=$((fails + 1)); }
done
# net_af_packet gives every mbuf back at close; net_af_xdp (DPDK 22.11)
# keeps the ones in its fill ring (doc/guides/nics/eth.rst).
if grep -q 'through net_af_packet' "$log" &&
	! grep -q '^mbufs not returned to gw_pool: 0$' "$log"; then
	echo "FAIL: mbufs not returned with net_af_packet"; fails=$((fails + 1))
fi
[ $gw_rc = 0 ] || { echo "FAIL: gateway exit status $gw_rc"; fails=$((fails + 1)); }
grep -q '^site b: drops ttl [1-9]' "$log" ||
	{ echo "FAIL: site b counted no TTL drop"; fails=$((fails + 1)); }
grep -q '^site b: icmp errors sent: time exceeded [1-9]' "$log" ||
	{ echo "FAIL: site b sent no time exceeded"; fails=$((fails + 1)); }
grep -q '^site a: icmp errors sent: time exceeded 0 unreachable [1-9]' "$log" ||
	{ echo "FAIL: site a sent no unreachable"; fails=$((fails + 1)); }
if [ $pmtud = 1 ]; then
	grep -q '^site b: ipv4 fragmented [1-9]' "$log" ||
		{ echo "FAIL: site b fragmented nothing"; fails=$((fails + 1)); }
	grep -q '^site b: icmp errors sent: .* too big [1-9]' "$log" ||
		{ echo "FAIL: site b sent no fragmentation needed / packet too big"
		  fails=$((fails + 1)); }
fi
if [ $fails = 0 ]; then
	echo "PASS: all gateway checks"
	exit 0
fi
echo "FAIL: $fails gateway checks failed"
exit 1
