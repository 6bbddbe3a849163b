# SPDX-License-Identifier: BSD-3-Clause
#
# Shell functions the bench/ scripts share, sourced after the script set
# die(), usage_err() and the variables named below: warmup and secs
# (rx_pps_median), cacheline (one_way), pids, logs and keep (bench_cleanup),
# dpdk_testpmd (need_tools), root and build (vm_bench).

# need_whole OPTION VALUE WHAT: a usage error unless VALUE is a whole
# number above 0 without leading zeros (bash arithmetic reads 08 as octal)
# and at most 9 digits.
need_whole() {
	case "$2" in
	''|*[!0-9]*|0*|??????????*) usage_err "$1 wants whole $3 from 1 to 999999999, no leading 0, got '$2'" ;;
	esac
}

# need_tools BINARY NAME: a usage error unless dpdk-testpmd is installed
# and BINARY (this tree's NAME) and qpio-bench-cacheline are built.
need_tools() {
	command -v "$dpdk_testpmd" >/dev/null ||
		usage_err "dpdk-testpmd not installed (usertools/install-deps.sh --bench)"
	[ -x "$1" ] || usage_err "$2 not built ($1)"
	[ -x "$cacheline" ] || usage_err "qpio-bench-cacheline not built ($cacheline)"
}

# bench_cleanup PREFIX...: kill what is still running (pids) and remove
# the EAL runtime directories of the file prefixes (where root has them,
# and where a user who is not root has them).
bench_cleanup() {
	local p d
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	for p in "$@"; do
		for d in /var/run/dpdk "${XDG_RUNTIME_DIR:-/nonexistent}/dpdk" /tmp/dpdk; do
			rm -rf "${d:?}/$p" 2>/dev/null || true
		done
	done
}

# bench_logs_done: remove the logs unless they are kept (keep=1: their
# place is printed).
bench_logs_done() {
	if [ "$keep" = 1 ]; then
		echo "logs kept in $logs"
	else
		rm -rf "$logs"
	fi
}

# stop_proc PID NAME: SIGINT, then SIGKILL if it has not exited 15 s later.
# A process that ends by a signal is reported, not treated as a failure: its
# statistics were printed (or are missing, which the parser notices).
stop_proc() {
	local pid=$1 name=$2 n=150 rc=0
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
		echo "  note: $name ended by signal $((rc - 128))" \
			"($(kill -l $((rc - 128)))) while stopping"
	fi
}

machine_facts() {
	local cpu dpdk
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	dpdk=$(pkg-config --modversion libdpdk 2>/dev/null || echo "?")
	echo "machine: ${cpu:-unknown CPU}, nproc $(nproc), Linux $(uname -r), DPDK $dpdk"
}

# load_facts: /proc/loadavg and the CPU pressure ("some avg10": the share
# of the last 10 s in which a runnable task waited for a CPU). Both
# forwarding lcores busy-poll a CPU each, so anything else runnable takes
# time straight out of them.
load_facts() {
	local psi
	psi=$(sed -n 's/^some avg10=\([0-9.]*\).*/\1%/p' /proc/pressure/cpu 2>/dev/null)
	echo "load $(cut -d' ' -f1-3 /proc/loadavg), CPU pressure ${psi:-n/a}"
}

# rx_pps_median LOG PORT: "MEDIAN N MIN MAX" (Mpps) of the Rx-pps samples
# printed for PORT (testpmd's "NIC statistics for port PORT" blocks, one
# per second): after the first non-zero one and $warmup more, up to $secs.
rx_pps_median() {
	tr -d '\033' <"$1" | awk -v port="$2" -v warm="$warmup" -v want="$secs" '
	/NIC statistics for port/ {
		inport = ($0 ~ ("for port " port " "))
		next
	}
	inport && /Rx-pps:/ {
		inport = 0
		if (!on && $2 > 0)
			on = 1
		if (on && ++seen > warm + 1 && n < want)
			v[++n] = $2
	}
	END {
		if (n == 0)
			exit 1
		# insertion sort: n is a handful
		for (i = 2; i <= n; i++) {
			x = v[i]
			for (j = i - 1; j >= 1 && v[j] > x; j--)
				v[j + 1] = v[j]
			v[j + 1] = x
		}
		med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		printf "%.3f %d %.3f %.3f\n", med / 1e6, n, v[1] / 1e6, v[n] / 1e6
	}'
}

