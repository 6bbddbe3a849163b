#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Throughput and latency between two network namespaces through
#   (a) qpio-gateway: eth ports on the PMD, routed over a soft-NIC RC link,
#       both sites on one worker lcore,
#   (d) the same with --queues N on N worker lcores (net_af_packet
#       qpairs=N: the kernel spreads flows by hash; one RC QP per queue),
#   (b) dpdk-testpmd io forwarding between the same veths with the same
#       PMD (an L2 wire: no routing, no RC link),
#   (c) the kernel's own routing (upper reference),
# measured in turns (a, d, b, c, a, d, b, c, ...), printed with ratios and
# the machine load.
#
#   bench/gateway-vs-testpmd.sh [-t SECONDS] [-r ROUNDS] [-P STREAMS]
#                               [--pmd af_xdp|af_packet] [--queues N]
#                               [--mtu BYTES] [--build DIR]
#
#   -t SECONDS  iperf3 TCP time per measurement (default 5)
#   -r ROUNDS   rounds of a, d, b, c (default 3)
#   -P STREAMS  iperf3 parallel TCP streams (default 1; several flows
#               are what (d) spreads over its queues)
#   --pmd P     PMD of (a) and (b) (default af_xdp; (d) is net_af_packet)
#   --queues N  queues and worker lcores of (d), 2..8 (default 2)
#   --mtu BYTES the veths' MTU, 1280..9000 (default 1500); above 1968
#               (jumbo: beyond net_af_xdp here) only with --pmd af_packet,
#               whose ring frames and dpdk-testpmd's mbufs grow to fit
#
# Loss: after each forwarder run, the frames its PMD missed (rings the
# kernel found full) and the veths' rx_dropped: the gateway's "before the
# site" lines, dpdk-testpmd's RX-dropped (its imissed).
#
# TCP: iperf3 a -> b, receiver Mbit/s. Latency: ping a -> b, 50 packets
# 20 ms apart, mean RTT. The worker lcores of (d) go round the machine's
# CPUs after the main lcore's (CPU 0): on a 2-CPU machine one of them
# shares CPU 0 with the (sleeping) main lcore and both share the CPUs with
# iperf3. Veth offloads are off in every mode (ethtool), as
# the gateway needs. Needs root, iperf3, ethtool, dpdk-testpmd
# (usertools/install-deps.sh --bench). Numbers are reported, never judged.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
secs=5 rounds=3 pmd=af_xdp streams=1 queues=2 keep=0 mtu=1500
near_ns=80	# cache-line one-way ns below which a placement is "near"
usage_err() { echo "gateway-vs-testpmd: $*" >&2; exit 2; }
die() { echo "gateway-vs-testpmd: $*" >&2; exit 1; }
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
while [ $# -gt 0 ]; do
	case $1 in
	-t|-r|-P|--pmd|--queues|--mtu|--build)
		[ $# -ge 2 ] || usage_err "$1 needs a value" ;;
	esac
	case $1 in
	-t) need_whole -t "$2" seconds; secs=$2; shift 2 ;;
	-r) need_whole -r "$2" rounds; rounds=$2; shift 2 ;;
	-P) need_whole -P "$2" streams; streams=$2; shift 2 ;;
	--pmd) pmd=$2; shift 2 ;;
	--queues)
		case $2 in [2-8]) queues=$2 ;; *) usage_err "--queues wants 2..8, got '$2'" ;; esac
		shift 2 ;;
	--mtu)
		need_whole --mtu "$2" bytes
		[ "$2" -ge 1280 ] && [ "$2" -le 9000 ] ||
			usage_err "--mtu wants 1280..9000 bytes, got $2"
		mtu=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	-h|--help) sed -n '3,42p' "$0"; exit 0 ;;
	*) usage_err "unknown option '$1'" ;;
	esac
