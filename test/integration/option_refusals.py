#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every option of qpio-testpmd, qpio-perf, qpio-pcapcmp and the examples
against a table of bad values: each one is refused with the program's
usage exit status (2), a message that names the option (and the value,
and both options of a conflict), and nothing started: no output file
made, nothing on stdout.

The table below holds a row per long option: its kind (a whole number
with its range, seconds, a word, a value of its own syntax such as a
list or an address, free text such as devargs, an input or output path,
a flag) and what a good value is. The bad values are made from the kind:

  number   empty, +N, -N, ' N', 'N ', 0x10, abc, 1.5, 2^32, 2^64,
           20 nines, one below and one above the range
  seconds  empty, +1, -1, ' 1', '1 ', 0x10, abc, 1e1, inf, nan, .5, 1.,
           one below and one above the range (or the open bound)
  word     empty, an unknown word, the good word with a space
  values   empty and the row's own list (an empty item, a sign in a
           number, a part out of range, ...)
  text     empty
  input    empty, a file that does not exist, a directory
  output   empty; two outputs in one file (a conflict per pair, and an
           output option given twice where it may repeat)
  any      the option with no value; the option given twice (refused
           where a second value would silently replace the first)
  flag     a value given to it; given twice

Each program also gets an unknown option, a stray word, and cases of its
own (rules between options, too many of a repeatable one, an output
error, which fails the run with exit status 1 and the file named).

Numbers follow lib/devargs' rule (qpio_devargs_parse_u32/_u64/_decimal:
decimal digits only, no sign, no space, no 0x; a leading zero is
decimal, so 010 is ten and not a bad value).

Before the cases, the table is checked against the programs: every long
option of a program's getopt table (read from its source) has a row and
is in its --help text, and every row is an option. A new option without
a row fails the test. A control run per program shows that the base
command line the cases add to is accepted.

    option_refusals.py [--only=PROGRAM] SOURCE_ROOT CONFIG_H EXE...

SOURCE_ROOT is the source tree (the getopt tables, the shipped files),
CONFIG_H the build's qpio_config.h (QPIO_MAX_PORTS and the like), EXE the
programs, known by their file names (qpio-testpmd, ...). Exits 1 when a
case fails.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
USAGE = 2          # every program's exit status for bad options
CASE_TIMEOUT = 20  # seconds; a refused case ends in milliseconds
JOBS = 4

EAL = ["-l", "0-1", "--no-huge", "--no-shconf", "--no-pci", "-m", "256",
       "--no-telemetry", "--log-level=lib.eal:error"]


# -- the kinds of option and their bad values --------------------------

class Num:
    """A whole number in [lo, hi], lib/devargs' rule."""

    def __init__(self, lo, hi, good=None):
        self.lo, self.hi = lo, hi
        self.good = str(good if good is not None else lo)

    def bad(self):
        g = self.good
        v = [("empty", ""), ("plus sign", "+" + g), ("minus sign", "-" + g),
             ("leading space", " " + g), ("trailing space", g + " "),
             ("hex", "0x10"), ("word", "abc"), ("fraction", "1.5"),
             ("2^64", str(U64_MAX + 1)), ("20 nines", "9" * 20)]
        if self.hi < 2**32:
            v.append(("2^32", str(2**32)))
        if self.lo > 0:
            v.append(("below the range", str(self.lo - 1)))
        if self.hi < U64_MAX:
            v.append(("above the range", str(self.hi + 1)))
        return v


class Seconds:
    """A decimal number (digits, one point) in [lo, hi], or (lo, hi]
    when lo_open."""

    def __init__(self, lo, hi, lo_open=False, good="1"):
        self.lo, self.hi, self.lo_open, self.good = lo, hi, lo_open, good

    def bad(self):
        v = [("empty", ""), ("plus sign", "+1"), ("minus sign", "-1"),
             ("leading space", " 1"), ("trailing space", "1 "),
             ("hex", "0x10"), ("word", "abc"), ("exponent", "1e1"),
             ("inf", "inf"), ("nan", "nan"), ("no digit before the point",
                                              ".5"),
             ("no digit after the point", "1."),
             ("above the range", decimal(self.hi + 1))]
        if self.lo_open:
            v.append(("the open bound", decimal(self.lo)))
        elif self.lo > 0:
            v.append(("below the range", decimal(self.lo / 2)))
        return v


def decimal(x):
    """x in the digits-and-point form."""
    return str(int(x)) if x == int(x) else repr(float(x))


class Word:
    """One of a set of words."""

    def __init__(self, *words):
        self.words = words
        self.good = words[0]

    def bad(self):
        return [("empty", ""), ("unknown word", "bogus"),
                ("leading space", " " + self.good),
                ("trailing space", self.good + " ")]


class Values:
    """A value of its own syntax (a list, an address): the bad values are
    given."""

    def __init__(self, good, *bad):
        self.good = good
        self.bad_values = list(bad)

    def bad(self):
        return [("empty", "")] + [(v, v) for v in self.bad_values]


