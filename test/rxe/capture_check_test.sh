#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# test/rxe/capture_check.sh on the host, without a VM: its usage
# refusals, a guest that left no capture, and the perftest rules (every
# UDP 4791 frame decoded as InfiniBand, none with an error) on captures
# written here: one well-formed RoCEv2 UD SEND passes; the same frame cut
# inside its BTH, that frame followed by a record cut short, a capture
# with no RoCE frame at all, and a file that is not a capture each fail,
# with the rule that failed; the rxe-wire and rxe-cm rules run all their
# filters over the good one and fail it by their counts.
#
#   test/rxe/capture_check_test.sh
#
# Exit status: 0 every case as expected, 1 one was not, 77 tshark or
# python3 missing.
set -u
here="$(cd "$(dirname "$0")" && pwd -P)"
check=$here/capture_check.sh
command -v tshark >/dev/null || { echo "SKIP: tshark not installed (usertools/install-deps.sh)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
work=$(mktemp -d /tmp/qpio-capture-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
bad=0

# expect NAME STATUS PATTERN DIR...: capture_check.sh exits STATUS and
# prints a line matching PATTERN (grep -E)
expect() {
	local name=$1 want=$2 pat=$3 got
	shift 3
	"$check" "$@" > "$work/out" 2>&1
	got=$?
	if [ "$got" != "$want" ] || ! grep -Eq -- "$pat" "$work/out"; then
		echo "FAIL: $name: exit $got (want $want), output:"
		sed 's/^/   /' "$work/out"
		echo "   (want a line matching: $pat)"
		bad=1
	else
		echo "ok: $name: exit $got, $(grep -E -m1 -- "$pat" "$work/out")"
	fi
}

# absent NAME PATTERN: the output of the last expect has no line
# matching PATTERN
absent() {
	if grep -Eq -- "$2" "$work/out"; then
		echo "FAIL: $1: a line matches '$2':"
		grep -E -- "$2" "$work/out" | sed 's/^/   /'
		bad=1
	else
		echo "ok: $1: no line matches '$2'"
	fi
}

# One Ethernet/IPv4/UDP 4791/BTH/DETH frame (a UD SEND only to QP 0x11
# from QP 0x12, 8 bytes of payload, an ICRC), in a pcap of its own; CUT
# keeps only the first CUT bytes of the frame (0: all of it); TAIL 1
# adds a second record cut short in the file (its header says 100
# bytes, 10 follow).
roce_pcap() {
	python3 - "$1" "$2" "${3:-0}" <<'PY'
import struct, sys, zlib
path, cut, tail = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
payload = b"qpio-cap"
bth = struct.pack("!BBHI", 0x64, 0x00, 0xffff, 0x11) + struct.pack("!I", 7)
deth = struct.pack("!II", 0x11111111, 0x12)
icrc = struct.pack("<I", zlib.crc32(bth + deth + payload))
udp_len = 8 + len(bth) + len(deth) + len(payload) + 4
udp = struct.pack("!HHHH", 0xc000, 4791, udp_len, 0)
ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 1,
                           0x4000, 64, 17, 0, bytes([10, 0, 77, 2]),
                           bytes([10, 0, 77, 1])))
s = sum(struct.unpack("!10H", bytes(ip)))
s = (s & 0xffff) + (s >> 16)
struct.pack_into("!H", ip, 10, ~s & 0xffff)
eth = bytes.fromhex("020000000001" "020000000002" "0800")
frame = eth + bytes(ip) + udp + bth + deth + payload + icrc
if cut:
    frame = frame[:cut]
with open(path, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    f.write(struct.pack("<IIII", 1, 0, len(frame), len(frame)))
    f.write(frame)
    if tail:
        f.write(struct.pack("<IIII", 2, 0, 100, 100) + frame[:10])
PY
}

expect "no argument" 2 "^usage: " 
expect "not a directory" 2 "^usage: " "$work/none"
mkdir "$work/empty"
expect "no capture-check" 2 "names no suite \(want wire, perftest or cm\): ''" "$work/empty"
mkdir "$work/bogus"
echo bogus > "$work/bogus/capture-check"
expect "unknown suite" 2 "names no suite .*'bogus'" "$work/bogus"
mkdir "$work/nocap"
echo wire > "$work/nocap/capture-check"
echo "0 packets captured" > "$work/nocap/tcpdump.log"
expect "no capture left" 1 "FAIL: the guest left no capture" "$work/nocap"
expect "no capture left, tcpdump's words" 1 "tcpdump: 0 packets captured" "$work/nocap"

mkdir "$work/good"
echo perftest > "$work/good/capture-check"
roce_pcap "$work/good/wire.pcap" 0 || { echo "FAIL: python3 could not write a capture"; exit 1; }
expect "one RoCEv2 UD SEND" 0 "capture: 1 UDP 4791 frames, 1 decoded as InfiniBand, 0 with errors" "$work/good"
expect "one RoCEv2 UD SEND, its opcode" 0 "^ +1 10\.0\.77\.2 100$" "$work/good"
expect "one RoCEv2 UD SEND, the verdict" 0 "done: PASS" "$work/good"

# the rxe-wire and rxe-cm rules over that capture: each of their
# display filters runs (none makes tshark fail), and the counts they
# want are not there
mkdir "$work/wire1" "$work/cm1"
cp "$work/good/wire.pcap" "$work/wire1/"
cp "$work/good/wire.pcap" "$work/cm1/"
echo wire > "$work/wire1/capture-check"
echo cm > "$work/cm1/capture-check"
expect "rxe-wire's rules on one datagram" 1 "capture: 1 UDP 4791 frames, 1 decoded as InfiniBand \(1 UD SEND only\), 0 ARP, 0 malformed \(want 1, 2800 UD, >= 2, 0\)" "$work/wire1"
absent "rxe-wire's filters all run" "exited"
expect "rxe-wire's VLAN rule" 1 "capture: 0 RoCE frames on VLAN 100 \(0 from qpio with PCP 3, 0 from rxe; want >= 800 each\)" "$work/wire1"
expect "rxe-cm's rules on one datagram" 1 "FAIL: CM attribute 0x0010: 0 in the capture, want at least 11" "$work/cm1"
absent "rxe-cm's filters all run" "exited"
expect "rxe-cm's REJ rule" 1 "REJ: 0 invalid MTU from qpio, invalid service ID 0 from qpio and 0 from the kernel, 0 stale connection from the kernel, 0 of other reasons" "$work/cm1"

# cut 6 bytes into the BTH (14 + 20 + 8 + 6)
mkdir "$work/cut"
echo perftest > "$work/cut/capture-check"
roce_pcap "$work/cut/wire.pcap" 48
expect "a BTH cut short" 1 "capture: 1 UDP 4791 frames, [01] decoded as InfiniBand, 1 with errors" "$work/cut"
expect "a BTH cut short, the rule" 1 "FAIL: tshark: the capture is not all well-formed RoCE frames" "$work/cut"

# a good frame, then a record cut short: the rules hold for what tshark
# read, but tshark's failure fails the check
mkdir "$work/tail"
echo perftest > "$work/tail/capture-check"
roce_pcap "$work/tail/wire.pcap" 0 1
expect "a record cut short after a good frame" 1 "FAIL: tshark -o infiniband.identify_payload:FALSE .* exited 2" "$work/tail"
expect "a record cut short, tshark's words" 1 "tshark: .*cut short in the middle of a packet" "$work/tail"

# the shipped capture of the Linux stack: no UDP 4791 frame at all
if [ -r "$here/../../data/linux-stack.pcap" ]; then
	mkdir "$work/noroce"
	echo perftest > "$work/noroce/capture-check"
	cp "$here/../../data/linux-stack.pcap" "$work/noroce/wire.pcap"
	expect "no RoCE frame" 1 "capture: 0 UDP 4791 frames, 0 decoded as InfiniBand, 0 with errors" "$work/noroce"
else
	echo "FAIL: data/linux-stack.pcap is missing from the tree"
	bad=1
fi

mkdir "$work/notpcap"
echo cm > "$work/notpcap/capture-check"
printf 'not a capture\n' > "$work/notpcap/wire.pcap"
expect "not a capture" 1 "FAIL: tshark cannot read the capture " "$work/notpcap"
expect "not a capture, tshark's words" 1 "tshark: .*isn't a capture file in a format TShark understands" "$work/notpcap"

[ "$bad" = 0 ] && echo "PASS: capture_check.sh: refusals, a missing capture, one good and four bad captures"
exit "$bad"
