#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seeds and regression inputs of fuzz_wire_dev
(corpus/fuzz_wire_dev/seed-*, regress-*).

An input is 2 configuration bytes, then records: 4 control bytes, a
2-byte little-endian length and that many frame bytes (fuzz_wire_dev.c).
The frames here are whole RoCEv2 frames from 10.0.0.1 to 10.0.0.2 with
their checksums and ICRC right; the target fixes them up again anyway
(MAC, addresses, destination QP, PSN, keys), so the PSN and QPN fields
are 0 and the control bytes choose them.

  wire_dev_seeds.py CORPUS_DIR
"""
import os
import struct
import sys
import zlib

Q_RC, Q_UC, Q_UD, Q_ANY = 0, 1, 2, 3
MODE_TRAILER = 25

PEER = bytes([10, 0, 0, 1])
ME = bytes([10, 0, 0, 2])
PEER6 = bytes([0xfd] + [0] * 14 + [1])
ME6 = bytes([0xfd] + [0] * 14 + [2])

# the headers after the BTH of each opcode (IBA 9.2 Table 38, 9.3)
EXT = {0x00: 0, 0x01: 0, 0x02: 0, 0x03: 4, 0x04: 0, 0x05: 4, 0x06: 16,
       0x07: 0, 0x08: 0, 0x09: 4, 0x0a: 16, 0x0b: 20, 0x0c: 16, 0x0d: 4,
       0x0e: 0, 0x0f: 4, 0x10: 4, 0x11: 4, 0x12: 12, 0x13: 28, 0x14: 28,
       0x64: 8, 0x65: 12}


def icrc(l3, ipv6):
    """IBA Annex A17.3.3 over the masked headers (as test_soft_wire.c)."""
    b = bytearray(l3)
    if ipv6:
        b[0] |= 0x0f
        b[1] = b[2] = b[3] = 0xff
        b[7] = 0xff
        udp = 40
    else:
        b[1] = 0xff
        b[8] = 0xff
        b[10] = b[11] = 0xff
        udp = 20
    b[udp + 6] = b[udp + 7] = 0xff
    b[udp + 8 + 4] = 0xff
    return zlib.crc32(b'\xff' * 8 + bytes(b)) & 0xffffffff


def ip_cksum(h):
    s = sum(struct.unpack('!10H', h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def frame(opcode, ext=b'', payload=b'', ipv6=False, ackreq=False, se=False):
    """A RoCEv2 frame of opcode with the extension headers ext."""
    assert len(ext) == EXT[opcode & 0x1f if opcode < 0x40 else opcode], \
        hex(opcode)
    pad = (4 - len(payload) % 4) % 4
    bth = struct.pack('!BBHII', opcode, (0x80 if se else 0) | pad << 4,
                      0xffff, 0, 0x80000000 if ackreq else 0)
    l4 = bth + ext + payload + b'\0' * pad
    udp = struct.pack('!HHHH', 0xc001, 4791, 8 + len(l4) + 4, 0)
    if ipv6:
        ip = struct.pack('!IHBB', 6 << 28, 8 + len(l4) + 4, 17, 64) + \
            PEER6 + ME6
    else:
        ip = bytearray(struct.pack('!BBHHHBBH', 0x45, 0, 20 + 8 + len(l4) + 4,
                                   0, 0x4000, 64, 17, 0) + PEER + ME)
        ip[10:12] = struct.pack('!H', ip_cksum(bytes(ip)))
        ip = bytes(ip)
    l3 = ip + udp + l4
    eth = bytes(6) + bytes([2, 0, 0, 0, 0, 1]) + \
        struct.pack('!H', 0x86dd if ipv6 else 0x0800)
    return eth + l3 + struct.pack('<I', icrc(l3, ipv6))


def reth(va=64, rkey=0, dmalen=0):
    """va 64: the target MR's first byte; rkey 0: its R_Key; dmalen top
    bits 00: the packet's payload (+ the low 12 bits for a FIRST), 10:
    the payload, 01: modulo the MR's length, 11: as it is."""
    return struct.pack('!QII', va, rkey, dmalen)


def aeth(syn, msn=0):
    return struct.pack('!I', syn << 24 | msn)


def atomic(va=2, rkey=0, swap_add=5, compare=0):
    """va 2: the target MR's first 8 bytes (8 x va - 16 into it)."""
    return struct.pack('!QIQQ', va, rkey, swap_add, compare)


def rec(f, q=Q_RC, psn=0, action=0, arg=0, ipv6=False, mode=0):
    """One record: control bytes (QP, IPv6, mode; PSN; action; its
    argument) and the frame."""
    c0 = q | (4 if ipv6 else 0) | mode << 3
    return bytes([c0, psn, action, arg]) + struct.pack('<H', len(f)) + f


