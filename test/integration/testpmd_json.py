#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check a qpio-testpmd --json file against the qpio-testpmd/1 schema
(doc/guides/testpmd_app_ug/index.rst) and against the text statistics of
the same run.

    testpmd_json.py JSON_FILE STDOUT_FILE NB_PORTS WANT_PERIODIC_MIN [CSV]

With CSV (a --csv file of the same run), its rows must be the periodic
records, field for field.
"""
import csv
import json
import re
import sys

SCHEMA = "qpio-testpmd/1"
PERIODIC_PORT = ["port", "rx_packets", "rx_bytes", "rx_missed", "rx_errors",
                 "rx_nombuf", "tx_packets", "tx_bytes", "tx_errors",
                 "rx_pps", "tx_pps", "rx_bps", "tx_bps"]
FINAL_COUNTS = ["rx_packets", "rx_dropped", "rx_total", "rx_nombuf",
                "rx_bytes", "tx_packets", "tx_dropped", "tx_total",
                "tx_retries", "tx_bytes", "rx_bps", "tx_bps"]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check_uint(rec, key, where):
    v = rec.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        fail(f"{where}: {key} = {v!r}, want an unsigned integer")


def check_keys(obj, want, optional, where):
    keys = set(obj)
    missing = set(want) - keys
    extra = keys - set(want) - set(optional)
    if missing or extra:
        fail(f"{where}: missing {sorted(missing)}, unexpected {sorted(extra)}")


def check_xstats(port, where):
    if "xstats" not in port:
        return
    xs = port["xstats"]
    if not isinstance(xs, dict) or not xs:
        fail(f"{where}: xstats must be a non-empty object")
    for k in xs:
        check_uint(xs, k, f"{where} xstats")


def check_schema(records, nb_ports):
    kinds = [r.get("record") for r in records]
    if kinds.count("final") != 1 or kinds.count("exit") != 1 or \
            kinds[-1] != "exit" or kinds[-2] != "final":
        fail(f"records {kinds}: want periodic..., final, exit")
    for i, r in enumerate(records):
        where = f"record {i} ({r.get('record')})"
        if r.get("schema") != SCHEMA:
            fail(f"{where}: schema {r.get('schema')!r}, want {SCHEMA}")
        kind = r["record"]
        if kind == "exit":
            check_keys(r, ["schema", "record", "mbufs_not_returned",
                           "exit_status"], [], where)
            check_uint(r, "mbufs_not_returned", where)
            if not isinstance(r["exit_status"], int):
                fail(f"{where}: exit_status not an integer")
            continue
        if kind == "periodic":
            check_keys(r, ["schema", "record", "time_s", "ports"], [], where)
        elif kind == "final":
            check_keys(r, ["schema", "record", "time_s", "ports", "total",
                           "throughput_mpps"], [], where)
            check_keys(r["total"], FINAL_COUNTS, [], where + " total")
            for k in FINAL_COUNTS:
                check_uint(r["total"], k, where + " total")
        else:
            fail(f"{where}: unknown record kind")
        if not isinstance(r["time_s"], (int, float)) or r["time_s"] < 0:
            fail(f"{where}: time_s {r['time_s']!r}")
        if len(r["ports"]) != nb_ports:
            fail(f"{where}: {len(r['ports'])} ports, want {nb_ports}")
        for n, p in enumerate(r["ports"]):
            pw = f"{where} port {n}"
            want = PERIODIC_PORT if kind == "periodic" else \
                ["port"] + FINAL_COUNTS
            check_keys(p, want, ["xstats"], pw)
            for k in want:
                check_uint(p, k, pw)
            if p["port"] != n:
                fail(f"{pw}: port id {p['port']}")
            check_xstats(p, pw)


def text_periodic(out):
    """Periodic blocks of the text output, in order."""
    blocks = []
    pat = re.compile(
        r"NIC statistics for port (\d+) +#+\n"
        r"  RX-packets: (\d+) +RX-missed: (\d+) +RX-bytes: +(\d+)\n"
        r"  RX-errors: (\d+)\n"
        r"  RX-nombuf: +(\d+) *\n"
        r"  TX-packets: (\d+) +TX-errors: (\d+) +TX-bytes: +(\d+)\n\n"
        r"  Throughput \(since last show\)\n"
        r"  Rx-pps: +(\d+) +Rx-bps: +(\d+)\n"
        r"  Tx-pps: +(\d+) +Tx-bps: +(\d+)\n")
    keys = ["port", "rx_packets", "rx_missed", "rx_bytes", "rx_errors",
            "rx_nombuf", "tx_packets", "tx_errors", "tx_bytes", "rx_pps",
            "rx_bps", "tx_pps", "tx_bps"]
    for m in pat.finditer(out):
        blocks.append(dict(zip(keys, map(int, m.groups()))))
    return blocks


def text_final(out, nb_ports):
    pat = re.compile(
        r"  RX-packets: (\d+) +RX-dropped: (\d+) +RX-total: (\d+)\n"
        r"  RX-nombuf: +(\d+) +Rx-bps: +(\d+)\n"
        r"  TX-packets: (\d+) +TX-dropped: (\d+) +TX-total: (\d+)\n"
        r"  TX-retries: (\d+) +Tx-bps: +(\d+)\n")
    keys = ["rx_packets", "rx_dropped", "rx_total", "rx_nombuf", "rx_bps",
            "tx_packets", "tx_dropped", "tx_total", "tx_retries", "tx_bps"]
    found = [dict(zip(keys, map(int, m.groups())))
             for m in pat.finditer(out)]
    if len(found) != nb_ports + 1:
        fail(f"text: {len(found)} forward statistics blocks, "
             f"want {nb_ports + 1}")
    m = re.search(r"^Throughput: (\d+\.\d{3}) Mpps \((\d+) packets in "
                  r"(\d+\.\d{3}) s\)$", out, re.M)
    if m is None:
        fail("text: no throughput line")
    return found[:nb_ports], found[nb_ports], m


def check_csv(path, periodic):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    want = [["schema", "time_s"] + PERIODIC_PORT]
    with open(path) as f:
        header = f.readline().strip().split(",")
    if header != want[0]:
        fail(f"csv header {header}")
    flat = [(r["time_s"], p) for r in periodic for p in r["ports"]]
    if len(rows) != len(flat):
        fail(f"csv: {len(rows)} rows, {len(flat)} port periods in json")
    for i, (row, (t, p)) in enumerate(zip(rows, flat)):
        if row["schema"] != SCHEMA or abs(float(row["time_s"]) - t) > 1e-6:
            fail(f"csv row {i}: schema/time {row['schema']} {row['time_s']}")
        for k in PERIODIC_PORT:
            if int(row[k]) != p[k]:
                fail(f"csv row {i}: {k} {row[k]} json {p[k]}")
    print(f"csv: {len(rows)} rows equal the periodic records")


def main():
    path, out_path, nb_ports, want_periodic = sys.argv[1:5]
    nb_ports, want_periodic = int(nb_ports), int(want_periodic)
    with open(path) as f:
        lines = f.read().splitlines()
    records = [json.loads(line) for line in lines]
    check_schema(records, nb_ports)
    with open(out_path) as f:
        out = f.read()

    periodic = [r for r in records if r["record"] == "periodic"]
    blocks = text_periodic(out)
    if len(periodic) < want_periodic:
        fail(f"{len(periodic)} periodic records, want >= {want_periodic}")
    if len(blocks) != len(periodic) * nb_ports:
        fail(f"{len(blocks)} text blocks for {len(periodic)} records")
    for i, r in enumerate(periodic):
        for p in r["ports"]:
            t = blocks[i * nb_ports + p["port"]]
            for k, v in t.items():
                if p[k] != v:
                    fail(f"periodic {i} port {p['port']}: {k} json {p[k]} "
                         f"text {v}")
            if "xstats" in p:
                for name, val in p["xstats"].items():
                    line = f"\n{name}: {val}\n"
                    if val != 0 and line not in out:
                        fail(f"periodic {i}: xstat {name}={val} not in text")

    fin = next(r for r in records if r["record"] == "final")
    ports, total, thr = text_final(out, nb_ports)
    for n, t in enumerate(ports):
        for k, v in t.items():
            if fin["ports"][n][k] != v:
                fail(f"final port {n}: {k} json {fin['ports'][n][k]} "
                     f"text {v}")
    for k, v in total.items():
        if fin["total"][k] != v:
            fail(f"final total: {k} json {fin['total'][k]} text {v}")
    if f"{fin['throughput_mpps']:.3f}" != thr.group(1) or \
            fin["total"]["rx_packets"] != int(thr.group(2)) or \
            f"{fin['time_s']:.3f}" != thr.group(3):
        fail(f"throughput line {thr.group(0)!r} vs json "
             f"{fin['throughput_mpps']} {fin['time_s']}")
    for n in range(nb_ports):
        s = sum(p["ports"][n]["rx_packets"] for p in periodic[-1:])
        if s > fin["ports"][n]["rx_packets"]:
            fail(f"port {n}: periodic rx {s} above final")
    if len(sys.argv) > 5:
        check_csv(sys.argv[5], periodic)
    ex = records[-1]
    m = re.search(r"^mbufs not returned to pool \S+: (\d+)$", out, re.M)
    if m is None or int(m.group(1)) != ex["mbufs_not_returned"]:
        fail("exit record: mbufs_not_returned differs from the text")
    if ex["exit_status"] != 0:
        fail(f"exit record: exit_status {ex['exit_status']}")
    print(f"json: {len(records)} records ({len(periodic)} periodic), "
          f"values equal the text")


if __name__ == "__main__":
    main()
