#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per frame of an RC link on the soft NIC, txonly -> rxonly,
# both streams on one lcore, counted by valgrind's callgrind.
#
#   bench/instructions.sh [-s SIZE[,SIZE...]] [-n SHORT,LONG] [-d DEVARGS]
#                         [-a "OPTIONS"] [-m] [-M SHORT,LONG] [-k]
#   bench/instructions.sh -l [-s SIZE[,SIZE...]] [-n SHORT,LONG] [-d DEVARGS]
#                         [-k]
#
# Each size runs qpio-testpmd under callgrind for two run lengths (SHORT
# and LONG frames, --max-packets) and divides the difference of the
# instruction counts by the difference of the frames delivered, so start-up
# and tear-down cancel out. -d creates the links' rdma device from DEVARGS
# first (--rdma-dev; it must be soft0), e.g. -d soft0,cqe_comp=0. -a
# appends qpio-testpmd options, e.g. -a --tx-offloads=0x0 (each option
# once: an -a --burst=N takes the place of the script's --burst=32). The
# count is split by callgrind's inclusive costs:
#   sender   txonly_fwd without the device model run under it
#   model    soft_sq_run, soft_sq_send_direct and soft_sq_send_one: the
#            soft NIC executing WQEs (doorbells, RNR resumes) and flat
#            bursts into an empty SQ
#   receiver rxonly_fwd without the device model run under it
#   other    the rest of the job (forwarding loop, main lcore)
# Each length runs twice: once collecting everything, once collecting only
# under rxonly_fwd (--toggle-collect), which tells how much of the model ran
# from the receiver's poll.
#
# -l (latency) counts one message's calls instead: qpio-bench-onemsg
# (qpio-pingpong's calls on one lcore, one inline SEND at a time, one in
# 16 signaled) for SHORT and LONG rounds (default 20000,60000), SIZE the
# message bytes (default 32), per size:
#   post     qpio_qp_post_send_sge() of one SEND into the idle SQ
#            (soft_post_send_sge), the soft NIC's delivery into the
#            peer's receive and its completion included
#   poll     qpio_cq_poll() that finds the one receive completion
#            (soft_cq_poll under the bench's take_one)
#   spoll    qpio_cq_poll() of the send CQ after each SEND (one in 16
#            finds a completion)
#   recv     qpio_qp_post_recv() of one receive (soft_post_recv)
#   message  everything the lcore runs per message (half a round)
# -d names the device (DEVARGS, soft0 unless given). -a and -m do not
# apply.
#
# -m measures the anchor too, per size: Debian's dpdk-testpmd txonly ->
# rxonly over memif, two processes as bench/memif-vs-qpio.sh runs them.
# Each side runs under callgrind in turn while the other runs natively,
# for SHORT and LONG seconds (-M, default 10,30), and the difference of
# the instruction counts is divided by the difference of the frames that
# side sent (TX-packets) or received (RX-packets). That side's count is
# split by object: the memif PMD, dpdk-testpmd (forwarding engine,
# mempool and mbuf inlines), the rest. The process under callgrind runs
# some 20 times slower than the native one, so its queue is never the
# one that waits: the sender finds room, the receiver full bursts. The
# sender is memif's client here (a server under valgrind did not bring
# the link up), the receiver its client too, with the other side its
# server. It is a measurement, not a test: exit 0 when every run was
# measured.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
testpmd=${QPIO_TESTPMD:-$top/build/app/testpmd/qpio-testpmd}
sizes=64,1024
lengths=50000,150000
anchor=0
anchor_secs=10,30
dpdk_testpmd=${DPDK_TESTPMD:-dpdk-testpmd}
keep=0
declare -A q_tx q_rx
rdma=()
extra=()

usage() {
	sed -n '4,40p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

# memif_cmd
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"

latency=0
sizes_set=0
lengths_set=0
while getopts "s:n:d:a:mM:klh" o; do
	case $o in
	s) sizes=$OPTARG; sizes_set=1 ;;
	d) [[ $OPTARG == soft0 || $OPTARG == soft0,* ]] ||
		{ echo "-d DEVARGS: the links use soft0: soft0[,key=value...]"; exit 2; }
	   rdma=(--rdma-dev "$OPTARG") ;;
	n) lengths=$OPTARG; lengths_set=1 ;;
	l) latency=1 ;;
	a) read -r -a extra <<<"$OPTARG" ;;
	m) anchor=1 ;;
	M) anchor_secs=$OPTARG ;;
	k) keep=1 ;;
	*) usage ;;
	esac
done

