#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A program that ends normally leaves no DPDK runtime directory
(/var/run/dpdk/<file-prefix>): qpio_eal_cleanup() removes it, unless
another process still uses it.

    runtime_dirs.py SOURCE_ROOT TESTPMD PERF RC_MSG PINGPONG PIPELINE
                    GATEWAY VERBS_PINGPONG ORDER_ANSWER SOAK ONEMSG

Each run has a --file-prefix of its own:
  - every tool and example with --no-huge --no-shconf (an empty
    directory), to its end; qpio-gateway and qpio-verbs-pingpong end
    with status 1 after EAL started (no interface, no server), through
    their cleanup;
  - qpio-testpmd, qpio-rc-msg and qpio-perf with --no-huge and shared
    config (config, fbarray_* and mp_socket in the directory, seen while
    qpio-testpmd runs, telemetry on);
  - on 2 MB hugepages (reserved and mounted here, given back at the
    end): qpio-perf's server (primary) and client (secondary) and
    qpio-order-answer's, the secondary ending first: the directory goes
    with the primary; then a primary that ends while a secondary is
    still attached: the directory is kept whole, with the reason logged
    at DEBUG, and the next primary on that prefix clears it.
Needs root (/var/run/dpdk, hugepages): exits 77 with the reason otherwise,
and when the hugepages cannot be had (after the other cases passed).
Exit 0 when every check passes, 1 if not.
"""
import glob
import os
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from hugepages import Hugepages  # noqa: E402 (test/hugepages.py)

SKIP = 77
HP_ADD = 72
BASE = "/var/run/dpdk"
(SRC, TESTPMD, PERF, RC_MSG, PINGPONG, PIPELINE, GATEWAY, VERBS_PP,
 ORDER_ANSWER, SOAK, ONEMSG) = sys.argv[1:12]
LOGS = ["--log-level=lib.eal:error", "--log-level=qpio.lib.eal:debug"]
failures = 0
prefixes = []


def check(ok, what, detail=""):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures += 1
        if detail:
            print(detail)
    return ok


def prefix(tag):
    p = "qpio-rd-%s-%d" % (tag, os.getpid())
    prefixes.append(p)
    return p


def rundir(pfx):
    return os.path.join(BASE, pfx)


def entries(pfx):
    try:
        return sorted(os.listdir(rundir(pfx)))
    except FileNotFoundError:
        return None


def finish(p, timeout=60):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, out, err + "\n(killed: no exit within %d s)" % timeout
    return p.returncode, out, err


def start(exe, eal, app):
    return subprocess.Popen([exe] + eal + LOGS + ["--"] + app,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def run(exe, eal, app, timeout=60):
    return finish(start(exe, eal, app), timeout)


def gone(what, pfx, rc, want_rc, out, err):
    """The run ended with want_rc and its directory is gone."""
    left = entries(pfx)
    detail = "stdout:\n%s\nstderr:\n%s" % (out[-2000:], err[-2000:])
    check(rc == want_rc, "%s: exit %s (want %s)" % (what, rc, want_rc), detail)
    check(left is None, "%s: %s removed%s" % (
        what, rundir(pfx), "" if left is None else
        ", but it holds %s" % left), detail)


def nohuge(tag, lcores, shconf=False, telemetry=False):
    pfx = prefix(tag)
    e = lcores + ["--no-huge", "--no-pci", "-m", "512",
                  "--file-prefix=" + pfx]
    if not shconf:
        e.append("--no-shconf")
    if not telemetry:
        e.append("--no-telemetry")
    return pfx, e


RING_PAIR = ["--dev", "ring0,peer=ring1", "--dev", "ring1,peer=ring0"]


def case_nohuge():
    pcap = os.path.join(SRC, "data", "linux-stack.pcap")
    runs = [
        ("qpio-testpmd", TESTPMD, ["-l", "0-1"], RING_PAIR +
         ["--forward-mode=io", "--tx-first", "--max-packets=20000"], 0),
        ("qpio-perf", PERF, ["-l", "0-1"],
         ["--test", "ib_send_lat", "-n", "200"], 0),
        ("qpio-rc-msg", RC_MSG, ["-l", "0-1"], ["--count", "1000"], 0),
        ("qpio-pingpong", PINGPONG, ["-l", "0-1"],
         ["--count", "500", "--warmup", "10"], 0),
        ("qpio-pipeline", PIPELINE, ["--lcores=0@0,1@0,2@1"],
         ["--in", "pcap0,rx_pcap=" + pcap, "--rules",
          os.path.join(SRC, "examples", "pipeline", "rules.conf")], 0),
        ("qpio-soak", SOAK, ["-l", "0"], ["-n", "2000"], 0),
        ("qpio-bench-onemsg", ONEMSG, ["-l", "0"], ["--rounds", "1000"], 0),
        # Status 1 after EAL started: no such interface, no server.
        ("qpio-gateway", GATEWAY, ["-l", "0-1"],
         ["--conf", os.path.join(SRC, "examples", "gateway", "gateway.conf"),
          "--iface-a", "qpio-none-a", "--iface-b", "qpio-none-b",
          "--duration=0.1"], 1),
        ("qpio-verbs-pingpong", VERBS_PP, ["-l", "0", "--vdev=net_null0"],
         ["--dev", "soft0,wire=net_null0,ip=10.9.9.1", "-n", "10",
          "-p", str(closed_port()), "127.0.0.1"], 1),
    ]
    for name, exe, lcores, app, want in runs:
        pfx, eal = nohuge(name.replace("qpio-", ""), lcores)
        rc, out, err = run(exe, eal, app)
        gone(name + " --no-huge --no-shconf", pfx, rc, want, out, err)

    # Shared config without hugepages: the directory has DPDK's files
    # while the program runs (telemetry on: its socket too).
    pfx, eal = nohuge("testpmd-shconf", ["-l", "0-1"], shconf=True,
                      telemetry=True)
    p = start(TESTPMD, eal, RING_PAIR + ["--forward-mode=io", "--tx-first",
                                         "--duration=2"])
    seen = None
    t_end = time.monotonic() + 20
    while p.poll() is None and time.monotonic() < t_end:
        seen = entries(pfx)
        if seen and "config" in seen and "dpdk_telemetry.v2" in seen:
            break
        time.sleep(0.05)
    check(seen is not None and "config" in seen and "mp_socket" in seen and
          "fbarray_memzone" in seen and "dpdk_telemetry.v2" in seen,
          "qpio-testpmd --no-huge: its runtime directory while it runs: %s"
          % seen)
    rc, out, err = finish(p)
    gone("qpio-testpmd --no-huge (shared config)", pfx, rc, 0, out, err)
    check("runtime directory %s removed" % rundir(pfx) in err,
          "qpio-testpmd --no-huge: the removal logged at DEBUG", err[-1000:])

    for name, exe, app in [
            ("qpio-rc-msg", RC_MSG, ["--count", "1000"]),
            ("qpio-perf", PERF, ["--test", "ib_send_lat", "-n", "200"])]:
        pfx, eal = nohuge(name.replace("qpio-", "") + "-shconf", ["-l", "0-1"],
                          shconf=True)
        rc, out, err = run(exe, eal, app)
        gone(name + " --no-huge (shared config)", pfx, rc, 0, out, err)


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def huge_eal(pfx, hp, lcore):
    return ["-l", str(lcore), "--file-prefix=" + pfx, "--huge-dir=" + hp.mnt,
            "-m", "128", "--no-pci", "--no-telemetry"]


def second_eal(pfx, lcore):
    return ["-l", str(lcore), "--proc-type=secondary", "--file-prefix=" + pfx,
            "--no-pci", "--no-telemetry"]


def perf_server(eal, timeout, app=()):
    """qpio-perf --server on port 0; (process, port or None, first line)."""
    p = start(PERF, eal, ["--test", "ib_send_lat", "--server", "-p", "0",
                          "--timeout", str(timeout)] + list(app))
    line = p.stdout.readline()
    if "listening on TCP port" not in line:
        return p, None, line
    return p, int(line.split()[-1]), line


def case_hugepages(hp):
    c1 = "1" if os.cpu_count() > 1 else "0"

    # qpio-perf: the client (secondary) ends, then the server (primary).
    pfx = prefix("perf-pair")
    s, port, line = perf_server(huge_eal(pfx, hp, 0), 20, ["-n", "200"])
    if check(port is not None, "qpio-perf server listens: %s" % line.strip()):
        crc, cout, cerr = run(PERF, second_eal(pfx, c1),
                              ["--test", "ib_send_lat", "-n", "200",
                               "--connect", "localhost", "-p", str(port),
                               "--dev", "soft1", "--timeout", "20"])
        check(crc == 0, "qpio-perf client (secondary): exit %s" % crc,
              cerr[-2000:])
        src, sout, serr = finish(s)
        gone("qpio-perf server (primary) after its secondary", pfx, src, 0,
             line + sout, serr)
    else:
        finish(s)

    # qpio-order-answer, as the guides' first program page runs it.
    pfx = prefix("order-answer")
    s = start(ORDER_ANSWER, huge_eal(pfx, hp, 0), ["server", "soft0", "0"])
    line = s.stdout.readline()
    if check(line.startswith("server: listening on port "),
             "qpio-order-answer server listens: %s" % line.strip()):
        port = line.split()[-1]
        crc, cout, cerr = run(ORDER_ANSWER, second_eal(pfx, c1),
                              ["client", "soft1", "127.0.0.1", port, "100"])
        check(crc == 0, "qpio-order-answer client (secondary): exit %s" % crc,
              cerr[-2000:])
        src, sout, serr = finish(s)
        gone("qpio-order-answer server (primary) after its secondary", pfx,
             src, 0, line + sout, serr)
    else:
        finish(s)

    # A primary that ends while its secondary is attached: the secondary
    # waits for a server that is not there, the primary waits 3 s for a
    # client that does not come and exits 1, through its cleanup.
    pfx = prefix("perf-attached")
    s, port, line = perf_server(huge_eal(pfx, hp, 0), 3)
    if not check(port is not None, "qpio-perf server listens: %s"
                 % line.strip()):
        finish(s)
        return
    c = start(PERF, second_eal(pfx, c1),
              ["--test", "ib_send_lat", "--connect", "localhost", "-p",
               str(closed_port()), "--dev", "soft1", "--timeout", "10"])
    sock = None
    t_end = time.monotonic() + 20
    while c.poll() is None and time.monotonic() < t_end:
        socks = glob.glob(os.path.join(rundir(pfx), "mp_socket_%d_*" % c.pid))
        if socks:
            sock = os.path.basename(socks[0])
            break
        time.sleep(0.05)
    check(sock is not None, "the secondary attached (%s)" % sock)
    src, sout, serr = finish(s)
    alive = c.poll() is None
    left = entries(pfx)
    check(src == 1 and "no client connected within 3.0 s" in serr,
          "qpio-perf server, no client: exit %s" % src, serr[-2000:])
    check(alive, "the secondary still runs after its primary's exit")
    check(left is not None and "config" in left and "hugepage_info" in left
          and sock in left and any(e.startswith("fbarray_memseg") for e in left),
          "the primary kept %s whole while its secondary is attached: %s"
          % (rundir(pfx), left))
    check("runtime directory kept (still in use after 1000 ms): %s: "
          % rundir(pfx) in serr and
          (sock in serr or "fbarray_memseg" in serr),
          "the primary logs why at DEBUG",
          "\n".join(l for l in serr.splitlines() if "qpio.lib.eal" in l))
    crc, cout, cerr = finish(c)
    check(crc == 1, "the secondary, no server: exit %s" % crc, cerr[-2000:])
    # The next primary on the prefix clears the stale files at its start
    # and the rest at its end.
    s, port, line = perf_server(huge_eal(pfx, hp, 0), 1)
    src, sout, serr = finish(s)
    gone("the next primary on the kept prefix", pfx, src, 1, line + sout, serr)


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root (the runtime directories under %s, 2 MB "
              "hugepages for the primary and secondary cases)" % BASE)
        return SKIP
    hp = Hugepages(HP_ADD, "qpio-runtime-dirs-huge.")
    reason = None
    try:
        case_nohuge()
        reason = hp.setup()
        if reason is None:
            case_hugepages(hp)
    finally:
        hp.teardown()
        for p in prefixes:
            shutil.rmtree(rundir(p), ignore_errors=True)
    print("%d failure(s)" % failures)
    if failures:
        return 1
    if reason is not None:
        print("SKIP: the primary and secondary cases: " + reason)
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
