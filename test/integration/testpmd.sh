#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-testpmd on ring ports in one process: bounded runs, exit codes,
# signals and mbuf accounting.
#
#   testpmd.sh PATH/TO/qpio-testpmd CASE
#
# CASE: io-tx-first, macswap-tx-first, txonly-rxonly-duration,
#       lcore-placement, bad-options, sigterm, help, hugepage-hint,
#       stats-rates, tx-retry, json, output-files, max-pkt-len,
#       interactive, qp-credits-no-rnr.
set -u

tp=$1
case_name=$2
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp)
err=$(mktemp)
tmpd=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$tmpd"' EXIT

eal=(-l 0-1 --no-huge --no-shconf --no-pci -m 512 --no-telemetry
     --log-level=lib.eal:error --file-prefix="qpio-it-$$")
pair=(--dev ring0,peer=ring1 --dev ring1,peer=ring0)

fail() {
	echo "FAIL ($case_name): $*"
	echo "--- stdout"; cat "$out"
	echo "--- stderr"; cat "$err"
	exit 1
}

# Value of the accumulated RX-packets (or TX-packets) of the run.
total() {
	awk -v key="$1" '/Accumulated forward statistics/ { acc = 1 }
		acc && $1 == key { print $2; exit }' "$out"
}

check_common() {
	grep -q '^mbufs not returned to pool mb_pool_0: 0$' "$out" ||
		fail "mbufs not returned to the pool"
	grep -Eq '^Throughput: [0-9]+\.[0-9]{3} Mpps \([0-9]+ packets in [0-9]+\.[0-9]{3} s\)$' "$out" ||
		fail "no throughput line"
	[ "$(grep -c 'Forward statistics for port' "$out")" = 2 ] ||
		fail "want forward statistics for 2 ports"
}

run() {
	"$tp" "${eal[@]}" -- "$@" >"$out" 2>"$err"
}

case $case_name in
io-tx-first)
	run "${pair[@]}" --forward-mode=io --tx-first --max-packets=200000
	rc=$?
	[ $rc = 0 ] || fail "exit status $rc, want 0"
	check_common
	rx=$(total RX-packets:)
	[ -n "$rx" ] && [ "$rx" -ge 200000 ] || fail "RX-packets $rx < 200000"
	;;
macswap-tx-first)
	run "${pair[@]}" --forward-mode=macswap --tx-first --burst=16 \
		--max-packets=50000 --show-xstats
	rc=$?
	[ $rc = 0 ] || fail "exit status $rc, want 0"
	check_common
	grep -q '^rx_good_packets: [1-9]' "$out" || fail "no xstats printed"
	;;
txonly-rxonly-duration)
	start=$(date +%s%N)
	run "${pair[@]}" --forward-mode=txonly,rxonly --duration=1 --txpkts=60,40
	rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	[ $rc = 0 ] || fail "exit status $rc, want 0"
	check_common
	secs=$(sed -n 's/^Throughput: .* packets in \([0-9.]*\) s)$/\1/p' "$out")
	awk -v s="$secs" 'BEGIN { exit !(s >= 1.0 && s < 1.5) }' ||
		fail "forwarding time $secs s, want [1.0, 1.5)"
	[ "$ms" -lt 20000 ] || fail "run took $ms ms"
	grep -Eq '^Throughput: 0\.000 Mpps' "$out" && fail "no frame received"
	rx=$(total RX-packets:)
	tx=$(total TX-packets:)
	[ "$rx" -gt 0 ] && [ "$tx" -ge "$rx" ] || fail "RX $rx, TX $tx"
	;;
lcore-placement)
	# Three lcores on two CPUs: placement is what is checked, not speed.
	eal=(--lcores=0@0,1@1,2@1 "${eal[@]:2}")
	run "${pair[@]}" --forward-mode=txonly,rxonly --duration=0.3
	rc=$?
	[ $rc = 0 ] || fail "txonly,rxonly: exit status $rc, want 0"
	grep -q 'shares tx port' "$out" && fail "txonly,rxonly: streams joined"
	[ "$(grep -c 'forwards packets on 1 streams' "$out")" = 2 ] ||
		fail "txonly,rxonly: want one stream on each of 2 lcores"
	check_common
	run "${pair[@]}" --forward-mode=txonly,io --duration=0.3
	rc=$?
	[ $rc = 0 ] || fail "txonly,io: exit status $rc, want 0"
	grep -q '^Stream 1 shares tx port 0 queue 0 with stream 0: same lcore$' \
		"$out" || fail "txonly,io: streams 0 and 1 not on one lcore"
	grep -q 'forwards packets on 2 streams' "$out" ||
		fail "txonly,io: want both streams on one lcore"
	check_common
	;;