if [ "$latency" = 1 ]; then
	[ "$anchor" = 0 ] && [ "${#extra[@]}" = 0 ] ||
		{ echo "-l: -a and -m do not apply (one lcore's calls, no anchor)" >&2; exit 2; }
	[ "$sizes_set" = 1 ] || sizes=32
	[ "$lengths_set" = 1 ] || lengths=20000,60000
	for size in ${sizes//,/ }; do
		[[ $size =~ ^[1-9][0-9]*$ && $size -ge 8 && $size -le 256 ]] ||
			{ echo "-l -s: message sizes of 8..256 bytes, got '$size'" >&2; exit 2; }
	done
fi
command -v valgrind >/dev/null || { echo "valgrind not installed (usertools/install-deps.sh --bench)"; exit 2; }
command -v callgrind_annotate >/dev/null || { echo "callgrind_annotate not installed"; exit 2; }
onemsg=${QPIO_ONEMSG:-$top/build/bench/qpio-bench-onemsg}
if [ "$latency" = 1 ]; then
	[ -x "$onemsg" ] || { echo "$onemsg not built (run usertools/qpio-setup.sh)"; exit 2; }
else
	[ -x "$testpmd" ] || { echo "$testpmd not built (run usertools/qpio-setup.sh)"; exit 2; }
fi
IFS=, read -r short long <<<"$lengths"
[[ $short =~ ^[0-9]+$ && $long =~ ^[0-9]+$ && $long -gt $short ]] ||
	{ echo "-n SHORT,LONG: two frame counts, LONG > SHORT"; exit 2; }
IFS=, read -r a_short a_long <<<"$anchor_secs"
[[ $a_short =~ ^[0-9]+$ && $a_long =~ ^[0-9]+$ && $a_short -gt 0 && $a_long -gt $a_short ]] ||
	{ echo "-M SHORT,LONG: two durations in seconds, LONG > SHORT > 0"; exit 2; }
if [ "$anchor" = 1 ]; then
	command -v "$dpdk_testpmd" >/dev/null ||
		{ echo "dpdk-testpmd not installed (usertools/install-deps.sh --bench)"; exit 2; }
fi

work=$(mktemp -d /tmp/qpio-instr.XXXXXX)
if [ "$keep" = 0 ]; then
	trap 'rm -rf "$work"' EXIT
fi

# run TAG SIZE FRAMES [callgrind options]: prints "frames" to TAG.frames,
# callgrind output to TAG.cg
run() {
	local tag=$1 size=$2 frames=$3 burst=(--burst=32)
	shift 3
	# qpio-testpmd takes each option once: an -a --burst replaces ours
	[[ " ${extra[*]} " == *" --burst"* ]] && burst=()
	valgrind --tool=callgrind --callgrind-out-file="$work/$tag.cg" "$@" \
		"$testpmd" --lcores=0@0,1@0 --no-huge --no-shconf --no-pci \
		--file-prefix="qpio-instr-$$-$tag" -m 512 -- "${rdma[@]}" \
		--dev qp0,dev=soft0,qp=rc,peer=qp1 \
		--dev qp1,dev=soft0,qp=rc,peer=qp0 \
		--forward-mode=txonly,rxonly --nb-cores=1 "${burst[@]}" \
		--txpkts="$size" --max-packets="$frames" "${extra[@]}" \
		>"$work/$tag.log" 2>&1 || { tail -20 "$work/$tag.log"; exit 1; }
	# delivered frames: RX-packets of the accumulated statistics
	awk '/Accumulated forward statistics/ { a = 1 }
	     a && /RX-packets:/ { print $2; exit }' "$work/$tag.log" >"$work/$tag.frames"
	[ -s "$work/$tag.frames" ] || { echo "$tag: no frame count"; tail -20 "$work/$tag.log"; exit 1; }
}

printf '%s\n' "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# onemsg_run TAG SIZE ROUNDS [callgrind options]: TAG.cg, TAG.log
onemsg_run() {
	local tag=$1 size=$2 rounds=$3
	shift 3
	valgrind --tool=callgrind --callgrind-out-file="$work/$tag.cg" "$@" \
		"$onemsg" -l 0 --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix="qpio-instr-$$-$tag" --log-level=lib.eal:error -- \
		--rounds "$rounds" --size "$size" ${rdma[1]:+--dev "${rdma[1]}"} \
		>"$work/$tag.log" 2>&1 || { tail -20 "$work/$tag.log"; exit 1; }
	grep -q "^qpio-bench-onemsg: $rounds rounds" "$work/$tag.log" ||
		{ echo "$tag: no run line"; tail -20 "$work/$tag.log"; exit 1; }
}

if [ "$latency" = 1 ]; then
	echo "one message at a time on one lcore (qpio-bench-onemsg, ${rdma[1]:-soft0}), instructions per call"
	printf '%-6s %9s %9s %9s %9s %9s\n' bytes post poll spoll recv message
	for size in ${sizes//,/ }; do
		for n in "$short" "$long"; do
			onemsg_run "o$size-$n" "$size" "$n"
			onemsg_run "t$size-$n" "$size" "$n" --collect-atstart=no \
				--toggle-collect=take_one
		done
		v=()
		for n in "$short" "$long"; do
			a=$work/o$size-$n.cg
			t=$work/t$size-$n.cg
			v+=("$(incl "$a" soft_post_send_sge) $(incl "$t" soft_cq_poll) $(incl "$a" soft_cq_poll) $(incl "$a" soft_post_recv) $(total "$a")")
		done
		read -r p1 q1 c1 r1 t1 <<<"${v[0]}"
		read -r p2 q2 c2 r2 t2 <<<"${v[1]}"
		# two messages a round, one of each call per message
		awk -v m=$((2 * (long - short))) -v size="$size" -v p=$((p2 - p1)) \
			-v q=$((q2 - q1)) -v c=$((c2 - c1)) -v r=$((r2 - r1)) \
			-v t=$((t2 - t1)) 'BEGIN {
			printf "%-6s %9.0f %9.0f %9.0f %9.0f %9.0f\n", size, p / m,
				q / m, (c - q) / m, r / m, t / m }'
	done
	[ "$keep" = 1 ] && echo "callgrind outputs and logs kept in $work"
	exit 0
fi

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
		model=$(($(incl "$a" soft_sq_run) + $(incl "$a" soft_sq_send_direct) +
			$(incl "$a" soft_sq_send_one)))
		rx=$(incl "$r" rxonly_fwd)
		model_rx=$(($(incl "$r" soft_sq_run) + $(incl "$r" soft_sq_send_direct) +
			$(incl "$r" soft_sq_send_one)))
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
	# per lcore when the link runs on two: the sender runs the model
	q_tx[$size]=$(awk -v v=$((s2 - s1 + m2 - m1)) -v df="$df" 'BEGIN { printf "%.0f", v / df }')
	q_rx[$size]=$(awk -v v=$((r2 - r1)) -v df="$df" 'BEGIN { printf "%.0f", v / df }')
done

# memif_run SIDE SIZE SECS TAG: SIDE (tx or rx) under callgrind for SECS
# seconds with the other side native; TAG.cg, TAG.log (the measured side),
# TAG.peer.log, TAG.frames.
memif_run() {
	local side=$1 size=$2 secs=$3 tag=$4 sock="qpio-instr-$$-$4" vg=() peer=()
	local other=rx p v
	[ "$side" = tx ] || other=tx
	# the measured side is memif's client (see the top of this file)
	memif_cmd "$other" server "$size" "$sock" "qpio-instr-$$-$tag-$other" 32 16384 \
		--no-huge -m 256
	peer=("${memif_cmd[@]}")
	memif_cmd "$side" client "$size" "$sock" "qpio-instr-$$-$tag-$side" 32 16384 \
		--no-huge -m 256
	vg=(valgrind --tool=callgrind --callgrind-out-file="$work/$tag.cg" "${memif_cmd[@]}")
	# With --stats-period dpdk-testpmd ignores stdin and runs until a signal.
	"${peer[@]}" </dev/null >"$work/$tag.peer.log" 2>&1 &
	p=$!
	sleep 2
	"${vg[@]}" </dev/null >"$work/$tag.log" 2>&1 &
	v=$!
	sleep "$secs"
	kill -INT "$v" 2>/dev/null || true
	wait "$v" || { kill -KILL "$p" 2>/dev/null; tail -20 "$work/$tag.log"; exit 1; }
	kill -INT "$p" 2>/dev/null || true
	wait "$p" || true
	rm -rf "/var/run/dpdk/qpio-instr-$$-$tag-tx" "/var/run/dpdk/qpio-instr-$$-$tag-rx"
	awk -v k="$([ "$side" = tx ] && echo TX-packets: || echo RX-packets:)" \
		'/Accumulated forward statistics/ { a = 1 }
		 a { for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' \
		"$work/$tag.log" >"$work/$tag.frames"
	[ -s "$work/$tag.frames" ] || { echo "$tag: no frame count"; tail -20 "$work/$tag.log"; exit 1; }
}

if [ "$anchor" = 1 ]; then
	echo "anchor: $dpdk_testpmd txonly -> rxonly over memif, each side under callgrind" \
		"in turn (runs of $a_short and $a_long s)"
	printf '%-6s %-9s %9s %11s %11s\n' bytes side memif "qpio lcore" qpio/memif
	for size in ${sizes//,/ }; do
		for side in tx rx; do
			memif_run "$side" "$size" "$a_short" "m$side$size-s"
			memif_run "$side" "$size" "$a_long" "m$side$size-l"
			t1=$(total "$work/m$side$size-s.cg")
			t2=$(total "$work/m$side$size-l.cg")
			df=$(($(cat "$work/m$side$size-l.frames") - $(cat "$work/m$side$size-s.frames")))
			[ "$df" -gt 0 ] || { echo "memif $side $size: the longer run moved no more frames"; exit 1; }
			if [ "$side" = tx ]; then q=${q_tx[$size]}; else q=${q_rx[$size]}; fi
			awk -v df="$df" -v size="$size" -v side="$([ "$side" = tx ] && echo sender || echo receiver)" \
				-v t=$((t2 - t1)) -v q="$q" 'BEGIN {
				printf "%-6s %-9s %9.0f %11d %11.2f\n", size, side, t / df,
					q, q / (t / df) }'
		done
	done
fi
[ "$keep" = 1 ] && echo "callgrind outputs and logs kept in $work"
exit 0
