#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-testpmd --capture: pcapng files written while ports forward, read
# back frame for frame (qpio-pcapcmp, on libpcap; a pcapng block reader;
# tcpdump), snaplen, rotation with the drop count, bad options.
#
#   capture.sh BUILDDIR
set -u

build=$1
tp=$build/app/testpmd/qpio-testpmd
cmp=$build/app/pcapcmp/qpio-pcapcmp
here=$(cd "$(dirname "$0")" && pwd)
ref=$here/../../data/linux-stack.pcap
chk=$here/pcapng_check.py
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

eal=(-l 0-1 --no-huge --no-shconf --no-pci -m 512 --no-telemetry
     --log-level=lib.eal:error --file-prefix="qpio-it-cap-$$")

fail() {
	echo "FAIL (capture): $*"
	echo "--- stdout"; cat "$t/out" 2>/dev/null
	echo "--- stderr"; cat "$t/err" 2>/dev/null
	exit 1
}

# 1. A capture file forwarded io from pcap0 to pcap1: port 0 rx and
# port 1 tx captured whole, port 1 tx again snapped to 96 bytes.
"$tp" "${eal[@]}" -- --dev pcap0,rx_pcap="$ref" \
	--dev pcap1,tx_pcap="$t/fwd.pcap" --forward-mode=io \
	--capture 0/rx="$t/rx.pcapng" --capture 1/tx="$t/tx.pcapng" \
	--capture 0/tx="$t/none.pcapng" >"$t/out" 2>"$t/err"
rc=$?
[ $rc = 0 ] || fail "exit status $rc"
n=$("$cmp" "$ref" "$t/fwd.pcap" | sed -n 's/^identical: \([0-9]*\) packets$/\1/p')
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "forwarded file differs from the input"
grep -q "^Capture port 0 -> $t/rx.pcapng: $n frames tapped, $n written, 0 dropped, 1 files" \
	"$t/out" || fail "rx capture counters"
grep -q "^Capture port 1 -> $t/tx.pcapng: $n frames tapped, $n written, 0 dropped, 1 files" \
	"$t/out" || fail "tx capture counters"
grep -q "^Capture port 0 -> $t/none.pcapng: 0 frames tapped, 0 written" \
	"$t/out" || fail "port 0 sent nothing, yet its tx capture has frames"
# libpcap (qpio-pcapcmp): frame for frame.
[ "$("$cmp" "$ref" "$t/rx.pcapng")" = "identical: $n packets" ] ||
	fail "rx capture differs from the input: $("$cmp" "$ref" "$t/rx.pcapng")"
[ "$("$cmp" "$t/fwd.pcap" "$t/tx.pcapng")" = "identical: $n packets" ] ||
	fail "tx capture differs from what was sent"
[ "$("$cmp" "$ref" "$t/none.pcapng" 2>&1 | head -1)" = "differ: record 1: only in $ref ($t/none.pcapng has 0 records)" ] ||
	fail "empty capture is not an empty pcapng file"
# The blocks themselves: interface, direction, lengths.
python3 "$chk" snap "$t/rx.pcapng" "$ref" 1518 in pcap0 || fail "rx blocks"
python3 "$chk" snap "$t/tx.pcapng" "$ref" 1518 out pcap1 || fail "tx blocks"
# tcpdump: the same frames, decoded, without timestamps.
if command -v tcpdump >/dev/null; then
	tcpdump -r "$ref" -nn -t -x >"$t/a" 2>/dev/null || fail "tcpdump on $ref"
	tcpdump -r "$t/rx.pcapng" -nn -t -x >"$t/b" 2>/dev/null ||
		fail "tcpdump cannot read the rx capture"
	[ "$(tcpdump -r "$t/rx.pcapng" -nn -t 2>/dev/null | wc -l)" = "$n" ] ||
		fail "tcpdump: not $n frames"
	cmp -s "$t/a" "$t/b" || fail "tcpdump: rx capture decodes differently"
else
	echo "tcpdump not installed (usertools/install-deps.sh): its pass skipped"
fi

# 2. snaplen.
"$tp" "${eal[@]}" -- --dev pcap0,rx_pcap="$ref" \
	--dev pcap1,tx_pcap="$t/fwd.pcap" \
	--capture 1/tx="$t/snap.pcapng",snaplen=96 >"$t/out" 2>"$t/err" ||
	fail "snaplen run: exit status $?"