done
[ "$streams" -le 128 ] || usage_err "-P wants 1..128 streams (iperf3's limit), got $streams"
case $pmd in af_xdp|af_packet) ;; *) usage_err "--pmd wants af_xdp or af_packet, got '$pmd'" ;; esac
[ "$mtu" -le 1968 ] || [ "$pmd" = af_packet ] ||
	usage_err "--mtu $mtu is jumbo: give --pmd af_packet (net_af_xdp shares 2048-byte mbufs here)"
# dpdk-testpmd's net_af_packet for jumbo frames: ring frames of whole
# pages holding the frame after the kernel's 66 bytes, mbufs holding a
# ring frame (qpio's gateway sizes its own the same way).
tp_pmd_args= tp_mbuf_args=
if [ "$mtu" -gt 1968 ]; then
	page=$(getconf PAGESIZE)
	framesz=$(( (mtu + 14 + 66 + page - 1) / page * page ))
	tp_pmd_args=",framesz=$framesz,blocksz=$framesz,framecnt=2048"
	# net_af_packet (22.11) says 1518 bytes is its largest frame and
	# refuses a larger --max-pkt-len, yet receives and sends whatever
	# its ring frames hold: the MTU stays at testpmd's default.
	tp_mbuf_args="--mbuf-size=$((framesz + 128))"
fi
gw_bin=$build/examples/gateway/qpio-gateway
cacheline=$build/bench/qpio-bench-cacheline
[ -x "$cacheline" ] || usage_err "qpio-bench-cacheline not built ($cacheline)"
conf=$top/examples/gateway/gateway.conf
[ "$(id -u)" = 0 ] || { echo "gateway-vs-testpmd: needs root" >&2; exit 2; }
for t in ip ethtool ping iperf3 dpdk-testpmd; do
	command -v $t >/dev/null ||
		{ echo "gateway-vs-testpmd: $t missing (install-deps.sh --bench)" >&2; exit 2; }
done
[ -x "$gw_bin" ] || { echo "gateway-vs-testpmd: $gw_bin not built" >&2; exit 2; }

