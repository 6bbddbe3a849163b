#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Read pcapng files block by block (section header, interface
description, enhanced packet blocks) and classic pcap files, to check the
captures qpio writes.

    pcapng_check.py snap CAP.pcapng REF.pcap SNAPLEN DIR IFNAME
        every frame of REF, in order, in CAP: caplen min(len, SNAPLEN),
        the original length, the first caplen bytes; DIR (in|out) in the
        flags; one Ethernet interface IFNAME with that snaplen.
    pcapng_check.py count FILE.pcapng...
        print the number of packets of all files (each must parse).
"""
import struct
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def read_pcapng(path):
    data = open(path, "rb").read()
    off, idbs, pkts = 0, [], []
    if data[:4] != b"\x0a\x0d\x0d\x0a":
        fail(f"{path}: no section header block")
    while off < len(data):
        if len(data) - off < 12:
            fail(f"{path}: truncated block at {off}")
        btype, blen = struct.unpack_from("<II", data, off)
        if blen < 12 or blen % 4 or off + blen > len(data):
            fail(f"{path}: bad block length {blen} at {off}")
        if struct.unpack_from("<I", data, off + blen - 4)[0] != blen:
            fail(f"{path}: trailing length differs at {off}")
        body = data[off + 8:off + blen - 4]
        if btype == 1:
            link, _, snap = struct.unpack_from("<HHI", body, 0)
            opts = parse_opts(body[8:])
            idbs.append({"linktype": link, "snaplen": snap,
                         "name": opts.get(2, b"").decode(),
                         "tsresol": opts.get(9, b"\x06")[0]})
        elif btype == 6:
            ifid, _, _, cap, orig = struct.unpack_from("<IIIII", body, 0)
            frame = body[20:20 + cap]
            opts = parse_opts(body[20 + ((cap + 3) & ~3):])
            flags = struct.unpack("<I", opts[2])[0] if 2 in opts else 0
            pkts.append({"if": ifid, "caplen": cap, "len": orig,
                         "data": frame, "dir": flags & 3})
        off += blen
    return idbs, pkts


def parse_opts(b):
    opts, off = {}, 0
    while off + 4 <= len(b):
        code, length = struct.unpack_from("<HH", b, off)
        if code == 0:
            break
        opts[code] = b[off + 4:off + 4 + length]
        off += 4 + ((length + 3) & ~3)
    return opts


def read_pcap(path):
    data = open(path, "rb").read()
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic not in (0xa1b2c3d4, 0xa1b23c4d):
        fail(f"{path}: not a little-endian pcap file")
    off, pkts = 24, []
    while off + 16 <= len(data):
        _, _, cap, orig = struct.unpack_from("<IIII", data, off)
        pkts.append({"len": orig, "data": data[off + 16:off + 16 + cap]})
        off += 16 + cap
    return pkts


def main():
    if sys.argv[1] == "count":
        total = 0
        for p in sys.argv[2:]:
            idbs, pkts = read_pcapng(p)
            if len(idbs) != 1:
                fail(f"{p}: {len(idbs)} interface blocks, want 1")
            if any(x["if"] != 0 for x in pkts):
                fail(f"{p}: a packet names an undescribed interface")
            total += len(pkts)
        print(total)
        return
    cap_path, ref_path, snaplen, want_dir, ifname = sys.argv[2:7]
    snaplen = int(snaplen)
    idbs, pkts = read_pcapng(cap_path)
    if idbs != [{"linktype": 1, "snaplen": snaplen, "name": ifname,
                 "tsresol": 9}]:
        fail(f"{cap_path}: interface blocks {idbs}")
    ref = read_pcap(ref_path)
    if len(pkts) != len(ref):
        fail(f"{cap_path}: {len(pkts)} packets, {ref_path} has {len(ref)}")
    d = {"in": 1, "out": 2}[want_dir]
    for i, (p, r) in enumerate(zip(pkts, ref)):
        want_cap = min(r["len"], snaplen)
        if p["if"] != 0 or p["dir"] != d or p["len"] != r["len"] or \
                p["caplen"] != want_cap or p["data"] != r["data"][:want_cap]:
            fail(f"{cap_path}: packet {i + 1}: if {p['if']} dir {p['dir']} "
                 f"len {p['len']}/{r['len']} caplen {p['caplen']}/{want_cap}"
                 f" bytes equal {p['data'] == r['data'][:want_cap]}")
    print(f"{cap_path}: {len(pkts)} packets, snaplen {snaplen}, equal to "
          f"{ref_path}")


if __name__ == "__main__":
    main()