class Text:
    """Free text (devargs, an interface or host name): only empty is bad
    here; what the text names is checked when it is used."""

    def __init__(self, good):
        self.good = good

    def bad(self):
        return [("empty", "")]


class In:
    """A file the program reads."""

    def __init__(self, good):
        self.good = good

    def bad(self):
        return [("empty", ""), ("missing file", "no-such-dir/no-such-file"),
                ("directory", ".")]


class Out:
    """A file the program writes; conflicts are made per program."""

    def __init__(self, good):
        self.good = good

    def bad(self):
        return [("empty", "")]


class Flag:
    good = None

    def bad(self):
        return []


class Help:
    good = None

    def bad(self):
        return []


class Row:
    """One long option. repeat: may be given several times. base: the
    options the case starts from, in place of the program's (None: the
    program's); less this option, in either."""

    def __init__(self, kind, repeat=False, base=None):
        self.kind, self.repeat, self.base = kind, repeat, base


class Program:
    def __init__(self, name, sources, eal, base, rows, positional=(),
                 control=None, control_status=0, extra=()):
        self.name = name
        self.sources = sources      # files of its getopt table
        self.eal = eal              # EAL options first, then --
        self.base = base            # [(option, value)], a valid line
        self.rows = rows            # {long name: Row}
        self.positional = list(positional)
        self.control = control      # options added for the control run
        self.control_status = control_status
        self.extra = list(extra)    # [Case] of the program's own
        self.exe = None
        self.help_lines = set()


class Case:
    """args: the application's words (after EAL's --). names: what the
    message must name. value: must appear in the message too. word: a
    word the message must hold ('twice')."""

    def __init__(self, what, args, names, value=None, word=None,
                 status=USAGE, files=None):
        self.what, self.args, self.names = what, args, names
        self.value, self.word, self.status = value, word, status
        self.files = files or {}    # name -> bytes, made in the run's cwd


# -- the programs ------------------------------------------------------

