#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The cost of RoCE on one DPDK port: RC SENDs between two soft wire
# devices in two processes over DPDK's memif PMD, against raw frames of
# the same length over the same memif (dpdk-testpmd txonly -> rxonly), in
# alternating pairs; and, with -i, the instructions per message of the
# wire transport, sender and receiver, counted by callgrind.
#
#   bench/wire-vs-memif.sh [-p PAIRS] [-t SECONDS] [-s BYTES]
#                          [-l POST_LIST] [-q DEPTH] [-d DEVARGS] [-i]
#                          [-n SHORT,LONG] [-k]
#
#   -p PAIRS     memif/qpio pairs (default 5)
#   -t SECONDS   measured seconds per run (default 5)
#   -s BYTES     SEND payload, 8..1024 (default 64); memif's frames are
#                as long as the RoCEv2 frame of that SEND over IPv4:
#                BYTES rounded up to 4, plus 58 (Ethernet 14, IPv4 20,
#                UDP 8, BTH 12, ICRC 4)
#   -l POST_LIST qpio-perf's WRs a doorbell, 1..128 (default 32, as
#                dpdk-testpmd's burst; perftest's own default is 1)
#   -q DEPTH     qpio-perf's send queue depth, POST_LIST..4096 (default
#                512)
#   -d DEVARGS   appended to both wire devices' devargs of the rate runs,
#                e.g. -d ,ack_coalesce=0 (-i counts the default devices)
#   -i           also count instructions: qpio-bench-wire (both wire
#                devices on one lcore, over a pair of rings) under
#                callgrind for SHORT and LONG messages (-n, default
#                50000,150000); the difference divided by the difference
#                of the messages, split by callgrind's inclusive costs of
#                the bench's sender() (posts, its CQ's polls and its
#                device's progress: the ACKs) and receiver() (its CQ's
#                polls and its device's progress: the SENDs, their ACKs
#                sent; the receives posted again)
#   -k           keep the raw logs and print where they are
#
# memif: dpdk-testpmd txonly (memif server; forwarder on CPU 1) and
# rxonly (client; forwarder on CPU 0), --no-huge; the run's rate is the
# median of the receiver's per-second Rx-pps after 2 s of warm-up.
# qpio: qpio-perf --test ib_send_bw -D SECONDS -s BYTES -l POST_LIST
# -t DEPTH -x 1 (the IPv4 GID), the server (receiver) on CPU 0 over net_memif0 role=server,
# the client (sender) on CPU 1 over role=client, --no-huge; the run's
# rate is the client's MsgRate (messages over the run's seconds). Each
# pair is labelled with the cache-line one-way time measured just before
# it ("near" below 80 ns) and ratios are summarised per placement, never
# mixed. The issue's goal for the ratio: 0.6.
#
# Exit status: 0 when every run was measured, 1 when a run failed, 2 on a
# usage error or a missing tool. The numbers are reported, never judged.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
perf=${QPIO_PERF:-$top/build/app/perf/qpio-perf}
wire_bench=${QPIO_BENCH_WIRE:-$top/build/bench/qpio-bench-wire}
dpdk_testpmd=${DPDK_TESTPMD:-dpdk-testpmd}
cacheline=${QPIO_CACHELINE:-$top/build/bench/qpio-bench-cacheline}

pairs=5
secs=5
size=64
instr=0
lengths=50000,150000
post_list=32
depth=512
extra=
keep=0
warmup=2
burst=32
nb_mbufs=16384
near_ns=80

usage() { sed -n '4,49p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "wire-vs-memif: $*" >&2; keep=1; exit 1; }
usage_err() { echo "wire-vs-memif: $*" >&2; exit 2; }
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"

while [ $# -gt 0 ]; do
	case "$1" in
	-p|-t|-s|-n|-l|-q)
		[ $# -ge 2 ] && [ -n "$2" ] || usage_err "$1 needs a value"
		case "$1" in
		-p) pairs=$2 ;; -t) secs=$2 ;; -s) size=$2 ;; -n) lengths=$2 ;;
		-l) post_list=$2 ;; -q) depth=$2 ;;
		esac
		shift ;;
	-d)
		[ $# -ge 2 ] || usage_err "-d needs a value"
		case "$2" in
		,*) extra=$2 ;;
		*) usage_err "-d wants devargs to append, starting with a comma (-d ,ack_coalesce=0), got '$2'" ;;
		esac
		shift ;;
	-i) instr=1 ;;
	-k) keep=1 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "wire-vs-memif: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
