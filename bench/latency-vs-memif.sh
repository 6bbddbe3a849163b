#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Half round trip of one small message between two cores: qpio-pingpong
# over an RC QP pair on the soft NIC against one frame circulating between
# two dpdk-testpmd io forwarders over DPDK's memif PMD, in alternating
# pairs, each pair labelled with the cache-line one-way time. With -w the
# same over the wire: qpio-pingpong between two soft wire devices against
# one raw frame circulating between two dpdk-testpmd, on the two ends of
# one veth pair through net_af_packet.
#
#   bench/latency-vs-memif.sh [-p PAIRS] [-t SECONDS] [-s BYTES] [-n ORDERS]
#                             [-d DEVARGS | -w] [-k]
#
#   -p PAIRS     memif/qpio pairs (default 7)
#   -t SECONDS   measured seconds of each memif run (default 2), after 1 s
#                of warm-up
#   -s BYTES     qpio message size, 32..256 (default 64; memif's frame is
#                64 bytes, testpmd's txonly default)
#   -n ORDERS    orders of each qpio-pingpong run (default 200000)
#   -d DEVARGS   the qpio device (default soft0; e.g. soft0,cqe_comp=0)
#   -w           over the wire (root): both run on the two ends of a veth
#                pair through DPDK's net_af_packet, qpio-pingpong between
#                two soft wire devices in two processes (the exchange
#                --listen on CPU 1, the gateway --connect on CPU 0; every
#                order and ack a RoCEv2 RC packet over IPv4: the message
#                plus 58 bytes of headers and ICRC), the anchor one raw frame
#                of that length circulating between the two dpdk-testpmd:
#                the floor of any protocol on that port. qpio's run is
#                labelled by the one-way times before and after it, as
#                the frames' runs are (no --calibrate across processes)
#   -k           keep the raw logs and print where they are
#
# memif: the server forwards port 0 back to port 0 (io, --port-topology
# loop, --burst 1); the client does the same and sends one frame first
# (--tx-first), so exactly one frame goes round. Each side's Rx-pps is
# then round trips per second: the half round trip is 1e9 / (2 x Rx-pps)
# ns, the median of the per-second samples after the warm-up.
# qpio: qpio-pingpong --calibrate (gateway on CPU 0, exchange on CPU 1,
# as memif's forwarding lcores): before each order the two lcores bounce
# a pair of cache lines 8 times (each writes its own and polls the
# other's, qpio-bench-cacheline --lines 2's pattern; on some hosts twice
# the one-line time that labels memif's runs, and then its orders land in
# "far" while memif's are "near": the one-way figures printed before and
# after the pairs tell), so each order's half round trip is filed under
# the placement of its own moment ("near" below 80 ns one-way, "far"
# otherwise) and compared with the one-way time of the same orders; a
# placement that holds under 1% of a run's orders is left out of it.
#
# A VM's two vCPUs may sit on nearby or distant physical cores, and that
# changes within milliseconds. memif's runs cannot be calibrated that way:
# each is labelled with the cache-line one-way time
# (build/bench/qpio-bench-cacheline) taken before and after it, and a run
# whose two labels disagree is "mixed" and left out of the summary. The
# summary gives per placement the medians of memif's half round trips, of
# qpio's p50 and of qpio's p50 in one-way times, and the median of the
# pair ratios qpio/memif (qpio's orders of the placement memif ran in).
#
# Exit status: 0 when every run was measured, 1 when a run failed, 2 on a
# usage error or a missing tool. The numbers are reported, never judged.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
pingpong=${QPIO_PINGPONG:-$top/build/examples/pingpong/qpio-pingpong}
dpdk_testpmd=${DPDK_TESTPMD:-dpdk-testpmd}
cacheline=${QPIO_CACHELINE:-$top/build/bench/qpio-bench-cacheline}

pairs=7
secs=2
size=64
orders=200000
devargs=soft0
devargs_given=0
wire=0
keep=0
warmup=1		# 1-s samples dropped after the first non-zero one
near_ns=80		# one-way ns below which a placement is "near"

usage() { sed -n '4,57p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "latency-vs-memif: $*" >&2; keep=1; exit 1; }
usage_err() { echo "latency-vs-memif: $*" >&2; exit 2; }
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"

while [ $# -gt 0 ]; do
	case "$1" in
	-p) [ $# -ge 2 ] || usage_err "-p wants a value"; pairs=$2; shift 2 ;;
	-t) [ $# -ge 2 ] || usage_err "-t wants a value"; secs=$2; shift 2 ;;
	-s) [ $# -ge 2 ] || usage_err "-s wants a value"; size=$2; shift 2 ;;
	-n) [ $# -ge 2 ] || usage_err "-n wants a value"; orders=$2; shift 2 ;;
	-d) [ $# -ge 2 ] || usage_err "-d wants a value"; devargs=$2; devargs_given=1; shift 2 ;;
	-w) wire=1; shift ;;
	-k) keep=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "latency-vs-memif: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
