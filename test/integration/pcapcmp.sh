#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-pcapcmp on the shared captures: identical files, one changed byte,
# a shortened copy, a different length, unreadable files.
#
#   pcapcmp.sh QPIO_PCAPCMP DATA_DIR
#
# Exit 77 (skipped) when DATA_DIR (../shared/data/pcap) is absent.
set -u

cmp_bin=$1
data=$2
if [ ! -d "$data/real" ]; then
	echo "skip: capture folder $data is absent"
	exit 77
fi

tmp=$(mktemp -d /tmp/qpio-pcapcmp-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect CODE STDOUT-LINE A B
expect() {
	want_rc=$1 want_out=$2
	shift 2
	out=$("$cmp_bin" "$@" 2>"$tmp/err")
	rc=$?
	if [ "$rc" != "$want_rc" ] || [ "$out" != "$want_out" ]; then
		echo "FAIL: qpio-pcapcmp $*"
		echo "  want exit $want_rc, '$want_out'"
		echo "  got  exit $rc, '$out' (stderr: $(cat "$tmp/err"))"
		fails=$((fails + 1))
	else
		echo "ok: $* -> $rc $out"
	fi
}

ptp=$data/real/ptp_ethernet.pcap
pim=$data/real/pim-packet-assortment.pcap

expect 0 "identical: 205 packets" "$ptp" "$ptp"
expect 0 "identical: 245 packets" "$pim" "$pim"
expect 0 "identical: 0 packets" "$data/hostile/empty.pcap" \
	"$data/hostile/empty.pcap"

# Byte 20 of the first frame (file offset 24 + 16 + 20) changed.
cp "$ptp" "$tmp/flip.pcap"
chmod u+w "$tmp/flip.pcap"
orig=$(od -An -tx1 -j60 -N1 "$ptp" | tr -d ' ')
new=$(printf '%02x' $(( (0x$orig + 1) % 256 )))
printf "\\$(printf '%03o' 0x$new)" |
	dd of="$tmp/flip.pcap" bs=1 seek=60 conv=notrunc 2>/dev/null
expect 1 "differ: record 1: bytes differ at offset 20 (0x$orig vs 0x$new)" \
	"$ptp" "$tmp/flip.pcap"

# The first two records only: 24 + 2 * (16 + caplen) bytes.
len1=$(od -An -tu4 -j32 -N4 "$ptp" | tr -d ' ')
len2=$(od -An -tu4 -j$((40 + len1 + 8)) -N4 "$ptp" | tr -d ' ')
head -c $((24 + 16 + len1 + 16 + len2)) "$ptp" >"$tmp/two.pcap"
expect 1 "differ: record 3: only in $ptp ($tmp/two.pcap has 2 records)" \
	"$ptp" "$tmp/two.pcap"
expect 1 "differ: record 3: only in $ptp ($tmp/two.pcap has 2 records)" \
	"$tmp/two.pcap" "$ptp"

# Same bytes, original length 64 instead of 262144 (little-endian field
# at file offset 24 + 12).
arp=$data/hostile/arp-too-long-tha.pcap
cp "$arp" "$tmp/len.pcap"
chmod u+w "$tmp/len.pcap"
printf '\100\000\000\000' |
	dd of="$tmp/len.pcap" bs=1 seek=36 conv=notrunc 2>/dev/null
expect 1 "differ: record 1: len 262144 vs 64" "$arp" "$tmp/len.pcap"
# --ignore-len: the same pair is identical, with the len difference noted.
expect 0 "identical: 1 packets
note: 1 records differ only in original length (not compared)" \
	--ignore-len "$arp" "$tmp/len.pcap"

# The first 60 of its 64 bytes only, caplen field (offset 32) set to 60.
head -c $((24 + 16 + 60)) "$arp" >"$tmp/short.pcap"
printf '\074' | dd of="$tmp/short.pcap" bs=1 seek=32 conv=notrunc 2>/dev/null
expect 1 "differ: record 1: caplen 64 vs 60, the first 60 bytes are equal" \
	"$arp" "$tmp/short.pcap"

# A record of a different length comes first in these two files.
expect 1 "differ: record 1: caplen 64 vs 65590, bytes differ at offset 0 (0x30 vs 0x00)" \
	"$data/hostile/arp-too-long-tha.pcap" "$data/hostile/ipv6_jumbogram_1.pcap"

# Unreadable: exit 2, libpcap's reason on stderr, nothing on stdout.
expect 2 "" "$ptp" "$tmp/missing.pcap"
grep -q "missing.pcap: .*No such file or directory" "$tmp/err" ||
	{ echo "FAIL: no libpcap reason for a missing file"; fails=$((fails + 1)); }
expect 2 "" "$data/hostile/bad-magic.pcap" "$ptp"
grep -q "bad-magic.pcap: unknown file format" "$tmp/err" ||
	{ echo "FAIL: no libpcap reason for bad magic"; fails=$((fails + 1)); }
expect 2 "" "$data/hostile/truncated-mid-record.pcap" \
	"$data/hostile/truncated-mid-record.pcap"
grep -q "record 1: truncated dump file" "$tmp/err" ||
	{ echo "FAIL: no record number for a damaged record"; fails=$((fails + 1)); }
expect 2 "" "$ptp"

[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
