#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Expected qpio-pipeline results for a capture, computed independently.

    pipeline_flows.py CAPTURE RULES MAX_LEN

Reads a classic pcap file (Ethernet), applies the rules file with
first-match semantics, and prints the flows CSV qpio-pipeline writes with
--flows, then one line "counts rx=.. permitted=.. denied=.. no_match=..
not_ipv4=.. bad=.. oversize=..". Frames longer than MAX_LEN are dropped
by the input port (oversize) and never reach the pipeline.
"""
import ipaddress
import socket
import struct
import sys

PROTOS = {"tcp": 6, "udp": 17, "icmp": 1, "sctp": 132}


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


def key_of(frame):
    if len(frame) < 14:
        return "not_ipv4", None
    etype = struct.unpack("!H", frame[12:14])[0]
    off = 14
    if etype == 0x8100:
        if len(frame) < 18:
            return "not_ipv4", None
        etype = struct.unpack("!H", frame[16:18])[0]
        off = 18
    if etype != 0x0800:
        return "not_ipv4", None
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
    if frag == 0 and len(frame) >= off + ihl + 4 and proto in (6, 17, 132):
        sport, dport = struct.unpack("!HH", frame[off + ihl:off + ihl + 4])
    return "ipv4", (proto, src, sport, dst, dport)


def match(rules, k):
    proto, src, sport, dst, dport = k
    s = ipaddress.ip_address(src)
    d = ipaddress.ip_address(dst)
    for r in rules:
        action, p, sn, dn, sp, dp, lineno = r
        if p is not None and p != proto:
            continue
        if sn is not None and s not in sn:
            continue
        if dn is not None and d not in dn:
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
    pos = 24
    c = dict(rx=0, permitted=0, denied=0, no_match=0, not_ipv4=0, bad=0,
             oversize=0)
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
        if kind != "ipv4":
            c[kind] += 1
            continue
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
    for k in sorted(flows, key=lambda k: (k[0], k[1], k[2], k[3], k[4])):
        p, s, sp, d, dp = k
        n, b, line = flows[k]
        print("%d,%s,%d,%s,%d,%d,%d,%d" % (p, socket.inet_ntoa(s), sp,
              socket.inet_ntoa(d), dp, n, b, line))
    print("counts " + " ".join("%s=%d" % (x, c[x]) for x in
          ("rx", "permitted", "denied", "no_match", "not_ipv4", "bad",
           "oversize")))


main()
