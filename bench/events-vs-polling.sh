#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# What the soft wire device's interrupt mode (devargs rx_intr=1) costs and
# saves against busy polling: qpio-verbs-pingpong between two soft wire
# devices in two processes on the two ends of a vhost-user link (net_vhost
# in the server, net_virtio_user in the client: both PMDs raise rx queue
# interrupts), polling (the anchor: ibv_rc_pingpong without -e) against
# --events on both ends (ibv_rc_pingpong -e: sleep in
# qpio_soft_wire_queue_wait() whenever the CQ is empty), in alternating
# pairs, each labelled with the cache-line one-way time measured just
# before it.
#
#   bench/events-vs-polling.sh [-p PAIRS] [-g MS] [-n ITERS] [-s BYTES]
#                              [-S US] [-k]
#
#   -p PAIRS     polling/events pairs (default 5); odd pairs run polling
#                first, even pairs events first
#   -g MS        the client's pause before each SEND, 0..60000 ms
#                (default 1: sparse traffic, some 600 exchanges a second,
#                where each message finds the other side idle); 0 runs
#                back to back, where a sleeping side is woken at once
#   -n ITERS     exchanges of each run (default 2000 with a pause, 20000
#                back to back)
#   -s BYTES     RC SEND payload, 1..4096 (default 64; path MTU 1024, so
#                above 1024 bytes a message is several packets)
#   -S US        the events runs' devices poll US microseconds before
#                each sleep (devargs rx_intr_spin=US, 0..1000000; default
#                0: they sleep at once)
#   -k           keep the raw logs and print where they are
#
# Each run: the server (net_vhost, CPU 0) and the client (net_virtio_user,
# CPU 1), both --no-huge, RC, --validate (every message checked, the run
# fails otherwise). Per run it reports the latency and the CPU time both
# processes spent during the exchange (user + sys of every thread, from
# their "cpu:" lines), as a share of one CPU: a polling run spends two
# whole CPUs whatever the traffic, a sleeping one what the messages and
# their wakes take. The latency with a pause is the client's round trip
# from a SEND's post to the answer's completion (--gap's "rtt:" line: p50
# and p99), which holds both sides' wakes; back to back it is the
# client's usec/iter (one exchange). Ratios are events / polling; pairs
# are summarised per placement ("near" below 80 ns one way), never
# mixed. No root needed.
#
# Exit status: 0 when every run was measured, 1 when a run failed, 2 on a
# usage error or a missing tool. The numbers are reported, never judged.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
pingpong=${QPIO_VERBS_PINGPONG:-$top/build/examples/verbs_pingpong/qpio-verbs-pingpong}
cacheline=${QPIO_CACHELINE:-$top/build/bench/qpio-bench-cacheline}

pairs=5
gap=1
spin=0
iters=
size=64
keep=0
near_ns=80

usage() { sed -n '4,46p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "events-vs-polling: $*" >&2; keep=1; exit 1; }
usage_err() { echo "events-vs-polling: $*" >&2; exit 2; }
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"

while [ $# -gt 0 ]; do
	case "$1" in
	-p|-n|-s|-g|-S)
		[ $# -ge 2 ] && [ -n "$2" ] || usage_err "$1 needs a value"
		case "$1" in
		-p) pairs=$2 ;; -n) iters=$2 ;; -s) size=$2 ;; -g) gap=$2 ;;
		-S) spin=$2 ;;
		esac
		shift ;;
	-k) keep=1 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "events-vs-polling: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
need_whole -p "$pairs" pairs
# 0 or a whole number without a leading 0, at most MAX
need_upto() {
	case "$2" in
	0) ;;
	''|*[!0-9]*|0*|????????*) usage_err "$1 wants whole $3 0..$4, no leading 0, got '$2'" ;;
	*) [ "$2" -le "$4" ] || usage_err "$1 wants whole $3 0..$4, no leading 0, got '$2'" ;;
	esac
}
need_upto -g "$gap" milliseconds 60000
need_upto -S "$spin" microseconds 1000000
if [ -z "$iters" ]; then
	iters=2000
	[ "$gap" = 0 ] && iters=20000
fi
need_whole -n "$iters" exchanges
[ "$gap" = 0 ] || [ "$iters" -le 1000000 ] ||
	usage_err "-n is at most 1000000 with a pause (-g), got $iters"
# the pauses alone take iters x gap; a sleeping side may oversleep each
# by a millisecond or more: qpio-verbs-pingpong's --timeout, at most a day
tmo=$((gap * iters * 3 / 1000 + 60))
[ "$tmo" -le 86400 ] ||
	usage_err "-g $gap with -n $iters pauses too long for one run (a day at most): give fewer exchanges"
