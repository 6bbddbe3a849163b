#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-testpmd on ring ports in one process: bounded runs, exit codes,
# signals and mbuf accounting.
#
#   testpmd.sh PATH/TO/qpio-testpmd CASE
#
# CASE: io-tx-first, macswap-tx-first, txonly-rxonly-duration,
#       lcore-placement, bad-options, sigterm, qp-credits-no-rnr.
set -u

tp=$1
case_name=$2
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

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