def programs(src, cfg):
    max_ports = cfg["QPIO_MAX_PORTS"]
    max_queues = cfg["QPIO_PORT_MAX_QUEUES"]
    max_devices = cfg["QPIO_MAX_DEVICES"]
    mac = "02:00:00:00:00:01"
    pcap = os.path.join(src, "data", "linux-stack.pcap")
    gw_conf = os.path.join(src, "examples", "gateway", "gateway.conf")
    pl_rules = os.path.join(src, "examples", "pipeline", "rules.conf")
    progs = []

    # qpio-testpmd: app/testpmd/options.c, capture.c; the limits of
    # testpmd.h, testpmd_app.h, rte_config.h and the build's config.
    pair = [("--dev", "ring0,peer=ring1"), ("--dev", "ring1,peer=ring0")]
    tp = Program(
        "qpio-testpmd", ["app/testpmd/options.c"], True, pair, {
            "dev": Row(Text("ring0,peer=ring1"), repeat=True, base=[]),
            "rdma-dev": Row(Text("soft0"), repeat=True),
            "forward-mode": Row(Values("io", "bogus", "io,", ",io",
                                       "io,,rxonly", " io", "io ",
                                       "io,bogus")),
            "nb-cores": Row(Num(1, 128)),          # RTE_MAX_LCORE
            "rxq": Row(Num(1, max_queues)),
            "txq": Row(Num(1, max_queues)),
            "rxd": Row(Num(1, 65535)),
            "txd": Row(Num(1, 65535)),
            "burst": Row(Num(1, 512)),             # TESTPMD_MAX_BURST
            # A segment holds 1 .. mbuf size 2176 - 128 of headroom; the
            # first one the 42-byte header.
            "txpkts": Row(Values("64", "+64", "-64", " 64", "64 ", "0x40",
                                 "abc", "1.5", "0", "2049", "20", "64,,64",
                                 "64,", ",64", "64,+64",
                                 ",".join(["64"] * 9), str(2**32),
                                 "9" * 20)),
            "port-topology": Row(Word("paired", "chained", "loop")),
            "tx-first": Row(Flag()),
            "total-num-mbufs": Row(Num(64, U32_MAX // 2, good=8192)),
            "mbcache": Row(Num(0, 512)),           # RTE_MEMPOOL_CACHE_MAX_SIZE
            "mbuf-size": Row(Num(192, 65535, good=2176)),
            "max-pkt-len": Row(Num(60, 262144, good=1518)),
            "tx-offloads": Row(Values("0x0", "65536", "0x", "0x1g", "+0x1",
                                      "-0x1", " 0x1", "0x1 ", "0x0x1",
                                      "0x" + "1" * 17, "abc")),
            "stats-period": Row(Num(1, 86400)),
            "duration": Row(Seconds(0, 1e7, lo_open=True)),
            "max-packets": Row(Num(1, U64_MAX)),
            "link-wait": Row(Num(1, 3600)),
            # PORT,MAC: the port below QPIO_MAX_PORTS and among the two
            # of the base; one --eth-peer per port.
            "eth-peer": Row(Values("1," + mac, "1", "1,", "," + mac,
                                   "+1," + mac, " 1," + mac, "abc," + mac,
                                   "%d,%s" % (max_ports, mac), "2," + mac,
                                   "1,zz", "1,%s,x" % mac,
                                   "9" * 20 + "," + mac),
                            repeat=True),
            "tx-ip": Row(Values("10.0.0.1,10.0.0.2", "10.0.0.1",
                                "10.0.0.1,", ",10.0.0.2",
                                "10.0.0.1,10.0.0",
                                "10.0.0.1,10.0.0.2,10.0.0.3",
                                " 10.0.0.1,10.0.0.2", "10.0.0.1,10.0.0.2 ",
                                "10.0.0.1,10.0.0.2" + "," * 60,
                                "10.0.0.1," + "0" * 60 + "10.0.0.2")),
            "tx-udp": Row(Values("9,9", "+9", "-9", " 9", "9 ", "0x9", "abc",
                                 "65536", "9,", ",9", "9,65536", "9,9,9",
                                 "9,+9", "0" * 40 + "9", "9," + "0" * 40)),
            "flowgen-flows": Row(Num(1, 65536)),
            "show-xstats": Row(Flag()),
            "stats-xstats": Row(Flag()),
            "tx-retry": Row(Num(0, 1000000)),
            "json": Row(Out("x.json")),
            "csv": Row(Out("x.csv")),
            # PORT[/rx|/tx]=FILE[,snaplen=N,max-mb=N]
            "capture": Row(Values("0=c.pcapng", "0", "=c.pcapng", "0=",
                                  "0/xx=c.pcapng", "+0=c.pcapng",
                                  " 0=c.pcapng", "%d=c.pcapng" % max_ports,
                                  "2=c.pcapng", "0=c.pcapng,snaplen=+64",
                                  "0=c.pcapng,snaplen=65001",
                                  "0=c.pcapng,snaplen=",
                                  "0=c.pcapng,max-mb=1048577",
                                  "0=c.pcapng,max-mb=0x10",
                                  "0=c.pcapng,bogus=1",
                                  "0=c.pcapng,,snaplen=64", "0=c.pcapng,"),
                           repeat=True),
            "interactive": Row(Flag()),
            "help": Row(Help()),
        },
        control=["--duration=0.1"],
        extra=[
            Case("--dev given QPIO_MAX_PORTS + 1 times",
                 sum([["--dev", "ring%d,peer=ring%d" % (i, i)]
                      for i in range(max_ports + 1)], []), ["--dev"]),
            Case("--rdma-dev given QPIO_MAX_DEVICES + 1 times",
                 flat(pair) + sum([["--rdma-dev", "soft%d" % i]
                                   for i in range(max_devices + 1)], []),
                 ["--rdma-dev"]),
            Case("--capture of one port and direction twice",
                 flat(pair) + ["--capture", "0/rx=a.pcapng",
                               "--capture", "0=b.pcapng"], ["--capture"],
                 word="twice"),
            Case("--eth-peer of one port twice",
                 flat(pair) + ["--eth-peer", "1," + mac,
                               "--eth-peer", "1," + mac], ["--eth-peer"],
                 word="twice"),
            Case("--json over the capture a pcap port reads",
                 flat(pair) + ["--dev", "pcap2,rx_pcap=in.pcap",
                               "--json", "./in.pcap"],
                 ["--json", "--dev"], files={"in.pcap": read_bytes(pcap)}),
            Case("--csv over the capture a pcap port writes",
                 flat(pair) + ["--dev", "pcap2,tx_pcap=out.pcap",
                               "--csv", "out.pcap"], ["--csv", "--dev"]),
            Case("--capture over the capture a net_pcap port writes",
                 flat(pair) + ["--dev",
                               "eth2,vdev=net_pcap9,tx_pcap=out.pcap",
                               "--capture", "0=./out.pcap"],
                 ["--capture", "--dev"]),
            Case("--txq below --rxq", flat(pair) + ["--rxq=2"],
                 ["--txq", "--rxq"]),
            Case("--mbcache above 2/3 of --total-num-mbufs",
                 flat(pair) + ["--total-num-mbufs=64", "--mbcache=64"],
                 ["--mbcache", "--total-num-mbufs"]),
            Case("--txpkts frames longer than --max-pkt-len",
                 flat(pair) + ["--max-pkt-len=60", "--txpkts=64"],
                 ["--txpkts", "--max-pkt-len"]),
        ])
    progs.append(tp)

    # qpio-perf: app/perf/perf_opts.c, perf.h.
    perf_base = [("--test", "ib_send_bw")]
    client = [("--test", "ib_send_bw"), ("--connect", "127.0.0.1"),
              ("--timeout", "1"), ("--port", "9")]
    progs.append(Program(
        "qpio-perf", ["app/perf/perf_opts.c"], True, perf_base, {
            "test": Row(Word("send", "write", "read", "atomic",
                             "ib_send_lat", "ib_send_bw"), base=[]),
            "mode": Row(Word("bw", "lat"), base=[("--test", "send")]),
            "dev": Row(Text("soft0"), repeat=True),
            "connection": Row(Values("RC", "XRC", "rc", " RC", "RC ")),
            "size": Row(Num(1, 2**31, good=64)),
            "all": Row(Flag()),
            "iters": Row(Num(1, 10**12)),
            "duration": Row(Seconds(0, 86400, lo_open=True)),
            "run_infinitely": Row(Flag()),
            "inline_size": Row(Num(0, 4096)),
            "post_list": Row(Num(1, 256)),         # PERF_MAX_POST_LIST
            "cq-mod": Row(Num(1, 8192)),           # PERF_MAX_DEPTH
            "qp": Row(Num(1, 64)),                 # PERF_MAX_QPS
            "tx-depth": Row(Num(1, 8192, good=128)),
            "rx-depth": Row(Num(1, 8192, good=512)),
            "bidirectional": Row(Flag()),
            "atomic_type": Row(Word("FETCH_AND_ADD", "CMP_AND_SWP"),
                               base=[("--test", "ib_atomic_bw")]),
            "report_gbits": Row(Flag()),
            "sge": Row(Num(1, 16)),                # PERF_MAX_SGE
            "validate": Row(Flag()),
            "corrupt-at": Row(Num(0, 10**12)),
            "rate": Row(Seconds(1, 1e9, good="1000")),
            "strict": Row(Flag()),
            "json": Row(Out("x.json")),
            "csv": Row(Out("x.csv")),
            "expect": Row(Values("mpps>=0.001", ",", "mpps>=1,",
                                 ",mpps>=1", "mpps>=1,,p99<=1us", "p99",
                                 "p98<=1us", "p99<=fast", "p99<=+1us",
                                 "p99<=-1us", "p99<= 1us", "p99<=0x10us",
                                 "p99<=1e3us", "p99<=infus", "p99<=1s",
                                 "mpps>=1us"),
                          repeat=True),
            "server": Row(Flag()),
            "connect": Row(Text("127.0.0.1"), base=client),
            "port": Row(Num(0, 65535, good=9), base=client),
            "timeout": Row(Seconds(0, 86400, lo_open=True), base=client),
            "perftest": Row(Flag(), base=client),
            "rdma_cm": Row(Flag(), base=client + [("--perftest", None)]),
            "gid-index": Row(Num(0, 255)),
            "mtu": Row(Num(256, 4096, good=1024)),
            "help": Row(Help()),
        },
        control=["--iters=10", "--size=64"],
        extra=[
            Case("--dev given three times",
                 flat(perf_base) + ["--dev=soft0", "--dev=soft1",
                                    "--dev=soft2"], ["--dev"]),
        ]))

    # qpio-pcapcmp: app/pcapcmp/main.c.
    progs.append(Program(
        "qpio-pcapcmp", ["app/pcapcmp/main.c"], False, [], {
            "ignore-len": Row(Flag()),
            "help": Row(Help()),
        },
        positional=[pcap, pcap], control=[],
        extra=[
            Case("one capture", [pcap], ["two captures"]),
            Case("three captures", [pcap, pcap, pcap], ["two captures"]),
            Case("a missing capture", [pcap, "no-such.pcap"],
                 ["no-such.pcap"]),
            Case("a directory", [pcap, "."], ["."]),
            Case("an empty name", [pcap, ""], ["empty file name"]),
        ]))

    # qpio-gateway: examples/gateway/main.c.
    gw_base = [("--conf", gw_conf), ("--iface-a", "qpio-none-a"),
               ("--iface-b", "qpio-none-b")]
    progs.append(Program(
        "qpio-gateway", ["examples/gateway/main.c"], True, gw_base, {
            "conf": Row(In(gw_conf)),
            "iface-a": Row(Text("qpio-none-a")),
            "iface-b": Row(Text("qpio-none-b")),
            "pmd": Row(Word("auto", "af_xdp", "af_packet")),
            "queues": Row(Num(1, 8)),
            "duration": Row(Seconds(0, 1e7)),
            "help": Row(Help()),
        },
        control=["--duration=0.1"], control_status=1,
        extra=[
            Case("one interface for both sites",
                 ["--conf", gw_conf, "--iface-a", "qpio-none-a",
                  "--iface-b", "qpio-none-a"], ["--iface-a", "--iface-b"]),
            Case("several queues on net_af_xdp",
                 flat(gw_base) + ["--pmd", "af_xdp", "--queues", "2"],
                 ["--pmd af_xdp --queues 2", "use --pmd af_packet or auto"]),
        ]))

    # qpio-pipeline: examples/pipeline/main.c.
    pl_base = [("--in", "ring0,peer=ring0"), ("--rules", pl_rules)]
    progs.append(Program(
        "qpio-pipeline", ["examples/pipeline/main.c"], True, pl_base, {
            "in": Row(Text("ring0,peer=ring0")),
            "out": Row(Text("ring1,peer=ring1")),
            "rules": Row(In(pl_rules)),
            "flows": Row(Out("flows.csv")),
            "duration": Row(Seconds(0, 1e7)),
            "packets": Row(Num(1, U64_MAX)),
            "help": Row(Help()),
        },
        control=["--duration=0.1"],
        extra=[
            Case("--flows over the --rules file",
                 ["--in", "ring0,peer=ring0", "--rules", "r.rules",
                  "--flows", "./r.rules"], ["--rules", "--flows"],
                 files={"r.rules": read_bytes(pl_rules)}),
            Case("--flows over the capture the --in port reads",
                 ["--in", "pcap0,rx_pcap=in.pcap", "--rules", pl_rules,
                  "--flows", "./in.pcap"], ["--flows", "--in"],
                 files={"in.pcap": read_bytes(pcap)}),
            Case("--flows over the capture the --out port writes",
                 flat(pl_base) + ["--out", "pcap1,tx_pcap=out.pcap",
                                  "--flows", "out.pcap"],
                 ["--flows", "--out"]),
            Case("--flows in a directory that does not exist",
                 flat(pl_base) + ["--flows", "no-such-dir/f.csv"],
                 ["--flows", "no-such-dir/f.csv"]),
            # An output error fails the run (1), the file named.
            Case("--flows on a full disk",
                 flat(pl_base) + ["--flows", "/dev/full", "--duration=0.1"],
                 ["--flows", "/dev/full"], word="cannot write", status=1),
        ]))

    # qpio-pingpong: examples/pingpong/main.c (struct order is 32 bytes).
    progs.append(Program(
        "qpio-pingpong", ["examples/pingpong/main.c"], True, [], {
            "count": Row(Num(1, 10**8, good=10)),
            "warmup": Row(Num(0, 10**9)),
            "dev": Row(Text("soft0"), repeat=True),
            "size": Row(Num(32, 256, good=64)),
            "calibrate": Row(Flag()),
            # [HOST:]PORT, port 0..65535 (0: a free one)
            "listen": Row(Values("0", "abc", "65536", "+5", "-5", " 5",
                                 "0x10", "10.0.0.1:", ":5000",
                                 "fd00::1:5000", "[]:5000")),
            # HOST:PORT, port 1..65535
            "connect": Row(Values("127.0.0.1:5000", "127.0.0.1",
                                  "127.0.0.1:0", "127.0.0.1:65536",
                                  "127.0.0.1:abc", "127.0.0.1:+5", ":5000",
                                  "fd00::1:5000", "5000")),
            "help": Row(Help()),
        },
        control=["--count=10", "--warmup=0"],
        extra=[
            Case("--dev given three times",
                 ["--dev=soft0", "--dev=soft1", "--dev=soft2"], ["--dev"]),
            Case("a second --dev empty", ["--dev=soft0", "--dev="],
                 ["--dev"]),
            Case("--listen and --connect", ["--listen=0",
                                            "--connect=127.0.0.1:5000"],
                 ["--listen", "--connect"]),
            Case("--dev twice with --connect",
                 ["--dev=soft0", "--dev=soft1", "--connect=127.0.0.1:5000"],
                 ["--dev", "--connect"]),
            Case("--calibrate with --listen", ["--calibrate", "--listen=0"],
                 ["--calibrate", "--listen"]),
            Case("--size with --listen", ["--listen=0", "--size=64"],
                 ["--size", "--listen"]),
            Case("--count with --listen", ["--listen=0", "--count=5"],
                 ["--count", "--listen"]),
        ]))

    # qpio-rc-msg: examples/rc_msg/main.c.
    progs.append(Program(
        "qpio-rc-msg", ["examples/rc_msg/main.c"], True, [], {
            "count": Row(Num(1, 10**12, good=10)),
            "size": Row(Num(1, 2048, good=64)),
            "burst": Row(Num(1, 256, good=32)),
            "help": Row(Help()),
        },
        control=["--count=100"]))

    # qpio-verbs-pingpong: examples/verbs_pingpong/main.c. The base is a
    # client of a port nobody listens on, so an accepted line ends soon.
    vp_base = [("--dev", "soft0"), ("--port", "9"), ("--timeout", "1")]
    progs.append(Program(
        "qpio-verbs-pingpong", ["examples/verbs_pingpong/main.c"], True,
        vp_base, {
            "dev": Row(Text("soft0")),
            "connection": Row(Word("RC", "UC", "UD")),
            "port": Row(Num(1, 65535, good=9)),
            "size": Row(Num(0, 1048576, good=4096)),
            "mtu": Row(Values("1024", "+1024", "-1024", " 1024", "1024 ",
                              "0x400", "abc", "1.5", "255", "300", "4097",
                              "8192", str(2**32), "9" * 20)),
            "rx-depth": Row(Num(2, 8192, good=500)),
            "iters": Row(Num(1, 10**9, good=1000)),
            "sl": Row(Num(0, 15)),
            "gid-idx": Row(Num(0, 255)),
            "validate": Row(Flag()),
            "timeout": Row(Num(1, 86400, good=1)),
            "comp-vector": Row(Num(0, 1023, good=0)),
            "events": Row(Flag()),
            "gap": Row(Num(1, 60000, good=1)),
            "help": Row(Help()),
        },
        positional=["127.0.0.1"], control=[], control_status=1,
        extra=[
            Case("two server names",
                 flat(vp_base) + ["127.0.0.1", "127.0.0.2"],
                 ["127.0.0.2"]),
            Case("--gap on the server", flat(vp_base) + ["--gap=1"],
                 ["--gap"], word="client's"),
            Case("--gap with -n above 1000000",
                 flat(vp_base) + ["--gap=1", "--iters=1000001",
                                  "127.0.0.1"],
                 ["--gap", "-n"], value="1000001"),
            Case("--gap's pauses outlast --timeout",
                 flat(vp_base) + ["--gap=2", "127.0.0.1"],
                 ["--gap", "--timeout"], value="1998 ms"),
        ]))

    # qpio-cmatose: examples/cmatose/main.c. The base is a client of a
    # port nobody listens on, so an accepted line ends soon.
    cm_base = [("--dev", "soft0"), ("--server", "127.0.0.1"),
               ("--port", "9"), ("--timeout", "1")]
    progs.append(Program(
        "qpio-cmatose", ["examples/cmatose/main.c"], True, cm_base, {
            "dev": Row(Text("soft0")),
            "server": Row(Text("127.0.0.1")),
            "bind": Row(Text("127.0.0.1")),
            "port": Row(Num(1, 65535, good=9)),
            "connections": Row(Num(1, 64, good=2)),
            "count": Row(Num(1, 32768, good=10)),
            "size": Row(Num(1, 1048576, good=100)),
            "ud": Row(Flag()),
            "timeout": Row(Num(1, 3600, good=1)),
            "help": Row(Help()),
        },
        control=[], control_status=1,
        extra=[
            Case("--bind with --server",
                 flat(cm_base) + ["--bind", "127.0.0.1"],
                 ["--bind", "--server"]),
        ]))

    # qpio-rping: examples/rping/main.c. The base is a client of a port
    # nobody listens on, so an accepted line ends soon.
    rp_base = [("--dev", "soft0"), ("--client", None),
               ("--addr", "127.0.0.1"), ("--port", "9"),
               ("--timeout", "1")]
    progs.append(Program(
        "qpio-rping", ["examples/rping/main.c"], True, rp_base, {
            "dev": Row(Text("soft0")),
            "server": Row(Flag(), base=[p for p in rp_base
                                         if p[0] != "--client"]),
            "client": Row(Flag()),
            "addr": Row(Text("127.0.0.1")),
            "port": Row(Num(1, 65535, good=9)),
            "count": Row(Num(1, 100000000, good=10)),
            "size": Row(Num(23, 65535, good=64)),
            "validate": Row(Flag()),
            "verbose": Row(Flag()),
            "timeout": Row(Num(1, 3600, good=1)),
            "help": Row(Help()),
        },
        control=[], control_status=1,
        extra=[
            Case("--server with --client",
                 flat(rp_base) + ["--server"], ["--server", "--client"]),
            Case("--client without --addr",
                 ["--dev", "soft0", "--client"], ["--client", "--addr"]),
        ]))
    return progs


def read_bytes(path):
    with open(path, "rb") as fh:
        return fh.read()


def flat(pairs):
    return [w for p in pairs for w in p if w is not None]


# -- the cases of a program --------------------------------------------

def base_for(prog, name, row):
    base = row.base if row.base is not None else prog.base
    return flat([p for p in base if p[0] != "--" + name]) + prog.positional


def cases_of(prog):
    cases = []
    for name, row in sorted(prog.rows.items()):
        opt = "--" + name
        kind = row.kind
        base = base_for(prog, name, row)
        if isinstance(kind, Help):
            continue
        if isinstance(kind, Flag):
            cases.append(Case(opt + "=1 (a flag takes no value)",
                              base + [opt + "=1"], [opt]))
            cases.append(Case(opt + " twice", base + [opt, opt], [opt],
                              word="twice"))
            continue
        # The message shows a number, a word or a path as given; of a
        # value of its own syntax, the part that is wrong may do.
        shown = not isinstance(kind, Values)
        for what, value in kind.bad():
            cases.append(Case("%s=%r (%s)" % (opt, value, what),
                              base + [opt + "=" + value], [opt],
                              value=(value.strip() or None) if shown
                              else None))
        cases.append(Case(opt + " without a value", base + [opt], [opt]))
        if not row.repeat:
            cases.append(Case(opt + " twice",
                              base + [opt + "=" + kind.good,
                                      opt + "=" + kind.good], [opt],
                              word="twice"))
    # Two outputs in one file: every pair of output options, and an
    # output option given twice where it may be.
    outs = [(n, r) for n, r in sorted(prog.rows.items())
            if isinstance(r.kind, Out) or n == "capture"]
    for i, (a, ra) in enumerate(outs):
        for b, rb in outs[i:]:
            if a == b and not ra.repeat:
                continue
            va = out_value(a, "same.out", 0)
            vb = out_value(b, "./same.out", 1)
            base = flat(prog.base) + prog.positional
            cases.append(Case("--%s and --%s in one file" % (a, b),
                              base + ["--" + a, va, "--" + b, vb],
                              ["--" + a, "--" + b]))
    cases.append(Case("an unknown option",
                      flat(prog.base) + prog.positional + ["--no-such-option"],
                      ["--no-such-option"]))
    if prog.name != "qpio-pcapcmp" and prog.name != "qpio-verbs-pingpong":
        cases.append(Case("a word that is no option",
                          flat(prog.base) + prog.positional + ["stray"],
                          ["stray"]))
    return cases + prog.extra


def out_value(name, path, i):
    # --capture is PORT[/dir]=FILE: two captures of one file take the two
    # directions of port 0.
    if name == "capture":
        return "0/%s=%s" % ("rx" if i == 0 else "tx", path)
    return path


# -- running -----------------------------------------------------------

class Result:
    def __init__(self, case, rc, out, err, left):
        self.case, self.rc, self.out, self.err = case, rc, out, err
        self.left = left        # files the run made or changed


def command(prog, args, n):
    if not prog.eal:
        return [prog.exe] + args
    return [prog.exe] + EAL + ["--file-prefix=qpio-it-opt-%d-%d" %
                               (os.getpid(), n), "--"] + args


def run(prog, case, n, tmp):
    cwd = os.path.join(tmp, "case%d" % n)
    os.mkdir(cwd)
    for f, data in case.files.items():
        with open(os.path.join(cwd, f), "wb") as fh:
            fh.write(data)
    before = snapshot(cwd)
    try:
        p = subprocess.run(command(prog, case.args, n), cwd=cwd,
                           stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, errors="replace",
                           timeout=CASE_TIMEOUT)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc = None
        out = (e.stdout or b"").decode(errors="replace") \
            if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = (e.stderr or b"").decode(errors="replace") \
            if isinstance(e.stderr, bytes) else (e.stderr or "")
    after = snapshot(cwd)
    left = sorted(set(after.items()) - set(before.items()))
    shutil.rmtree(cwd, ignore_errors=True)
    return Result(case, rc, out, err, left)


def snapshot(d):
    s = {}
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            st = os.stat(p)
            s[os.path.relpath(p, d)] = (st.st_size, st.st_mtime_ns)
    return s


def mentions(text, name):
    """name in text; an option as a word of its own (--in is not
    --interactive)."""
    if not name.startswith("-"):
        return name in text
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), text) \
        is not None


