#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-pipeline --rules and qpio-gateway --conf refuse a bad file before
# anything starts: exit status 2 and the one line naming the file, the
# line and the rule (a sign in a number, a NUL byte, a directory).
#
#   example_conf.sh PATH/TO/qpio-pipeline PATH/TO/qpio-gateway
set -u

pl=$1
gw=$2
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
eal=(-l 0-1 --no-huge --no-shconf --no-pci -m 256 --no-telemetry
     --log-level=lib.eal:error --file-prefix="qpio-it-conf-$$")
fails=0

# want LINE CMD...: exit status 2 and LINE, exactly, on stderr.
want() {
	local line=$1 rc
	shift
	"$@" >"$tmpd/out" 2>"$tmpd/err"
	rc=$?
	if [ $rc != 2 ] || ! grep -Fxq -- "$line" "$tmpd/err"; then
		echo "FAIL: $*: exit status $rc (want 2), want the line"
		echo "  $line"
		echo "--- stderr"; cat "$tmpd/err"
		fails=$((fails + 1))
		return
	fi
	echo "PASS: $line"
}

pipeline() {
	want "$1" "$pl" "${eal[@]}" -- --in ring0,peer=ring0 --rules "$2"
}

gateway() {
	want "$1" "$gw" "${eal[@]}" -- --conf "$2" --iface-a none0 \
		--iface-b none1
}

r=$tmpd/r.rules
printf 'permit udp any any any +53\n' >"$r"
pipeline "pipeline: --rules $r:1: destination port '+53' must be N, LO-HI (0..65535 in decimal digits) or any" "$r"
printf 'permit +6 any any any any\n' >"$r"
pipeline "pipeline: --rules $r:1: protocol '+6' unknown (tcp, udp, icmp, icmpv6, sctp, 0..255 in decimal digits, or any)" "$r"
printf 'permit any any any any any\npermit tcp any any 80\0 any\n' >"$r"
pipeline "pipeline: --rules $r:2: NUL byte at column 22 (a text file has none)" "$r"
pipeline "pipeline: --rules $tmpd: is a directory (give the file)" "$tmpd"

c=$tmpd/gw.conf
printf 'a addr 10.1.0.1/24\nb addr 10.2.0.1/24\nb route 10.3.0.0/+16 link\n' >"$c"
gateway "gateway: --conf $c:3: prefix length '+16' must be 0..32 in decimal digits" "$c"
printf 'a addr 10.1.0.1/24\0\n' >"$c"
gateway "gateway: --conf $c:1: NUL byte at column 19 (a text file has none)" "$c"
gateway "gateway: --conf $tmpd: is a directory (give the file)" "$tmpd"

[ $fails = 0 ] || { echo "FAIL: $fails refusals"; exit 1; }
echo "PASS: 7 refusals, exit status 2, each named"