need_whole -p "$pairs" pairs
need_whole -t "$secs" seconds
need_whole -n "$orders" orders
case "$size" in ''|*[!0-9]*) usage_err "-s wants bytes, got '$size'" ;; esac
[ "$size" -ge 32 ] && [ "$size" -le 256 ] || usage_err "-s must be 32..256"
case "$devargs" in soft*) ;; *) usage_err "-d must name a soft device (soft0[,...])" ;; esac
if [ "$wire" = 1 ]; then
	[ "$devargs_given" = 0 ] ||
		usage_err "-d does not apply with -w (the two soft wire devices are set by -w)"
	[ "$(id -u)" = 0 ] || usage_err "-w needs root (a veth pair)"
	command -v ip >/dev/null || usage_err "-w needs ip (iproute2)"
fi
need_tools "$pingpong" qpio-pingpong

logs=$(mktemp -d /tmp/qpio-lat.XXXXXX)
prefix_s=qpio-lat-srv-$$
prefix_c=qpio-lat-cli-$$
prefix_q=qpio-lat-qpio-$$
prefix_x=qpio-lat-exchange-$$
# -w: a RoCEv2 RC SEND ONLY over IPv4 is the message plus 58 bytes
# (Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4)
wire_hdr=58
pids=()
veth_a=qlw$$a
veth_b=qlw$$b
anchor=memif
if [ "$wire" = 1 ]; then
	anchor=frames
	# shellcheck source=test/veth.sh
	. "$top/test/veth.sh"
fi

cleanup() {
	bench_cleanup "$prefix_s" "$prefix_c" "$prefix_q" "$prefix_x"
	[ "$wire" = 0 ] || ip link del "$veth_a" 2>/dev/null || true
	bench_logs_done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ "$wire" = 1 ]; then
	veth_up "$veth_a" "$veth_b" || die "cannot create the veth pair $veth_a/$veth_b"
fi

# run_memif TAG: sets run_result to "HALF_NS N MIN_HALF MAX_HALF". With
# -w the two dpdk-testpmd sit on the two veth ends (net_af_packet) and the
# frame is as long as qpio's RoCEv2 packet.
run_memif() {
	local tag=$1 sock="qpio-lat-$$" srv cli pps common vs vc first
	common=(--forward-mode=io --port-topology=loop --nb-cores=1 --burst=1
		--total-num-mbufs=16384 --stats-period=1)
	vs="net_memif0,role=server,socket=$sock"
	vc="net_memif0,role=client,socket=$sock"
	first=(--tx-first)
	if [ "$wire" = 1 ]; then
		vs="net_af_packet0,iface=$veth_a"
		vc="net_af_packet0,iface=$veth_b"
		first=(--tx-first --txpkts=$((size + wire_hdr)))
	fi
	"$dpdk_testpmd" --lcores=0@0,1@1 --no-pci --no-huge -m 256 \
		--file-prefix="$prefix_s" --vdev="$vs" \
		-- "${common[@]}" </dev/null >"$logs/memif-srv-$tag.log" 2>&1 &
	srv=$!
	pids+=("$srv")
	sleep 1
	kill -0 "$srv" 2>/dev/null ||
		die "$anchor server dpdk-testpmd exited early; last lines:$(echo; tail -5 "$logs/memif-srv-$tag.log")"
	: >"$logs/memif-cli-$tag.log"
	"$dpdk_testpmd" --lcores=0@1,1@0 --no-pci --no-huge -m 256 \
		--file-prefix="$prefix_c" --vdev="$vc" \
		-- "${common[@]}" "${first[@]}" </dev/null >"$logs/memif-cli-$tag.log" 2>&1 &
	cli=$!
	pids+=("$cli")
	wait_rx "$logs/memif-cli-$tag.log" "$cli" "$srv"
	wait_samples "$logs/memif-cli-$tag.log" 0 $((warmup + secs + 3))
	stop_proc "$cli" "$anchor client dpdk-testpmd"
	stop_proc "$srv" "$anchor server dpdk-testpmd"
	pids=()
	pps=$(rx_pps_median "$logs/memif-cli-$tag.log" 0) ||
		die "$anchor: no Rx-pps samples in $logs/memif-cli-$tag.log"
	# Mpps of round trips -> ns of a half round trip (the slowest
	# second gives the longest).
	run_result=$(awk -v l="$pps" 'BEGIN {
		split(l, a, " ")
		printf "%.0f %d %.0f %.0f\n", 500 / a[1], a[2], 500 / a[4], 500 / a[3]
	}')
}