def problems(prog, r):
    """What is wrong with a refused case's result, [] when nothing."""
    c = r.case
    bad = []
    if r.rc is None:
        return ["still running after %d s: the line was accepted" %
                CASE_TIMEOUT]
    if r.rc != c.status:
        bad.append("exit status %d, want %d" % (r.rc, c.status))
    # The message: stderr lines that are not the usage text (which names
    # every option).
    text = "\n".join(usage_free(prog, r.err))
    for name in c.names:
        if not mentions(text, name):
            bad.append("no message naming %r" % name)
    if c.value is not None and c.value not in text:
        bad.append("the message does not show the value %r" % c.value)
    if c.word is not None and c.word not in text:
        bad.append("the message does not say %r" % c.word)
    if c.status == USAGE:
        if r.out.strip():
            bad.append("a refused line wrote to stdout (something started)")
        if r.left:
            bad.append("a refused line left files: %s" %
                       ", ".join(f for f, _ in r.left))
    return bad


# -- the table against the programs ------------------------------------

OPT_RE = re.compile(r'\{\s*"([A-Za-z0-9_-]+)"\s*,\s*'
                    r'(required_argument|no_argument|optional_argument|[012])'
                    r'\s*,')


def getopt_names(src, prog):
    names = set()
    for f in prog.sources:
        with open(os.path.join(src, f)) as fh:
            names |= {m[0] for m in OPT_RE.findall(fh.read())}
    return names


