#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The qp port's rate on the libibverbs driver, two builds side by side:
# qpio-testpmd txonly -> rxonly over an RC link of two qp ports on
# ibv0,dev=rxe0 (Linux Soft-RoCE in the test/rxe VM), one run of this
# tree's build, one of another build (an older tree's, say), alternating
# which goes first, in one VM boot.
#
#   bench/qp-rxe-ab.sh -o OTHER_BUILDDIR [-b BUILDDIR] [-p PAIRS]
#                      [-t SECONDS] [-s BYTES]
#
#   -o DIR   the other build (required): a qpio build directory with
#            app/testpmd/qpio-testpmd, outside /tmp, /run and /dev/shm
#            (the VM mounts its own over them)
#   -b DIR   this build (default: build)
#   -p N     pairs (default 5)
#   -t S     seconds per run (default 5)
#   -s B     frame size, 64..1518 (default 64)
#
# Each pair prints both rates and this/other. The VM runs under TCG (no
# KVM): the rates are those of an emulated machine, a few hundred times
# below a real one's, and only the ratio of the two builds means anything.
# A measurement, not a test: exit 0 when every run gave a rate, 1 when one
# failed, 2 on usage or when the VM cannot run here (test/rxe/run.sh's
# reason is printed).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="$root/build"
other=
pairs=5
secs=5
size=64
usage() { sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'; }
usage_err() { echo "qp-rxe-ab: $*" >&2; exit 2; }
# need_whole, vm_bench, awk_median
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
while getopts "o:b:p:t:s:h" o; do
	case $o in
	o) other=$OPTARG ;;
	b) build=$OPTARG ;;
	p) pairs=$OPTARG ;;
	t) secs=$OPTARG ;;
	s) size=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 0 ] || usage_err "unexpected argument '$1'"
[ -n "$other" ] || { usage >&2; usage_err "-o OTHER_BUILDDIR is required"; }
need_whole -p "$pairs" pairs
need_whole -t "$secs" seconds
need_whole -s "$size" bytes
[ "$size" -ge 64 ] && [ "$size" -le 1518 ] || usage_err "-s must be 64..1518, got $size"
[ "$pairs" -le 100 ] && [ "$secs" -le 600 ] || usage_err "-p is at most 100 pairs, -t at most 600 s"
for d in "$build" "$other"; do
	[ -x "$d/app/testpmd/qpio-testpmd" ] ||
		usage_err "$d/app/testpmd/qpio-testpmd is not built"
done
build=$(cd "$build" && pwd -P)
other=$(cd "$other" && pwd -P)
case "$build$other" in
*"'"*) usage_err "a build path with a single quote cannot go to the VM's environment file" ;;
esac
case "$other" in
/tmp/*|/run/*|/dev/shm/*)
	usage_err "the VM hides $other under its own tmpfs; put the other build elsewhere" ;;
esac

export QPIO_BENCH_OTHER=$other QPIO_BENCH_PAIRS=$pairs QPIO_BENCH_SECS=$secs \
	QPIO_BENCH_SIZE=$size
vm_bench qp-rxe-ab "$here/qp-rxe-ab.guest.sh" $((300 + pairs * 2 * (secs + 60)))
rc=$vm_rc
if [ "$rc" = 0 ]; then
	{ grep -E "^qp-rxe-ab: pair" "$vm_log" || true; } |
		sed -n 's/.*this\/other \([0-9.]*\).*/\1/p' |
		awk "$awk_median"'{ l = l " " $1; n++ } END {
			if (n > 0) printf "median this/other over %d pairs: %.3f\n", n, median(l) }'
	rm -f "$vm_log"
fi
exit "$rc"
