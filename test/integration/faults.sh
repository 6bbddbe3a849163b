#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The main job under soft NIC faults: every capture forwarded over an RC
# link whose device loses packets, answers RNR or completes late must
# arrive identical, with every mbuf back in its pool; and a link that
# loses every packet must fail (RETRY_EXC_ERR, the link goes down) and
# still give every mbuf back, so the faults are known to apply.
#
#   faults.sh BUILDDIR [PCAPDIR]
#
# PCAPDIR/real, when it exists, adds two of its captures. Exit 0 when all
# hold, 1 otherwise.
set -euo pipefail

build="$1"
pcapdir="${2:-}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
fwd="$root/usertools/qpio-forward-capture.sh"
work="$(mktemp -d /tmp/qpio-faults.XXXXXX)"
trap 'rm -rf "$work"' EXIT

files=("$root/data/linux-stack.pcap")
if [ -n "$pcapdir" ] && [ -d "$pcapdir/real" ]; then
	files+=("$pcapdir/real/vrrp.pcap" "$pcapdir/real/ssh.pcap")
else
	echo "note: shared captures not found at $pcapdir/real: the shipped capture only"
fi

fail=0
n=0
for dev in "soft0,fault_drop_ppm=20000,fault_seed=3" \
	   "soft0,fault_rnr_ppm=100000,fault_seed=4" \
	   "soft0,fault_delay_us=200" \
	   "soft0,fault_drop_ppm=5000,fault_rnr_ppm=50000,fault_delay_us=50,fault_seed=5"; do
	for f in "${files[@]}"; do
		n=$((n + 1))
		log="$work/$n.log"
		# A late or lost completion holds tx descriptors: the frames
		# a full queue refuses are offered again (-r), not dropped,
		# and a lost packet is sent again after 65 us (timeout=4).
		if "$fwd" -b "$build" -d "$dev" -q timeout=4 -r 1000000 "$f" \
			"$work/$n.pcap" >"$log" 2>&1 &&
		   grep -q "mbufs not returned to pool mb_pool_0: 0" "$log"; then
			echo "PASS: $dev: $(basename "$f") identical, mbufs back"
		else
			echo "FAIL: $dev: $(basename "$f")"
			tail -20 "$log"
			fail=1
		fi
	done
done

# Every packet lost: the RC link gives up, the output differs, and the
# run still ends with every mbuf returned.
log="$work/all-lost.log"
if "$fwd" -b "$build" -d "soft0,fault_drop_ppm=1000000" "${files[0]}" \
	"$work/all-lost.pcap" >"$log" 2>&1; then
	echo "FAIL: every packet lost, yet the output is identical"
	fail=1
elif grep -q "mbufs not returned to pool mb_pool_0: 0" "$log" &&
     grep -q "differs from" "$log"; then
	echo "PASS: every packet lost: the link failed, mbufs back"
else
	echo "FAIL: every packet lost: no clean failure"
	tail -20 "$log"
	fail=1
fi
echo "faults: $((n + 1)) runs, $([ $fail = 0 ] && echo all as expected || echo FAILURES)"
exit $fail
