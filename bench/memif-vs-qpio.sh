#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Side-by-side packet rate of DPDK's memif PMD and qpio, both driven by a
# testpmd in txonly -> rxonly mode with one forwarding lcore per side.
#
#   bench/memif-vs-qpio.sh [-t SECONDS] [-s BYTES] [--only memif|qpio]
#                          [--huge] [-k]
#
#   -t SECONDS   measured time per side (default 10)
#   -s BYTES     packet size, --txpkts (default 64)
#   --only X     measure only memif or only qpio
#   --huge       run dpdk-testpmd on 2 MB hugepages instead of --no-huge; the
#                script reserves and mounts them itself (root) and puts the
#                old page count back on exit
#   -k           keep the raw testpmd logs and print where they are
#
# memif: two dpdk-testpmd processes (`usertools/install-deps.sh --bench`), a
# txonly one as memif server and an rxonly one as memif client, each with its
# main lcore on the other's forwarding CPU. The rate is the mean of the rx
# side's per-second Rx-pps samples after a warm-up.
# qpio: one build/app/testpmd/qpio-testpmd process with two soft RC queue
# pairs; the rate is port 1's RX-packets over the seconds on its Throughput
# line.
#
# Exit status: 0 when every selected side was measured, 1 when a run failed,
# 2 on a usage error or a missing tool ("qpio-testpmd not built"; the memif
# number is still printed first). The numbers are reported, never judged.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
qpio_testpmd=${QPIO_TESTPMD:-$top/build/app/testpmd/qpio-testpmd}
dpdk_testpmd=${DPDK_TESTPMD:-dpdk-testpmd}

secs=10
size=64
only=
huge=0
keep=0
warmup=2		# 1-s Rx-pps samples dropped after the first non-zero one
burst=32
nb_mbufs=16384		# per dpdk-testpmd process: enough for a 1024-slot ring

usage() { sed -n '4,28p' "$0" | sed 's/^# \{0,1\}//'; }
# die MSG: report a failed run; the logs are kept for a look.
die() { echo "memif-vs-qpio: $*" >&2; keep=1; exit 1; }

while [ $# -gt 0 ]; do
	case "$1" in
	-t) secs=${2:?-t needs SECONDS}; shift ;;
	-s) size=${2:?-s needs BYTES}; shift ;;
	--only) only=${2:?--only needs memif or qpio}; shift ;;
	--only=*) only=${1#--only=} ;;
	--huge) huge=1 ;;
	-k) keep=1 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "memif-vs-qpio: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
case "$secs" in ''|*[!0-9]*|0) echo "memif-vs-qpio: -t wants whole seconds > 0" >&2; exit 2 ;; esac
case "$size" in ''|*[!0-9]*) echo "memif-vs-qpio: -s wants bytes" >&2; exit 2 ;; esac
[ "$size" -ge 64 ] && [ "$size" -le 1518 ] ||
	{ echo "memif-vs-qpio: -s must be 64..1518" >&2; exit 2; }
case "$only" in ''|memif|qpio) ;; *) echo "memif-vs-qpio: --only memif|qpio" >&2; exit 2 ;; esac
want_memif=1
want_qpio=1
[ "$only" = qpio ] && want_memif=0
[ "$only" = memif ] && want_qpio=0

logs=$(mktemp -d /tmp/qpio-bench.XXXXXX)
prefix_tx=qpio-bench-tx-$$
prefix_rx=qpio-bench-rx-$$
pids=()
hp_sys=/sys/kernel/mm/hugepages/hugepages-2048kB
hp_orig=
hp_mnt=

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "/var/run/dpdk/$prefix_tx" "/var/run/dpdk/$prefix_rx"
	if [ -n "$hp_mnt" ]; then
		umount "$hp_mnt" 2>/dev/null || true
		rmdir "$hp_mnt" 2>/dev/null || true
	fi
	[ -n "$hp_orig" ] && echo "$hp_orig" >"$hp_sys/nr_hugepages"
	if [ "$keep" = 1 ]; then
		echo "logs kept in $logs"
	else
		rm -rf "$logs"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# stop_proc PID NAME: SIGINT, then SIGKILL if it has not exited 15 s later.
# A process that ends by a signal is reported, not treated as a failure: its
# statistics were printed (or are missing, which the parser notices).
stop_proc() {
	local pid=$1 name=$2 n=150 rc=0
	# bash's own "Segmentation fault" job notice would go to stderr; the
	# note below says the same once.
	exec 3>&2 2>/dev/null
	if kill -INT "$pid"; then
		while kill -0 "$pid" && [ "$n" -gt 0 ]; do
			sleep 0.1
			n=$((n - 1))
		done
		kill -KILL "$pid" || true
		wait "$pid" || rc=$?
	fi
	exec 2>&3 3>&-
	if [ "$rc" -gt 128 ] && [ "$rc" != 130 ]; then
		echo "note: $name ended by signal $((rc - 128)) ($(kill -l $((rc - 128))))" \
			"while stopping"
	fi
}

