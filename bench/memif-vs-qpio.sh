#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Packet rate of DPDK's memif PMD and of a qpio RC link on the soft NIC,
# both driven by a testpmd in txonly -> rxonly mode with one forwarding
# lcore per side, measured in alternating pairs.
#
#   bench/memif-vs-qpio.sh [-p PAIRS] [-t SECONDS] [-s BYTES[,BYTES...]]
#                          [--no-huge] [-k]
#
#   -p PAIRS     memif/qpio pairs per packet size (default 5)
#   -t SECONDS   measured seconds per run (default 5), after 2 s of warm-up
#   -s BYTES     packet sizes, comma separated, 64..1518 (default 64;
#                the full set is -s 64,256,1024,1518)
#   --no-huge    run both sides on 4 KB pages (EAL --no-huge), as the unit
#                tests do, instead of on 2 MB hugepages. By default both
#                dpdk-testpmd and qpio-testpmd run on hugepages, as DPDK
#                applications are deployed; the script reserves 640 pages
#                and mounts them itself (root) and puts the old page count
#                back on exit. On 4 KB pages both are TLB-bound: the frame
#                buffers in flight span hundreds of pages (bench/README.md)
#   -k           keep the raw logs and print where they are
#
# Each pair runs memif, then qpio, right after measuring the cross-core
# cache-line one-way time (build/bench/qpio-bench-cacheline). A VM's two
# vCPUs may sit on nearby or distant physical cores, which changes every
# cross-core figure several times over; the pair is labelled with the
# placement it ran in ("near" below 80 ns one-way, "far" otherwise) and
# ratios are summarised per placement, never mixed.
#
# A run's rate is the median of its per-second Rx-pps samples (the rxonly
# side's port), skipping the first non-zero sample and the warm-up. A
# pair's ratio is qpio / memif. The summary gives, per size and placement,
# the median of the pair ratios.
#
# Exit status: 0 when every run was measured, 1 when a run failed, 2 on a
# usage error or a missing tool. The numbers are reported, never judged.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
qpio_testpmd=${QPIO_TESTPMD:-$top/build/app/testpmd/qpio-testpmd}
dpdk_testpmd=${DPDK_TESTPMD:-dpdk-testpmd}
cacheline=${QPIO_CACHELINE:-$top/build/bench/qpio-bench-cacheline}

pairs=5
secs=5
sizes=64
huge=1
keep=0
warmup=2		# 1-s samples dropped after the first non-zero one
burst=32
nb_mbufs=16384		# per dpdk-testpmd process: enough for a 1024-slot ring
near_ns=80		# one-way ns below which a placement is "near"

usage() { sed -n '4,37p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "memif-vs-qpio: $*" >&2; keep=1; exit 1; }
usage_err() { echo "memif-vs-qpio: $*" >&2; exit 2; }
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"

while [ $# -gt 0 ]; do
	case "$1" in
	-p|-t|-s)
		[ $# -ge 2 ] && [ -n "$2" ] || usage_err "$1 needs a value"
		case "$1" in -p) pairs=$2 ;; -t) secs=$2 ;; -s) sizes=$2 ;; esac
		shift ;;
	--huge) huge=1 ;;
	--no-huge) huge=0 ;;
	-k) keep=1 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "memif-vs-qpio: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
need_whole -p "$pairs" pairs
need_whole -t "$secs" seconds
IFS=, read -r -a size_list <<<"$sizes"
[ "${#size_list[@]}" -gt 0 ] || usage_err "-s wants sizes"
for s in "${size_list[@]}"; do
	case "$s" in ''|*[!0-9]*) usage_err "-s wants bytes, got '$s'" ;; esac
	[ "$s" -ge 64 ] && [ "$s" -le 1518 ] || usage_err "-s sizes must be 64..1518"
done
need_tools "$qpio_testpmd" qpio-testpmd
hp_sys=/sys/kernel/mm/hugepages/hugepages-2048kB
if [ "$huge" = 1 ]; then
	[ "$(id -u)" = 0 ] ||
		usage_err "hugepages need root (nr_hugepages, mount); --no-huge runs on 4 KB pages"
	[ -w "$hp_sys/nr_hugepages" ] ||
		usage_err "no 2 MB hugepage support ($hp_sys); --no-huge runs on 4 KB pages"
fi

logs=$(mktemp -d /tmp/qpio-bench.XXXXXX)
prefix_tx=qpio-bench-tx-$$
prefix_rx=qpio-bench-rx-$$
prefix_q=qpio-bench-qpio-$$
pids=()
hp_orig=
hp_mnt=

