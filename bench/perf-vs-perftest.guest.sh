#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs inside the Soft-RoCE VM for bench/perf-vs-perftest.sh (started by
# test/rxe/run.sh -g). Sets up rxe0 as test/rxe/guest.sh does, then runs
# each perftest program and qpio-perf on ibv0,dev=rxe0 with the same test,
# size and iterations, alternating which goes first, and prints one
# "perf-vs-perftest:" line per pair. Writes 0 to /tmp/out/rc when every run
# produced a number, 1 otherwise.
set -u
. /tmp/out/env
# rxe_up, PATH and HOME
. "$QPIO_ROOT/test/rxe/rxe_up.sh"
rc=0
note() { echo "perf-vs-perftest: $*"; }

rxe_up note || note "rxe0 is not PORT_ACTIVE after 5 s"
note "kernel $(uname -r), $(nproc) vCPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

perf="$QPIO_BUILD/app/perf/qpio-perf"
command -v ib_send_lat > /dev/null || { note "perftest is not installed (usertools/install-deps.sh --bench)"; echo 1 > /tmp/out/rc; exit 0; }
[ -x "$perf" ] || { note "$perf is not built"; echo 1 > /tmp/out/rc; exit 0; }
LAT_N=${QPIO_BENCH_LAT_N:-2000}
BW_N=${QPIO_BENCH_BW_N:-20000}
SIZE=${QPIO_BENCH_SIZE:-64}

# perftest: server in the background, client against 127.0.0.1 (the TCP
# exchange of QPN, PSN, GID and rkey); -x 0 is rxe0's link-local GID, -F
# ignores the CPU frequency check that fails in a VM. Prints the client's
# result line.
perftest() {
	local prog=$1; shift
	timeout 120 "$prog" -d rxe0 -x 0 -F "$@" > /tmp/pt-server.log 2>&1 &
	local srv=$! try
	for try in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.5
		if timeout 120 "$prog" -d rxe0 -x 0 -F "$@" 127.0.0.1 > /tmp/pt-client.log 2>&1; then
			break
		fi
		grep -q "Couldn't connect\|Unable to\|Failed to" /tmp/pt-client.log || break
	done
	wait "$srv"
	# The result line follows the header that starts with " #bytes".
	awk 'f && $1 ~ /^[0-9]+$/ { print; exit } /^ *#bytes/ { f = 1 }' /tmp/pt-client.log
}

qperf() {
	local json=/tmp/qp.json
	rm -f "$json"
	"$perf" -l 0-1 --no-huge --no-shconf --no-pci --log-level=lib.eal:error --no-telemetry \
		--file-prefix=pvp-$$ -- --dev ibv0,dev=rxe0 --json "$json" "$@" \
		> /tmp/qp.log 2>&1 || { cat /tmp/qp.log >&2; return 1; }
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["latency_us"]["t_typical"], r["msg_rate_mpps"], r["latency_us"]["p99.9"], r["latency_us"]["max"])' "$json"
}

# pair NAME MODE PERFTEST-ARGS... -- QPIO-ARGS...
pair() {
	local name=$1 mode=$2; shift 2
	local pt_args=() q_args=() a b pt q i
	while [ "$1" != "--" ]; do pt_args+=("$1"); shift; done
	shift
	q_args=("$@")
	for i in 1 2; do
		# Alternate the order: A B, then B A.
		if [ $i = 1 ]; then
			pt=$(perftest "$name" "${pt_args[@]}"); q=$(qperf "${q_args[@]}")
		else
			q=$(qperf "${q_args[@]}"); pt=$(perftest "$name" "${pt_args[@]}")
		fi
		if [ -z "$pt" ] || [ -z "$q" ]; then
			note "$name run $i: no number (perftest '${pt:-none}', qpio-perf '${q:-none}')"
			tail -5 /tmp/pt-client.log
			rc=1
			continue
		fi
		if [ "$mode" = lat ]; then
			# perftest lat line: bytes iters t_min t_max t_typical ...
			a=$(echo "$pt" | awk '{ print $5 }')
			b=$(echo "$q" | awk '{ print $1 }')
			note "$(printf '%-13s run %d t_typical perftest %8.2f us  qpio-perf %8.2f us  ratio %.2f (qpio p99.9 %s us, max %s us)' \
				"$name" $i "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print (a > 0 ? b / a : 0) }')" \
				"$(echo "$q" | awk '{ print $3 }')" "$(echo "$q" | awk '{ print $4 }')")"
		else
			# perftest bw line: bytes iters peak avg msgrate
			a=$(echo "$pt" | awk '{ print $5 }')
			b=$(echo "$q" | awk '{ print $2 }')
			note "$(printf '%-13s run %d MsgRate perftest %.4f Mpps  qpio-perf %.4f Mpps  ratio %.2f' \
				"$name" $i "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print (a > 0 ? b / a : 0) }')")"
		fi
	done
}

note "size $SIZE B, lat $LAT_N iterations, bw $BW_N iterations; ratio = qpio-perf / perftest"
pair ib_send_lat lat -s "$SIZE" -n "$LAT_N" -- --test ib_send_lat -s "$SIZE" -n "$LAT_N"
pair ib_write_lat lat -s "$SIZE" -n "$LAT_N" -- --test ib_write_lat -s "$SIZE" -n "$LAT_N"
pair ib_send_bw bw -s "$SIZE" -n "$BW_N" -- --test ib_send_bw -s "$SIZE" -n "$BW_N"
pair ib_write_bw bw -s "$SIZE" -n "$BW_N" -- --test ib_write_bw -s "$SIZE" -n "$BW_N"
pair ib_read_bw bw -s "$SIZE" -n "$BW_N" -- --test ib_read_bw -s "$SIZE" -n "$BW_N"
pair ib_atomic_bw bw -n "$BW_N" -- --test ib_atomic_bw -n "$BW_N"
note "load after $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$rc" > /tmp/out/rc
