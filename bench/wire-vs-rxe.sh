#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio's soft wire device against Linux Soft-RoCE, both over one veth pair
# in the Soft-RoCE VM (test/rxe/run.sh -g bench/wire-vs-rxe.guest.sh):
# rxe <-> rxe (ib_send_bw, ib_send_lat on rxe0 and rxe1, one on each veth
# end) against qpio <-> qpio (qpio-perf --server and --connect, each on a
# soft wire device through net_af_packet on its veth end), alternating
# which goes first, R rounds, in one VM boot.
#
#   bench/wire-vs-rxe.sh [-b BUILDDIR] [-s BYTES] [-n LAT_ITERS]
#                        [-N BW_ITERS] [-r ROUNDS]
#
#   -b DIR   the qpio build (default: build)
#   -s B     message size, 1..1024 (one packet at both sides' path MTU;
#            default 64)
#   -n N     iterations of send_lat (default 2000)
#   -N N     iterations of send_bw (default 20000)
#   -r R     rounds (default 3, at most 20)
#
# Each round prints send_bw's MsgRate (Mpps) and send_lat's t_typical
# (us) of both pairs and qpio/rxe; the end prints the median ratios
# against the goals (message rate >= 5 times rxe's, latency <= 0.5 times).
# The VM runs under TCG (no KVM): its numbers are those of an emulated
# machine, and only the ratios compare. A measurement, not a test: exit
# 0 when every run gave a number, 1 when one failed, 2 on usage, when
# something is not built or installed, or when the VM cannot run here
# (test/rxe/run.sh's reason is printed).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="$root/build"
size=64
lat_n=2000
bw_n=20000
rounds=3
usage() { sed -n '3,28p' "$0" | sed 's/^# \{0,1\}//'; }
usage_err() { echo "wire-vs-rxe: $*" >&2; exit 2; }
# need_whole, machine_facts, vm_bench, awk_median
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
while getopts "b:s:n:N:r:h" o; do
	case $o in
	b) build=$OPTARG ;;
	s) size=$OPTARG ;;
	n) lat_n=$OPTARG ;;
	N) bw_n=$OPTARG ;;
	r) rounds=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 0 ] || usage_err "unexpected argument '$1'"
need_whole -s "$size" bytes
need_whole -n "$lat_n" iterations
need_whole -N "$bw_n" iterations
need_whole -r "$rounds" rounds
[ "$size" -le 1024 ] || usage_err "-s must be 1..1024, got $size"
[ "$lat_n" -le 1000000 ] && [ "$bw_n" -le 1000000 ] ||
	usage_err "-n and -N are at most 1000000 iterations"
[ "$rounds" -le 20 ] || usage_err "-r is at most 20 rounds, got $rounds"
[ -x "$build/app/perf/qpio-perf" ] ||
	usage_err "$build/app/perf/qpio-perf is not built"
command -v ib_send_bw > /dev/null ||
	usage_err "perftest is not installed (usertools/install-deps.sh)"
build=$(cd "$build" && pwd -P)
case "$build" in
*"'"*) usage_err "a build path with a single quote cannot go to the VM's environment file" ;;
esac

# host_facts WHEN: the host's load and CPU pressure, and the other qemu
# processes: each emulated vCPU is a host thread, and a busy-polling pair
# runs only while both of its vCPUs hold a host CPU
host_facts() {
	echo "host $1: $(load_facts), other qemu processes $(pgrep -c '^qemu-system-' || true)"
}
machine_facts
echo "the VM: qemu TCG, 2 emulated vCPUs, no KVM: its rates and times are not a hardware's, only the ratios compare"
host_facts before
export QPIO_BENCH_SIZE=$size QPIO_BENCH_LAT_N=$lat_n QPIO_BENCH_BW_N=$bw_n \
	QPIO_BENCH_ROUNDS=$rounds
vm_bench wire-vs-rxe "$here/wire-vs-rxe.guest.sh" \
	$((300 + rounds * (120 + bw_n / 500 + lat_n / 100)))
rc=$vm_rc
host_facts after
if [ "$rc" != 2 ]; then
	# the medians of the rounds that gave both numbers, failed or not
	{ grep -a -E "^wire-vs-rxe: round " "$vm_log" || true; } |
		sed -n 's/.*round [0-9]* send_\([a-z]*\) .*qpio\/rxe \([0-9.]*\).*/\1 \2/p' |
		awk "$awk_median"'{ r[$1] = r[$1] " " $2; c[$1]++ }
		END {
			if (c["bw"] > 0) {
				m = median(r["bw"])
				printf "median qpio/rxe send_bw MsgRate over %d rounds: %.2f (goal >= 5: %s)\n",
					c["bw"], m, (m >= 5 ? "met" : "not met")
			}
			if (c["lat"] > 0) {
				m = median(r["lat"])
				printf "median qpio/rxe send_lat t_typical over %d rounds: %.2f (goal <= 0.5: %s)\n",
					c["lat"], m, (m <= 0.5 ? "met" : "not met")
			}
		}'
	[ "$rc" = 0 ] && rm -f "$vm_log"
fi
exit "$rc"
