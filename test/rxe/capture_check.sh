#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Judges the capture a Soft-RoCE VM suite took of veth0, on the host after
# the VM has stopped (test/rxe/run.sh runs it when the guest left
# DIR/capture-check): tshark natively, where under the VM's TCG the
# same passes took most of the suites' time (rxe-perftest's 383,000
# frames: 340 s).
#
#   test/rxe/capture_check.sh DIR
#
# DIR holds what the guest left: capture-check (one word, the suite:
# wire, perftest or cm), wire.pcap (tcpdump's capture of veth0) and
# tcpdump.log. The rules are each suite's; the guest scripts
# (wire_guest.sh, perftest_guest.sh, cm_guest.sh) say what their rows
# send. Exit status: 0 the capture is as the rules say, 1 it is not (each
# broken rule printed), 2 bad usage.
set -u

[ $# -eq 1 ] && [ -d "$1" ] || {
	echo "usage: $0 DIR (the results directory of test/rxe/run.sh)" >&2
	exit 2
}
dir=$1
suite=$(cat "$dir/capture-check" 2>/dev/null)
case "$suite" in
wire | perftest | cm) ;;
*) echo "rxe-capture: $dir/capture-check names no suite (want wire, perftest or cm): '$suite'" >&2
	exit 2 ;;
esac
rc=0
t0=$(date +%s)
step() { echo "== rxe-$suite (host) [$(( $(date +%s) - t0 ))s] $*"; }
fail() { echo "== rxe-$suite: FAIL: $*"; rc=1; }
pcap=$dir/wire.pcap
err=$(mktemp /tmp/qpio-tshark.XXXXXX)
# tshark with its defaults only, as in the guest (HOME=/tmp, empty): not the
# caller's profile (disabled protocols, preferences, decode-as rules)
cfg=$(mktemp -d /tmp/qpio-tshark-cfg.XXXXXX)
export WIRESHARK_CONFIG_DIR=$cfg
trap 'rm -rf "$err" "$err.frames" "$err.failed" "$cfg"' EXIT

step "tshark over the capture of veth0 ($(tshark --version 2>/dev/null | head -n 1))"
if ! command -v tshark >/dev/null; then
	fail "tshark not installed (usertools/install-deps.sh)"
	exit 1
fi
if [ ! -s "$pcap" ]; then
	fail "the guest left no capture ($pcap)"
	sed 's/^/   tcpdump: /' "$dir/tcpdump.log" 2>/dev/null
	exit 1
fi
# Wireshark's RPC-over-RDMA dissector tries RC SEND payloads and throws
# on the empty ones: off, the InfiniBand dissector judges. A failing
# tshark prints nothing: its status fails the check. (tsk runs inside
# $(...) and pipes, whose rc would not come back: it notes the failure
# in a file.)
tsk() {
	tshark -r "$pcap" --disable-protocol rpcordma "$@" 2>>"$err" ||
		echo "tshark $* exited $?" >> "$err.failed"
}
tshark_errors() {
	grep -v "Running as user" "$err" | sort | uniq -c | sed 's/^/   tshark: /'
}
# a file tshark cannot read fails once, here, not in every rule
if ! tshark -r "$pcap" -c 1 -T fields -e frame.number >/dev/null 2>>"$err"; then
	fail "tshark cannot read the capture $pcap"
	tshark_errors
	exit 1
fi

wire() {
	local roce udp bad arp ud want vlan vlan_q vlan_k
	roce=$(tsk -Y "infiniband" | wc -l)
	udp=$(tsk -Y "udp.dstport == 4791" | wc -l)
	bad=$(tsk -Y "_ws.malformed || _ws.expert.severity >= error" | wc -l)
	arp=$(tsk -Y "arp" | wc -l)
	ud=$(tsk -Y "infiniband.bth.opcode == 100" | wc -l)
	# UD: 500 + 500 each way of the first two rows, 200 + 200 of the
	# next two, one datagram each
	want=$(( 2 * 500 * 2 + 2 * 200 * 2 ))
	echo "   capture: $udp UDP 4791 frames, $roce decoded as InfiniBand ($ud UD SEND only), $arp ARP, $bad malformed (want $udp, $want UD, >= 2, 0)"
	[ "$udp" -gt 0 ] && [ "$roce" = "$udp" ] && [ "$ud" = "$want" ] &&
		[ "$bad" = 0 ] && [ "$arp" -ge 2 ] ||
		{
			fail "tshark: the capture is not all well-formed RoCE frames with $want UD ones"
			ls -la "$pcap"
			sed 's/^/   tcpdump: /' "$dir/tcpdump.log"
			tshark_errors
		}
	# the VLAN rows: 200 messages each way of each row, RoCE frames
	# tagged 100 by both sides (4096 bytes: 4 packets at path MTU 1024)
	vlan=$(tsk -Y "vlan.id == 100 && infiniband" | wc -l)
	vlan_q=$(tsk -Y "vlan.id == 100 && vlan.priority == 3 && infiniband && ip.src == 10.0.78.2" | wc -l)
	vlan_k=$(tsk -Y "vlan.id == 100 && infiniband && ip.src == 10.0.78.1" | wc -l)
	echo "   capture: $vlan RoCE frames on VLAN 100 ($vlan_q from qpio with PCP 3, $vlan_k from rxe; want >= 800 each)"
	[ "$vlan_q" -ge 800 ] && [ "$vlan_k" -ge 800 ] ||
		fail "tshark: fewer than 800 RoCE frames tagged VLAN 100 from each side"
	echo "   opcodes (count, source, opcode):"
	tsk -Y infiniband -T fields -e ip.src -e infiniband.bth.opcode |
		sort | uniq -c | sed 's/^/   /'
}