cleanup() {
	bench_cleanup "$prefix_tx" "$prefix_rx" "$prefix_q"
	if [ -n "$hp_mnt" ]; then
		umount "$hp_mnt" 2>/dev/null || true
		rmdir "$hp_mnt" 2>/dev/null || true
	fi
	[ -n "$hp_orig" ] && echo "$hp_orig" >"$hp_sys/nr_hugepages"
	bench_logs_done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# hp_avail: free 2 MB pages no one has reserved (mapped, not yet touched).
hp_avail() {
	echo $(($(cat "$hp_sys/free_hugepages") - $(cat "$hp_sys/resv_hugepages")))
}

# reserve_hugepages COUNT: make COUNT free 2 MB pages and a private mount
# (root and hugepage support were checked before the logs were made).
reserve_hugepages() {
	local need=$1 total free
	total=$(cat "$hp_sys/nr_hugepages")
	free=$(hp_avail)
	if [ "$free" -lt "$need" ]; then
		hp_orig=$total
		echo $((total + need - free)) >"$hp_sys/nr_hugepages"
		free=$(hp_avail)
		[ "$free" -ge "$need" ] ||
			die "asked for $need free 2 MB hugepages, the kernel gave $free"
	fi
	hp_mnt=$(mktemp -d /tmp/qpio-bench-huge.XXXXXX)
	mount -t hugetlbfs -o pagesize=2M nodev "$hp_mnt"
}

# run_memif SIZE TAG: sets run_result to "MEDIAN N MIN MAX".
run_memif() {
	if [ "$huge" = 1 ]; then
		memif_rate "$2" "$1" "qpio-bench-$$" --huge-dir="$hp_mnt"
	else
		memif_rate "$2" "$1" "qpio-bench-$$" --no-huge -m 256
	fi
}

# run_qpio SIZE TAG: sets run_result to "MEDIAN N MIN MAX".
run_qpio() {
	local size=$1 tag=$2 rc=0 mem=(--no-huge)
	[ "$huge" = 1 ] && mem=(--huge-dir="$hp_mnt")
	qpio_cmd=("$qpio_testpmd" --lcores=0@0,1@0,2@1 "${mem[@]}" --no-shconf
		--no-pci -m 1024 --file-prefix="$prefix_q" --
		--dev qp0,dev=soft0,qp=rc,peer=qp1 --dev qp1,dev=soft0,qp=rc,peer=qp0
		--forward-mode=txonly,rxonly --nb-cores=2 --txpkts="$size"
		--burst="$burst" --stats-period=1
		--duration=$((warmup + secs + 2)))
	# --foreground: in the script's process group, so a Ctrl-C reaches
	# qpio-testpmd, which stops and lets the cleanup run at once.
	timeout --foreground -k 5 $((warmup + secs + 60)) "${qpio_cmd[@]}" </dev/null \
		>"$logs/qpio-$tag.log" 2>&1 || rc=$?
	[ "$rc" = 0 ] ||
		die "qpio-testpmd exited with $rc; last lines:$(echo; tail -5 "$logs/qpio-$tag.log")"
	run_result=$(rx_pps_median "$logs/qpio-$tag.log" 1) ||
		die "qpio: no Rx-pps samples for port 1 in $logs/qpio-$tag.log"
}

# 128 for the two dpdk-testpmd, 512 for qpio-testpmd (-m 1024)
[ "$huge" = 1 ] && reserve_hugepages 640
machine_facts
echo "before: $(load_facts)"
[ "$(nproc)" -ge 2 ] ||
	echo "memif-vs-qpio: only $(nproc) CPU; both forwarding lcores share it" >&2
echo "$pairs pairs per size, ${secs} s measured per run after ${warmup} s warm-up," \
	"burst $burst, sizes ${size_list[*]}"
echo "memif: $dpdk_testpmd txonly (server) and rxonly (client), --lcores 0@0,1@1 / 0@1,1@0"
echo "qpio:  $qpio_testpmd --lcores=0@0,1@0,2@1 qp0<->qp1 (soft0, rc)"
if [ "$huge" = 1 ]; then
	echo "memory: 2 MB hugepages, both sides"
else
	echo "memory: --no-huge (4 KB pages), both sides"
fi
echo

# One line per pair: SIZE PAIR ONEWAY PLACEMENT MEMIF QPIO RATIO
results=$logs/results
: >"$results"
printf '%-5s %-4s %-11s %-6s %-28s %-28s %s\n' size pair one-way-ns place \
	"memif Mpps (min-max)" "qpio Mpps (min-max)" qpio/memif
for size in "${size_list[@]}"; do
	for pair in $(seq 1 "$pairs"); do
		ow=$(one_way) || die "qpio-bench-cacheline failed ($cacheline)"
		[ -n "$ow" ] || die "qpio-bench-cacheline gave no median"
		place=$(awk -v o="$ow" -v t="$near_ns" 'BEGIN { print (o < t) ? "near" : "far" }')
		run_memif "$size" "$size-$pair"
		read -r m_med m_n m_lo m_hi <<<"$run_result"
		run_qpio "$size" "$size-$pair"
		read -r q_med q_n q_lo q_hi <<<"$run_result"
		ratio=$(awk -v q="$q_med" -v m="$m_med" 'BEGIN { printf "%.3f", (m > 0) ? q / m : 0 }')
		printf '%-5s %-4s %-11s %-6s %-28s %-28s %s\n' "$size" "$pair" "$ow" \
			"$place" "$m_med ($m_lo-$m_hi, n=$m_n)" \
			"$q_med ($q_lo-$q_hi, n=$q_n)" "$ratio"
		echo "  $(load_facts)"
		echo "$size $pair $ow $place $m_med $q_med $ratio" >>"$results"
	done
done

echo
echo "median per size and placement (pairs never mixed across placements):"
printf '%-5s %-6s %-6s %-12s %-12s %s\n' size place pairs "memif Mpps" \
	"qpio Mpps" "median qpio/memif"
awk "$awk_median"'
{
	k = $1 " " $4
	if (!(k in cnt))
		order[++nk] = k
	cnt[k]++
	m[k] = m[k] " " $5
	q[k] = q[k] " " $6
	r[k] = r[k] " " $7
}
END {
	for (i = 1; i <= nk; i++) {
		k = order[i]
		split(k, w, " ")
		printf "%-5s %-6s %-6d %-12.3f %-12.3f %.3f\n", w[1], w[2],
			cnt[k], median(m[k]), median(q[k]), median(r[k])
	}
}' "$results"
echo "after: $(load_facts)"
exit 0