id=$(printf '%05d' $(($$ % 100000)))
nsa=qbA$id nsb=qbB$id nsg=qbG$id va=qba$id vb=qbb$id
log=$(mktemp)
fwd_pid=
stop_fwd() {
	if [ -n "$fwd_pid" ]; then
		kill -TERM "$fwd_pid" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$fwd_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$fwd_pid" 2>/dev/null
		wait "$fwd_pid" 2>/dev/null
		fwd_pid=
	fi
}
cleanup() {
	trap - EXIT INT TERM
	stop_fwd
	for ns in "$nsa" "$nsb" "$nsg"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	rm -f "$log"
	# a forwarder killed above had no time to remove its runtime
	# directory; dpdk-testpmd never removes its own
	rm -rf "/var/run/dpdk/qpio-bgw-$id" "/var/run/dpdk/qpio-btp-$id"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$nsg" && ip netns add "$nsa" && ip netns add "$nsb" || exit 1
site() {
	local ns=$1 v=$2
	ip link add "$v" mtu "$mtu" type veth peer name "${v}h" mtu "$mtu"
	ip link set "${v}h" netns "$ns"
	ip link set "$v" netns "$nsg"
	ip netns exec "$nsg" sysctl -qw "net.ipv6.conf.$v.disable_ipv6=1"
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" ip addr add "$3/24" dev "${v}h"
	ip netns exec "$ns" ip addr add "$5/24" dev "${v}h"
	ip netns exec "$ns" ip link set "${v}h" up
	ip netns exec "$nsg" ip link set "$v" up
	ip netns exec "$ns" ip route add 10.2.0.0/16 via "$4" 2>/dev/null
	ip netns exec "$ns" ip route replace default via "$4"
	ip netns exec "$ns" ethtool -K "${v}h" tx off tso off gso off gro off >/dev/null 2>&1
	ip netns exec "$nsg" ethtool -K "$v" tx off tso off gso off gro off >/dev/null 2>&1
}
# Routed addresses for (a) and (c); 10.9.0.0/24 on both hosts for the
# L2 wire of (b).
site "$nsa" "$va" 10.1.0.2 10.1.0.1 10.9.0.1
site "$nsb" "$vb" 10.2.0.2 10.2.0.1 10.9.0.2

wait_line() {   # wait_line PATTERN: for the forwarder's start line
	for _ in $(seq 300); do
		grep -q "$1" "$log" && return 0
		kill -0 "$fwd_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
start_a() {
	ip netns exec "$nsg" "$gw_bin" -l 0-1 --no-huge --no-pci -m 512 \
		--file-prefix="qpio-bgw-$id" --log-level=lib.eal:error -- \
		--conf "$conf" --iface-a "$va" --iface-b "$vb" --pmd "$pmd" \
		>"$log" 2>&1 &
	fwd_pid=$!
	wait_line '^gateway running'
}
start_d() {
	local lcores=0@0 i ncpu
	ncpu=$(nproc)
	for i in $(seq "$queues"); do
		lcores="$lcores,$i@$((i % ncpu))"
	done
	ip netns exec "$nsg" "$gw_bin" --lcores="$lcores" --no-huge --no-pci \
		-m 512 --file-prefix="qpio-bgw-$id" --log-level=lib.eal:error -- \
		--conf "$conf" --iface-a "$va" --iface-b "$vb" --pmd af_packet \
		--queues "$queues" >"$log" 2>&1 &
	fwd_pid=$!
	wait_line '^gateway running'
}
start_b() {
	tail -f /dev/null | ip netns exec "$nsg" stdbuf -oL dpdk-testpmd -l 0-1 --no-huge \
		--no-pci -m 512 --file-prefix="qpio-btp-$id" \
		--log-level=lib.eal:error \
		--vdev="net_${pmd}0,iface=$va$tp_pmd_args" \
		--vdev="net_${pmd}1,iface=$vb$tp_pmd_args" -- \
		--forward-mode=io --auto-start --disable-link-check \
		--total-num-mbufs=16384 $tp_mbuf_args \
		>"$log" 2>&1 &
	fwd_pid=$!
	wait_line 'Press enter to exit\|Start automatic packet forwarding'
}
start_c() {
	ip netns exec "$nsg" ip addr add 10.1.0.1/24 dev "$va"
	ip netns exec "$nsg" ip addr add 10.2.0.1/24 dev "$vb"
	ip netns exec "$nsg" sysctl -qw net.ipv4.ip_forward=1
}
stop_c() {
	ip netns exec "$nsg" sysctl -qw net.ipv4.ip_forward=0
	ip netns exec "$nsg" ip addr flush dev "$va"
	ip netns exec "$nsg" ip addr flush dev "$vb"
}

measure() {     # measure DST: prints "<Mbit/s> <rtt ms>"
	local dst=$1 mbit rtt
	ip netns exec "$nsb" timeout $((secs + 20)) iperf3 -s -1 >/dev/null 2>&1 &
	local srv=$!
	sleep 0.5
	mbit=$(ip netns exec "$nsa" timeout $((secs + 15)) iperf3 -c "$dst" -f m \
		-t "$secs" -P "$streams" --connect-timeout 3000 2>/dev/null |
		awk '/receiver/ {v = $(NF-2)} END {print v}')
	wait $srv 2>/dev/null
	rtt=$(ip netns exec "$nsa" ping -q -c 50 -i 0.02 -W 1 "$dst" 2>/dev/null |
		awk -F/ '/^rtt/ {print $5}')
	echo "${mbit:-0} ${rtt:-nan}"
}

# rx_dropped of both gateway-side veths, summed (sysfs of their netns)
veth_drops() {
	ip netns exec "$nsg" cat "/sys/class/net/$va/statistics/rx_dropped" \
		"/sys/class/net/$vb/statistics/rx_dropped" 2>/dev/null |
		awk '{s += $1} END {print s + 0}'
}
# missed MODE: the frames the forwarder's PMD missed, from its log
missed() {
	case $1 in
	a|d) awk '/^site .: before the site: eth port missed/ {s += $9}
		END {print s + 0}' "$log" ;;
	b) awk '/Accumulated forward statistics/ {acc = 1}
		acc && /RX-dropped:/ {for (i = 1; i < NF; i++)
			if ($i == "RX-dropped:") {print $(i + 1); exit}}' "$log" ;;
	*) echo 0 ;;
	esac
}

