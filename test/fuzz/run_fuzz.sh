#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Run one libFuzzer target for a bounded time: first every input of its
# corpus (the seeds and the regression inputs) once, then new inputs for
# QPIO_FUZZ_SECONDS seconds (default 60). New interesting inputs go to a
# scratch directory, not into the source tree; a crash input is written to
# QPIO_FUZZ_ARTIFACTS (default the build directory's fuzz-artifacts/) and
# fails the run.
#
#   run_fuzz.sh TARGET CORPUS_DIR
set -euo pipefail
# Absolute paths: some targets change directory (fuzz_chdir_tmp).
exe=$(realpath "$1")
corpus=$(realpath "$2")
name=$(basename "$exe")
secs=${QPIO_FUZZ_SECONDS:-60}
art=${QPIO_FUZZ_ARTIFACTS:-$(dirname "$exe")/fuzz-artifacts}/$name-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$art"
scratch=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$scratch" "$log"; rmdir "$art" 2>/dev/null || true' EXIT
[ -d "$corpus" ] || { echo "$name: no corpus at $corpus"; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:detect_leaks=0}
echo "== $name: $(ls "$corpus" | wc -l) corpus inputs, then ${secs}s of new inputs"
# left_dir PID: the DPDK runtime directory the target's EAL made
# (--file-prefix=qpio-fuzz-PID), if it is still there; the target removes
# it when it exits (fuzz_common.c).
left_dir() {
	local d
	for d in /var/run/dpdk "${XDG_RUNTIME_DIR:-/nonexistent}/dpdk" /tmp/dpdk; do
		[ -e "$d/qpio-fuzz-$1" ] && echo "$d/qpio-fuzz-$1"
	done
	return 0
}
# 1. The corpus as regression inputs: each must run clean.
rc=0
"$exe" -runs=0 -artifact_prefix="$art/" "$corpus" >"$log" 2>&1 &
pid=$!
wait "$pid" || rc=$?
if [ -n "$(left_dir "$pid")" ]; then
	echo "$name: its runtime directory $(left_dir "$pid") was left behind"
	rm -rf "$(left_dir "$pid")"
	exit 1
fi
if [ "$rc" != 0 ]; then
	tail -40 "$log"
	echo "$name: a corpus input fails (exit $rc); input kept in $art"
	exit 1
fi
grep -E "INITED|DONE" "$log" | tail -2
# 2. Bounded fuzzing from the corpus; new inputs go to a scratch folder.
"$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix="$art/" -print_final_stats=1 \
	"$scratch" "$corpus" >"$log" 2>&1 &
pid=$!
wait "$pid" || rc=$?
# (a crash leaves it: the crash is what is reported then)
[ "$rc" != 0 ] && rm -rf "$(left_dir "$pid")"
if [ "$rc" = 0 ] && [ -n "$(left_dir "$pid")" ]; then
	echo "$name: its runtime directory $(left_dir "$pid") was left behind"
	rm -rf "$(left_dir "$pid")"
	exit 1
fi
grep -E "^stat::(number_of_executed_units|new_units_added|peak_rss_mb)|DONE" "$log" || true
if [ "$rc" != 0 ]; then
	tail -60 "$log"
	echo "$name: crash (exit $rc); the input is in $art: add it to $corpus once fixed"
	exit 1
fi
echo "== $name: clean"
