#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two soft wire devices in two IPv4 subnets with the kernel as the router
# between them: device A (10.0.81.1/24, gw=10.0.81.254) on one veth pair,
# device B (10.0.82.2/24, gw=10.0.82.254) on another, the router a
# network namespace holding the other ends (10.0.81.254, 10.0.82.254)
# with IP forwarding on. Each device asks ARP for its gateway only; the
# kernel forwards the RoCEv2 packets (TTL less one, which the ICRC does
# not cover). Checked: qpio-cmatose over RC (the IB CM's MADs routed like
# the data) and UD (SIDR), every completion a success at both ends; the
# router forwarded at least every RC message's packets (its
# ForwDatagrams) and learnt both devices' MACs.
#
#   wire_routed.sh CMATOSE_BINARY
#
# Root only (namespaces, veths); exits 77 (skipped) with the reason
# otherwise.
set -u
cm=$1
skip() { echo "wire-routed: SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root for a network namespace and veth pairs"
command -v ip >/dev/null || skip "ip (iproute2) not installed"
ns=qwr$$
a=qwr$$a
b=qwr$$b
work=$(mktemp -d /tmp/qpio-wire-routed.XXXXXX)
cleanup() {
	ip link del "$a" 2>/dev/null
	ip link del "$b" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work" /var/run/dpdk/wr-*-$$
}
trap cleanup EXIT
. "$(dirname "$0")/../veth.sh"
ip netns add "$ns" || skip "cannot create a network namespace"
veth_up "$a" "${a}r" && veth_up "$b" "${b}r" || skip "cannot create the veth pairs"
R() { ip netns exec "$ns" "$@"; }
ip link set "${a}r" netns "$ns" && ip link set "${b}r" netns "$ns" ||
	{ echo "wire-routed: FAIL: moving the router's ends"; exit 1; }
R ip link set lo up
for i in "${a}r" "${b}r"; do
	R sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
	R ethtool -K "$i" tx off >/dev/null 2>&1
	R ip link set "$i" up
done
R ip addr add 10.0.81.254/24 dev "${a}r" &&
	R ip addr add 10.0.82.254/24 dev "${b}r" &&
	R sysctl -qw net.ipv4.ip_forward=1 ||
	{ echo "wire-routed: FAIL: the router's addresses"; exit 1; }
forwarded() { R cat /proc/net/snmp | awk '/^Ip: [0-9]/ { print $7 }'; }
fw0=$(forwarded)

dev_a="soft0,wire=net_af_packet0,ip=10.0.81.1/24,gw=10.0.81.254"
dev_b="soft1,wire=net_af_packet1,ip=10.0.82.2/24,gw=10.0.82.254"
rc=0
fail() { echo "wire-routed: FAIL: $*"; rc=1; }
cmrun() {
	local prefix=$1 vdev=$2 dev=$3
	shift 3
	timeout 60 "$cm" -l 0 --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix="$prefix" --log-level=lib.eal:error \
		--vdev="$vdev" -- --dev "$dev" --timeout 30 "$@"
}
# pair NAME COUNT SIZE [--ud]: qpio-cmatose listening on B, its client on
# A, COUNT messages of SIZE bytes each way; 1 when both report success.
pair() {
	local name=$1 count=$2 size=$3 tr=RC ok=0
	shift 3
	[ "${1:-}" = --ud ] && tr=UD
	cmrun "wr-s$name-$$" "net_af_packet1,iface=$b" "$dev_b" -b 10.0.82.2 \
		-C "$count" -S "$size" "$@" > "$work/$name-server.log" 2>&1 &
	local srv=$!
	for _ in 1 2 3 4 5; do
		sleep 1
		if cmrun "wr-c$name-$$" "net_af_packet0,iface=$a" "$dev_a" \
			-s 10.0.82.2 -C "$count" -S "$size" "$@" \
			> "$work/$name-client.log" 2>&1; then
			ok=1
			break
		fi
		# the server not listening yet, or this client's af_packet
		# port drew the server's fanout group (test/veth.sh)
		grep -q "UNREACHABLE" "$work/$name-client.log" ||
			af_packet_fanout_clash "$work/$name-client.log" || break
	done
	[ "$ok" = 1 ] || kill "$srv" 2>/dev/null
	wait "$srv" || ok=0
	for side in server client; do
		grep -q "^qpio-cmatose: $side: $count messages of $size bytes each way over $tr, every completion a success$" \
			"$work/$name-$side.log" || ok=0
	done
	if [ "$ok" = 1 ]; then
		echo "   $name: $count messages of $size bytes each way over $tr, every completion a success"
	else
		fail "$name: qpio-cmatose across the router"
		sed "s/^/  $name server: /" "$work/$name-server.log" | tail -20
		sed "s/^/  $name client: /" "$work/$name-client.log" | tail -20
	fi
}
# RC: 3000 bytes at path MTU 1024, 3 packets a message each way
pair rc 200 3000
fw=$(( $(forwarded) - fw0 ))
[ "$fw" -ge $((2 * 3 * 200)) ] ||
	fail "the router forwarded $fw datagrams, want at least $((2 * 3 * 200))"
echo "   router: $fw datagrams forwarded"
# UD through SIDR, one datagram a message
pair ud 100 1000 --ud
# The router learnt each device's MAC from its ARP (each device asked
# for its gateway; the router asked for the device)
for ip in 10.0.81.1 10.0.82.2; do
	R ip neigh show "$ip" | grep -q "lladdr" ||
		fail "the router has no MAC for $ip"
done
[ "$rc" = 0 ] || exit 1
echo "wire-routed: PASS (RC and UD through the kernel's forwarding, the IB CM and SIDR across it)"
