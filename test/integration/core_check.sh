#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usertools/qpio-core-check.sh on CPU 0 over 0.2 s: one measurement line
# and one verdict line, of the exact forms; the interrupt count is the sum
# of what /proc/interrupts gained; a busy loop pinned to CPU 0 during the
# window is listed (-v) as a runnable thread there, in at least 5 of the 20
# samples (it shares the CPU with whatever else runs); bad usage exits 2
# with a message.
set -u
script=$1
fail() { echo "FAIL: $*"; exit 1; }

out=$("$script" -w 0.2 0) || fail "exit $? on CPU 0"
echo "$out"
[ "$(echo "$out" | wc -l)" = 2 ] || fail "want 2 lines"
echo "$out" | sed -n 1p | grep -Eq '^cpu 0: isolated (yes|no), nohz_full (yes|no), governor [a-z_]+, irqs [0-9]+ in 0\.2 s \(top: ([^ ,]+ [0-9]+(, )?){1,3}\), other threads seen runnable [0-9]+ \(20 samples\)$' ||
	fail "measurement line"
echo "$out" | sed -n 2p | grep -Eq '^cpu 0: (quiet|disturbed: .+)$' || fail "verdict line"

# A thread spinning on CPU 0 through the window is counted there.
taskset -c 0 sh -c 'while :; do :; done' &
spin=$!
out=$("$script" -v -w 0.5 0) || { kill $spin; fail "exit $? with a spinner"; }
kill $spin
echo "$out"
n=$(echo "$out" | sed -n "s/^cpu 0: runnable: tid $spin sh in \([0-9]*\) of 20 samples$/\1/p")
[ -n "$n" ] && [ "$n" -ge 5 ] || fail "the spinner (tid $spin) on CPU 0 was seen in '$n' of 20 samples, want >= 5"
echo "$out" | grep -q "^cpu 0: disturbed: .*other threads runnable there" ||
	fail "the spinner is not named in the verdict"
# The script's own sampling is never counted.
! echo "$out" | grep -q "runnable: tid [0-9]* qpio-core-check" ||
	fail "the script counted itself"

for bad in "" "x" "0,,1" "-1" "99999" "-w 0 0" "-w 61 0" "-w abc 0"; do
	# shellcheck disable=SC2086
	err=$("$script" $bad 2>&1 >/dev/null)
	rc=$?
	[ $rc = 2 ] || fail "'$bad': exit $rc, want 2"
	[ -n "$err" ] || fail "'$bad': no message"
done
echo "ok"