results=$(mktemp)
for r in $(seq "$rounds"); do
	# the placement this round runs in (never mixed across rounds
	# without this label)
	ow=$(one_way)
	place=far
	awk -v o="${ow:-1e9}" -v n="$near_ns" 'BEGIN {exit !(o < n)}' && place=near
	echo "round $r: cache-line one-way $ow ns ($place)"
	for m in a d b c; do
		d0=$(veth_drops)
		case $m in
		a) start_a || { echo "(a) gateway did not start"; cat "$log"; exit 1; }
		   res=$(measure 10.2.0.2); stop_fwd ;;
		d) start_d || { echo "(d) gateway did not start"; cat "$log"; exit 1; }
		   res=$(measure 10.2.0.2); stop_fwd
		   # how the flows spread: site a's eth rx per queue
		   spread=$(sed -n 's/^site a queue \([0-9]*\) .*: eth rx \([0-9]*\) .*/q\1 \2/p' \
			"$log" | paste -sd' ')
		   echo "round $r (d): site a eth rx per queue: $spread" ;;
		b) start_b || { echo "(b) dpdk-testpmd did not start"; cat "$log"; exit 1; }
		   res=$(measure 10.9.0.2); stop_fwd ;;
		c) start_c; res=$(measure 10.2.0.2); stop_c ;;
		esac
		read -r t l <<<"$res"
		ms=$(missed "$m")
		dr=$(( $(veth_drops) - d0 ))
		printf 'round %u (%s): %8.1f Mbit/s  rtt %s ms  missed %s  veth rx_dropped %s  load %s\n' \
			"$r" "$m" "$t" "$l" "${ms:-?}" "$dr" "$(cut -d' ' -f1 /proc/loadavg)"
		echo "$m $t $l $place ${ms:-0} $dr" >>"$results"
	done
done

echo
echo "PMD $pmd ((d): af_packet, $queues queues), MTU $mtu, $rounds rounds of ${secs}s," \
	"$streams TCP stream(s); $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' \
	/proc/cpuinfo | head -1)), load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Means over the runs that worked (throughput > 0 and an RTT), apart for
# each placement: never mixed.
for place in near far; do
awk -v p="$place" '$4 == p {f = 1} END {exit !f}' "$results" || continue
echo "-- placement $place (cache-line one-way $([ $place = near ] && echo below || echo at or above) $near_ns ns):"
awk -v p="$place" '$4 == p && $2 > 0 && $3 != "nan" { t[$1] += $2; l[$1] += $3; n[$1]++
	miss[$1] += $5; drop[$1] += $6 }
END {
	name["a"] = "(a) qpio-gateway over RC"
	name["d"] = "(d) the same, N queues  "
	name["b"] = "(b) dpdk-testpmd io     "
	name["c"] = "(c) kernel routing      "
	split("a d b c", ms, " ")
	for (i = 1; i <= 4; i++) {
		m = ms[i]
		if (n[m] == 0) { printf "%s: no successful run\n", name[m]; continue }
		t[m] /= n[m]; l[m] /= n[m]
		printf "%s: %8.1f Mbit/s  rtt %.3f ms  missed %d  veth rx_dropped %d  (%d runs; losses summed)\n",
			name[m], t[m], l[m], miss[m], drop[m], n[m]
	}
	if (n["a"] && n["b"] && n["c"])
		printf "throughput (a)/(b) %.2f  (a)/(c) %.2f;  rtt (a)/(b) %.2f  (a)/(c) %.2f\n",
			t["a"] / t["b"], t["a"] / t["c"], l["a"] / l["b"], l["a"] / l["c"]
	if (n["a"] && n["d"])
		printf "throughput (d)/(a) %.2f;  rtt (d)/(a) %.2f\n",
			t["d"] / t["a"], l["d"] / l["a"]
}' "$results"
done
rm -f "$results"
