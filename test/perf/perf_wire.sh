#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-perf between two processes whose soft devices are on the wire
# (RoCEv2 through net_af_packet on the two ends of a veth pair), every
# test of perftest's set with --validate: SEND, WRITE, READ and atomics,
# latency and bandwidth, RC; each must exit 0 with its payloads checked
# and none lost. Then ib_write_lat over --perftest's exchange, clean and
# with one message corrupted by the client.
#
#   perf_wire.sh QPIO_PERF
#
# Root only (veth); exits 77 (skipped) with the reason otherwise.
set -u
perf=$1
skip() { echo "perf-wire: SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root for a veth pair"
command -v ip >/dev/null || skip "ip (iproute2) not installed"
a=qpw$$a
b=qpw$$b
port=$((20000 + ($$ + 7) % 20000))
work=$(mktemp -d /tmp/qpio-perf-wire.XXXXXX)
cleanup() {
	ip link del "$a" 2>/dev/null
	rm -rf "$work" /var/run/dpdk/pw-s-$$-* /var/run/dpdk/pw-c-$$-*
}
trap cleanup EXIT
. "$(dirname "$0")/../veth.sh"
veth_up "$a" "$b" || skip "cannot create a veth pair"
rc=0
# TEST SIZE ITERS CHECKED (the messages one end's --validate must have
# checked)
while read -r t size n want; do
	common=(--no-huge --no-shconf --no-pci -m 256 --log-level=lib.eal:error)
	timeout 60 "$perf" -l 0 "${common[@]}" --file-prefix="pw-s-$$-$t" \
		--vdev="net_af_packet0,iface=$a" -- --test "$t" -s "$size" -n "$n" \
		--dev soft0,wire=net_af_packet0,ip=10.0.0.1 --server -p "$port" \
		--validate > "$work/$t.server" 2>&1 &
	srv=$!
	ok=0
	for _ in 1 2 3 4 5; do
		sleep 1
		if timeout 60 "$perf" -l 1 "${common[@]}" --file-prefix="pw-c-$$-$t" \
			--vdev="net_af_packet1,iface=$b" -- --test "$t" -s "$size" \
			-n "$n" --dev soft1,wire=net_af_packet1,ip=10.0.0.2 \
			--connect 127.0.0.1 -p "$port" --validate > "$work/$t.client" 2>&1; then
			ok=1
			break
		fi
		# again while the server is not up yet, or when this client's
		# af_packet port drew the server's fanout group number
		# (test/veth.sh)
		af_packet_fanout_clash "$work/$t.client" && continue
		grep -q "connect" "$work/$t.client" && ! grep -q "validate:" "$work/$t.client" || break
	done
	[ "$ok" = 1 ] || kill "$srv" 2>/dev/null
	wait "$srv" || ok=0
	# both ends' checks: none failed, and one end checked at least the
	# table's count (the receiver of SENDs and WRITEs, the requester of
	# READs and atomics; a WRITE bandwidth run's target checks the slots
	# still holding its last messages)
	line=$(grep -h "validate:" "$work/$t.server" "$work/$t.client" | tr -s ' ' | tr '\n' ';')
	most=0
	for c in $(grep -h "validate:" "$work/$t.server" "$work/$t.client" |
		   sed -n 's/.*validate: \([0-9]*\) checked.*/\1/p'); do
		[ "$c" -gt "$most" ] && most=$c
	done
	grep -qE "validate:.* [1-9][0-9]* (mismatches|lost)" \
		"$work/$t.server" "$work/$t.client" && ok=0
	[ "$most" -ge "$want" ] || ok=0
	if [ "$ok" = 1 ]; then
		echo "perf-wire: $t -s $size -n $n: PASS ($line)"
	else
		echo "perf-wire: $t -s $size -n $n: FAIL"
		sed 's/^/  server: /' "$work/$t.server"
		sed 's/^/  client: /' "$work/$t.client"
		rc=1
	fi
done <<'EOF2'
ib_send_lat 2 2000 2000
ib_send_bw 4096 4000 4000
ib_write_lat 4096 2000 2000
ib_write_bw 65536 1000 128
ib_read_lat 2 2000 2000
ib_read_bw 8192 1000 1000
ib_atomic_lat 8 2000 2000
ib_atomic_bw 8 2000 2000
EOF2

# --perftest's own exchange between two qpio-perf: ib_write_lat's
# --validate (every message brings the first one's bytes, as perftest's
# do) checks each message at both ends, and a message the client
# corrupts (--corrupt-at 5) is exactly one mismatch at the server, which
# then exits 1.
for hook in "" 5; do
	name=perftest-write-lat${hook:+-corrupt}
	common=(--no-huge --no-shconf --no-pci -m 256 --log-level=lib.eal:error)
	timeout 60 "$perf" -l 0 "${common[@]}" --file-prefix="pw-s-$$-$name" \
		--vdev="net_af_packet0,iface=$a" -- --perftest --server \
		--test ib_write_lat -s 64 -n 500 \
		--dev soft0,wire=net_af_packet0,ip=10.0.0.1 -p "$port" \
		--validate > "$work/$name.server" 2>&1 &
	srv=$!
	for _ in 1 2 3 4 5; do
		sleep 1
		timeout 60 "$perf" -l 1 "${common[@]}" --file-prefix="pw-c-$$-$name" \
			--vdev="net_af_packet1,iface=$b" -- --perftest \
			--connect 127.0.0.1 -p "$port" --test ib_write_lat -s 64 \
			-n 500 --dev soft1,wire=net_af_packet1,ip=10.0.0.2 \
			--validate ${hook:+--corrupt-at $hook} > "$work/$name.client" 2>&1
		crc=$?
		af_packet_fanout_clash "$work/$name.client" && continue
		grep -q "validate:" "$work/$name.client" && break
	done
	wait "$srv"
	src=$?
	ok=1
	grep -q "validate: 500 checked, 0 mismatches, 0 lost" "$work/$name.client" || ok=0
	[ "$crc" = 0 ] || ok=0
	if [ -z "$hook" ]; then
		want="validate: 500 checked, 0 mismatches"
		[ "$src" = 0 ] || ok=0
	else
		want="validate: 500 checked, 1 mismatches"
		[ "$src" = 1 ] || ok=0
	fi
	grep -q "$want" "$work/$name.server" || ok=0
	if [ "$ok" = 1 ]; then
		echo "perf-wire: $name: PASS ($(grep -h "validate:" "$work/$name.server" | tr -s ' '); server exit $src)"
	else
		echo "perf-wire: $name: FAIL (client exit $crc, server exit $src, want '$want' at the server)"
		sed 's/^/  server: /' "$work/$name.server"
		sed 's/^/  client: /' "$work/$name.client"
		rc=1
	fi
done
exit $rc