perftest() {
	local f=$err.frames udp roce bad
	# headers only: Wireshark's guesses at the payload (RPC-over-RDMA,
	# CRTP, an Ethertype) are not RoCE and throw on random bytes.
	# UDP checksums checked (qpio computes them over IPv6); rxe sends 0
	# over IPv6 too, as RFC 6935 lets a tunnel do: not an error here.
	# One pass: per frame its UDP port, source, BTH opcode and any
	# expert message of severity error (malformed included).
	tsk -o infiniband.identify_payload:FALSE \
		-o udp.check_checksum:TRUE -o udp.ignore_ipv6_zero_checksum:TRUE \
		-T fields -E separator=/t -e frame.number -e udp.dstport \
		-e ip.src -e infiniband.bth.opcode -e _ws.expert.severity \
		-e _ws.expert.message > "$f"
	udp=$(awk -F'\t' '$2 == 4791' "$f" | wc -l)
	roce=$(awk -F'\t' '$2 == 4791 && $4 != ""' "$f" | wc -l)
	# severity 8388608 (0x800000) is PI_ERROR; malformed is an error
	bad=$(awk -F'\t' '$5 ~ /8388608/' "$f" | wc -l)
	echo "   capture: $udp UDP 4791 frames, $roce decoded as InfiniBand, $bad with errors"
	[ "$udp" -gt 0 ] && [ "$roce" = "$udp" ] && [ "$bad" = 0 ] ||
		{
			fail "tshark: the capture is not all well-formed RoCE frames"
			awk -F'\t' '$5 ~ /8388608/ || ($2 == 4791 && $4 == "")' "$f" |
				head -n 20 | sed 's/^/   frame: /'
			tshark_errors
		}
	echo "   opcodes (count, source, opcode):"
	awk -F'\t' '$4 != "" { print $3, $4 }' "$f" | sort | uniq -c | sed 's/^/   /'
}

cm() {
	local roce udp bad want got rej other sid_q sid_k stale_k
	roce=$(tsk -Y "infiniband" | wc -l)
	udp=$(tsk -Y "udp.dstport == 4791" | wc -l)
	bad=$(tsk -Y "_ws.malformed || _ws.expert.severity >= error" | wc -l)
	echo "   capture: $udp UDP 4791 frames, $roce decoded as InfiniBand, $bad malformed (want $udp, 0)"
	[ "$udp" -gt 0 ] && [ "$roce" = "$udp" ] && [ "$bad" = 0 ] ||
		fail "tshark: the capture is not all well-formed RoCE frames"
	# CM attribute IDs (IBA 16.7.2): 0x10 REQ, 0x12 REJ, 0x13 REP,
	# 0x14 RTU, 0x15 DREQ, 0x16 DREP, 0x17 SIDR REQ, 0x18 SIDR REP; ten
	# RC rows (rping's four) and four UD rows, resends aside; one REJ
	# (rc-mtu-refused)
	echo "   CM messages (count, source, attribute):"
	tsk -Y "infiniband.mad.mgmtclass == 0x07" -T fields -e ip.src \
		-e infiniband.mad.attributeid | sort | uniq -c | sed 's/^/   /'
	n() { tsk -Y "infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == $1" | wc -l; }
	for want in "0x0010 11" "0x0013 10" "0x0014 10" "0x0015 10" "0x0016 10" "0x0017 4" "0x0018 4"; do
		set -- $want
		got=$(n "$1")
		[ "$got" -ge "$2" ] || fail "CM attribute $1: $got in the capture, want at least $2"
	done
	# REJs: one "invalid MTU" (26) from 10.0.77.2, rc-mtu-refused's,
	# at least one "invalid service ID" (8) from each side, the
	# rc-no-listener rows' (more from the kernel to a retried client
	# row, the tool not listening yet), at least one "stale connection"
	# (10) from the kernel, rc-qpio-client-killed's; none of another
	# reason
	rej=$(tsk -Y "infiniband.cm.rej.reason == 26 && ip.src == 10.0.77.2" | wc -l)
	other=$(tsk -Y "infiniband.cm.rej.reason && !(infiniband.cm.rej.reason == 26 || infiniband.cm.rej.reason == 8 || (infiniband.cm.rej.reason == 10 && ip.src == 10.0.77.1))" | wc -l)
	sid_q=$(tsk -Y "infiniband.cm.rej.reason == 8 && ip.src == 10.0.77.2" | wc -l)
	sid_k=$(tsk -Y "infiniband.cm.rej.reason == 8 && ip.src == 10.0.77.1" | wc -l)
	stale_k=$(tsk -Y "infiniband.cm.rej.reason == 10 && ip.src == 10.0.77.1" | wc -l)
	echo "   REJ: $rej invalid MTU from qpio, invalid service ID $sid_q from qpio and $sid_k from the kernel, $stale_k stale connection from the kernel, $other of other reasons"
	[ "$rej" = 1 ] && [ "$other" = 0 ] && [ "$sid_q" -ge 1 ] && [ "$sid_k" -ge 1 ] && [ "$stale_k" -ge 1 ] ||
		fail "CM: $rej REJ invalid MTU (want 1), $sid_q and $sid_k REJ invalid service ID from qpio and the kernel (want 1 or more each), $stale_k REJ stale connection from the kernel (want 1 or more), $other REJ of other reasons (want 0)"
	[ -s "$err" ] && tshark_errors
}

"$suite"
if [ -s "$err.failed" ]; then
	while read -r l; do fail "$l"; done < "$err.failed"
	tshark_errors
fi
step "done: $( [ "$rc" = 0 ] && echo PASS || echo FAIL)"
exit "$rc"
