#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Send the frames of the pipeline-live test on an interface.

    pipeline_live_send.py IFACE

Writes 31 Ethernet frames with an AF_PACKET socket (needs CAP_NET_RAW),
flows interleaved, nothing else:

    7  UDP      10.9.0.2:5000  -> 10.9.0.1:6000   106 bytes
    4  UDP      10.9.0.3:5353  -> 10.9.0.1:53      62 bytes
    5  TCP SYN  10.9.0.2:40000 -> 10.9.0.1:80      54 bytes
    3  TCP SYN  10.9.0.4:40001 -> 10.9.0.1:443     54 bytes
    2  TCP SYN  10.9.0.2:40002 -> 10.9.0.1:22      54 bytes
    2  ARP requests                                42 bytes
    1  IPv4 GRE 10.9.0.5 -> 10.9.0.1               60 bytes
    1  IPv4 header with IHL 4 (malformed)          60 bytes
    3  UDP over IPv6 with a hop-by-hop options header
                [fd00:9::2]:5001 -> [fd00:9::1]:6001   90 bytes
    2  TCP SYN over IPv6 [fd00:9::2]:40003 -> [fd00:9::1]:22   74 bytes
    1  ICMPv6 echo request fd00:9::2 -> fd00:9::1      62 bytes
"""
import socket
import struct
import sys

DST_MAC = bytes.fromhex("020000000001")
SRC_MAC = bytes.fromhex("020000000002")


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(proto, src, dst, l4):
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0x4000, 64,
                    proto, 0, s, d)
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return DST_MAC + SRC_MAC + b"\x08\x00" + h + l4


def l4_csum(proto, src, dst, l4):
    ph = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack(
        "!BBH", 0, proto, len(l4))
    return csum(ph + l4)


def udp(src, sport, dst, dport, paylen):
    pay = bytes(range(paylen))
    u = struct.pack("!HHHH", sport, dport, 8 + paylen, 0) + pay
    c = l4_csum(17, src, dst, u) or 0xFFFF
    u = u[:6] + struct.pack("!H", c) + u[8:]
    return ipv4(17, src, dst, u)


def tcp_syn(src, sport, dst, dport):
    t = struct.pack("!HHIIBBHHH", sport, dport, 1000, 0, 5 << 4, 0x02,
                    64240, 0, 0)
    t = t[:16] + struct.pack("!H", l4_csum(6, src, dst, t)) + t[18:]
    return ipv4(6, src, dst, t)


def arp(target):
    a = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, SRC_MAC,
                    socket.inet_aton("10.9.0.2"), b"\0" * 6,
                    socket.inet_aton(target))
    return b"\xff" * 6 + SRC_MAC + b"\x08\x06" + a


def ipv6(nh, l4, ext=b""):
    s = socket.inet_pton(socket.AF_INET6, "fd00:9::2")
    d = socket.inet_pton(socket.AF_INET6, "fd00:9::1")
    h = struct.pack("!IHBB16s16s", 6 << 28, len(ext) + len(l4), nh, 64, s, d)
    return DST_MAC + SRC_MAC + b"\x86\xdd" + h + ext + l4


def l6_csum(proto, l4):
    ph = (socket.inet_pton(socket.AF_INET6, "fd00:9::2") +
          socket.inet_pton(socket.AF_INET6, "fd00:9::1") +
          struct.pack("!IxxxB", len(l4), proto))
    return csum(ph + l4)


def udp6_hbh(sport, dport, paylen):
    pay = bytes(range(paylen))
    u = struct.pack("!HHHH", sport, dport, 8 + paylen, 0) + pay
    u = u[:6] + struct.pack("!H", l6_csum(17, u) or 0xFFFF) + u[8:]
    # next header UDP, length 0 (8 bytes), a PadN option of 4 bytes
    hbh = struct.pack("!BBBB4x", 17, 0, 1, 4)
    return ipv6(0, u, hbh)


def tcp6_syn(sport, dport):
    t = struct.pack("!HHIIBBHHH", sport, dport, 1000, 0, 5 << 4, 0x02,
                    64240, 0, 0)
    t = t[:16] + struct.pack("!H", l6_csum(6, t)) + t[18:]
    return ipv6(6, t)


def echo6():
    e = struct.pack("!BBHHH", 128, 0, 0, 1, 1)
    e = e[:2] + struct.pack("!H", l6_csum(58, e)) + e[4:]
    return ipv6(58, e)


def gre():
    return ipv4(47, "10.9.0.5", "10.9.0.1", struct.pack("!HH", 0, 0x0800) +
                b"\0" * 22)


def bad_ihl():
    h = struct.pack("!BBHHHBBH4s4s", 0x44, 0, 46, 1, 0, 64, 17, 0,
                    socket.inet_aton("10.9.0.6"), socket.inet_aton("10.9.0.1"))
    return DST_MAC + SRC_MAC + b"\x08\x00" + h + b"\0" * 26


def frames():
    groups = [
        [udp("10.9.0.2", 5000, "10.9.0.1", 6000, 64)] * 7,
        [udp("10.9.0.3", 5353, "10.9.0.1", 53, 20)] * 4,
        [tcp_syn("10.9.0.2", 40000, "10.9.0.1", 80)] * 5,
        [tcp_syn("10.9.0.4", 40001, "10.9.0.1", 443)] * 3,
        [tcp_syn("10.9.0.2", 40002, "10.9.0.1", 22)] * 2,
        [arp("10.9.0.1"), arp("10.9.0.7")],
        [gre()],
        [bad_ihl()],
        [udp6_hbh(5001, 6001, 20)] * 3,
        [tcp6_syn(40003, 22)] * 2,
        [echo6()],
    ]
    out = []
    while any(groups):
        for g in groups:
            if g:
                out.append(g.pop(0))
    return out


def main():
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((sys.argv[1], 0))
    n = 0
    for f in frames():
        if s.send(f) != len(f):
            sys.exit("short send of a %d-byte frame" % len(f))
        n += 1
    print("sent %d frames on %s" % (n, sys.argv[1]))


main()
