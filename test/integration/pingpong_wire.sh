#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-pingpong over the wire: the gateway and the exchange each on a
# soft wire device of its own, on the two ends of a veth pair through
# DPDK's net_af_packet (--dev given twice), so every order and its answer
# is a RoCEv2 RC packet through the kernel's veth. The program checks
# every answer against its order (it exits 1 on the first wrong one); the
# test checks the exit status, the run line and that every order was
# measured.
#
#   pingpong_wire.sh PINGPONG_BINARY
#
# Root only (veth); exits 77 (skipped) with the reason otherwise.
set -u
pp=$1
skip() { echo "pingpong-wire: SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root for a veth pair"
command -v ip >/dev/null || skip "ip (iproute2) not installed"
a=qpw$$a
b=qpw$$b
work=$(mktemp -d /tmp/qpio-pingpong-wire.XXXXXX)
cleanup() {
	ip link del "$a" 2>/dev/null
	rm -rf "$work" "/var/run/dpdk/pw-$$"
}
trap cleanup EXIT
. "$(dirname "$0")/../veth.sh"
veth_up "$a" "$b" || skip "cannot create a veth pair"
n=2000
da="soft0,wire=net_af_packet0,ip=10.0.0.1"
db="soft1,wire=net_af_packet1,ip=10.0.0.2"
timeout 120 "$pp" -l 0-1 --no-huge --no-shconf --no-pci -m 512 \
	--file-prefix="pw-$$" --log-level=lib.eal:error \
	--vdev="net_af_packet0,iface=$a" --vdev="net_af_packet1,iface=$b" -- \
	--dev "$da" --dev "$db" --count "$n" --warmup 100 > "$work/out" 2>&1
st=$?
rc=0
fail() { echo "pingpong-wire: FAIL: $*"; rc=1; }
[ "$st" = 0 ] || fail "exit status $st, want 0"
grep -qx "qpio-pingpong: $n orders of 32 bytes on $da and $db, gateway lcore 0, exchange lcore 1" "$work/out" ||
	fail "no run line naming both devices"
grep -q "^half round trip over $n orders: min [0-9]* ns" "$work/out" ||
	fail "not every order measured"
[ "$rc" = 0 ] || sed 's/^/  /' "$work/out"
[ "$rc" = 0 ] && grep "^half round trip" "$work/out"
exit "$rc"