bad-options)
	check_bad() {
		local want=$1
		shift
		"$tp" "${eal[@]}" -- "$@" >"$out" 2>"$err"
		rc=$?
		[ $rc = 2 ] || fail "'$*': exit status $rc, want 2"
		grep -q -- "$want" "$err" || fail "'$*': no message naming $want"
	}
	check_bad '--burst=600: must be a decimal integer in \[1, 512\]' \
		"${pair[@]}" --burst=600
	check_bad "--forward-mode: unknown mode 'bogus'" \
		"${pair[@]}" --forward-mode=io,bogus
	check_bad '--port-topology=ring: must be paired, chained or loop' \
		"${pair[@]}" --port-topology=ring
	check_bad '--txpkts=20: the first segment must hold' \
		"${pair[@]}" --txpkts=20
	check_bad '--forward-mode=io,,rxonly: empty item in the list' \
		"${pair[@]}" --forward-mode=io,,rxonly
	check_bad '--txpkts=64,,64: empty item in the list' \
		"${pair[@]}" --txpkts=64,,64
	check_bad '--txq=1: must be >= --rxq=2' "${pair[@]}" --rxq=2
	check_bad '--nb-cores=2: only 1 worker lcores' "${pair[@]}" --nb-cores=2
	check_bad '--no-such-option: unknown option' "${pair[@]}" --no-such-option
	check_bad 'no port: give at least one --dev' --forward-mode=io
	check_bad '--eth-peer=1,zz: .zz. is not a MAC address' \
		"${pair[@]}" --eth-peer=1,zz
	check_bad '--duration=-1: must be a number of seconds above 0' \
		"${pair[@]}" --duration=-1
	check_bad '--tx-offloads=65536: must be a hexadecimal mask, 0x first' \
		"${pair[@]}" --tx-offloads=65536
	check_bad '--tx-offloads=0x1g: must be a hexadecimal mask of at most' \
		"${pair[@]}" --tx-offloads=0x1g
	check_bad '--tx-offloads=0x0x10000: must be a hexadecimal mask of at most' \
		"${pair[@]}" --tx-offloads=0x0x10000
	check_bad '--tx-offloads=0x: must be a hexadecimal mask, 0x first' \
		"${pair[@]}" --tx-offloads=0x
	# An offload the port does not have is a runtime error (1) that
	# names the port's capabilities.
	"$tp" "${eal[@]}" -- "${pair[@]}" --tx-offloads=0x10000 >"$out" 2>"$err"
	rc=$?
	[ $rc = 1 ] || fail "--tx-offloads on ring ports: exit status $rc, want 1"
	grep -q "tx offloads 0x10000 not supported (the port's tx_offload_capa is 0x0)" \
		"$err" || fail "--tx-offloads on ring ports: no message"
	# A port that cannot be set up is a runtime error (1), not usage.
	"$tp" "${eal[@]}" -- --dev ring0,peer=ring7 >"$out" 2>"$err"
	rc=$?
	[ $rc = 1 ] || fail "missing peer: exit status $rc, want 1"
	grep -q 'port 0: start' "$err" || fail "missing peer: no message"
	"$tp" "${eal[@]}" -- --dev ring0 --dev ring0 >"$out" 2>"$err"
	rc=$?
	[ $rc = 1 ] || fail "duplicate port: exit status $rc, want 1"
	grep -q -- '--dev ring0: File exists' "$err" ||
		fail "duplicate port: no message"
	;;
sigterm)
	"$tp" "${eal[@]}" -- "${pair[@]}" --forward-mode=txonly,rxonly \
		--stats-period=1 >"$out" 2>"$err" &
	pid=$!
	for _ in $(seq 100); do
		grep -q 'Forwarding started' "$out" && break
		sleep 0.1
	done
	grep -q 'Forwarding started' "$out" || { kill -KILL $pid; fail "did not start"; }
	sleep 2.5
	kill -TERM $pid
	wait $pid
	rc=$?
	[ $rc = 0 ] || fail "exit status $rc after SIGTERM, want 0"
	grep -q 'Forwarding stopped by signal' "$out" || fail "no stop message"
	grep -q 'NIC statistics for port 1' "$out" || fail "no periodic stats"
	grep -Eq '^  Rx-pps: +[1-9]' "$out" || fail "no nonzero Rx-pps"
	check_common
	;;
