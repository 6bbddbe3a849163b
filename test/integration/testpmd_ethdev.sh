#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-testpmd over ethdevs EAL creates from --vdev, as dpdk-testpmd is
# used: net_pcap0 reads the shipped capture, io forwarding sends every
# frame to net_pcap1, whose tx_pcap must equal the input record by record.
# Then the same capture from an ethdev over an RC link (qp0 -> qp1, chained
# topology) and back into the ethdev's tx_pcap.
#
#   testpmd_ethdev.sh PATH/TO/qpio-testpmd PATH/TO/qpio-pcapcmp CAPTURE
set -u

tp=$1
pcapcmp=$2
in=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
	echo "FAIL: $*"
	echo "--- stdout"; cat "$work/out"
	echo "--- stderr"; cat "$work/err"
	exit 1
}

"$tp" -l 0-1 --no-huge --no-shconf --no-pci -m 512 --no-telemetry \
	--log-level=lib.eal:error --file-prefix="qpio-it-eth-$$" \
	--vdev="net_pcap0,rx_pcap=$in" \
	--vdev="net_pcap1,tx_pcap=$work/out.pcap" \
	-- --duration=2 >"$work/out" 2>"$work/err" || fail "exit status $?"
grep -q '^qpio-testpmd: ethdev 0 (net_pcap0) is port eth0$' "$work/out" ||
	fail "ethdev 0 did not become port eth0"
grep -q '^qpio-testpmd: ethdev 1 (net_pcap1) is port eth1$' "$work/out" ||
	fail "ethdev 1 did not become port eth1"
grep -q '^mbufs not returned to pool mb_pool_0: 0$' "$work/out" ||
	fail "mbufs not returned to the pool"
cmp=$("$pcapcmp" "$in" "$work/out.pcap") || fail "capture differs: $cmp"
echo "$cmp"
echo "PASS: every frame of $(basename "$in") crossed eth0 -> eth1 unchanged"

rm -f "$work/out.pcap"
"$tp" -l 0-1 --no-huge --no-shconf --no-pci -m 512 --no-telemetry \
	--log-level=lib.eal:error --file-prefix="qpio-it-eth-$$" \
	--vdev="net_pcap0,rx_pcap=$in,tx_pcap=$work/out.pcap" \
	-- --dev qp0,dev=soft0,qp=rc,peer=qp1 --dev qp1,dev=soft0,qp=rc,peer=qp0 \
	--port-topology=chained --duration=2 >"$work/out" 2>"$work/err" ||
	fail "RC link run: exit status $?"
grep -q '^  RX P=0/Q=0 -> TX P=1/Q=0 ' "$work/out" ||
	fail "eth0 is not port 0 ahead of the --dev ports"
grep -q '^mbufs not returned to pool mb_pool_0: 0$' "$work/out" ||
	fail "mbufs not returned to the pool (RC link run)"
cmp=$("$pcapcmp" "$in" "$work/out.pcap") || fail "RC link run: capture differs: $cmp"
echo "$cmp"
echo "PASS: every frame crossed eth0 -> qp0 ==RC==> qp1 -> eth0 unchanged"