# reserve_hugepages COUNT: make COUNT free 2 MB pages and a private mount.
reserve_hugepages() {
	local need=$1 total free
	[ "$(id -u)" = 0 ] || die "--huge needs root (nr_hugepages, mount)"
	[ -w "$hp_sys/nr_hugepages" ] || die "no 2 MB hugepage support ($hp_sys)"
	total=$(cat "$hp_sys/nr_hugepages")
	free=$(cat "$hp_sys/free_hugepages")
	if [ "$free" -lt "$need" ]; then
		hp_orig=$total
		echo $((total + need - free)) >"$hp_sys/nr_hugepages"
		free=$(cat "$hp_sys/free_hugepages")
		[ "$free" -ge "$need" ] ||
			die "asked for $need free 2 MB hugepages, the kernel gave $free"
	fi
	hp_mnt=$(mktemp -d /tmp/qpio-bench-huge.XXXXXX)
	mount -t hugetlbfs -o pagesize=2M nodev "$hp_mnt"
}

machine_facts() {
	local cpu dpdk
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	dpdk=$(pkg-config --modversion libdpdk 2>/dev/null || echo "?")
	echo "machine: ${cpu:-unknown CPU}, nproc $(nproc), Linux $(uname -r), DPDK $dpdk"
}

# busy_facts WHEN: how busy the CPUs are (load average; CPU pressure: the
# share of the last 10 s in which some runnable task waited for a CPU).
# Printed before the runs and right after each one, where it covers the end
# of the run: the forwarding lcores busy-poll one CPU each, so any other
# runnable task has to wait, and a high figure means something was
# competing with them. Numbers taken under pressure say more about the
# neighbours than about the code.
busy_facts() {
	local psi
	psi=$(sed -n 's/^some avg10=\([0-9.]*\).*/\1%/p' /proc/pressure/cpu 2>/dev/null)
	echo "busy $1: load average $(cut -d' ' -f1-3 /proc/loadavg)," \
		"CPU pressure (some, 10 s) ${psi:-n/a}"
}

# memif_parse LOG: "MPPS SAMPLES MIN MAX TOTAL" from an rxonly dpdk-testpmd
# log run with --stats-period 1. MPPS is the mean of up to $secs Rx-pps
# samples that follow the first non-zero one (a partial second) and $warmup
# more, MIN and MAX the extremes of those samples (Mpps); TOTAL is port 0's
# RX-packets in the final forward statistics.
memif_parse() {
	tr -d '\033' <"$1" | awk -v warm="$warmup" -v want="$secs" '
	/Rx-pps:/ {
		if (!on && $2 > 0)
			on = 1
		if (on && ++seen > warm + 1 && used < want) {
			if (used == 0 || $2 < min)
				min = $2
			if (used == 0 || $2 > max)
				max = $2
			sum += $2
			used++
		}
	}
	/Forward statistics for port 0/ { fwd = 1 }
	fwd && /RX-packets:/ { total = $2; fwd = 0 }
	END {
		if (used == 0)
			exit 1
		printf "%.3f %d %.3f %.3f %d\n", sum / used / 1e6, used,
			min / 1e6, max / 1e6, total
	}'
}

# qpio_parse LOG: "MPPS PACKETS SECONDS" from qpio-testpmd's final output:
# RX-packets under "Forward statistics for port 1" and the seconds of the
# "Throughput: X.XXX Mpps (N packets in S.SSS s)" line.
qpio_parse() {
	awk -v port=1 '
	/Forward statistics for port/ {
		match($0, /for port [0-9]+/)
		split(substr($0, RSTART, RLENGTH), w, " ")
		inport = (w[3] == port)
		next
	}
	inport && /RX-packets:/ { rx = $2; inport = 0 }
	/^Throughput:/ {
		for (i = 1; i < NF; i++)
			if ($i == "in")
				s = $(i + 1)
	}
	END {
		if (rx == "" || s == "" || s + 0 <= 0)
			exit 1
		printf "%.3f %d %s\n", rx / s / 1e6, rx, s
	}' "$1"
}

