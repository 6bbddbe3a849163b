#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-gateway's interface MTUs at start, on real veths.
#
#   gateway_mtu.sh PATH/TO/qpio-gateway GATEWAY.CONF
#
# As root, in a network namespace of its own with two veth pairs
# (gateway ends qgma<id>, qgmb<id>), runs the gateway with
# --no-huge -m 512 --duration 1 at:
#   - MTU 1279 on site a with the IPv6 route file: refused, naming the
#     interface, RFC 8200 5 and both fixes; exit 1, nothing started;
#   - the same MTU with the file's IPv6 lines taken out: runs, exit 0;
#   - MTU 61360 (the largest whose mbufs fit 65535 bytes) both sites,
#     with IPv6: runs in 512 MB (a pool of 3264 mbufs, ring frames of
#     61440 bytes, 546 a ring), exit 0; and with --queues 8 on three
#     workers: runs in 512 MB too, queue q of both sites on worker
#     q mod 3, every mbuf back;
#   - MTU 61361: refused with the largest that works, exit 1.
# Exit 0 pass, 1 fail, 77 when namespaces cannot be made here.
set -u

gw=$1
conf=$2
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -f "$out" ] && cat "$out"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "ip missing (usertools/install-deps.sh)"
[ -x "$gw" ] || fail "$gw not built"

id=$(printf '%05d' $(($$ % 100000)))
ns=qgm$id
va=qgma$id vb=qgmb$id
work=$(mktemp -d)
out=$work/out
cleanup() {
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace"
for v in "$va" "$vb"; do
	ip -n "$ns" link add "$v" type veth peer name "${v}h" &&
	ip -n "$ns" link set "$v" up && ip -n "$ns" link set "${v}h" up ||
		fail "veth $v"
done

# mtu A B: set both pairs' MTU
mtu() {
	ip -n "$ns" link set "$va" mtu "$1" && ip -n "$ns" link set "${va}h" mtu "$1" &&
	ip -n "$ns" link set "$vb" mtu "$2" && ip -n "$ns" link set "${vb}h" mtu "$2" ||
		fail "MTU $1 $2"
}
# run NAME CONF [ARGS...]: the gateway for a second, ARGS before its
# options (EAL's: -l 0-1 unless given) and after; its exit status in $rc
n=0
run() {
	local name=$1 c=$2 lcores="-l 0-1" extra=()
	shift 2
	while [ $# -gt 0 ]; do
		case $1 in --lcores=*) lcores=$1 ;; *) extra+=("$1") ;; esac
		shift
	done
	n=$((n + 1))
	# shellcheck disable=SC2086  # lcores is one or two words
	timeout 60 ip netns exec "$ns" "$gw" $lcores --no-huge --no-pci -m 512 \
		--file-prefix="qpio-gwmtu-$id-$n" --log-level=lib.eal:error \
		-- --conf "$c" --iface-a "$va" --iface-b "$vb" --pmd af_packet \
		--duration 1 "${extra[@]}" >"$out" 2>&1
	rc=$?
	echo "-- $name: exit $rc"
}

mtu 1279 1500
run "IPv6 at MTU 1279" "$conf"
[ "$rc" = 1 ] || fail "IPv6 at MTU 1279: exit $rc, want 1"
want="gateway: site a: interface $va: MTU 1279 is below IPv6's 1280 (RFC 8200 5) and the site has IPv6 addresses or routes: raise the MTU to 1280 or more, or take site a's IPv6 lines out of the route file"
grep -qxF "$want" "$out" || fail "IPv6 at MTU 1279: no line '$want'"
grep -q '^site a: port' "$out" && fail "IPv6 at MTU 1279: a port was started"

grep -v -e ':' -e '^#' "$conf" >"$work/v4.conf"
[ "$(grep -c ' addr \| route ' "$work/v4.conf")" = 4 ] ||
	fail "the IPv4 lines of $conf are not the 4 expected"
run "IPv4 only at MTU 1279" "$work/v4.conf"
[ "$rc" = 0 ] || fail "IPv4 only at MTU 1279: exit $rc, want 0"
grep -qxF "site a: port eth0 on $va through net_af_packet, MTU 1279" "$out" ||
	fail "IPv4 only at MTU 1279: no port line with MTU 1279"

mtu 61360 61360
run "MTU 61360" "$conf"
[ "$rc" = 0 ] || fail "MTU 61360: exit $rc, want 0"
for s in a b; do
	v=$va; [ $s = b ] && v=$vb
	grep -qxF "site $s: port eth$([ $s = a ] && echo 0 || echo 1) on $v through net_af_packet, MTU 61360" "$out" ||
		fail "MTU 61360: no port line for site $s"
done

# Eight queues on three workers at the largest MTU: within -m 512 (the
# link's receive buffers are shared by its queues, a jumbo pool's lcore
# cache is small), queue q of both sites on worker q mod 3, every mbuf
# back.
run "MTU 61360, 8 queues" "$conf" --lcores=0@0,1@1,2@1,3@0 --queues 8
[ "$rc" = 0 ] || { cat "$out"; fail "MTU 61360, 8 queues: exit $rc, want 0"; }
for q in 0 1 2 3 4 5 6 7; do
	for s in a b; do
		grep -qxF "site $s queue $q on lcore $((q % 3 + 1))" "$out" ||
			fail "MTU 61360, 8 queues: site $s queue $q not on lcore $((q % 3 + 1))"
	done
done
grep -qxF 'mbufs not returned to gw_pool: 0' "$out" ||
	fail "MTU 61360, 8 queues: mbufs not returned"

mtu 61361 1500
run "MTU 61361" "$conf"
[ "$rc" = 1 ] || fail "MTU 61361: exit $rc, want 1"
grep -qF "lower the interfaces' MTU to at most 61360" "$out" ||
	fail "MTU 61361: the largest MTU that works is not named"
echo "PASS: 5 runs"