# wait_rx LOG PID...: until LOG shows a non-zero Rx-pps (20 s at most).
wait_rx() {
	local log=$1 n=200 p
	shift
	until tr -d '\033' <"$log" | grep -aEq 'Rx-pps: +[1-9]'; do
		for p in "$@"; do
			kill -0 "$p" 2>/dev/null ||
				die "a testpmd exited; last lines:$(echo; tail -5 "$log")"
		done
		n=$((n - 1))
		[ "$n" -gt 0 ] || die "no packets received in 20 s ($log)"
		sleep 0.1
	done
}

# memif_cmd SIDE ROLE SIZE SOCK PREFIX BURST MBUFS EAL_MEM...: sets the
# array memif_cmd to a dpdk-testpmd command line for one end of the
# memif anchor. SIDE tx runs txonly of SIZE-byte frames with its main
# lcore on CPU 0 and its forwarder on CPU 1; rx runs rxonly, the lcores
# the other way round. ROLE (server or client) and SOCK name the memif
# end and its socket; PREFIX is the EAL --file-prefix; BURST and MBUFS
# are --burst and --total-num-mbufs; EAL_MEM is the memory options
# (--no-huge -m 256, or --huge-dir=DIR). With --stats-period 1 the
# process prints its statistics each second, ignores stdin and runs
# until a signal.
memif_cmd() {
	local side=$1 role=$2 size=$3 sock=$4 prefix=$5 burst=$6 mbufs=$7
	local lcores fwd
	shift 7
	if [ "$side" = tx ]; then
		lcores=0@0,1@1
		fwd=(--forward-mode=txonly --txpkts="$size")
	else
		lcores=0@1,1@0
		fwd=(--forward-mode=rxonly)
	fi
	memif_cmd=("$dpdk_testpmd" --lcores="$lcores" --no-pci "$@"
		--file-prefix="$prefix" --vdev="net_memif0,role=$role,socket=$sock"
		-- "${fwd[@]}" --nb-cores=1 --burst="$burst"
		--total-num-mbufs="$mbufs" --stats-period=1)
}

# memif_rate TAG SIZE SOCK EAL_MEM...: one run of the memif anchor
# (memif_cmd's txonly server, then its rxonly client) of SIZE-byte
# frames; sets run_result to "MEDIAN N MIN MAX" (Mpps) of the receiver's
# Rx-pps after $warmup, $secs samples. Uses logs, prefix_tx, prefix_rx,
# burst, nb_mbufs and pids of the caller, and its die().
memif_rate() {
	local tag=$1 size=$2 sock=$3 tx rx
	shift 3
	memif_cmd tx server "$size" "$sock" "$prefix_tx" "$burst" "$nb_mbufs" "$@"
	memif_tx_cmd=("${memif_cmd[@]}")
	memif_cmd rx client "$size" "$sock" "$prefix_rx" "$burst" "$nb_mbufs" "$@"
	memif_rx_cmd=("${memif_cmd[@]}")
	# With --stats-period dpdk-testpmd ignores stdin and runs until a signal.
	"${memif_tx_cmd[@]}" </dev/null >"$logs/memif-tx-$tag.log" 2>&1 &
	tx=$!
	pids+=("$tx")
	sleep 1
	kill -0 "$tx" 2>/dev/null ||
		die "memif tx side exited early; last lines:$(echo; tail -5 "$logs/memif-tx-$tag.log")"
	# The log exists before wait_rx reads it (the background redirection
	# may not have run yet).
	: >"$logs/memif-rx-$tag.log"
	"${memif_rx_cmd[@]}" </dev/null >"$logs/memif-rx-$tag.log" 2>&1 &
	rx=$!
	pids+=("$rx")
	wait_rx "$logs/memif-rx-$tag.log" "$rx" "$tx"
	wait_samples "$logs/memif-rx-$tag.log" 0 $((warmup + secs + 2))
	# rx first: with the server stopped first, the 22.11 client crashed
	# before printing its final statistics.
	stop_proc "$rx" "memif rxonly dpdk-testpmd"
	stop_proc "$tx" "memif txonly dpdk-testpmd"
	pids=()
	run_result=$(rx_pps_median "$logs/memif-rx-$tag.log" 0) ||
		die "memif: no Rx-pps samples in $logs/memif-rx-$tag.log"
}

