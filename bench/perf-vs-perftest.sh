#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-perf beside its references, printed as ratios:
#
#  1. soft NIC (this machine): qpio-perf send latency (t_typical, half round
#     trip) against the cross-core cache-line one-way time of
#     build/bench/qpio-bench-cacheline, three alternating pairs;
#  2. Soft-RoCE VM (test/rxe/run.sh -g bench/perf-vs-perftest.guest.sh):
#     Debian's perftest (ib_send_lat, ib_write_lat, ib_send_bw, ib_write_bw,
#     ib_read_bw, ib_atomic_bw) against qpio-perf on ibv0,dev=rxe0 with the
#     same size and iterations, two alternating runs each.
#
#   bench/perf-vs-perftest.sh [-b BUILDDIR] [--soft-only | --vm-only]
#                             [-s BYTES] [-n LAT_ITERS] [-N BW_ITERS]
#
# A measurement, not a test: exit 0 when every number was measured, 1 when
# a run failed, 2 on usage or when something is not built or installed
# (usertools/install-deps.sh installs perftest).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="$root/build"
soft=1
vm=1
size=64
lat_n=2000
bw_n=20000
usage() { sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; }
# vm_bench
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
while [ $# -gt 0 ]; do
	case "$1" in
	-b) build="$(cd "$2" && pwd)"; shift ;;
	--soft-only) vm=0 ;;
	--vm-only) soft=0 ;;
	-s) size="$2"; shift ;;
	-n) lat_n="$2"; shift ;;
	-N) bw_n="$2"; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
perf="$build/app/perf/qpio-perf"
cl="$build/bench/qpio-bench-cacheline"
for f in "$perf" "$cl"; do
	[ -x "$f" ] || { echo "perf-vs-perftest: $f is not built (usertools/qpio-setup.sh)" >&2; exit 2; }
done
load() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"; }
rc=0

if [ "$soft" = 1 ]; then
	echo "== soft NIC: qpio-perf send lat ($size B, $lat_n iterations) against the cache-line floor"
	echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), nproc $(nproc); before: $(load)"
	ratios=()
	for i in 1 2 3; do
		c=$("$cl" --cpus 0,1 --samples 200 --json |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["cacheline_one_way_ns"]["median"])')
		j=$(mktemp /tmp/qpio-pvp.XXXXXX.json)
		"$perf" -l 0-1 --no-huge --no-shconf --no-pci --log-level=lib.eal:error --no-telemetry \
			--file-prefix=pvp-soft-$$ -- --test ib_send_lat -s "$size" -n "$lat_n" \
			--json "$j" > /dev/null || { echo "qpio-perf failed"; rc=1; rm -f "$j"; continue; }
		q=$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["results"][0]["latency_us"]; print(l["t_typical"] * 1000, l["p99"] * 1000)' "$j")
		rm -f "$j"
		r=$(awk -v q="${q%% *}" -v c="$c" 'BEGIN { printf "%.2f", q / c }')
		ratios+=("$r")
		printf 'pair %d: cache line one-way %7.1f ns   qpio-perf t_typical %7.1f ns (p99 %.1f ns)   ratio %s\n' \
			"$i" "$c" "${q%% *}" "${q##* }" "$r"
	done
	echo "after: $(load)"
	echo "qpio-perf send half round trip / cache-line one-way: ${ratios[*]} (median $(printf '%s\n' "${ratios[@]}" | sort -n | sed -n 2p))"
fi

if [ "$vm" = 1 ]; then
	echo "== Soft-RoCE VM: perftest against qpio-perf on ibv0,dev=rxe0"
	command -v ib_send_lat > /dev/null ||
		{ echo "perf-vs-perftest: perftest is not installed (usertools/install-deps.sh --bench)" >&2; exit 2; }
	export QPIO_BENCH_SIZE=$size QPIO_BENCH_LAT_N=$lat_n QPIO_BENCH_BW_N=$bw_n
	vm_bench perf-vs-perftest "$here/perf-vs-perftest.guest.sh" 2400
	[ "$vm_rc" = 0 ] && rm -f "$vm_log"
	[ "$vm_rc" = 0 ] || rc=$vm_rc
fi
exit "$rc"
