#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The soft wire device's frames read by Wireshark's own dissectors. The
# unit tests of suite soft_wire run with QPIO_WIRE_PCAP set: their pump
# appends every frame it moves between the two devices to that capture
# (test/unit/test_soft_wire.c, pair_devs()); the file does not exist
# before, so the first test creates it. tshark must then find in it
# exactly the ARP and RoCEv2 frames those tests sent (the frames the
# drops test puts straight into a receive ring are not pumped, so not
# captured), each RoCEv2 one decoded as InfiniBand on UDP port 4791 with
# the BTH and DETH fields the tests set, and nothing malformed, no
# error, no bad IP or UDP checksum.
#
#   wire_tshark.sh BUILDDIR
#
# Exit 0 when all hold, 1 otherwise, 77 (skip) without tshark.
set -u
export LC_ALL=C

build=$1
unit=$build/test/unit/qpio-unit-tests
if ! command -v tshark >/dev/null 2>&1; then
	echo "SKIP: tshark not found (package tshark)"
	exit 77
fi
[ -x "$unit" ] || { echo "FAIL: $unit not built"; exit 1; }
t=$(mktemp -d /tmp/qpio-wire-tshark.XXXXXX)
trap 'rm -rf "$t"' EXIT
cap=$t/wire.pcap

fail=0
bad() { echo "FAIL: $*"; fail=1; }

# The unit binary starts EAL itself (qt_eal_init: --no-huge, --no-pci,
# a --file-prefix of its own per test process): it takes no EAL options.
# One job: the tests append to one file in turn.
ud_tests='@(ud_ipv4_arp_then_datagram_bytes_exact|ud_ipv6_static_neighbour_both_ways'
ud_tests=$ud_tests'|drops_counted_qkey_qpn_icrc_and_junk|devargs_and_verbs_refused_with_their_rule)'
QPIO_WIRE_PCAP=$cap "$unit" --jobs 1 --filter "soft_wire/$ud_tests" >"$t/unit.log" 2>&1
rc=$?
if [ $rc != 0 ] ||
   ! grep -q 'Synthesis: Tested: 4 | Passing: 4 | Failing: 0 | Crashing: 0' "$t/unit.log"; then
	grep -E '^\[(FAIL|----)\]|Synthesis' "$t/unit.log"
	echo "FAIL: the soft_wire unit tests (exit $rc)"
	exit 1
fi
[ -s "$cap" ] || { echo "FAIL: $cap not created"; exit 1; }
# a pcap file header, microseconds, in the host's (little endian) order,
# link type 1 (Ethernet)
magic=$(od -A n -t x1 -N 24 "$cap" | tr -d ' \n')
case "$magic" in
d4c3b2a1*01000000) ;;
*) bad "$cap: not a little-endian Ethernet pcap file (header $magic)" ;;
esac

# tshark with the IP and UDP checksums checked (a bad one is an error)
# A tshark that fails (a bad option, an unreadable file) prints nothing,
# which must not read as "no frame": its exit status fails the test.
ts() {
	tshark -r "$cap" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE \
		"$@" 2>>"$t/tshark.err" || { echo "FAIL: tshark $* exited $?" >&2; echo 1 > "$t/tshark.failed"; }
}
count() { ts -Y "$1" | wc -l; }

total=$(count 'frame')
arp=$(count 'arp')
roce=$(count 'infiniband.bth')
udp4791=$(count 'udp.dstport == 4791')
nd=$(count 'icmpv6')
[ "$total" = 14 ] || bad "$total frames, want 14 (4 ARP, 2 NDP, 8 RoCEv2)"
[ "$arp" = 4 ] || bad "$arp ARP frames, want 4"
[ "$nd" = 2 ] || bad "$nd ICMPv6 frames, want 2 (NDP)"
[ "$roce" = 8 ] || bad "$roce frames decoded as InfiniBand, want 8"
[ "$udp4791" = 8 ] || bad "$udp4791 frames to UDP port 4791, want 8"
n=$(count 'infiniband.bth.opcode == 0x64')
[ "$n" = 7 ] || bad "$n UD SEND only (0x64), want 7"
n=$(count 'infiniband.bth.opcode == 0x65')
[ "$n" = 1 ] || bad "$n UD SEND only with immediate (0x65), want 1"
n=$(count '_ws.malformed || _ws.expert.severity >= error')
[ "$n" = 0 ] || {
	bad "$n frames malformed or with an error:"
	ts -Y '_ws.malformed || _ws.expert.severity >= error' \
		-T fields -e frame.number -e _ws.expert.message
}