need_whole -p "$pairs" pairs
need_whole -t "$secs" seconds
need_whole -s "$size" bytes
need_whole -l "$post_list" WRs
need_whole -q "$depth" entries
[ "$post_list" -le 128 ] || usage_err "-l wants 1..128 WRs, got $post_list"
[ "$depth" -ge "$post_list" ] && [ "$depth" -le 4096 ] ||
	usage_err "-q wants $post_list..4096 entries, got $depth"
[ "$size" -ge 8 ] && [ "$size" -le 1024 ] ||
	usage_err "-s wants 8..1024 bytes (one packet at path MTU 1024), got $size"
IFS=, read -r short long <<<"$lengths"
[[ ${short:-} =~ ^[1-9][0-9]*$ && ${long:-} =~ ^[1-9][0-9]*$ ]] &&
	[ "$long" -gt "$short" ] && [ $((short % 16)) = 0 ] && [ $((long % 16)) = 0 ] ||
	usage_err "-n SHORT,LONG: two message counts, multiples of 16, LONG > SHORT"
need_tools "$perf" qpio-perf
if [ "$instr" = 1 ]; then
	command -v valgrind >/dev/null ||
		usage_err "valgrind not installed (usertools/install-deps.sh --bench)"
	command -v callgrind_annotate >/dev/null ||
		usage_err "callgrind_annotate not installed"
	[ -x "$wire_bench" ] || usage_err "qpio-bench-wire not built ($wire_bench)"
fi
frame=$(( (size + 3) / 4 * 4 + 58 ))

