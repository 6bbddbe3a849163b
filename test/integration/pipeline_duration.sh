#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-pipeline --duration on an input that never runs dry (net_pcap with
# infinite_rx=1 through the eth port, as a busy live interface would be):
# rx must stop at the deadline, the run end within the drain time, every
# frame be accounted for at one stage or the next, and every mbuf be back.
#
#   pipeline_duration.sh PATH/TO/qpio-pipeline CAPTURE RULES
set -u

pl=$1
cap=$2
rules=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; cat "$work/out"; exit 1; }

# --duration 1, then at most 2 s of drain; 30 s is far beyond either.
timeout -s KILL 30 "$pl" --lcores=0@0,1@0,2@1 --no-huge --no-shconf \
	--no-pci -m 512 --no-telemetry --log-level=lib.eal:error \
	--log-level='qpio.*:warning' --file-prefix="qpio-it-pld-$$" -- \
	--in "eth0,vdev=net_pcap0,rx_pcap=$cap,infinite_rx=1" \
	--rules "$rules" --duration 1 >"$work/out" 2>&1
rc=$?
[ $rc = 137 ] && fail "still running 30 s after --duration 1"
[ $rc = 0 ] || fail "exit status $rc"
# rx N, ring full N / classify: in N, permitted N, denied N, no_match N,
# not_ip N, bad N, ring full N; ipv6 in N / flows: in N, flows N, table full N,
# link tx N, link drops N / sink: link rx N, ...
read -r rx rxf cin pe de nm ni bad cf fin lt ld sk <<<"$(tr -d ',;' <"$work/out" | awk '
	/^rx: / {rx = $2; rxf = $6}
	/^classify: / {cin = $3; pe = $5; de = $7; nm = $9; ni = $11; bad = $13; cf = $16}
	/^flows: / {fin = $3; lt = $11; ld = $14}
	/^sink: / {sk = $4}
	END {print rx, rxf, cin, pe, de, nm, ni, bad, cf, fin, lt, ld, sk}')"
[ -n "$sk" ] || fail "counters missing"
[ "$rx" -gt 0 ] || fail "no frame received"
[ $((cin + rxf)) = "$rx" ] || fail "rx $rx != classify in $cin + ring full $rxf"
[ $((pe + de + nm + ni + bad)) = "$cin" ] ||
	fail "classify in $cin != sum of its outcomes"
[ $((fin + cf)) = "$pe" ] || fail "permitted $pe != flows in $fin + ring full $cf"
[ $((lt + ld)) = "$fin" ] || fail "flows in $fin != link tx $lt + drops $ld"
[ "$sk" -le "$lt" ] || fail "sink got $sk, more than the $lt sent"
grep -q '^mbufs not returned to pl_pool: 0$' "$work/out" || fail "mbufs not returned"
echo "PASS: --duration 1 on an endless input: rx $rx, classified $cin, permitted $pe, across the link $sk of $lt, 0 mbufs out"