# incl FILE FUNCTION: inclusive instructions of FUNCTION in callgrind's
# FILE (0 if absent)
incl() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk -v f="$2" '!found { for (i = 1; i <= NF; i++)
			if ($i ~ ":" f "$") { gsub(",", "", $1); v = $1; found = 1 } }
			END { print found ? v : 0 }'
}

# total FILE: the program's instructions in callgrind's FILE
total() {
	callgrind_annotate "$1" 2>/dev/null |
		awk '/PROGRAM TOTALS/ && !v { gsub(",", "", $1); v = $1 } END { printf "%.0f\n", v }'
}

# one_way [LINES]: median cache-line one-way ns, measured now, of a line
# both sides write (LINES 1, the default) or of a line each (2: the
# queue pattern; qpio-bench-cacheline --lines).
one_way() {
	"$cacheline" --samples 50 --batch 1000 --lines "${1:-1}" |
		sed -n 's/^cacheline one-way ns: median \([0-9.]*\).*/\1/p'
}

# wait_samples LOG PORT COUNT: until LOG holds COUNT Rx-pps samples for
# PORT. A testpmd's statistics thread may share a CPU with a busy-polling
# forwarder, so its seconds can run late: a fixed sleep may fall short.
wait_samples() {
	local log=$1 port=$2 want=$3 n
	n=$((40 * want))
	until [ "$(tr -d '\033' <"$log" | awk -v port="$port" '
		/NIC statistics for port/ { inport = ($0 ~ ("for port " port " ")) }
		inport && /Rx-pps:/ { c++ ; inport = 0 }
		END { print c + 0 }')" -ge "$want" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || die "too few Rx-pps samples for port $port ($log)"
		sleep 0.1
	done
}

# awk_median: an awk function median(LIST) of the numbers in the
# space-separated string LIST (-1 for none), for the scripts' summaries:
# awk "$awk_median"'...'.
# shellcheck disable=SC2034
awk_median='
function median(list,    n, a, i, j, x) {
	n = split(list, a, " ")
	if (n == 0)
		return -1
	for (i = 2; i <= n; i++) {
		x = a[i] + 0
		for (j = i - 1; j >= 1 && a[j] + 0 > x; j--)
			a[j + 1] = a[j]
		a[j + 1] = x
	}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
'

# vm_bench NAME GUEST LIMIT: runs GUEST in the rxe VM (test/rxe/run.sh -b
# "$build" -g GUEST -t LIMIT, from the tree at "$root"; the caller's
# exported QPIO_BENCH_* variables go along), prints the guest's "NAME:"
# lines without that prefix and run.sh's "rxe:" lines (not the captures
# it lists, which only its own guest reads), and sets vm_rc: 0
# when the VM ran and its guest reported success, 1 when not (the log is
# kept and named), 2 when the VM cannot run here.
vm_bench() {
	local name=$1 guest=$2 limit=$3 log rc=0
	log=$(mktemp "/tmp/qpio-$name.XXXXXX")
	"$root/test/rxe/run.sh" -b "$build" -g "$guest" -t "$limit" >"$log" 2>&1 || rc=$?
	# The console's escape sequences (a reset, a clear) and carriage
	# returns come before the guest's first line: off before the match.
	sed 's/\x1bc//g; s/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1b[()][0-9A-Za-z]//g; s/\r$//' "$log" |
		grep -a -E "^$name:|^rxe:" | grep -v "^rxe: capture " |
		sed "s/^$name: //" || true
	vm_rc=0
	if [ "$rc" = 77 ]; then
		echo "$name: the VM cannot run here (see the rxe: line)"
		rm -f "$log"
		vm_rc=2
	elif [ "$rc" != 0 ]; then
		echo "$name: a VM run failed; log $log"
		vm_rc=1
	fi
	vm_log=$log
}