def check_table(src, prog):
    """The rows against the getopt table and the --help text."""
    errs = []
    names = getopt_names(src, prog)
    if not names:
        errs.append("%s: no getopt table found in %s" %
                    (prog.name, ", ".join(prog.sources)))
    for n in sorted(names - set(prog.rows)):
        errs.append("%s: option --%s has no row in the table" %
                    (prog.name, n))
    for n in sorted(set(prog.rows) - names):
        errs.append("%s: row --%s is no option of the program" %
                    (prog.name, n))
    args = (EAL + ["--file-prefix=qpio-it-opt-%d-%s" % (os.getpid(),
                                                         prog.name),
                   "--", "--help"]) if prog.eal else ["--help"]
    p = subprocess.run([prog.exe] + args, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=CASE_TIMEOUT)
    if p.returncode != 0:
        errs.append("%s --help: exit status %d, want 0" %
                    (prog.name, p.returncode))
    helped = set(re.findall(r"--([A-Za-z0-9][A-Za-z0-9_-]*)", p.stdout))
    for n in sorted(names - helped):
        errs.append("%s: --%s is not in --help" % (prog.name, n))
    prog.help_lines = {l.rstrip() for l in
                       (p.stdout + p.stderr).replace(prog.exe, prog.name)
                       .splitlines() if l.strip()}
    return errs