def data(n, seed=1):
    return bytes((seed + 7 * i) & 0xff for i in range(n))


SEEDS = {}
MTU = 1024

# RC SEND FIRST / MIDDLE / LAST (2100 bytes), and SEND ONLY with immediate
SEEDS['rc-send-first-middle-last'] = bytes([0, 0]) + \
    rec(frame(0x00, payload=data(MTU))) + \
    rec(frame(0x01, payload=data(MTU, 2))) + \
    rec(frame(0x02, payload=data(52, 3), ackreq=True)) + \
    rec(frame(0x05, ext=struct.pack('!I', 0xdeadbeef), payload=data(33),
              ackreq=True, se=True))
# RC WRITE ONLY, WRITE FIRST + LAST with immediate (2 packets)
SEEDS['rc-write-reth'] = bytes([0, 0]) + \
    rec(frame(0x0a, ext=reth(), payload=data(200), ackreq=True)) + \
    rec(frame(0x06, ext=reth(dmalen=100), payload=data(MTU))) + \
    rec(frame(0x09, ext=struct.pack('!I', 7), payload=data(100),
              ackreq=True))
# RC READ request of 3000 bytes (3 responses), then again (duplicate)
SEEDS['rc-read-request'] = bytes([0, 0]) + \
    rec(frame(0x0c, ext=reth(dmalen=3000), ackreq=True)) + \
    rec(frame(0x0c, ext=reth(dmalen=3000), ackreq=True), psn=0xc0 | 13)
# RC CMP_SWAP, FETCH_ADD, and the FETCH_ADD again (the duplicate's answer)
SEEDS['rc-atomics'] = bytes([0, 0]) + \
    rec(frame(0x13, ext=atomic(swap_add=9, compare=0), ackreq=True)) + \
    rec(frame(0x14, ext=atomic(swap_add=3), ackreq=True)) + \
    rec(frame(0x14, ext=atomic(swap_add=3), ackreq=True), psn=0xc0 | 15)
# the RC requester: a SEND posted, ACKed; a SEND posted, NAKed (PSN
# sequence error: sent again), then ACKed; a SEND posted, RNR NAKed
SEEDS['rc-ack-nak'] = bytes([0, 0]) + \
    rec(frame(0x11, ext=aeth(0x1f, 1)), action=0xc0, arg=20) + \
    rec(frame(0x11, ext=aeth(0x60, 1)), action=0xc0, arg=30) + \
    rec(frame(0x11, ext=aeth(0x1f, 2))) + \
    rec(frame(0x11, ext=aeth(0x21, 2)), action=0xc0, arg=40) + \
    rec(frame(0x11, ext=aeth(0x1f, 3)))
# READ posted (900 bytes: one response), then READ RESPONSE ONLY; READ of
# 2250 bytes (3 responses) FIRST, MIDDLE, LAST
SEEDS['rc-read-responses'] = bytes([0, 0]) + \
    rec(frame(0x10, ext=aeth(0x1f, 1), payload=data(900)), action=0xd0,
        arg=100) + \
    rec(frame(0x0d, ext=aeth(0x1f, 2), payload=data(MTU)), action=0xd0,
        arg=250) + \
    rec(frame(0x0e, payload=data(MTU)), psn=1 << 3) + \
    rec(frame(0x0f, ext=aeth(0x1f, 2), payload=data(202)), psn=2 << 3)
# CMP_SWAP posted, its ATOMIC ACK; a remote access NAK of a WRITE
SEEDS['rc-atomic-ack-and-nak'] = bytes([0, 0]) + \
    rec(frame(0x12, ext=aeth(0x1f, 1) + struct.pack('!Q', 42)),
        action=0xd8, arg=3) + \
    rec(frame(0x11, ext=aeth(0x62, 1)), action=0xc8, arg=10)
# UC SEND FIRST + LAST, WRITE ONLY, SEND ONLY with immediate
SEEDS['uc-send-write'] = bytes([0, 0]) + \
    rec(frame(0x20, payload=data(MTU)), q=Q_UC) + \
    rec(frame(0x22, payload=data(64)), q=Q_UC) + \
    rec(frame(0x2a, ext=reth(), payload=data(300)), q=Q_UC) + \
    rec(frame(0x25, ext=struct.pack('!I', 5), payload=data(16)), q=Q_UC)
# UC: a MIDDLE without its FIRST (a gap), then a whole message
SEEDS['uc-gap'] = bytes([0, 0]) + \
    rec(frame(0x20, payload=data(MTU)), q=Q_UC) + \
    rec(frame(0x21, payload=data(MTU)), q=Q_UC, psn=0xc0 | 18) + \
    rec(frame(0x24, payload=data(80)), q=Q_UC)