help)
	# No EAL args at all: the application's options, EAL not set up.
	"$tp" --help >"$out" 2>"$err"
	rc=$?
	[ $rc = 0 ] || fail "--help: exit status $rc, want 0"
	grep -q 'EAL: ' "$out" "$err" && fail "--help set up EAL"
	for o in --dev --rdma-dev --forward-mode --nb-cores --rxq --txq \
		--rxd --txd --burst --tx-retry --txpkts --port-topology --csv \
		--capture \
		--tx-first --eth-peer --tx-ip --tx-udp --flowgen-flows \
		--total-num-mbufs --mbcache --mbuf-size --max-pkt-len \
		--tx-offloads --interactive --stats-period --stats-xstats --show-xstats \
		--json --duration --max-packets --help --no-huge --help-eal; do
		grep -q -- "$o" "$out" || fail "--help does not list $o"
	done
	"$tp" -l 0-1 --no-huge -- -h >"$out" 2>"$err"
	rc=$?
	[ $rc = 0 ] || fail "-h after --: exit status $rc, want 0"
	grep -q -- '--tx-retry' "$out" || fail "-h after -- not the app's usage"
	"$tp" --help-eal >"$out" 2>"$err"
	rc=$?
	[ $rc = 0 ] || fail "--help-eal: exit status $rc, want 0"
	grep -q -- '--file-prefix' "$out" || fail "--help-eal: not EAL's usage"
	;;
hugepage-hint)
	# A hugepage directory that is no hugetlbfs mount: EAL cannot get
	# hugepage information (EACCES).
	"$tp" -l 0-1 --no-pci --no-shconf --no-telemetry \
		--huge-dir=/nonexistent-qpio --file-prefix="qpio-it-hp-$$" \
		-- "${pair[@]}" >"$out" 2>"$err"
	rc=$?
	[ $rc = 1 ] || fail "exit status $rc, want 1"
	grep -q 'EAL init failed: Permission denied (EACCES)$' "$err" ||
		fail "no errno name in the EAL failure"
	grep -q 'add --no-huge -m 512 before' "$err" || fail "no --no-huge hint"
	grep -q 'nr_hugepages' "$err" || fail "no hint to reserve pages"
	# the failed EAL's runtime directory goes too
	for d in /var/run/dpdk "${XDG_RUNTIME_DIR:-/nonexistent}/dpdk" /tmp/dpdk; do
		[ -e "$d/qpio-it-hp-$$" ] &&
			fail "runtime directory $d/qpio-it-hp-$$ left behind"
	done
	;;
stats-rates)
	run "${pair[@]}" --forward-mode=txonly,rxonly --stats-period=1 \
		--stats-xstats --duration=2.5
	rc=$?
	[ $rc = 0 ] || fail "exit status $rc, want 0"
	check_common
	[ "$(grep -c '^  RX-nombuf:  0 *$' "$out")" -ge 4 ] ||
		fail "want RX-nombuf in 2 periods x 2 ports"
	grep -Eq '^  Rx-pps: +[1-9][0-9]* +Rx-bps: +[1-9]' "$out" ||
		fail "no nonzero Rx-bps"
	grep -Eq '^  Tx-pps: +[1-9][0-9]* +Tx-bps: +[1-9]' "$out" ||
		fail "no nonzero Tx-bps"
	# Periodic xstats: before the run stops.
	sed '/^Forwarding stopped/,$d' "$out" | grep -q '^tx_good_packets: [1-9]' ||
		fail "no xstats with the periodic statistics"
	# Bits per second over the run: 8 * bytes / forwarding time.
	awk '/Accumulated forward statistics/ { acc = 1 }
	     acc && $1 == "RX-nombuf:" { print $4; exit }' "$out" | grep -Eq '^[1-9]' ||
		fail "no final Rx-bps"
	;;
tx-retry)
	run "${pair[@]}" --forward-mode=io --tx-first --tx-retry=3 \
		--max-packets=100000
	rc=$?
	[ $rc = 0 ] || fail "exit status $rc, want 0"
	check_common
	[ "$(grep -c '^  TX-retries: [0-9]' "$out")" = 3 ] ||
		fail "want TX-retries for 2 ports and the total"
	run "${pair[@]}" --tx-retry=-1
	[ $? = 2 ] || fail "--tx-retry=-1 accepted"
	grep -q -- '--tx-retry=-1: must be a decimal integer' "$err" ||
		fail "--tx-retry=-1: no message"
	;;
