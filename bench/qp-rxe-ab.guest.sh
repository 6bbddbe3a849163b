#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs inside the Soft-RoCE VM for bench/qp-rxe-ab.sh (started by
# test/rxe/run.sh -g). Sets up rxe0 (test/rxe/rxe_up.sh), then runs
# qpio-testpmd txonly -> rxonly over an RC link of two qp ports on
# ibv0,dev=rxe0 from two builds in turn, QPIO_BUILD ("this") and
# QPIO_BENCH_OTHER ("other"), alternating which goes first, and prints one
# "qp-rxe-ab:" line per pair. Writes 0 to /tmp/out/rc when every run
# produced a rate, 1 otherwise.
set -u
note() { echo "qp-rxe-ab: $*"; }
fail() { note "FAIL: $*"; rc=1; }
rc=0
. /tmp/out/env
# rxe_up, PATH and HOME
. "$QPIO_ROOT/test/rxe/rxe_up.sh"

rxe_up fail || fail "rxe0 is not PORT_ACTIVE after 5 s"
PAIRS=${QPIO_BENCH_PAIRS:-5}
SECS=${QPIO_BENCH_SECS:-5}
SIZE=${QPIO_BENCH_SIZE:-64}
OTHER=${QPIO_BENCH_OTHER:-}
for b in "$QPIO_BUILD" "$OTHER"; do
	[ -x "$b/app/testpmd/qpio-testpmd" ] ||
		{ fail "$b/app/testpmd/qpio-testpmd is not built"; echo 1 > /tmp/out/rc; exit 0; }
done
note "this: $QPIO_BUILD; other: $OTHER; $PAIRS pairs of $SECS s, $SIZE bytes"

# rate BUILD TAG: Mpps of one run, packets over seconds of qpio-testpmd's
# Throughput line (its Mpps has 3 decimals), or nothing when it failed
# (its last lines are printed).
rate() {
	local log=/tmp/ab-$2.log
	timeout -k 5 $((SECS + 120)) "$1/app/testpmd/qpio-testpmd" \
		--lcores=0@0,1@0,2@1 --no-huge --no-shconf --no-pci -m 512 \
		--file-prefix="ab-$2" --log-level=lib.eal:error -- \
		--rdma-dev ibv0,dev=rxe0 \
		--dev qp0,dev=ibv0,qp=rc,peer=qp1 --dev qp1,dev=ibv0,qp=rc,peer=qp0 \
		--forward-mode=txonly,rxonly --nb-cores=2 --txpkts="$SIZE" \
		--duration="$SECS" > "$log" 2>&1 || { tail -5 "$log" >&2; return 0; }
	awk '/^Throughput: / { gsub(/[()]/, ""); printf "%.6f\n", $4 / $7 / 1e6 }' "$log"
}

for i in $(seq 1 "$PAIRS"); do
	if [ $((i % 2)) = 1 ]; then
		t=$(rate "$QPIO_BUILD" "t$i"); o=$(rate "$OTHER" "o$i"); order="this first"
	else
		o=$(rate "$OTHER" "o$i"); t=$(rate "$QPIO_BUILD" "t$i"); order="other first"
	fi
	if [ -z "$t" ] || [ -z "$o" ]; then
		fail "pair $i: a run gave no rate (this '${t}', other '${o}')"
		continue
	fi
	note "$(awk -v i="$i" -v t="$t" -v o="$o" -v ord="$order" 'BEGIN {
		printf "pair %d (%s): this %.6f Mpps, other %.6f Mpps, this/other %.3f",
			i, ord, t, o, (o > 0) ? t / o : 0 }')"
done
# (a line printed right after rxe0 comes up may share the console with
# the kernel's messages, so the VM's facts go last)
note "after: kernel $(uname -r), $(nproc) vCPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$rc" > /tmp/out/rc