# run_qpio TAG: sets run_result to "NEAR_P50 NEAR_X FAR_P50 FAR_X" (ns and
# one-way times; "-" for a placement without orders), from qpio-pingpong
# --calibrate, whose orders each carry the one-way time measured just
# before them.
run_qpio() {
	local tag=$1 rc=0 log
	log="$logs/qpio-$tag.log"
	if [ "$wire" = 1 ]; then
		run_qpio_wire "$tag"
		return
	fi
	timeout -k 5 120 "$pingpong" -l 0,1 --no-huge --no-shconf --no-pci \
		--file-prefix="$prefix_q" -- --count "$orders" \
		--size "$size" --dev "$devargs" --calibrate </dev/null >"$log" 2>&1 || rc=$?
	[ "$rc" = 0 ] ||
		die "qpio-pingpong exited with $rc; last lines:$(echo; tail -5 "$log")"
	grep -q '^calibrated' "$log" || die "qpio-pingpong printed no calibrated lines ($log)"
	run_result=$(awk -v want="$orders" '
	/^  near: / { p = "near" }
	/^  far: / { p = "far" }
	/^  (near|far): / {
		if ($0 ~ /no orders/) { v[p] = "- -"; next }
		# a placement seen for under 1% of the orders is noise
		# (preempted bounces), not a placement
		if ($2 + 0 < want / 100) { v[p] = "- -"; next }
		match($0, /half round trip p50 [0-9]+/)
		h = substr($0, RSTART + 20, RLENGTH - 20)
		match($0, /, [0-9.]+ one-way times/)
		x = substr($0, RSTART + 2, RLENGTH - 16)
		v[p] = h " " x
	}
	END { print v["near"] " " v["far"] }' "$log")
}

# run_qpio_wire TAG: -w's qpio, two processes as two hosts would be: the
# exchange (qpio-pingpong --listen, CPU 1) on a soft wire device on one
# veth end, the gateway (--connect, CPU 0) on the other, as the two
# dpdk-testpmd sit. --calibrate needs both sides in one process, so the
# run is labelled as the frames' runs are: by the one-way time measured
# before it (ow2, the frames' "after") and after it (ow3); its p50 goes
# to that placement, to neither when the two disagree. Sets run_result
# as run_qpio does.
run_qpio_wire() {
	local tag=$1 rc=0 log xlog ex port p50 ow3 x place
	log="$logs/qpio-$tag.log"
	xlog="$logs/qpio-exchange-$tag.log"
	timeout -k 5 150 "$pingpong" -l 1 --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix="$prefix_x" --vdev="net_af_packet0,iface=$veth_a" -- \
		--dev soft0,wire=net_af_packet0,ip=10.0.0.1 --listen 0 \
		</dev/null >"$xlog" 2>&1 &
	ex=$!
	pids+=("$ex")
	port=$(listen_port "$xlog" "$ex") ||
		die "the qpio-pingpong exchange did not listen; last lines:$(echo; tail -5 "$xlog")"
	timeout -k 5 120 "$pingpong" -l 0 --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix="$prefix_q" --vdev="net_af_packet1,iface=$veth_b" -- \
		--dev soft1,wire=net_af_packet1,ip=10.0.0.2 \
		--connect "10.0.0.1:$port" --count "$orders" --size "$size" \
		</dev/null >"$log" 2>&1 || rc=$?
	[ "$rc" = 0 ] ||
		die "the qpio-pingpong gateway exited with $rc; last lines:$(echo; tail -5 "$log")"
	wait "$ex" || die "the qpio-pingpong exchange failed; last lines:$(echo; tail -5 "$xlog")"
	pids=()
	ow3=$(one_way) || die "qpio-bench-cacheline failed ($cacheline)"
	p50=$(sed -n 's/^half round trip over [0-9]* orders: .* p50 \([0-9]*\) ns,.*/\1/p' "$log")
	[ -n "$p50" ] || die "qpio-pingpong printed no half round trip ($log)"
	place=$(place_of "$ow2")
	[ "$(place_of "$ow3")" = "$place" ] || place=mixed
	x=$(awk -v h="$p50" -v a="$ow2" -v b="$ow3" 'BEGIN { printf "%.1f", h / ((a + b) / 2) }')
	case "$place" in
	near) run_result="$p50 $x - -" ;;
	far) run_result="- - $p50 $x" ;;
	*) run_result="- - - -" ;;
	esac
}

place_of() {
	awk -v o="$1" -v t="$near_ns" 'BEGIN { print (o < t) ? "near" : "far" }'
}