python3 "$chk" snap "$t/snap.pcapng" "$ref" 96 out pcap1 || fail "snapped blocks"

# 3. Rotation at 1 MiB, and the drop count: every frame port 1 received
# is either written or counted as dropped (the generator outruns the
# writer). How many files depends on the writer's speed; the unit test
# port_capture/rotates_at_max_bytes_with_exact_frame_counts checks exact
# counts.
"$tp" "${eal[@]}" -- --dev ring0,peer=ring1 --dev ring1,peer=ring0 \
	--forward-mode=txonly,rxonly --duration=1 \
	--capture 1/rx="$t/rot.pcapng",max-mb=1 >"$t/out" 2>"$t/err" ||
	fail "rotation run: exit status $?"
line=$(grep "^Capture port 1 -> $t/rot.pcapng: " "$t/out") || fail "no capture line"
read -r tapped written dropped files <<<"$(sed -E 's/.*: ([0-9]+) frames tapped, ([0-9]+) written, ([0-9]+) dropped, ([0-9]+) files.*/\1 \2 \3 \4/' <<<"$line")"
rx=$(awk '/Forward statistics for port 1/ { p = 1 } p && $1 == "RX-packets:" { print $2; exit }' "$t/out")
[ "$tapped" = "$rx" ] || fail "tapped $tapped, port 1 received $rx"
[ $((written + dropped)) = "$tapped" ] || fail "written $written + dropped $dropped != $tapped"
[ "$files" -ge 1 ] || fail "no file"
list=("$t/rot.pcapng")
for k in $(seq 1 $((files - 1))); do
	list+=("$t/rot.$k.pcapng")
done
[ ! -e "$t/rot.$files.pcapng" ] || fail "more files than counted"
for f in "${list[@]}"; do
	size=$(stat -c %s "$f")
	[ "$size" -lt $((1024 * 1024 + 70000)) ] ||
		fail "$f: $size bytes, more than 1 MiB and one burst"
	[ "$f" = "${list[-1]}" ] || [ "$size" -ge $((1024 * 1024)) ] ||
		fail "$f: rotated at $size bytes, below 1 MiB"
done
[ "$(python3 "$chk" count "${list[@]}")" = "$written" ] ||
	fail "files hold $(python3 "$chk" count "${list[@]}") packets, $written written"

# 4. Bad options name the rule; an unwritable file is a runtime error.
bad() {
	local want=$1
	shift
	"$tp" "${eal[@]}" -- --dev ring0,peer=ring1 --dev ring1,peer=ring0 \
		"$@" >"$t/out" 2>"$t/err"
	rc=$?
	[ $rc = 2 ] || fail "'$*': exit status $rc, want 2"
	grep -q -- "$want" "$t/err" || fail "'$*': no message '$want'"
}
bad '--capture 2...: port 2 does not exist' --capture 2=x.pcapng
bad "direction 'up' must be rx or tx" --capture 0/up=x.pcapng
bad 'snaplen=70000 must be a decimal integer in \[0, 65000\]' \
	--capture 0=x.pcapng,snaplen=70000
bad "unknown key 'size=3'" --capture 0=x.pcapng,size=3
bad 'port 0 rx is captured twice' --capture 0=a.pcapng --capture 0/rx=b.pcapng
bad 'want PORT\[/rx|/tx\]=FILE' --capture 0
"$tp" "${eal[@]}" -- --dev ring0,peer=ring1 --dev ring1,peer=ring0 \
	--capture 0=/nonexistent-qpio/x.pcapng >"$t/out" 2>"$t/err"
rc=$?
[ $rc = 1 ] || fail "unwritable capture: exit status $rc, want 1"
grep -q 'x.pcapng: No such file or directory (ENOENT)' "$t/err" ||
	fail "unwritable capture: no message"
# qpio-pcapcmp, used above, names an option it does not know.
"$cmp" --bogus "$ref" "$ref" >"$t/out" 2>"$t/err"
[ $? = 2 ] || fail "qpio-pcapcmp --bogus: exit status, want 2"
grep -q -- '--bogus: unknown option' "$t/err" || fail "qpio-pcapcmp --bogus: no message"
echo "PASS (capture): $n frames frame for frame, snaplen, $files files, $dropped dropped"