def usage_free(prog, text):
    """The lines of text that are not the program's usage text (its
    --help lines, and any line with "usage:")."""
    for l in text.replace(prog.exe, prog.name).splitlines():
        if not l.strip() or l.rstrip() in prog.help_lines or \
                "usage:" in l.lower():
            continue
        yield l


def control(prog, n, tmp):
    """The base line, with the control's options: accepted."""
    if prog.control is None:
        return []
    case = Case("control", flat(prog.base) + prog.positional + prog.control,
                [], status=prog.control_status)
    r = run(prog, case, n, tmp)
    if r.rc != prog.control_status:
        return ["%s: the base line %s: exit status %s, want %d\n%s" %
                (prog.name, " ".join(case.args), r.rc, prog.control_status,
                 r.err)]
    return []


def config(path):
    cfg = {}
    with open(path) as fh:
        for m in re.finditer(r"#define (QPIO_\w+) (\d+)\n", fh.read()):
            cfg[m.group(1)] = int(m.group(2))
    return cfg


def runtime_dirs_remove():
    """Remove the DPDK runtime directories of this run's processes (the
    control runs and the cases that reached EAL leave one each): under
    /var/run/dpdk as root, else $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk."""
    base = "/var/run/dpdk" if os.geteuid() == 0 else \
        os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")
    prefix = "qpio-it-opt-%d-" % os.getpid()
    try:
        names = os.listdir(base)
    except OSError:
        return
    for n in names:
        if n.startswith(prefix):
            shutil.rmtree(os.path.join(base, n), ignore_errors=True)