run_memif() {
	local sock="qpio-bench-$$" mem tx rx n lo hi common_app
	command -v "$dpdk_testpmd" >/dev/null || {
		echo "memif-vs-qpio: dpdk-testpmd not installed (usertools/install-deps.sh --bench)" >&2
		exit 2
	}
	if [ "$huge" = 1 ]; then
		reserve_hugepages 128
		mem=(--huge-dir="$hp_mnt")
	else
		mem=(--no-huge -m 256)
	fi
	common_app=(--nb-cores=1 --burst="$burst" --total-num-mbufs="$nb_mbufs"
		--stats-period=1)
	memif_tx_cmd=("$dpdk_testpmd" --lcores=0@0,1@1 --no-pci "${mem[@]}"
		--file-prefix="$prefix_tx"
		--vdev="net_memif0,role=server,socket=$sock"
		-- --forward-mode=txonly --txpkts="$size" "${common_app[@]}")
	memif_rx_cmd=("$dpdk_testpmd" --lcores=0@1,1@0 --no-pci "${mem[@]}"
		--file-prefix="$prefix_rx"
		--vdev="net_memif0,role=client,socket=$sock"
		-- --forward-mode=rxonly "${common_app[@]}")
	echo "memif tx: ${memif_tx_cmd[*]}"
	echo "memif rx: ${memif_rx_cmd[*]}"

	# With --stats-period dpdk-testpmd ignores stdin and runs until a signal.
	"${memif_tx_cmd[@]}" </dev/null >"$logs/memif-tx.log" 2>&1 &
	tx=$!
	pids+=("$tx")
	sleep 1
	kill -0 "$tx" 2>/dev/null ||
		die "memif tx side exited early; last lines:$(echo; tail -5 "$logs/memif-tx.log")"
	"${memif_rx_cmd[@]}" </dev/null >"$logs/memif-rx.log" 2>&1 &
	rx=$!
	pids+=("$rx")

	# Wait for the first packets, then for warm-up + measured samples.
	n=200
	until grep -aE 'Rx-pps: +[1-9]' "$logs/memif-rx.log" >/dev/null; do
		kill -0 "$rx" 2>/dev/null && kill -0 "$tx" 2>/dev/null ||
			die "memif: a dpdk-testpmd exited; last lines:$(echo; tail -5 "$logs/memif-rx.log" "$logs/memif-tx.log")"
		n=$((n - 1))
		[ "$n" -gt 0 ] || die "memif: no packets received in 20 s"
		sleep 0.1
	done
	sleep $((warmup + secs + 1))

	# rx first: with the server stopped first, the 22.11 client crashed
	# before printing its final statistics, and memif counters read zero
	# once the peer has gone.
	stop_proc "$rx" "memif rxonly dpdk-testpmd"
	stop_proc "$tx" "memif txonly dpdk-testpmd"

	memif_result=$(memif_parse "$logs/memif-rx.log") ||
		die "memif: could not parse Rx-pps samples"
	read -r memif_mpps n lo hi memif_total <<<"$memif_result"
	echo "memif: $memif_mpps Mpps (mean of $n 1-s Rx-pps samples after ${warmup} s" \
		"warm-up, min $lo, max $hi; $memif_total packets received in the whole run)"
	busy_facts "during memif"
}

run_qpio() {
	local n pkts s rc=0
	[ -x "$qpio_testpmd" ] || {
		echo "qpio-testpmd not built ($qpio_testpmd)"
		exit 2
	}
	qpio_cmd=("$qpio_testpmd" --lcores=0@0,1@0,2@1 --no-huge --no-shconf
		--no-pci -m 1024 --file-prefix="qpio-bench-$$" --
		--dev qp0,dev=soft0,qp=rc,peer=qp1 --dev qp1,dev=soft0,qp=rc,peer=qp0
		--forward-mode=txonly,rxonly --nb-cores=2 --txpkts="$size"
		--burst="$burst" --duration="$secs")
	echo "qpio: ${qpio_cmd[*]}"
	timeout -k 5 $((secs + 60)) "${qpio_cmd[@]}" </dev/null \
		>"$logs/qpio.log" 2>&1 || rc=$?
	[ "$rc" = 0 ] ||
		die "qpio-testpmd exited with $rc; last lines:$(echo; tail -5 "$logs/qpio.log")"
	qpio_result=$(qpio_parse "$logs/qpio.log") ||
		die "qpio: no port 1 RX-packets or Throughput line"
	read -r qpio_mpps pkts s <<<"$qpio_result"
	echo "qpio: $qpio_mpps Mpps ($pkts packets received on port 1 in $s s)"
	busy_facts "during qpio"
}

machine_facts
busy_facts before
[ "$(nproc)" -ge 2 ] ||
	echo "memif-vs-qpio: only $(nproc) CPU; both forwarding lcores share it" >&2
echo "packet size $size bytes, burst $burst, ${secs} s per side"
memif_mpps=
qpio_mpps=
[ "$want_memif" = 1 ] && run_memif
[ "$want_qpio" = 1 ] && run_qpio

echo
[ -n "$memif_mpps" ] && printf 'memif  %8s Mpps\n' "$memif_mpps"
[ -n "$qpio_mpps" ] && printf 'qpio   %8s Mpps\n' "$qpio_mpps"
if [ -n "$memif_mpps" ] && [ -n "$qpio_mpps" ]; then
	awk -v q="$qpio_mpps" -v m="$memif_mpps" \
		'BEGIN { if (m > 0) printf "qpio/memif %.2f\n", q / m }'
fi
exit 0
