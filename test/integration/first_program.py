#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""examples/order_answer (qpio-order-answer), the program of
doc/guides/prog_guide/first_program.rst, run as the page runs it: the
server a DPDK primary on 2 MB hugepages, the client a secondary of the
same --file-prefix, on lcores 0 and 1.

  first_program.py PATH/TO/qpio-order-answer

What it checks, each with the exact lines the page shows:
  - a client given --no-huge is refused before EAL starts (exit 1);
  - a client without its server (no primary of its --file-prefix) stops
    in EAL (exit 1) with the page's message;
  - on hugepages: the server listens; a second server of the same prefix
    and a client of the wrong port fail (exit 1) with their messages;
    the client's COUNT orders are answered, both summaries are exact and
    both processes exit 0;
  - a server whose -m is larger than the machine's memory (so than any
    hugepage reservation) stops in EAL (exit 1) with the page's message.

The first two need no hugepages and always run. The rest reserves 2 MB
hugepages and mounts a hugetlbfs of its own (test/hugepages.py), and
gives both back; where that is impossible (not root, no 2 MB pages) the
script exits 77 with the reason, after the first two passed. Exit 0 when
every check passes, 1 if not.
"""
import os
import re
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from hugepages import Hugepages  # noqa: E402 (test/hugepages.py)

SKIP = 77
HP_ADD = 16
COUNT = 10000
MSG_LEN = 64
BIN = sys.argv[1]
PFX = "qpio-first-program-%d" % os.getpid()
EAL = ["--no-pci", "--no-telemetry"]
failures = 0
prefixes = []
hp = Hugepages(HP_ADD, "qpio-first-program-huge.")


def check(ok, what, detail=""):
    global failures
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures += 1
        if detail:
            print(detail, flush=True)
    return ok


def eal(lcore, prefix, secondary=False):
    """EAL options of one process; the prefix is noted for cleanup."""
    prefixes.append(prefix)
    e = ["-l", str(lcore), "--file-prefix=" + prefix] + EAL
    if secondary:
        e.append("--proc-type=secondary")
    elif hp.mnt:
        e.append("--huge-dir=" + hp.mnt)
    return e


def start(eal_args, app):
    cmd = [BIN] + eal_args + ["--"] + app
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(p, timeout=60):
    """Exit status, stdout and stderr of p; None as status if it had to
    be killed."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, out, err + "\n(killed: no exit within %d s)" % timeout
    return p.returncode, out, err


def run(eal_args, app):
    return finish(start(eal_args, app))


def last_line(text):
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def refused(what, rc, out, err, message, eal_line=None):
    """A wrong run: exit 1, nothing on stdout, the program's message as
    the last line of stderr and, if given, EAL's reason before it."""
    detail = "stdout:\n%s\nstderr:\n%s" % (out, err)
    check(rc == 1, "%s: exit 1 (got %s)" % (what, rc), detail)
    check(out == "", "%s: nothing on stdout" % what, detail)
    check(last_line(err) == message, "%s: says %r" % (what, message), detail)
    if eal_line is not None:
        check(re.search(eal_line, err, re.M) is not None,
              "%s: EAL's line matches %r" % (what, eal_line), detail)


def closed_port():
    """A TCP port of 127.0.0.1 nobody listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def no_hugepages_needed():
    rc, out, err = run(eal(1, PFX + "-nohuge") + ["--no-huge"],
                       ["client", "soft1", "127.0.0.1", "7471", "10"])
    refused("a client with --no-huge", rc, out, err,
            "qpio-order-answer: --no-huge: memory of this mode is private "
            "to one process: two processes need hugepages")
    rc, out, err = run(eal(1, PFX + "-alone", secondary=True),
                       ["client", "soft1", "127.0.0.1", "7471", "10"])
    refused("a client without its server", rc, out, err,
            "qpio-order-answer: EAL: no shared configuration (the EAL line "
            "above says why): a client needs its server running with the "
            "same --file-prefix, and a second server a prefix of its own",
            r"^EAL: Cannot open '.*/%s/config' for rte_mem_config$"
            % re.escape(PFX + "-alone"))


def on_hugepages():
    server = start(eal(0, PFX), ["server", "soft0", "0"])
    first = server.stdout.readline()
    m = re.fullmatch(r"server: listening on port (\d+)\n", first)
    if not check(m is not None, "the server listens: %r" % first):
        rc, out, err = finish(server)
        print("exit %s\nstdout:\n%s\nstderr:\n%s" % (rc, first + out, err))
        return
    port = m.group(1)

    rc, out, err = run(eal(1, PFX), ["server", "soft1", "0"])
    refused("a second server of the same --file-prefix", rc, out, err,
            "qpio-order-answer: EAL: no shared configuration (the EAL line "
            "above says why): a client needs its server running with the "
            "same --file-prefix, and a second server a prefix of its own",
            r"^EAL: Cannot create lock on '.*/%s/config'\. Is another "
            r"primary process running\?$" % re.escape(PFX))

    rc, out, err = run(eal(1, PFX, secondary=True),
                       ["client", "soft1", "127.0.0.1",
                        str(closed_port()), "10"])
    refused("a client of the wrong port", rc, out, err,
            "qpio-order-answer: connect: UNREACHABLE (Connection refused)")

    client = start(eal(1, PFX, secondary=True),
                   ["client", "soft1", "127.0.0.1", port, str(COUNT)])
    crc, cout, cerr = finish(client)
    src, sout, serr = finish(server)
    nbytes = COUNT * MSG_LEN
    check(crc == 0, "the client exits 0 (got %s)" % crc,
          "stdout:\n%s\nstderr:\n%s" % (cout, cerr))
    want = ("client: %d orders sent, %d answers received, %d bytes each "
            "way, every byte as expected\n" % (COUNT, COUNT, nbytes))
    check(cout == want, "the client prints exactly %r" % want, cout)
    check(src == 0, "the server exits 0 (got %s)" % src,
          "stdout:\n%s\nstderr:\n%s" % (first + sout, serr))
    want = ("server: %d orders answered, %d bytes each way, every byte "
            "as expected\n" % (COUNT, nbytes))
    check(sout == want, "the server prints exactly %r after listening"
          % want, sout)

    with open("/proc/meminfo") as f:
        mem_mb = int(re.search(r"^MemTotal:\s+(\d+) kB", f.read(),
                               re.M).group(1)) // 1024 + 1
    rc, out, err = run(eal(0, PFX + "-m") + ["-m", str(mem_mb)],
                       ["server", "soft0", "0"])
    refused("a server whose -m is larger than the hugepages", rc, out, err,
            "qpio-order-answer: EAL: the free hugepages cannot hold -m (the "
            "EAL line above gives both sizes): reserve more, or lower -m",
            r"^EAL: Not enough memory available! Requested: %dMB, "
            r"available: \d+MB$" % mem_mb)


def runtime_dir(prefix):
    """Where EAL 22.11 puts a prefix's runtime files (eal_create_runtime_dir)."""
    base = "/var/run" if os.geteuid() == 0 else \
        os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix)


def main():
    reason = None
    try:
        no_hugepages_needed()
        reason = hp.setup()
        if reason is None:
            on_hugepages()
    finally:
        hp.teardown()
        for p in set(prefixes):
            shutil.rmtree(runtime_dir(p), ignore_errors=True)
    if reason is not None and failures == 0:
        print("SKIP: " + reason)
        return SKIP
    print("first_program: %s" % ("every check passed" if failures == 0
                                 else "%d checks failed" % failures))
    return 1 if failures else 0


sys.exit(main())
