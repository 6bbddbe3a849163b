#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-pipeline on a live interface through the eth port (net_af_packet).
#
#   pipeline_live.sh PATH/TO/qpio-pipeline RULES SENDER.py
#
# As root, builds two network namespaces joined by a veth pair, neither
# with an address or a route, IPv6 off and offloads off on both ends:
#
#   netns qplS<id>: qpls<id> ---veth--- qplp<id> :netns qplP<id>
#     SENDER.py (AF_PACKET)              qpio-pipeline --in eth0,vdev=
#                                          net_af_packet0,iface=qplp<id>
#
# The sender writes 31 frames of known 5-tuples (UDP, TCP SYN, a denied
# port, ARP, GRE, a malformed IPv4 header, and over IPv6 UDP behind a
# hop-by-hop header, TCP SYN to a denied port and an ICMPv6 echo no rule
# matches); the pipeline stops at the 31st (--packets 31, bounded by
# --duration). Its flows CSV, every stage
# counter and the mbufs outstanding at exit must be exactly as expected.
# Everything is removed at exit, also on failure or Ctrl-C. Exit 0 pass,
# 1 fail, 77 when namespaces cannot be made here (not root, no netns
# support) or a tool is missing.
set -u

pl=$1
rules=$2
sender=$3
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces"
for t in ip ethtool timeout python3; do
	command -v $t >/dev/null || skip "$t missing (usertools/install-deps.sh)"
done
[ -x "$pl" ] || fail "$pl not built"

id=$(printf '%05d' $(($$ % 100000)))
nsp=qplP$id nss=qplS$id
vp=qplp$id vs=qpls$id
work=$(mktemp -d)
pl_pid=

cleanup() {
	trap - EXIT INT TERM
	if [ -n "$pl_pid" ] && kill -0 "$pl_pid" 2>/dev/null; then
		kill -TERM "$pl_pid" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$pl_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pl_pid" 2>/dev/null
		wait "$pl_pid" 2>/dev/null
	fi
	for ns in "$nsp" "$nss"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM

ip netns add "$nsp" 2>/dev/null || skip "cannot create network namespaces here"
ip netns add "$nss" || fail "netns add $nss"
# The pair is made inside the namespaces: it never shows in the caller's.
ip netns exec "$nsp" ip link add "$vp" type veth peer name "$vs" netns "$nss" ||
	fail "veth pair"
# quiet <ns> <iface>: nothing of the kernel's own on the wire (no IPv6
# autoconfiguration, no address), frames as written (no offload).
quiet() {
	ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1" 2>/dev/null
	ip netns exec "$1" ethtool -K "$2" tx off tso off gso off gro off \
		>/dev/null 2>&1
	ip netns exec "$1" ip link set "$2" up
}
quiet "$nsp" "$vp" && quiet "$nss" "$vs" || fail "veth up"

# --packets 0 is refused before any port is opened.
if "$pl" -l 0-1 --no-huge --no-shconf --no-pci -m 512 --no-telemetry \
	--log-level=lib.eal:error --file-prefix="qpio-it-pll0-$id" -- \
	--in "pcap0,rx_pcap=/nonexistent" --rules "$rules" --packets 0 \
	>"$work/bad" 2>&1; then
	fail "--packets 0 accepted"
fi
grep -q -- '--packets=0: want a frame count >= 1' "$work/bad" ||
	{ cat "$work/bad"; fail "--packets 0: no reason given"; }

ip netns exec "$nsp" timeout -s KILL 40 "$pl" --lcores=0@0,1@0,2@1 \
	--no-huge --no-shconf --no-pci -m 512 --no-telemetry \
	--log-level=lib.eal:error --log-level='qpio.*:warning' \
	--file-prefix="qpio-it-pll-$id" -- \
	--in "eth0,vdev=net_af_packet0,iface=$vp" --rules "$rules" \
	--flows "$work/flows.csv" --packets 31 --duration 20 \
	>"$work/out" 2>&1 &
pl_pid=$!
for _ in $(seq 300); do
	grep -q '^stage sink on lcore' "$work/out" && break
	kill -0 "$pl_pid" 2>/dev/null || break
	sleep 0.1
done
grep -q '^stage sink on lcore' "$work/out" ||
	{ cat "$work/out"; fail "pipeline did not start"; }

ip netns exec "$nss" timeout 20 python3 "$sender" "$vs" ||
	fail "sender"
wait "$pl_pid"
rc=$?
pl_pid=
cat "$work/out"
[ $rc = 0 ] || fail "pipeline exit status $rc"

fails=0
want() {
	if grep -qFx -- "$1" "$work/out"; then
		echo "PASS: $1"
	else
		echo "FAIL: want \"$1\""; fails=$((fails + 1))
	fi
}
want "rx: 31 frames, ring full 0"
want "classify: in 31, permitted 22, denied 4, no_match 2, not_ip 2, bad 1, ring full 0; ipv6 in 6"
want "flows: in 22, flows 5, table full 0, link tx 22, link drops 0"
want "sink: link rx 22, out tx 0, out drops 0"
want "mbufs not returned to pl_pool: 0"
cat >"$work/want.csv" <<'CSV'
proto,src,sport,dst,dport,packets,bytes,rule_line
6,10.9.0.2,40000,10.9.0.1,80,5,270,5
6,10.9.0.4,40001,10.9.0.1,443,3,162,5
17,10.9.0.2,5000,10.9.0.1,6000,7,742,6
17,10.9.0.3,5353,10.9.0.1,53,4,248,6
17,fd00:9::2,5001,fd00:9::1,6001,3,270,6
CSV
if diff -u "$work/want.csv" "$work/flows.csv"; then
	echo "PASS: 5 flows (one IPv6), packets and bytes exact"
else
	echo "FAIL: flows differ"; fails=$((fails + 1))
fi
[ $fails = 0 ] || fail "$fails checks"
echo "PASS: pipeline on a live veth"