# ARP: operation, sender and target protocol address, Ethernet destination
# (both ethdevs are net_ring ones, whose MAC is 00:00:00:00:00:00).
want_arp='1 10.0.0.1 10.0.0.2 ff:ff:ff:ff:ff:ff
1 10.0.0.1 10.0.0.2 ff:ff:ff:ff:ff:ff
2 10.0.0.2 10.0.0.1 00:00:00:00:00:00
2 10.0.0.2 10.0.0.1 00:00:00:00:00:00'
got_arp=$(ts -Y arp -T fields -E separator=' ' -e arp.opcode \
	-e arp.src.proto_ipv4 -e arp.dst.proto_ipv4 -e eth.dst | sort)
[ "$got_arp" = "$want_arp" ] ||
	bad "ARP frames:"$'\n'"$got_arp"$'\n'"want:"$'\n'"$want_arp"

# NDP (ud_ipv6_static_neighbour_both_ways: B asks for A's MAC): type,
# source, destination, hop limit, target, S and O flags, the link-layer
# address option, the ICMPv6 checksum status (1 good). net_ring's MAC is
# 00:00:00:00:00:00.
want_nd='135 fd00::2 ff02::1:ff00:1 255 fd00::1 - - 00:00:00:00:00:00 1
136 fd00::1 fd00::2 255 fd00::1 1 1 00:00:00:00:00:00 1'
got_nd=$(ts -Y icmpv6 -T fields -E separator='|' -e icmpv6.type -e ipv6.src \
	-e ipv6.dst -e ipv6.hlim -e icmpv6.nd.ns.target_address \
	-e icmpv6.nd.na.target_address -e icmpv6.nd.na.flag.s \
	-e icmpv6.nd.na.flag.o -e icmpv6.opt.linkaddr -e icmpv6.checksum.status |
	awk -F'|' '{ t = $5 != "" ? $5 : $6; s = $7; o = $8
	       if ($1 == 135) { s = "-"; o = "-" }
	       else { s = (s == "True" || s == "1"); o = (o == "True" || o == "1") }
	       print $1, $2, $3, $4, t, s, o, $9, $10 }' | sort)
[ "$got_nd" = "$want_nd" ] ||
	bad "NDP frames:"$'\n'"$got_nd"$'\n'"want:"$'\n'"$want_nd"