machine_facts
echo "before: $(load_facts)"
[ "$(nproc)" -ge 2 ] ||
	echo "latency-vs-memif: only $(nproc) CPU; both sides share it" >&2
if [ "$wire" = 1 ]; then
	echo "$pairs pairs over the veth pair $veth_a/$veth_b (net_af_packet);" \
		"frames: one $((size + wire_hdr))-byte frame, ${secs} s after ${warmup} s warm-up;" \
		"qpio: $orders orders of $size bytes, two soft wire devices in two processes"
else
	echo "$pairs pairs; memif: one 64-byte frame, ${secs} s after ${warmup} s warm-up;" \
		"qpio: $orders orders of $size bytes on $devargs"
fi
ow_two_before=$(one_way 2) || die "qpio-bench-cacheline failed ($cacheline)"
echo "one-way ns of a line each side writes (qpio-bench-cacheline --lines 2," \
	"the kind of bounce qpio-pingpong --calibrate times): $ow_two_before"
echo

# One line per pair: PAIR OW1 OW2 PLACE MEMIF_HALF QN_P50 QN_X QF_P50 QF_X RATIO
results=$logs/results
: >"$results"
printf '%-4s %-14s %-6s %-24s %-20s %-20s %s\n' pair "one-way ns" "$anchor" \
	"$anchor half ns (range)" "qpio near p50 (x)" "qpio far p50 (x)" \
	"qpio/$anchor"
for pair in $(seq 1 "$pairs"); do
	ow1=$(one_way) || die "qpio-bench-cacheline failed ($cacheline)"
	[ -n "$ow1" ] || die "qpio-bench-cacheline gave no median"
	run_memif "$pair"
	read -r m_half m_n m_lo m_hi <<<"$run_result"
	ow2=$(one_way) || die "qpio-bench-cacheline failed ($cacheline)"
	[ -n "$ow2" ] || die "qpio-bench-cacheline gave no median"
	run_qpio "$pair"
	read -r qn qnx qf qfx <<<"$run_result"
	place=$(place_of "$ow1")
	[ "$(place_of "$ow2")" = "$place" ] || place=mixed
	# memif against qpio's orders of the placement memif ran in
	ratio=-
	if [ "$place" = near ] && [ "$qn" != - ]; then
		ratio=$(awk -v q="$qn" -v m="$m_half" 'BEGIN { printf "%.3f", q / m }')
	elif [ "$place" = far ] && [ "$qf" != - ]; then
		ratio=$(awk -v q="$qf" -v m="$m_half" 'BEGIN { printf "%.3f", q / m }')
	fi
	printf '%-4s %-14s %-6s %-24s %-20s %-20s %s\n' "$pair" "$ow1/$ow2" \
		"$place" "$m_half ($m_lo-$m_hi, n=$m_n)" "$qn ($qnx)" "$qf ($qfx)" \
		"$ratio"
	echo "  $(load_facts)"
	echo "$pair $ow1 $ow2 $place $m_half $qn $qnx $qf $qfx $ratio" >>"$results"
done

echo
if [ "$wire" = 1 ]; then
	echo "medians per placement ($anchor and qpio: runs whose two labels agree,"
	echo "the one-way times before and after each):"
else
	echo "medians per placement ($anchor: pairs whose two labels agree; qpio: its"
	echo "orders of that placement, by the one-way time measured before each):"
fi
printf '%-6s %-12s %-14s %-12s %-14s %-16s %s\n' place "$anchor runs" \
	"$anchor half ns" "qpio runs" "qpio p50 ns" "qpio/one-way" \
	"median qpio/$anchor"
awk "$awk_median"'
{
	if ($4 != "mixed") {
		mc[$4]++
		m[$4] = m[$4] " " $5
		if ($10 != "-")
			r[$4] = r[$4] " " $10
	}
	if ($6 != "-") { qc["near"]++; q["near"] = q["near"] " " $6; x["near"] = x["near"] " " $7 }
	if ($8 != "-") { qc["far"]++; q["far"] = q["far"] " " $8; x["far"] = x["far"] " " $9 }
}
END {
	split("near far", pl, " ")
	for (i = 1; i <= 2; i++) {
		k = pl[i]
		printf "%-6s %-12d %-14s %-12d %-14s %-16s %s\n", k, mc[k],
			mc[k] ? sprintf("%.0f", median(m[k])) : "-", qc[k],
			qc[k] ? sprintf("%.0f", median(q[k])) : "-",
			qc[k] ? sprintf("%.1f", median(x[k])) : "-",
			r[k] != "" ? sprintf("%.3f", median(r[k])) : "-"
	}
}' "$results"
echo "one-way ns of a line each side writes, after the pairs: $(one_way 2)" \
	"(before: $ow_two_before)"
echo "after: $(load_facts)"
exit 0