logs=$(mktemp -d /tmp/qpio-wire-memif.XXXXXX)
prefix_tx=qpio-wm-tx-$$
prefix_rx=qpio-wm-rx-$$
prefix_s=qpio-wm-s-$$
prefix_c=qpio-wm-c-$$
pids=()
cleanup() {
	bench_cleanup "$prefix_tx" "$prefix_rx" "$prefix_s" "$prefix_c" \
		"qpio-wm-i-$$-$short" "qpio-wm-i-$$-$long"
	bench_logs_done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# run_memif TAG: sets run_result to "MEDIAN N MIN MAX" (Mpps).
run_memif() {
	memif_rate "$1" "$frame" "qpio-wm-$$" --no-huge -m 256
}

# run_qpio TAG: sets run_result to the client's MsgRate (Mpps).
run_qpio() {
	local tag=$1 srv n=100 rc=0 port=$((20000 + ($$ + RANDOM) % 20000))
	local common=(--no-huge --no-shconf --no-pci -m 512 --log-level=lib.eal:error)
	local test=(--test ib_send_bw -s "$size" -D "$secs" -l "$post_list"
		-t "$depth" -x 1 -p "$port" --timeout 20)
	"$perf" -l 0 "${common[@]}" --file-prefix="$prefix_s" \
		--vdev="net_memif0,role=server,socket=qpio-wm-q-$$" -- "${test[@]}" \
		--dev "soft0,wire=net_memif0,ip=10.0.0.1$extra" --server \
		</dev/null >"$logs/qpio-s-$tag.log" 2>&1 &
	srv=$!
	pids+=("$srv")
	# the server's memif listens once its port started; its link comes
	# up when the client connects (qpio-perf waits for it)
	until grep -q "waiting up to" "$logs/qpio-s-$tag.log"; do
		kill -0 "$srv" 2>/dev/null ||
			die "qpio-perf server exited early; last lines:$(echo; tail -5 "$logs/qpio-s-$tag.log")"
		n=$((n - 1))
		[ "$n" -gt 0 ] || die "qpio-perf server's port not up in 10 s ($logs/qpio-s-$tag.log)"
		sleep 0.1
	done
	timeout -k 5 $((secs + 60)) "$perf" -l 1 "${common[@]}" --file-prefix="$prefix_c" \
		--vdev="net_memif0,role=client,socket=qpio-wm-q-$$" -- "${test[@]}" \
		--dev "soft1,wire=net_memif0,ip=10.0.0.2$extra" --connect 127.0.0.1 \
		</dev/null >"$logs/qpio-c-$tag.log" 2>&1 || rc=$?
	wait "$srv" || rc=$((rc ? rc : $?))
	pids=()
	[ "$rc" = 0 ] ||
		die "qpio-perf exited with $rc; last lines:$(echo; tail -5 "$logs/qpio-c-$tag.log")"
	# the row under the header: bytes, iterations, peak, average, MsgRate
	run_result=$(awk -v s="$size" '$1 == s && NF >= 5 && $5 ~ /^[0-9.]+$/ { r = $5 }
		END { if (r == "") exit 1; printf "%.3f\n", r }' "$logs/qpio-c-$tag.log") ||
		die "qpio: no MsgRate in $logs/qpio-c-$tag.log"
}

machine_facts
echo "before: $(load_facts)"
echo "$pairs pairs, ${secs} s per run, SEND of $size bytes (RoCEv2 frame of $frame bytes)"
echo "memif: $dpdk_testpmd txonly -> rxonly of $frame-byte frames, --no-huge"
echo "qpio:  qpio-perf ib_send_bw -l $post_list -t $depth, soft wire devices on net_memif0$extra, --no-huge"
echo
results=$logs/results
: >"$results"
printf '%-4s %-11s %-6s %-28s %-12s %s\n' pair one-way-ns place \
	"memif Mpps (min-max)" "qpio Mpps" qpio/memif
for pair in $(seq 1 "$pairs"); do
	ow=$(one_way) || die "qpio-bench-cacheline failed ($cacheline)"
	[ -n "$ow" ] || die "qpio-bench-cacheline gave no median"
	place=$(awk -v o="$ow" -v t="$near_ns" 'BEGIN { print (o < t) ? "near" : "far" }')
	run_memif "$pair"
	read -r m_med m_n m_lo m_hi <<<"$run_result"
	run_qpio "$pair"
	q=$run_result
	ratio=$(awk -v q="$q" -v m="$m_med" 'BEGIN { printf "%.3f", (m > 0) ? q / m : 0 }')
	printf '%-4s %-11s %-6s %-28s %-12s %s\n' "$pair" "$ow" "$place" \
		"$m_med ($m_lo-$m_hi, n=$m_n)" "$q" "$ratio"
	echo "  $(load_facts)"
	echo "$pair $ow $place $m_med $q $ratio" >>"$results"
done
echo
echo "median per placement (goal 0.6):"
printf '%-6s %-6s %-12s %-12s %s\n' place pairs "memif Mpps" "qpio Mpps" \
	"median qpio/memif"
awk "$awk_median"'
{
	k = $3
	if (!(k in cnt))
		order[++nk] = k
	cnt[k]++
	m[k] = m[k] " " $4
	q[k] = q[k] " " $5
	r[k] = r[k] " " $6
}
END {
	for (i = 1; i <= nk; i++) {
		k = order[i]
		printf "%-6s %-6d %-12.3f %-12.3f %.3f\n", k, cnt[k],
			median(m[k]), median(q[k]), median(r[k])
	}
}' "$results"

if [ "$instr" = 1 ]; then
	echo
	echo "instructions per message, qpio-bench-wire (one lcore, two wire devices over rings), $size bytes:"
	for n in "$short" "$long"; do
		valgrind --tool=callgrind --callgrind-out-file="$logs/i$n.cg" \
			"$wire_bench" -l 0 --no-huge --no-shconf --no-pci -m 512 \
			--file-prefix="qpio-wm-i-$$-$n" --log-level=lib.eal:error -- \
			--count "$n" --size "$size" >"$logs/i$n.log" 2>&1 ||
			die "qpio-bench-wire under callgrind failed; last lines:$(echo; tail -5 "$logs/i$n.log")"
		grep -q "^qpio-bench-wire: $n messages" "$logs/i$n.log" ||
			die "qpio-bench-wire: no run line in $logs/i$n.log"
	done
	read -r t1 s1 r1 <<<"$(total "$logs/i$short.cg") $(incl "$logs/i$short.cg" sender) $(incl "$logs/i$short.cg" receiver)"
	read -r t2 s2 r2 <<<"$(total "$logs/i$long.cg") $(incl "$logs/i$long.cg" sender) $(incl "$logs/i$long.cg" receiver)"
	awk -v n=$((long - short)) -v t=$((t2 - t1)) -v s=$((s2 - s1)) -v r=$((r2 - r1)) 'BEGIN {
		printf "  sender %.1f  receiver %.1f  message %.1f (%d messages apart)\n",
			s / n, r / n, t / n, n }'
fi
echo "after: $(load_facts)"
exit 0