def main():
    args = sys.argv[1:]
    only = None
    if args and args[0].startswith("--only="):
        only = args.pop(0)[len("--only="):]
    src, cfg_h = os.path.abspath(args[0]), args[1]
    exes = [os.path.abspath(e) for e in args[2:]]
    progs = programs(src, config(cfg_h))
    by_name = {os.path.basename(e): e for e in exes}
    errs = []
    for prog in progs:
        prog.exe = by_name.get(prog.name)
        if prog.exe is None:
            errs.append("%s: not among the programs given" % prog.name)
    for e in sorted(set(by_name) - {p.name for p in progs}):
        errs.append("%s: given, but the table has no such program" % e)
    if errs:
        print("\n".join("FAIL: " + e for e in errs))
        return 1
    if only is not None:
        progs = [p for p in progs if p.name == only]

    t0 = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="qpio-opt-")
    try:
        for prog in progs:
            errs += check_table(src, prog)
        jobs = []
        with concurrent.futures.ThreadPoolExecutor(JOBS) as pool:
            ctl = [pool.submit(control, prog, i, tmp)
                   for i, prog in enumerate(progs)]
            n = len(progs)
            for prog in progs:
                for case in cases_of(prog):
                    jobs.append((prog, pool.submit(run, prog, case, n, tmp)))
                    n += 1
            for f in ctl:
                errs += f.result()
            failed = {}
            counted = {}
            for prog, f in jobs:
                r = f.result()
                counted[prog.name] = counted.get(prog.name, 0) + 1
                bad = problems(prog, r)
                if bad:
                    failed[prog.name] = failed.get(prog.name, 0) + 1
                    errs.append("%s: %s: %s\n  command: %s\n  stderr: %s" %
                                (prog.name, r.case.what, "; ".join(bad),
                                 " ".join(repr(a) if (not a or " " in a)
                                          else a for a in r.case.args),
                                 r.err.strip().replace("\n", "\n          ")))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        runtime_dirs_remove()
    for e in errs:
        print("FAIL:", e)
    for prog in progs:
        print("%s: %d cases, %d failed" %
              (prog.name, counted.get(prog.name, 0), failed.get(prog.name, 0)))
    print("%d cases in %.1f s" % (len(jobs), time.monotonic() - t0))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
