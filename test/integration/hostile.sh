#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The main job (usertools/qpio-forward-capture.sh) on each malformed
# capture of PCAPDIR/hostile, with the outcome its README asks for:
#   refused      qpio-testpmd refuses the port, naming the file and the
#                problem; exit 1, nothing forwarded
#   read-error   the header is fine, record 1 is not: the run ends cleanly
#                with 0 frames forwarded, 1 receive error on port 0 and
#                every mbuf back in its pool
#   forwarded    valid Ethernet with odd content: forwarded as is
#
#   hostile.sh BUILDDIR PCAPDIR
#
# Exit 0 when every file behaves, 1 otherwise, 77 (skip) without PCAPDIR.
set -uo pipefail

build="$1"
dir="$2/hostile"
root="$(cd "$(dirname "$0")/../.." && pwd)"
fwd="$root/usertools/qpio-forward-capture.sh"
cmp="$build/app/pcapcmp/qpio-pcapcmp"
if [ ! -d "$dir" ]; then
	echo "SKIP: shared captures not found at $dir"
	exit 77
fi
tmp="$(mktemp -d /tmp/qpio-hostile.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

declare -A want=(
	[zero-bytes]=refused [short-header]=refused [bad-magic]=refused
	[LINKTYPE_IPV4]=refused [heap-overflow-1]=refused
	[aarp-heapoverflow-1]=refused [esp_truncated]=refused
	[truncated-mid-record]=read-error [caplen-huge]=read-error
	[caplen-over-snaplen]=read-error
	[empty]=forwarded [arp-too-long-tha]=forwarded
	[ipv6_jumbogram_1]=forwarded
)
declare -A frames=([empty]=0 [arp-too-long-tha]=1 [ipv6_jumbogram_1]=1)

fail=0
bad() { echo "FAIL: $1: $2"; fail=1; }
n=0
for f in "$dir"/*.pcap; do
	name="$(basename "$f" .pcap)"
	w="${want[$name]:-}"
	if [ -z "$w" ]; then
		bad "$name" "no expected outcome for this file"
		continue
	fi
	n=$((n + 1))
	out="$tmp/$name.out.pcap"
	log="$tmp/$name.log"
	"$fwd" -b "$build" "$f" "$out" >"$log" 2>&1
	rc=$?
	case "$w" in
	refused)
		[ "$rc" = 1 ] || bad "$name" "exit $rc, want 1"
		grep -q "qpio.net.pcap: port pcap0: rx file $f" "$log" ||
			bad "$name" "no error naming the file"
		grep -q "qpio-testpmd: --dev pcap0,rx_pcap=$f: Invalid argument" "$log" ||
			bad "$name" "qpio-testpmd did not refuse the port"
		;;
	read-error)
		# qpio-testpmd ends cleanly; the compare then fails on the
		# damaged input, so the script exits 1.
		[ "$rc" = 1 ] || bad "$name" "exit $rc, want 1"
		grep -q "$f: record 1: .*no more records are read from it" "$log" ||
			bad "$name" "no error naming record 1"
		[ "$(grep -m1 'RX-dropped' "$log" | awk '{print $4}')" = 1 ] ||
			bad "$name" "port 0 RX-dropped is not 1"
		grep -q "mbufs not returned to pool mb_pool_0: 0" "$log" ||
			bad "$name" "mbufs not all returned"
		got="$("$cmp" "$dir/empty.pcap" "$out")"
		[ "$got" = "identical: 0 packets" ] ||
			bad "$name" "output is not empty: $got"
		;;
	forwarded)
		[ "$rc" = 0 ] || bad "$name" "exit $rc, want 0"
		grep -q "^identical: ${frames[$name]} packets" "$log" ||
			bad "$name" "output not identical with ${frames[$name]} frames"
		grep -q "mbufs not returned to pool mb_pool_0: 0" "$log" ||
			bad "$name" "mbufs not all returned"
		;;
	esac
	[ "$fail" = 0 ] && echo "ok: $name ($w)"
	if [ "$fail" != 0 ]; then
		sed 's/^/    /' "$log" | tail -20
		break
	fi
done
[ "$n" = "${#want[@]}" ] || bad "hostile/" "$n files checked, ${#want[@]} expected"
exit $fail
