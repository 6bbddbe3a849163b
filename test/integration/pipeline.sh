#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-pipeline on the shipped capture and on every shared real capture:
# per-flow packet and byte counts, the stage counters and the input port's
# oversize drops must equal what pipeline_flows.py computes from the same
# file and rules, every frame sent on the RC link must arrive, and every
# mbuf must be back at exit.
#
#   pipeline.sh PATH/TO/qpio-pipeline SHIPPED.pcap SHARED_DIR RULES
set -u

pl=$1
shipped=$2
shared=$3
rules=$4
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0 runs=0

one() {
	local cap=$1 name out exp got
	name=$(basename "$cap")
	out=$work/out exp=$work/exp
	if ! "$pl" --lcores=0@0,1@0,2@1 --no-huge --no-shconf --no-pci -m 512 \
		--no-telemetry --log-level=lib.eal:error --log-level='qpio.*:warning' \
		--file-prefix="qpio-it-pl-$$" -- --in "pcap0,rx_pcap=$cap" \
		--rules "$rules" --flows "$work/flows.csv" >"$out" 2>&1; then
		echo "FAIL $name: exit status"; cat "$out"; fails=$((fails + 1)); return
	fi
	python3 "$here/pipeline_flows.py" "$cap" "$rules" 1518 >"$exp"
	if ! diff <(grep -v '^counts ' "$exp") "$work/flows.csv" >"$work/diff"; then
		echo "FAIL $name: flows differ"; head -20 "$work/diff"
		fails=$((fails + 1)); return
	fi
	# "counts rx=N permitted=N denied=N no_match=N not_ip=N bad=N
	# oversize=N ipv6=N"
	read -r rx pe de nm ni bad v6 ov <<<"$(grep '^counts ' "$exp" | tr '=' ' ' |
		awk '{print $3, $5, $7, $9, $11, $13, $17, $15}')"
	# the frames above 1518 bytes never reach rx: the input port's errors
	if ! grep -qxF "before the pipeline: in port missed 0 errors $ov nombuf 0" "$out"; then
		echo "FAIL $name: want 'before the pipeline: in port missed 0 errors $ov nombuf 0'"
		grep '^before the pipeline' "$out"; fails=$((fails + 1)); return
	fi
	# "classify: in N, permitted N, denied N, no_match N, not_ip N, bad N,
	# ring full N; ipv6 in N"
	got=$(awk '/^rx: /{rx=$2} /^classify: /{gsub(",", ""); pe=$5; de=$7; nm=$9; ni=$11; bad=$13; v6=$19}
		END {print rx+0, pe+0, de+0, nm+0, ni+0, bad+0, v6+0}' "$out")
	if [ "$got" != "$rx $pe $de $nm $ni $bad $v6" ]; then
		echo "FAIL $name: counters rx permitted denied no_match not_ip bad ipv6:" \
			"got $got, want $rx $pe $de $nm $ni $bad $v6"
		fails=$((fails + 1)); return
	fi
	if ! grep -q "^sink: link rx $pe," "$out" ||
		! grep -q "link tx $pe, link drops 0$" "$out"; then
		echo "FAIL $name: not every permitted frame crossed the link"
		grep -E '^(flows|sink):' "$out"; fails=$((fails + 1)); return
	fi
	if ! grep -q '^mbufs not returned to pl_pool: 0$' "$out"; then
		echo "FAIL $name: mbufs not returned"; fails=$((fails + 1)); return
	fi
	echo "PASS $name: rx $rx, permitted $pe in $(($(wc -l <"$work/flows.csv") - 1)) flows, denied $de, no_match $nm, not_ip $ni, bad $bad, ipv6 $v6, oversize $ov"
	runs=$((runs + 1))
}

one "$shipped"
if [ -d "$shared/real" ]; then
	for cap in "$shared"/real/*.pcap; do
		one "$cap"
	done
else
	echo "note: $shared/real absent, shared captures not run"
fi
[ $fails = 0 ] || { echo "FAIL: $fails captures"; exit 1; }
echo "PASS: $runs captures"