json)
	run "${pair[@]}" --forward-mode=txonly,rxonly --stats-period=1 \
		--stats-xstats --show-xstats --tx-retry=2 --duration=2.5 \
		--json="$tmpd/run.json" --csv="$tmpd/run.csv"
	rc=$?
	[ $rc = 0 ] || fail "exit status $rc, want 0"
	check_common
	python3 "$here/testpmd_json.py" "$tmpd/run.json" "$out" 2 2 \
		"$tmpd/run.csv" || fail "json check"
	run "${pair[@]}" --json=/nonexistent-dir/run.json
	[ $? = 1 ] || fail "unwritable --json accepted"
	grep -q -- '--json /nonexistent-dir/run.json: No such file or directory (ENOENT)' \
		"$err" || fail "unwritable --json: no message"
	;;
output-files)
	# Exit status $1 and the exact stderr line $2 for the options after.
	want() {
		local rc_want=$1 line=$2
		shift 2
		"$tp" "${eal[@]}" -- "${pair[@]}" --duration=0.3 "$@" \
			>"$out" 2>"$err"
		rc=$?
		[ $rc = "$rc_want" ] || fail "'$*': exit status $rc, want $rc_want"
		grep -Fxq -- "$line" "$err" || fail "'$*': no line '$line'"
	}
	same='one file for two outputs, which would overwrite each other; give each its own'
	# Two outputs in one file are refused (usage, 2), naming both
	# options: by device and inode where the file exists (a link to it
	# too), by the resolved directory where it does not yet.
	want 2 "qpio-testpmd: --capture 0/rx=$tmpd/c.pcapng and --capture 1/tx=$tmpd/c.pcapng: $same" \
		--capture 0/rx="$tmpd/c.pcapng" --capture 1/tx="$tmpd/c.pcapng"
	want 2 "qpio-testpmd: --capture 0=$tmpd/x and --json $tmpd/x: $same" \
		--capture 0="$tmpd/x" --json="$tmpd/x"
	want 2 "qpio-testpmd: --json $tmpd/s.json and --csv $tmpd/../${tmpd##*/}/s.json: $same" \
		--json="$tmpd/s.json" --csv="$tmpd/../${tmpd##*/}/s.json"
	touch "$tmpd/real"
	ln -s "$tmpd/real" "$tmpd/link"
	want 2 "qpio-testpmd: --json $tmpd/real and --csv $tmpd/link: $same" \
		--json="$tmpd/real" --csv="$tmpd/link"
	[ ! -e "$tmpd/c.pcapng" ] && [ ! -e "$tmpd/x" ] && [ ! -s "$tmpd/real" ] ||
		fail "a refused run wrote a file"
	# Files of their own, and /dev/null taking two, are fine.
	run "${pair[@]}" --duration=0.3 --json="$tmpd/a.json" --csv="$tmpd/a.csv" ||
		fail "--json and --csv in files of their own: exit status $?"
	tail -1 "$tmpd/a.json" | grep -q '"record":"exit",.*"exit_status":0}$' ||
		fail "--json: no exit record with status 0"
	run "${pair[@]}" --duration=0.3 --json=/dev/null --csv=/dev/null ||
		fail "/dev/null for two outputs: exit status $?"
	# A statistics file that cannot be written fails the run (1), named.
	want 1 "qpio-testpmd: --json /dev/full: cannot write: No space left on device (ENOSPC)" \
		--json=/dev/full
	grep -q '^Forwarding stopped' "$out" || fail "--json=/dev/full: no run"
	want 1 "qpio-testpmd: --csv /dev/full: cannot write: No space left on device (ENOSPC)" \
		--csv=/dev/full --stats-period=1
	grep -q 'Forwarding started' "$out" &&
		fail "--csv=/dev/full: forwarding started after the header failed"
	[ "$(grep -c 'cannot write' "$err")" = 1 ] ||
		fail "--csv=/dev/full: the error printed more than once"
	# The other file still gets its records, the exit one with status 1.
	want 1 "qpio-testpmd: --csv /dev/full: cannot write: No space left on device (ENOSPC)" \
		--csv=/dev/full --json="$tmpd/b.json"
	tail -1 "$tmpd/b.json" | grep -q '"record":"exit",.*"exit_status":1}$' ||
		fail "--json beside a failed --csv: no exit record with status 1"
	;;
