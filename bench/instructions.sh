#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per frame of an RC link on the soft NIC, txonly -> rxonly,
# both streams on one lcore, counted by valgrind's callgrind.
#
#   bench/instructions.sh [-s SIZE[,SIZE...]] [-n SHORT,LONG] [-d DEVARGS]
#                         [-a "OPTIONS"] [-k]
#
# Each size runs qpio-testpmd under callgrind for two run lengths (SHORT
# and LONG frames, --max-packets) and divides the difference of the
# instruction counts by the difference of the frames delivered, so start-up
# and tear-down cancel out. -d creates the links' rdma device from DEVARGS
# first (--rdma-dev; it must be soft0), e.g. -d soft0,cqe_comp=0. -a
# appends qpio-testpmd options, e.g. -a --tx-offloads=0x0. The count is
# split by callgrind's inclusive costs:
#   sender   txonly_fwd without the device model run under it
#   model    soft_sq_run and soft_sq_send_direct: the soft NIC executing
#            WQEs (doorbells, RNR resumes) and flat bursts into an empty SQ
#   receiver rxonly_fwd without the device model run under it
#   other    the rest of the job (forwarding loop, main lcore)
# Each length runs twice: once collecting everything, once collecting only
# under rxonly_fwd (--toggle-collect), which tells how much of the model ran
# from the receiver's poll. It is a measurement, not a test: exit 0 when
# every run was measured.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
testpmd=${QPIO_TESTPMD:-$top/build/app/testpmd/qpio-testpmd}
sizes=64,1024
lengths=50000,150000
keep=0
rdma=()
extra=()

usage() {
	sed -n '4,25p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

while getopts "s:n:d:a:kh" o; do
	case $o in
	s) sizes=$OPTARG ;;
	d) [[ $OPTARG == soft0 || $OPTARG == soft0,* ]] ||
		{ echo "-d DEVARGS: the links use soft0: soft0[,key=value...]"; exit 2; }
	   rdma=(--rdma-dev "$OPTARG") ;;
	n) lengths=$OPTARG ;;
	a) read -r -a extra <<<"$OPTARG" ;;
	k) keep=1 ;;
	*) usage ;;
	esac
done

command -v valgrind >/dev/null || { echo "valgrind not installed (usertools/install-deps.sh --bench)"; exit 2; }
command -v callgrind_annotate >/dev/null || { echo "callgrind_annotate not installed"; exit 2; }
[ -x "$testpmd" ] || { echo "$testpmd not built (run usertools/qpio-setup.sh)"; exit 2; }
IFS=, read -r short long <<<"$lengths"
[[ $short =~ ^[0-9]+$ && $long =~ ^[0-9]+$ && $long -gt $short ]] ||
	{ echo "-n SHORT,LONG: two frame counts, LONG > SHORT"; exit 2; }

work=$(mktemp -d /tmp/qpio-instr.XXXXXX)
if [ "$keep" = 0 ]; then
	trap 'rm -rf "$work"' EXIT
fi

# run TAG SIZE FRAMES [callgrind options]: prints "frames" to TAG.frames,
# callgrind output to TAG.cg
run() {
	local tag=$1 size=$2 frames=$3
	shift 3
	valgrind --tool=callgrind --callgrind-out-file="$work/$tag.cg" "$@" \
		"$testpmd" --lcores=0@0,1@0 --no-huge --no-shconf --no-pci \
		--file-prefix="qpio-instr-$$-$tag" -m 512 -- "${rdma[@]}" \
		--dev qp0,dev=soft0,qp=rc,peer=qp1 \
		--dev qp1,dev=soft0,qp=rc,peer=qp0 \
		--forward-mode=txonly,rxonly --nb-cores=1 --burst=32 \
		--txpkts="$size" --max-packets="$frames" "${extra[@]}" \
		>"$work/$tag.log" 2>&1 || { tail -20 "$work/$tag.log"; exit 1; }
	# delivered frames: RX-packets of the accumulated statistics
	awk '/Accumulated forward statistics/ { a = 1 }
	     a && /RX-packets:/ { print $2; exit }' "$work/$tag.log" >"$work/$tag.frames"
	[ -s "$work/$tag.frames" ] || { echo "$tag: no frame count"; tail -20 "$work/$tag.log"; exit 1; }
}

# incl FILE FUNCTION: inclusive instructions of FUNCTION (0 if absent)
incl() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk -v f="$2" '!found { for (i = 1; i <= NF; i++)
			if ($i ~ ":" f "$") { gsub(",", "", $1); v = $1; found = 1 } }
			END { print found ? v : 0 }'
}

total() {
	callgrind_annotate "$1" 2>/dev/null |
		awk '/PROGRAM TOTALS/ && !v { gsub(",", "", $1); v = $1 } END { print v + 0 }'
}

printf '%s\n' "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %9s %9s %9s %9s %9s\n' bytes sender model receiver other total
for size in ${sizes//,/ }; do
	for n in "$short" "$long"; do
		run "a$size-$n" "$size" "$n"
		run "r$size-$n" "$size" "$n" --collect-atstart=no --toggle-collect=rxonly_fwd
	done
	values=()
	for n in "$short" "$long"; do
		a=$work/a$size-$n.cg
		r=$work/r$size-$n.cg
		tot=$(total "$a")
		tx=$(incl "$a" txonly_fwd)
		model=$(($(incl "$a" soft_sq_run) + $(incl "$a" soft_sq_send_direct)))
		rx=$(incl "$r" rxonly_fwd)
		model_rx=$(($(incl "$r" soft_sq_run) + $(incl "$r" soft_sq_send_direct)))
		model_tx=$((model - model_rx))
		frames=$(cat "$work/a$size-$n.frames")
		values+=("$frames $((tx - model_tx)) $model $((rx - model_rx)) $tot")
	done
	read -r f1 s1 m1 r1 t1 <<<"${values[0]}"
	read -r f2 s2 m2 r2 t2 <<<"${values[1]}"
	df=$((f2 - f1))
	[ "$df" -gt 0 ] || { echo "$size: the longer run delivered no more frames"; exit 1; }
	awk -v df="$df" -v size="$size" -v s=$((s2 - s1)) -v m=$((m2 - m1)) \
		-v r=$((r2 - r1)) -v t=$((t2 - t1)) 'BEGIN {
		printf "%-6s %9.0f %9.0f %9.0f %9.0f %9.0f\n", size, s / df,
			m / df, r / df, (t - s - m - r) / df, t / df }'
done
[ "$keep" = 1 ] && echo "callgrind outputs and logs kept in $work"
exit 0
