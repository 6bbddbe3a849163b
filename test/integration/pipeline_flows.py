#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Expected qpio-pipeline results for a capture, computed independently.

    pipeline_flows.py CAPTURE RULES MAX_LEN

Reads a classic pcap file (Ethernet), applies the rules file with
first-match semantics (a rule with an IPv4 address matches IPv4 only, one
with an IPv6 address IPv6 only, one with both addresses any both), and
prints the flows CSV qpio-pipeline writes with --flows (IPv4 flows, then
IPv6), then one line "counts rx=.. permitted=.. denied=.. no_match=..
not_ip=.. bad=.. oversize=.. ipv6=..". Frames longer than MAX_LEN are
dropped by the input port (oversize) and never reach the pipeline. IPv6
extension headers are walked as RFC 8200 lays them out: hop-by-hop,
routing, destination options and fragment headers are 8-byte units after
the first 8, AH is 4-byte units after the first 8 (RFC 4302); at most 8.
"""
import ipaddress
import socket
import struct
import sys

PROTOS = {"tcp": 6, "udp": 17, "icmp": 1, "icmpv6": 58, "sctp": 132}
PORTS = (6, 17, 132)
EXT = (0, 43, 60, 44, 51)


def load_rules(path):
    rules = []
    for lineno, line in enumerate(open(path), 1):
        f = line.split("#", 1)[0].split()
        if not f:
            continue
        action, proto, src, dst, sport, dport = f

        def net(t):
            return None if t == "any" else ipaddress.ip_network(t)

        def ports(t):
            if t == "any":
                return (0, 65535)
            lo, _, hi = t.partition("-")
            return (int(lo), int(hi or lo))
        p = None if proto == "any" else PROTOS.get(proto, None)
        if p is None and proto != "any":
            p = int(proto)
        rules.append((action, p, net(src), net(dst), ports(sport),
                      ports(dport), lineno))
    return rules


def ports(frame, off, proto):
    if proto in PORTS and len(frame) >= off + 4:
        return struct.unpack("!HH", frame[off:off + 4])
    return 0, 0


def key4(frame, off):
    if len(frame) < off + 20:
        return "bad", None
    vihl = frame[off]
    ihl = (vihl & 0x0F) * 4
    if vihl >> 4 != 4 or ihl < 20 or len(frame) < off + ihl:
        return "bad", None
    proto = frame[off + 9]
    src = frame[off + 12:off + 16]
    dst = frame[off + 16:off + 20]
    frag = struct.unpack("!H", frame[off + 6:off + 8])[0] & 0x1FFF
    sport = dport = 0
    if frag == 0:
        sport, dport = ports(frame, off + ihl, proto)
    return "ipv4", (4, proto, src, sport, dst, dport)


def key6(frame, off):
    if len(frame) < off + 40 or frame[off] >> 4 != 6:
        return "bad", None
    src = frame[off + 8:off + 24]
    dst = frame[off + 24:off + 40]
    nh = frame[off + 6]
    off += 40
    n = 0
    while nh in EXT:
        if n == 8 or len(frame) < off + 8:
            return "bad", None
        n += 1
        if nh == 44:
            offset = struct.unpack("!H", frame[off + 2:off + 4])[0] >> 3
            if offset != 0:
                # RFC 8200 4.5: the first header of the fragmentable
                # part; an extension header hides the upper layer (44)
                proto = 44 if frame[off] in EXT else frame[off]
                return "ipv6", (6, proto, src, 0, dst, 0)
            size = 8
        elif nh == 51:
            size = (frame[off + 1] + 2) * 4
        else:
            size = (frame[off + 1] + 1) * 8
        if len(frame) < off + size:
            return "bad", None
        nh = frame[off]
        off += size
    sport, dport = ports(frame, off, nh)
    return "ipv6", (6, nh, src, sport, dst, dport)


def key_of(frame):
    if len(frame) < 14:
        return "not_ip", None
    etype = struct.unpack("!H", frame[12:14])[0]
    off = 14
    if etype == 0x8100:
        if len(frame) < 18:
            return "not_ip", None
        etype = struct.unpack("!H", frame[16:18])[0]
        off = 18
    if etype == 0x0800:
        return key4(frame, off)
    if etype == 0x86DD:
        return key6(frame, off)
    return "not_ip", None


def match(rules, k):
    fam, proto, src, sport, dst, dport = k
    s = ipaddress.ip_address(src)
    d = ipaddress.ip_address(dst)
    for r in rules:
        action, p, sn, dn, sp, dp, lineno = r
        if p is not None and p != proto:
            continue
        if sn is not None and (sn.version != fam or s not in sn):
            continue
        if dn is not None and (dn.version != fam or d not in dn):
            continue
        if not sp[0] <= sport <= sp[1] or not dp[0] <= dport <= dp[1]:
            continue
        return action, lineno
    return None, None


def main():
    cap, rules_path, max_len = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rules = load_rules(rules_path)
    data = open(cap, "rb").read()
    magic = data[:4]
    endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    linktype = struct.unpack(endian + "I", data[20:24])[0] & 0xFFFF
    if linktype != 1:
        sys.exit("pipeline_flows.py: %s: link type %d, not Ethernet (1): "
                 "qpio-pipeline reads Ethernet captures only" % (cap, linktype))
    pos = 24
    c = dict(rx=0, permitted=0, denied=0, no_match=0, not_ip=0, bad=0,
             oversize=0, ipv6=0)
    flows = {}
    while pos + 16 <= len(data):
        _, _, caplen, _ = struct.unpack(endian + "IIII", data[pos:pos + 16])
        frame = data[pos + 16:pos + 16 + caplen]
        pos += 16 + caplen
        if caplen > max_len:
            c["oversize"] += 1
            continue
        c["rx"] += 1
        kind, k = key_of(frame)
        if kind not in ("ipv4", "ipv6"):
            c[kind] += 1
            continue
        c["ipv6"] += kind == "ipv6"
        action, lineno = match(rules, k)
        if action is None:
            c["no_match"] += 1
        elif action == "deny":
            c["denied"] += 1
        else:
            c["permitted"] += 1
            f = flows.setdefault(k, [0, 0, lineno])
            f[0] += 1
            f[1] += len(frame)
    print("proto,src,sport,dst,dport,packets,bytes,rule_line")
    for k in sorted(flows):
        fam, p, s, sp, d, dp = k
        af = socket.AF_INET6 if fam == 6 else socket.AF_INET
        n, b, line = flows[k]
        print("%d,%s,%d,%s,%d,%d,%d,%d" % (p, socket.inet_ntop(af, s), sp,
              socket.inet_ntop(af, d), dp, n, b, line))
    print("counts " + " ".join("%s=%d" % (x, c[x]) for x in
          ("rx", "permitted", "denied", "no_match", "not_ip", "bad",
           "oversize", "ipv6")))


main()