max-pkt-len)
	# Above what a port takes: refused before a pool is sized for it
	# (no ENOMEM), naming the port and its limit.
	"$tp" "${eal[@]}" -- "${pair[@]}" --max-pkt-len=70000 >"$out" 2>"$err"
	rc=$?
	[ $rc = 1 ] || fail "--max-pkt-len=70000: exit status $rc, want 1"
	grep -Fxq 'qpio-testpmd: --max-pkt-len=70000: above the largest frame port 0 (ring0) takes, 65535 bytes' \
		"$err" || fail "--max-pkt-len=70000: no message naming 65535"
	grep -q 'ENOMEM\|mb_pool' "$out" "$err" &&
		fail "--max-pkt-len=70000: a pool was made"
	run "${pair[@]}" --max-pkt-len=65535 --total-num-mbufs=8192 \
		--rxd=64 --txd=64 --duration=0.3
	rc=$?
	[ $rc = 0 ] || fail "--max-pkt-len=65535: exit status $rc, want 0"
	;;
interactive)
	# Commands go through a fifo, each after the output it depends on.
	mkfifo "$tmpd/in"
	"$tp" "${eal[@]}" -- "${pair[@]}" --tx-first -i <"$tmpd/in" \
		>"$out" 2>"$err" &
	pid=$!
	exec 3>"$tmpd/in"
	wait_for() {
		local i
		for i in $(seq 300); do
			grep -q -- "$1" "$out" "$err" && return 0
			kill -0 $pid 2>/dev/null || break
			sleep 0.1
		done
		exec 3>&-
		kill -KILL $pid 2>/dev/null
		fail "interactive: no '$1'"
	}
	wait_for 'Interactive mode'
	echo 'set fwd bogus' >&3
	wait_for "unknown mode 'bogus'"
	echo 'set fwd rxonly' >&3
	wait_for 'Set rxonly packet forwarding mode'
	echo 'show config fwd' >&3
	wait_for 'mode=rxonly'
	echo 'start' >&3
	wait_for 'Forwarding started'
	# --tx-first sent one burst (32) on each port; rxonly takes them.
	for _ in $(seq 100); do
		echo 'show port stats all' >&3
		sleep 0.1
		[ "$(grep -c '^  RX-packets: 32 ' "$out")" -ge 2 ] && break
	done
	grep -q '^  RX-packets: 32  *RX-missed: 0' "$out" ||
		fail "show port stats all: no NIC statistics block with 32 frames"
	echo 'stop' >&3
	wait_for 'Accumulated forward statistics'
	echo 'show port xstats all' >&3
	wait_for 'NIC extended statistics for port 0'
	echo 'show port xstats 1' >&3
	wait_for '^rx_good_packets: 32$'
	echo 'clear port stats all' >&3
	wait_for 'NIC statistics for port 1 cleared'
	echo 'show port stats 0' >&3
	echo 'no such command' >&3
	wait_for 'Command not found'
	echo 'quit' >&3
	exec 3>&-
	wait $pid
	rc=$?
	[ $rc = 0 ] || fail "exit status $rc, want 0"
	[ "$(total RX-packets:)" = 64 ] || fail "RX-packets $(total RX-packets:), want 64"
	[ "$(total TX-packets:)" = 64 ] || fail "TX-packets $(total TX-packets:), want 64"
	# After the clear, port 0 shows zero counters.
	sed -n '/NIC statistics for port 1 cleared/,$p' "$out" |
		grep -q '^  RX-packets: 0  *RX-missed: 0' || fail "clear did not zero"
	grep -q '^mbufs not returned to pool mb_pool_0: 0$' "$out" ||
		fail "mbufs not returned to the pool"
	;;
qp-credits-no-rnr)
	# An RC link on the soft NIC, txonly and rxonly on their own lcores:
	# the sender is held back by credits, never by RNR NAKs.
	eal=(--lcores=0@0,1@0,2@1 "${eal[@]:2}")
	run --dev qp0,dev=soft0,qp=rc,peer=qp1 --dev qp1,dev=soft0,qp=rc,peer=qp0 \
		--forward-mode=txonly,rxonly --nb-cores=2 --max-packets=300000 \
		--show-xstats
	rc=$?
	[ $rc = 0 ] || fail "exit status $rc, want 0"
	check_common
	rx=$(total RX-packets:)
	[ -n "$rx" ] && [ "$rx" -ge 300000 ] || fail "RX-packets $rx < 300000"
	grep -q '^tx_credit_reads: [1-9]' "$out" || fail "no credit READ counted"
	# --show-xstats prints only nonzero counters.
	grep -q '^tx_rnr_naks:' "$out" && fail "RNR NAKs: $(grep '^tx_rnr_naks:' "$out")"
	grep -q '^tx_errors:\|^tx_flushed:' "$out" && fail "frames lost on the link"
	;;
*)
	echo "unknown case $case_name"
	exit 2
	;;
esac
echo "PASS ($case_name)"
