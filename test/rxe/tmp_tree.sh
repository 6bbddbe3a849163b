#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The rxe runner from a source tree under /tmp (test/rxe/run.sh -n, no
# boot): the guest mounts tmpfs over /tmp, so the runner must share such a
# tree on its own and copy captures from there into the results share. A
# tree outside /tmp, /run and /dev/shm needs no share.
#
#   test/rxe/tmp_tree.sh SRCROOT BUILDDIR
#
# Exit 0 pass, 1 fail, 77 when the runner skips (no qemu, kernel, tools).
set -uo pipefail
src="$(cd "$1" && pwd -P)"
build="$(cd "$2" && pwd -P)"
tree="$(mktemp -d /tmp/qpio-rxe-tree.XXXXXX)"
trap 'rm -rf "$tree"' EXIT
fails=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fails=$((fails + 1)); fi; }

# A tree under /tmp: the runner and a stub unit-test binary (-n never runs it).
mkdir -p "$tree/test/rxe" "$tree/data" "$tree/build/test/unit"
cp "$src/test/rxe/run.sh" "$src/test/rxe/guest.sh" "$src/test/rxe/filter" "$tree/test/rxe/"
cp "$src/data/linux-stack.pcap" "$tree/data/"
printf '#!/bin/sh\nexit 0\n' > "$tree/build/test/unit/qpio-unit-tests"
chmod +x "$tree/build/test/unit/qpio-unit-tests"
out="$("$tree/test/rxe/run.sh" -n -b "$tree/build" 2>&1)"
rc=$?
echo "$out"
[ "$rc" = 77 ] && { echo "SKIP: the runner skipped (reason above)"; exit 77; }
check "plan under /tmp exits 0 (got $rc)" '[ "$rc" = 0 ]'
check "the tree under /tmp is shared on its own" \
	'grep -qx "rxe: share $tree as tree0 (the guest.s tmpfs would hide it)" <<< "$out"'
check "only the tree is shared (the build is inside it)" \
	'[ "$(grep -c "^rxe: share " <<< "$out")" = 1 ]'
check "the capture under /tmp travels in the results share" \
	'grep -qx "rxe: capture /tmp/out/cap/0-linux-stack.pcap" <<< "$out"'

# The tree itself (outside /tmp): nothing to share, captures in place.
out="$("$src/test/rxe/run.sh" -n -b "$build" -c "$src/data/linux-stack.pcap" 2>&1)"
rc=$?
echo "$out"
check "plan outside /tmp exits 0 (got $rc)" '[ "$rc" = 0 ]'
case "$src" in
/tmp/* | /run/* | /dev/shm/*) echo "note: $src is itself under a hidden path" ;;
*)
	check "no share for a tree outside /tmp" '! grep -q "^rxe: share " <<< "$out"'
	check "the capture is read in place" \
		'grep -qx "rxe: capture $src/data/linux-stack.pcap" <<< "$out"' ;;
esac
[ "$fails" = 0 ] || { echo "tmp_tree: $fails checks failed"; exit 1; }
echo "tmp_tree: every check passed"
