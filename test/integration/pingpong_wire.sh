#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-pingpong over the wire: the gateway and the exchange each on a
# soft wire device of its own, on the two ends of a veth pair through
# DPDK's net_af_packet (--dev given twice), so every order and its answer
# is a RoCEv2 RC packet through the kernel's veth. The program checks
# every answer against its order (it exits 1 on the first wrong one); the
# test checks the exit status, the run line and that every order was
# measured. With "two", the two sides are two processes, one on each
# veth end: the exchange --listen 0 (a free port of its device, which it
# prints), the gateway --connect to it, the connection made by lib/cm's
# IB CM on QP1; the exchange must say it answered every order, warm-up
# included.
#
#   pingpong_wire.sh PINGPONG_BINARY [one|two [CMATOSE_BINARY]]
#
# With CMATOSE_BINARY, "two" first sends the exchange a stranger's connect
# request (qpio-cmatose's, without qpio-pingpong's private data): it must
# be rejected and the exchange must go on listening.
#
# Root only (veth); exits 77 (skipped) with the reason otherwise.
set -u
pp=$1
mode=${2:-one}
cmatose=${3:-}
skip() { echo "pingpong-wire: SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root for a veth pair"
command -v ip >/dev/null || skip "ip (iproute2) not installed"
a=qpw$$a
b=qpw$$b
work=$(mktemp -d /tmp/qpio-pingpong-wire.XXXXXX)
exo=
cleanup() {
	[ -n "$exo" ] && kill "$exo" 2>/dev/null
	ip link del "$a" 2>/dev/null
	rm -rf "$work" "/var/run/dpdk/pw-$$" "/var/run/dpdk/pwx-$$" \
		"/var/run/dpdk/pwg-$$"
}
trap cleanup EXIT
. "$(dirname "$0")/../veth.sh"
veth_up "$a" "$b" || skip "cannot create a veth pair"
n=2000
da="soft0,wire=net_af_packet0,ip=10.0.0.1"
db="soft1,wire=net_af_packet1,ip=10.0.0.2"
rc=0
fail() { echo "pingpong-wire: FAIL: $*"; rc=1; }
if [ "$mode" = two ]; then
	timeout 120 "$pp" -l 1 --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix="pwx-$$" --log-level=lib.eal:error \
		--vdev="net_af_packet0,iface=$a" -- --dev "$da" --listen 0 \
		> "$work/exchange" 2>&1 &
	exo=$!
	port=$(listen_port "$work/exchange" "$exo") || { sed 's/^/  exchange: /' "$work/exchange"; echo "pingpong-wire: FAIL: the exchange never listened"; exit 1; }
	# a stranger's request first (qpio-cmatose, no qpio-pingpong
	# private data): rejected, and the exchange listens on
	if [ -n "$cmatose" ]; then
		timeout 30 "$cmatose" -l 0 --no-huge --no-shconf --no-pci -m 256 \
			--file-prefix="pwc-$$" --log-level=lib.eal:error \
			--vdev="net_af_packet1,iface=$b" -- --dev "$db" \
			-s 10.0.0.1 -p "$port" -c 1 > "$work/stranger" 2>&1 &&
			fail "qpio-cmatose's request was accepted"
		rm -rf "/var/run/dpdk/pwc-$$"
		grep -q "rejected; listening on" "$work/exchange" ||
			{ fail "the exchange did not reject the stranger's request"; sed 's/^/  stranger: /' "$work/stranger"; }
	fi
	for _ in 1 2 3; do
		timeout 120 "$pp" -l 0 --no-huge --no-shconf --no-pci -m 256 \
			--file-prefix="pwg-$$" --log-level=lib.eal:error \
			--vdev="net_af_packet1,iface=$b" -- --dev "$db" \
			--connect "10.0.0.1:$port" --count "$n" --warmup 100 \
			> "$work/out" 2>&1
		st=$?
		# again when this gateway's af_packet port drew the
		# exchange's fanout group number (test/veth.sh)
		[ "$st" != 0 ] && af_packet_fanout_clash "$work/out" || break
	done
	wait "$exo"
	xst=$?
	exo=
	[ "$xst" = 0 ] || fail "the exchange's exit status $xst, want 0"
	grep -qx "qpio-pingpong: exchange answered $((n + 100)) orders of 32 bytes" "$work/exchange" ||
		fail "the exchange did not answer every order"
	run_line="qpio-pingpong: $n orders of 32 bytes on $db, gateway lcore 0, exchange at 10.0.0.1:$port"
else
	timeout 120 "$pp" -l 0-1 --no-huge --no-shconf --no-pci -m 512 \
		--file-prefix="pw-$$" --log-level=lib.eal:error \
		--vdev="net_af_packet0,iface=$a" --vdev="net_af_packet1,iface=$b" -- \
		--dev "$da" --dev "$db" --count "$n" --warmup 100 > "$work/out" 2>&1
	st=$?
	run_line="qpio-pingpong: $n orders of 32 bytes on $da and $db, gateway lcore 0, exchange lcore 1"
fi
[ "$st" = 0 ] || fail "exit status $st, want 0"
grep -qx "$run_line" "$work/out" || fail "no run line '$run_line'"
grep -q "^half round trip over $n orders: min [0-9]* ns" "$work/out" ||
	fail "not every order measured"
if [ "$rc" != 0 ]; then
	sed 's/^/  /' "$work/out"
	[ "$mode" = two ] && sed 's/^/  exchange: /' "$work/exchange"
fi
[ "$rc" = 0 ] && grep "^half round trip" "$work/out"
exit "$rc"