# UD SEND ONLY (IPv4), with immediate (IPv6)
SEEDS['ud-send'] = bytes([0, 0]) + \
    rec(frame(0x64, ext=struct.pack('!II', 0x11111111, 0xabce0),
              payload=data(100)), q=Q_UD) + \
    rec(frame(0x65, ext=struct.pack('!III', 0x11111111, 0xabce0, 9),
              payload=data(57), ipv6=True), q=Q_UD, ipv6=True)
# an ARP request for 10.0.0.2, and a UD datagram with Ethernet padding
SEEDS['arp-and-padding'] = bytes([0, 0]) + \
    rec(bytes([0xff] * 6 + [2, 0, 0, 0, 0, 1, 8, 6, 0, 1, 8, 0, 6, 4, 0, 1,
               2, 0, 0, 0, 0, 1]) + PEER + bytes(6) + ME + bytes(18),
        q=Q_ANY, mode=31) + \
    rec(frame(0x64, ext=struct.pack('!II', 0x11111111, 0xabce0),
              payload=data(3)), q=Q_UD, mode=MODE_TRAILER, arg=0x0c)
# PSNs near the 24-bit wrap: RC SENDs across it
SEEDS['rc-psn-wrap'] = bytes([1, 0]) + \
    b''.join(rec(frame(0x04, payload=data(10, i), ackreq=True))
             for i in range(6))

# RC WRITE with immediate of 2 packets, no receive posted: RNR NAK at its
# first PSN; the receives posted, the WRITE again whole
SEEDS['rc-write-imm-rnr'] = bytes([0xe0, 16]) + \
    rec(frame(0x06, ext=reth(dmalen=100), payload=data(MTU))) + \
    rec(frame(0x09, ext=struct.pack('!I', 7), payload=data(100),
              ackreq=True)) + \
    rec(frame(0x06, ext=reth(dmalen=100), payload=data(MTU)), action=0xf8) + \
    rec(frame(0x09, ext=struct.pack('!I', 7), payload=data(100),
              ackreq=True))
# an RC SEND that finds no receive (RNR NAK), then again with one
SEEDS['rc-send-rnr'] = bytes([0, 0x90]) + \
    rec(frame(0x04, payload=data(40), ackreq=True)) + \
    rec(frame(0x04, payload=data(40), ackreq=True), action=0xf8)
# an RC READ and an atomic while a SEND is open: out of sequence, NAKed
SEEDS['rc-read-inside-send'] = bytes([0, 0]) + \
    rec(frame(0x00, payload=data(MTU))) + \
    rec(frame(0x0c, ext=reth(dmalen=100), ackreq=True)) + \
    rec(frame(0x00, payload=data(MTU))) + \
    rec(frame(0x14, ext=atomic(), ackreq=True))
# local errors: a receive with an lkey that fails (every fourth from the
# third), an RC SEND with one; an ACK timeout of 8 us and no retry
SEEDS['rc-local-errors-timeout'] = bytes([0x02, 0x20]) + \
    b''.join(rec(frame(0x04, payload=data(20, i), ackreq=True))
             for i in range(3)) + \
    rec(frame(0x04, payload=data(20), ackreq=True), action=0xc6, arg=4) + \
    rec(frame(0x04, payload=data(20), ackreq=True), action=0xc0, arg=4) + \
    rec(frame(0x04, payload=data(20), ackreq=True))

# Regression inputs: a receive a SEND had taken was lost (never
# completed, not even by the flush) when the QP went to ERR with the
# message open (RC and UC), when a UC FIRST came at the expected PSN with
# a message open, and when UC dropped a message for a packet of the
# wrong kind.
REGRESS = {}
REGRESS['rc-send-open-at-err'] = bytes([0, 0]) + \
    rec(frame(0x00, payload=data(MTU)))
REGRESS['uc-send-open-at-err'] = bytes([0, 0]) + \
    rec(frame(0x20, payload=data(MTU)), q=Q_UC)
REGRESS['uc-first-while-open'] = bytes([0, 0]) + \
    rec(frame(0x20, payload=data(MTU)), q=Q_UC) + \
    rec(frame(0x24, payload=data(100)), q=Q_UC) + \
    rec(frame(0x24, payload=data(100)), q=Q_UC)
REGRESS['uc-wrong-kind-while-open'] = bytes([0, 0]) + \
    rec(frame(0x20, payload=data(MTU)), q=Q_UC) + \
    rec(frame(0x27, payload=data(MTU)), q=Q_UC) + \
    rec(frame(0x24, payload=data(100)), q=Q_UC)

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for prefix, inputs in (('seed-', SEEDS), ('regress-', REGRESS)):
    for name, b in inputs.items():
        with open(os.path.join(out, prefix + name), 'wb') as fh:
            fh.write(b)
