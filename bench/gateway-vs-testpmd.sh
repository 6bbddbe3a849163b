#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Throughput and latency between two network namespaces through
#   (a) qpio-gateway: eth ports on the PMD, routed over a soft-NIC RC link,
#   (b) dpdk-testpmd io forwarding between the same veths with the same
#       PMD (an L2 wire: no routing, no RC link),
#   (c) the kernel's own routing (upper reference),
# measured in turns (a, b, c, a, b, c, ...), printed with ratios and the
# machine load.
#
#   bench/gateway-vs-testpmd.sh [-t SECONDS] [-r ROUNDS]
#                               [--pmd af_xdp|af_packet] [--build DIR]
#
#   -t SECONDS  iperf3 TCP time per measurement (default 5)
#   -r ROUNDS   rounds of a, b, c (default 3)
#   --pmd P     PMD of (a) and (b) (default af_xdp)
#
# TCP: iperf3 a -> b, receiver Mbit/s. Latency: ping a -> b, 50 packets
# 20 ms apart, mean RTT. Veth offloads are off in every mode (ethtool), as
# the gateway needs. Needs root, iperf3, ethtool, dpdk-testpmd
# (usertools/install-deps.sh --bench). Numbers are reported, never judged.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
secs=5 rounds=3 pmd=af_xdp
while [ $# -gt 0 ]; do
	case $1 in
	-t) secs=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	--pmd) pmd=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	-h|--help) sed -n '3,23p' "$0"; exit 0 ;;
	*) echo "gateway-vs-testpmd: unknown option $1" >&2; exit 2 ;;
	esac
done
gw_bin=$build/examples/gateway/qpio-gateway
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
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$nsg" && ip netns add "$nsa" && ip netns add "$nsb" || exit 1
site() {
	local ns=$1 v=$2
	ip link add "$v" type veth peer name "${v}h"
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
start_b() {
	tail -f /dev/null | ip netns exec "$nsg" stdbuf -oL dpdk-testpmd -l 0-1 --no-huge \
		--no-pci -m 512 --file-prefix="qpio-btp-$id" \
		--log-level=lib.eal:error \
		--vdev="net_${pmd}0,iface=$va" --vdev="net_${pmd}1,iface=$vb" -- \
		--forward-mode=io --auto-start --disable-link-check \
		--total-num-mbufs=16384 \
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
		-t "$secs" --connect-timeout 3000 2>/dev/null |
		awk '/receiver/ {print $(NF-2)}')
	wait $srv 2>/dev/null
	rtt=$(ip netns exec "$nsa" ping -q -c 50 -i 0.02 -W 1 "$dst" 2>/dev/null |
		awk -F/ '/^rtt/ {print $5}')
	echo "${mbit:-0} ${rtt:-nan}"
}

results=$(mktemp)
for r in $(seq "$rounds"); do
	for m in a b c; do
		case $m in
		a) start_a || { echo "(a) gateway did not start"; cat "$log"; exit 1; }
		   res=$(measure 10.2.0.2); stop_fwd ;;
		b) start_b || { echo "(b) dpdk-testpmd did not start"; cat "$log"; exit 1; }
		   res=$(measure 10.9.0.2); stop_fwd ;;
		c) start_c; res=$(measure 10.2.0.2); stop_c ;;
		esac
		read -r t l <<<"$res"
		printf 'round %u (%s): %8.1f Mbit/s  rtt %s ms  load %s\n' "$r" "$m" \
			"$t" "$l" "$(cut -d' ' -f1 /proc/loadavg)"
		echo "$m $t $l" >>"$results"
	done
done

echo
echo "PMD $pmd, $rounds rounds of ${secs}s; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Means over the runs that worked (throughput > 0 and an RTT).
awk '$2 > 0 && $3 != "nan" { t[$1] += $2; l[$1] += $3; n[$1]++ }
END {
	name["a"] = "(a) qpio-gateway over RC"
	name["b"] = "(b) dpdk-testpmd io     "
	name["c"] = "(c) kernel routing      "
	split("a b c", ms, " ")
	for (i = 1; i <= 3; i++) {
		m = ms[i]
		if (n[m] == 0) { printf "%s: no successful run\n", name[m]; continue }
		t[m] /= n[m]; l[m] /= n[m]
		printf "%s: %8.1f Mbit/s  rtt %.3f ms  (%d runs)\n", name[m], t[m], l[m], n[m]
	}
	if (n["a"] && n["b"] && n["c"])
		printf "throughput (a)/(b) %.2f  (a)/(c) %.2f;  rtt (a)/(b) %.2f  (a)/(c) %.2f\n",
			t["a"] / t["b"], t["a"] / t["c"], l["a"] / l["b"], l["a"] / l["c"]
}' "$results"
rm -f "$results"