# RoCEv2, one line a frame:
#   protocols  src dst  hop-limit  IP-or-UDP-checksum-status (1 good)
#   UDP-sport  opcode SE pad TVer P_Key destQP AckReq PSN  Q_Key srcQP
#   ImmDt  Data-bytes (Wireshark's Data holds the pad too)
# with hex values without leading zeros. The frames of
#  drops_counted_qkey_qpn_icrc_and_junk: A (QPN 0x100) to B (0x100) with
#   the wrong Q_Key, to no such QPN (0xabcdef), then a good one; 16 bytes
#   each, PSN 0, 1, 2; the AH's hop limit 1
#  ud_ipv4_arp_then_datagram_bytes_exact: A to B, 300 bytes with
#   immediate 0x0badcafe; B's answer, 64 bytes, addressed from the
#   completion (hop limit 255)
#  ud_ipv6_static_neighbour_both_ways: B to A, 10 bytes (+2 pad), PSN 0
#   (once NDP told B A's MAC); A to B, 4000 bytes; B to A again, PSN 1
# The UDP source port is 0xc000 | ((src QPN ^ dest QPN) & 0x3fff).
want_roce=$(sort <<'EOF'
eth:ethertype:ip:udp:infiniband:data 10.0.0.1 10.0.0.2 1 1 49152 100 0 0 0 65535 0x100 0 0 0x11111112 0x100 - 16
eth:ethertype:ip:udp:infiniband:data 10.0.0.1 10.0.0.2 1 1 52463 100 0 0 0 65535 0xabcdef 0 1 0x11111111 0x100 - 16
eth:ethertype:ip:udp:infiniband:data 10.0.0.1 10.0.0.2 1 1 49152 100 0 0 0 65535 0x100 0 2 0x11111111 0x100 - 16
eth:ethertype:ip:udp:infiniband:data 10.0.0.1 10.0.0.2 1 1 49152 101 0 0 0 65535 0x100 0 0 0x11111111 0x100 0badcafe 300
eth:ethertype:ip:udp:infiniband:data 10.0.0.2 10.0.0.1 255 1 49152 100 0 0 0 65535 0x100 0 0 0x11111111 0x100 - 64
eth:ethertype:ipv6:udp:infiniband:data fd00::1 fd00::2 1 1 49152 100 0 0 0 65535 0x100 0 0 0x11111111 0x100 - 4000
eth:ethertype:ipv6:udp:infiniband:data fd00::2 fd00::1 1 1 49152 100 0 2 0 65535 0x100 0 0 0x11111111 0x100 - 12
eth:ethertype:ipv6:udp:infiniband:data fd00::2 fd00::1 1 1 49152 100 0 2 0 65535 0x100 0 1 0x11111111 0x100 - 12
EOF
)
got_roce=$(ts -Y infiniband.bth -T fields -E separator='|' -E occurrence=f \
	-e frame.protocols -e ip.src -e ipv6.src -e ip.dst -e ipv6.dst \
	-e ip.ttl -e ipv6.hlim -e ip.checksum.status -e udp.checksum.status \
	-e udp.srcport -e infiniband.bth.opcode -e infiniband.bth.se \
	-e infiniband.bth.padcnt -e infiniband.bth.tver \
	-e infiniband.bth.p_key -e infiniband.bth.destqp -e infiniband.bth.a \
	-e infiniband.bth.psn -e infiniband.deth.q_key -e infiniband.deth.srcqp \
	-e infiniband.immdt -e data.len |
	awk -F'|' '
	function hex(v) { sub(/^0x0*/, "0x", v); return v == "0x" ? "0x0" : v }
	function flag(v) { return v == "True" || v == "1" ? 1 : 0 }
	{
		v6 = $1 ~ /:ipv6:/
		# IPv4: the header checksum; IPv6: the UDP checksum (IPv4
		# sends none, as rxe)
		print $1, $2 $3, $4 $5, $6 $7, v6 ? $9 : $8, $10, $11,
			flag($12), $13, $14, $15, hex($16), flag($17), $18,
			hex($19), hex($20), $21 == "" ? "-" : $21, $22
	}' | sort)
[ "$got_roce" = "$want_roce" ] ||
	bad "RoCEv2 frames:"$'\n'"$got_roce"$'\n'"want:"$'\n'"$want_roce"

# RC: the SEND, WRITE_WITH_IMM, READ and atomics of one test, each packet
# of each opcode as sent (A at 10.0.0.1 asks, B answers), none malformed
cap=$t/rc.pcap
QPIO_WIRE_PCAP=$cap "$unit" --jobs 1 \
	--filter 'soft_wire/rc_send_write_read_atomics_segmented' >"$t/rc.log" 2>&1
if ! grep -q 'Synthesis: Tested: 1 | Passing: 1 | Failing: 0 | Crashing: 0' "$t/rc.log"; then
	grep -E '^\[(FAIL|----)\]|Synthesis' "$t/rc.log"
	bad "the RC unit test"
else
	got_rc=$(ts -Y infiniband -T fields -E separator=' ' -e ip.src \
		-e infiniband.bth.opcode -e infiniband.bth.a -e data.len |
		sed 's/True/1/; s/False/0/; s/ *$//' | sort | uniq -c |
		sed 's/^ *//' | sort)
	# SEND 3000: 0 1 2 (1024 1024 952); WRITE_WITH_IMM 2500: 6 7 9
	# (1024 1024 452); READ request 12 and responses 13 14 14 14 15;
	# CMP_AND_SWP 19, FETCH_AND_ADD 20 and their ATOMIC ACKs 18; a
	# zero-length SEND ONLY 4; an ACK 17 for each SEND and the WRITE
	want_rc=$(sort <<'EOF2'
1 10.0.0.1 0 0 1024
1 10.0.0.1 1 0 1024
1 10.0.0.1 2 1 952
1 10.0.0.1 6 0 1024
1 10.0.0.1 7 0 1024
1 10.0.0.1 9 1 452
1 10.0.0.1 12 1
1 10.0.0.1 19 1
1 10.0.0.1 20 1
1 10.0.0.1 4 1
3 10.0.0.2 17 0
1 10.0.0.2 13 0 1024
3 10.0.0.2 14 0 1024
1 10.0.0.2 15 0 904
2 10.0.0.2 18 0
EOF2
)
	[ "$got_rc" = "$want_rc" ] ||
		bad "RC frames (count src opcode ackreq len):"$'\n'"$got_rc"$'\n'"want:"$'\n'"$want_rc"
	# Wireshark's RPC-over-RDMA dissector tries every RC SEND payload
	# and throws on an empty one (the zero-length SEND, legal in IBA
	# and sent so by rxe): with it off, the InfiniBand dissector's own
	# verdict
	n=$(ts --disable-protocol rpcordma \
		-Y '_ws.malformed || _ws.expert.severity >= error' | wc -l)
	[ "$n" = 0 ] || bad "$n RC frames malformed or in error"
fi

# QP1 (soft_wire/gsi_qp1_carries_mads_with_the_gsi_qkey): the REQ a Linux
# kernel sent for rping, sent again from A's QP1 to B's, read by
# Wireshark's CM dissector with the kernel's values; the two datagrams of
# an ordinary QP to QP1 carry its own Q_Key (a remote Q_Key with the high
# bit set took it); the REQ again after B's QP1 was destroyed.
cap=$t/gsi.pcap
QPIO_WIRE_PCAP=$cap "$unit" --jobs 1 \
	--filter 'soft_wire/gsi_qp1_carries_mads_with_the_gsi_qkey' \
	>"$t/gsi.log" 2>&1
if ! grep -q 'Synthesis: Tested: 1 | Passing: 1 | Failing: 0 | Crashing: 0' \
	"$t/gsi.log"; then
	grep -E '^\[(FAIL|----)\]|Synthesis' "$t/gsi.log"
	bad "soft_wire/gsi_qp1_carries_mads_with_the_gsi_qkey"
else
	req='0x07 0x0010 0xf1569f35 0x0000000001061c02 0x000011 0xeb0987 10.0.78.1 10.0.78.2 0x03 0x14'
	want_gsi="0x000001 0x0000000080010000 srcqp1 $req
0x000001 0x0000000011111111 srcqp-other
0x000001 0x0000000011111111 srcqp-other
0x000001 0x0000000080010000 srcqp1 $req"
	got_gsi=$(ts -Y 'infiniband.bth.destqp == 1' -T fields -E separator='|' \
		-e infiniband.bth.destqp -e infiniband.deth.q_key \
		-e infiniband.deth.srcqp -e infiniband.mad.mgmtclass \
		-e infiniband.mad.attributeid -e infiniband.cm.req \
		-e infiniband.cm.req.serviceid -e infiniband.cm.req.localqpn \
		-e infiniband.cm.req.startpsn \
		-e infiniband.cm.req.prim_localgid_ipv4 \
		-e infiniband.cm.req.prim_remotegid_ipv4 \
		-e infiniband.cm.req.pppmtu -e infiniband.cm.req.localresptout |
		awk -F'|' '{ s = $3 == "0x00000001" ? "srcqp1" : "srcqp-other"
			line = $1 " " $2 " " s
			for (i = 4; i <= NF; i++) if ($i != "") line = line " " $i
			print line }')
	[ "$got_gsi" = "$want_gsi" ] ||
		bad "QP1 frames:"$'\n'"$got_gsi"$'\n'"want:"$'\n'"$want_gsi"
	n=$(ts -Y 'infiniband.bth' | wc -l)
	[ "$n" = 4 ] || bad "$n RoCEv2 frames in the QP1 capture, want 4"
	n=$(ts -Y '_ws.malformed || _ws.expert.severity >= error' | wc -l)
	[ "$n" = 0 ] || bad "$n QP1 frames malformed or in error"
fi

[ -e "$t/tshark.failed" ] && bad "a tshark run failed (above)"
if [ $fail = 0 ]; then
	echo "PASS: $total frames: $arp ARP, $nd NDP, $roce RoCEv2 (7 UD SEND only," \
	     "1 with immediate) decoded by tshark $(tshark --version 2>/dev/null |
	     sed -n '1s/^TShark (Wireshark) \([^ ]*\).*/\1/p'), fields as sent," \
	     "nothing malformed; 20 RC frames of 15 kinds as sent; QP1's REQ" \
	     "read as the CM's with the kernel's values"
else
	echo "--- tshark stderr"
	grep -v 'Running as user' "$t/tshark.err"
fi
exit $fail