need_whole -s "$size" bytes
[ "$size" -le 4096 ] || usage_err "-s wants 1..4096 bytes, got $size"
[ "$pairs" -le 100 ] || usage_err "-p is at most 100 pairs, got $pairs"
[ -x "$pingpong" ] || usage_err "qpio-verbs-pingpong not built ($pingpong)"
[ -x "$cacheline" ] || usage_err "qpio-bench-cacheline not built ($cacheline)"

logs=$(mktemp -d /tmp/qpio-events-polling.XXXXXX)
prefix_s=qpio-ep-s-$$
prefix_c=qpio-ep-c-$$
pids=()
cleanup() {
	local p
	# the server's timeout passes TERM on to qpio-verbs-pingpong
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	[ ${#pids[@]} = 0 ] || sleep 1
	bench_cleanup "$prefix_s" "$prefix_c"
	bench_logs_done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
port=$((20000 + $$ % 20000))
gap_opt=()
[ "$gap" = 0 ] || gap_opt=(--gap "$gap")

# side PREFIX LCORE VDEV DEVARGS MODE [SERVER]: sets side_cmd to one
# qpio-verbs-pingpong under timeout (MODE events adds --events).
side() {
	local prefix=$1 lcore=$2 vdev=$3 dev=$4 mode=$5
	local ev=()
	shift 5
	[ "$mode" = events ] && ev=(--events)
	side_cmd=(timeout $((tmo + 60)) "$pingpong" -l "$lcore" --no-huge
		--no-shconf --no-pci -m 256 --file-prefix="$prefix"
		--log-level=lib.eal:error --vdev="$vdev" -- --dev "$dev" -c RC
		-g 1 -s "$size" -n "$iters" -m 1024 -p "$port" --validate
		--timeout "$tmo" "${ev[@]}" "$@")
}

# cpu_usec LOG: user + sys microseconds of LOG's "cpu:" line
cpu_usec() {
	sed -n 's/^cpu: \([0-9.]*\) s user, \([0-9.]*\) s sys = .*/\1 \2/p' "$1" |
		awk 'NF == 2 { printf "%.0f\n", ($1 + $2) * 1e6; ok = 1 }
		     END { exit !ok }'
}

# run MODE TAG: one run; sets run_lat (the client's round trip p50 with
# a pause, else its usec/iter), run_p99 (the round trip's p99; - back to
# back) and run_cpu (both processes' CPU, % of one CPU).
run() {
	local mode=$1 tag=$2 sock=$logs/vhost-$2.sock srv crc src s c n
	local sp=
	[ "$mode" = events ] && [ "$spin" != 0 ] && sp=,rx_intr_spin=$spin
	rm -f "$sock"
	side "$prefix_s" 0 "net_vhost0,iface=$sock,queues=1" \
		"soft0,wire=net_vhost0,ip=10.0.0.1,rx_intr=1$sp" "$mode"
	"${side_cmd[@]}" >"$logs/server-$tag.log" 2>&1 &
	srv=$!
	pids=("$srv")
	for n in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
	[ -S "$sock" ] || die "net_vhost made no socket; last lines:$(echo; tail -5 "$logs/server-$tag.log")"
	# (the client asks again until the server's TCP listen is up)
	crc=0
	side "$prefix_c" 1 "net_virtio_user0,path=$sock,queues=1" \
		"soft1,wire=net_virtio_user0,ip=10.0.0.2,rx_intr=1$sp" "$mode" \
		"${gap_opt[@]}" 127.0.0.1
	"${side_cmd[@]}" >"$logs/client-$tag.log" 2>&1 || crc=$?
	src=0
	wait "$srv" || src=$?
	pids=()
	[ "$src" = 0 ] && [ "$crc" = 0 ] ||
		die "$mode run $tag: server exit $src, client exit $crc; client's last lines:$(echo; tail -5 "$logs/client-$tag.log")"
	for s in server client; do
		grep -q "^validate: 0 of $iters messages wrong$" "$logs/$s-$tag.log" ||
			die "$mode run $tag: $s did not validate ($logs/$s-$tag.log)"
	done
	wall=$(sed -n 's/^[0-9]* iters in [0-9.]* seconds = \([0-9.]*\) usec\/iter$/\1/p' \
		"$logs/client-$tag.log")
	[ -n "$wall" ] || die "$mode run $tag: no usec/iter line"
	if [ "$gap" = 0 ]; then
		run_lat=$wall
		run_p99=-
	else
		read -r run_lat run_p99 < <(sed -n "s/^rtt: p50 \([0-9.]*\) usec, p99 \([0-9.]*\), p99.9 [0-9.]*, max [0-9.]* over $iters exchanges$/\1 \2/p" \
			"$logs/client-$tag.log") || true
		[ -n "${run_p99:-}" ] || die "$mode run $tag: no rtt line of $iters exchanges"
	fi
	s=$(cpu_usec "$logs/server-$tag.log") || die "$mode run $tag: no cpu line (server)"
	c=$(cpu_usec "$logs/client-$tag.log") || die "$mode run $tag: no cpu line (client)"
	# both processes' CPU over the client's wall time of the exchange
	run_cpu=$(awk -v s="$s" -v c="$c" -v n="$iters" -v w="$wall" \
		'BEGIN { printf "%.1f", (s + c) * 100 / (n * w) }')
	# the sleeps each side began (the wire line's intr_sleeps): a run
	# without a spin where a side never slept measured nothing of the mode
	run_sleeps=
	for s in server client; do
		n=$(sed -n 's/^wire: .* intr_sleeps \([0-9]*\) intr_spin_takes [0-9]*$/\1/p' \
			"$logs/$s-$tag.log")
		[ -n "$n" ] || die "$mode run $tag: no wire line ($s)"
		[ "$mode" = poll ] || [ "$spin" != 0 ] || [ "$n" -ge 1 ] ||
			die "events run $tag: the $s never slept"
		run_sleeps="$run_sleeps${run_sleeps:+/}$n"
	done
}

machine_facts
echo "qpio-verbs-pingpong RC over net_vhost <-> net_virtio_user, $size-byte SENDs, $iters exchanges a run, the client's pause $gap ms, events runs' spin $spin us, $pairs pairs"
if [ "$gap" = 0 ]; then
	echo "lat: the client's usec/iter (one exchange: a message each way, back to back); cpu: both processes' user+sys, % of one CPU"
else
	echo "lat, p99: the client's round trip, SEND posted to answer received, usec; cpu: both processes' user+sys, % of one CPU"
fi
echo "ev-sleeps: the sleeps the events run's server/client began (intr_sleeps)"
printf '%-4s %-9s %-5s %-9s %-9s %-7s %-9s %-9s %-8s %-8s %-7s %-11s %s\n' pair one-way place \
	poll-lat ev-lat ratio poll-p99 ev-p99 poll-cpu ev-cpu ratio ev-sleeps load
results=()
for p in $(seq "$pairs"); do
	ow=$(one_way) || die "qpio-bench-cacheline failed ($cacheline)"
	[ -n "$ow" ] || die "qpio-bench-cacheline gave no median"
	place=far
	awk -v o="$ow" -v n="$near_ns" 'BEGIN { exit !(o < n) }' && place=near
	if [ $((p % 2)) = 1 ]; then order="poll events"; else order="events poll"; fi
	for m in $order; do
		if [ "$m" = poll ]; then
			run poll "$p-poll"; pl=$run_lat; pp=$run_p99; pc=$run_cpu
		else
			run events "$p-events"; el=$run_lat; ep=$run_p99; ec=$run_cpu
			es=$run_sleeps
		fi
	done
	rl=$(awk -v a="$el" -v b="$pl" 'BEGIN { printf "%.2f", a / b }')
	rc=$(awk -v a="$ec" -v b="$pc" 'BEGIN { printf "%.3f", a / b }')
	printf '%-4s %-9s %-5s %-9s %-9s %-7s %-9s %-9s %-8s %-8s %-7s %-11s %s\n' "$p" \
		"$ow" "$place" "$pl" "$el" "$rl" "$pp" "$ep" "$pc" "$ec" "$rc" "$es" \
		"$(cut -d' ' -f1 /proc/loadavg)"
	results+=("$place $pl $el $rl $pc $ec $rc")
done
echo "$(load_facts)"
for place in near far; do
	printf '%s\n' "${results[@]}" | awk -v pl="$place" '
	function med(a, n,   i, j, x) {
		for (i = 2; i <= n; i++) {
			x = a[i]
			for (j = i - 1; j >= 1 && a[j] > x; j--)
				a[j + 1] = a[j]
			a[j + 1] = x
		}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	$1 == pl { n++; pl_[n] = $2; el[n] = $3; rl[n] = $4; pc[n] = $5; ec[n] = $6; rc[n] = $7 }
	END {
		if (n == 0)
			exit
		printf "%s (%d pairs), medians: latency poll %.2f, events %.2f usec (events/poll %.2f); cpu poll %.1f %%, events %.1f %% of one CPU (events/poll %.3f)\n",
			pl, n, med(pl_, n), med(el, n), med(rl, n), med(pc, n), med(ec, n), med(rc, n)
	}'
done
