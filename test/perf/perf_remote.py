#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""qpio-perf as two processes (--server, --connect) over loopback TCP.

  perf_remote.py QPIO_PERF cli    refusals and timeouts, no hugepages needed:
                                   no server, no client, an option mismatch
                                   (IPv4 and IPv6), two soft NICs that are
                                   not one fabric
  perf_remote.py QPIO_PERF soft   the soft NIC as a DPDK primary (server)
                                   and secondary (client) sharing hugepage
                                   memory: send lat and write bw with
                                   --validate, exact counts in both JSON
                                   files; a client killed mid-run

The soft case reserves 2 MB hugepages and mounts a hugetlbfs of its own
(as test/unit/test_mp.c does) and gives them back; it exits 77 with the
reason where that is impossible. Exit 0 when every check passes, 1 if not.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from hugepages import Hugepages  # noqa: E402 (test/hugepages.py)
import time

SKIP = 77
HP_ADD = 72
EXE = sys.argv[1]
CASE = sys.argv[2]
failures = 0
TMP = tempfile.mkdtemp(prefix="qpio-perf-remote.")
prefixes = []


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures += 1
    return ok


def prefix(tag):
    p = "qpio_perf_remote_%s_%d" % (tag, os.getpid())
    prefixes.append(p)
    return p


def nohuge_eal(tag, lcore):
    return ["-l", str(lcore), "--no-huge", "--no-shconf", "--no-pci",
            "--no-telemetry", "--file-prefix=" + prefix(tag),
            "--log-level=lib.eal:error"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_server(eal, app):
    """Start a server with -p 0; return (process, port) once it listens."""
    p = subprocess.Popen([EXE] + eal + ["--"] + app + ["--server", "-p", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline()
    if "listening on TCP port" not in line:
        out, err = p.communicate(timeout=30)
        return p, None, line + out + err
    return p, int(line.split()[-1]), line


def finish(p, timeout=40):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, out, err + "\n(killed: no exit within %d s)" % timeout
    return p.returncode, out, err


def run(eal, app, timeout=40):
    p = subprocess.Popen([EXE] + eal + ["--"] + app, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    return finish(p, timeout)


def case_cli():
    # A client with no server: a clear error within --timeout, exit 1.
    port = free_port()
    t0 = time.monotonic()
    rc, out, err = run(nohuge_eal("c0", 0),
                       ["--test", "ib_send_lat", "--connect", "127.0.0.1",
                        "-p", str(port), "--timeout", "2"])
    dt = time.monotonic() - t0
    check(rc == 1, "no server: exit %s" % rc)
    check(("no qpio-perf server at 127.0.0.1 port %d within 2.0 s" % port) in err,
          "no server: message: " + err.strip())
    check(dt < 25, "no server: ended after %.1f s (--timeout 2)" % dt)

    # A server nobody connects to.
    rc, out, err = run(nohuge_eal("s0", 0),
                       ["--test", "ib_send_lat", "--server", "-p", "0",
                        "--timeout", "1"])
    check(rc == 1 and "no client connected within 1.0 s" in err,
          "no client: exit %s: %s" % (rc, err.strip()))

    # Option mismatches, named on both sides (IPv4, then IPv6).
    for host, sopt, copt, want_c, want_s in [
            ("127.0.0.1", ["-s", "64"], ["-s", "128"],
             "option mismatch: -s is 128 here and 64 at the server",
             "option mismatch: -s is 64 here and 128 at the client"),
            ("::1", ["-c", "RC"], ["-c", "UC"],
             "option mismatch: -c is UC here and RC at the server",
             "option mismatch: -c is RC here and UC at the client")]:
        s, port, sout = start_server(nohuge_eal("sm", 0),
                                     ["--test", "ib_send_lat", "--timeout", "10"] + sopt)
        if not check(port is not None, "mismatch: server listens: " + sout.strip()):
            continue
        rc, out, err = run(nohuge_eal("cm", 1),
                           ["--test", "ib_send_lat", "--connect", host, "-p",
                            str(port), "--timeout", "10"] + copt)
        check(rc == 2 and want_c in err, "mismatch via %s: client exit %s: %s"
              % (host, rc, err.strip()))
        src, sout, serr = finish(s)
        check(src == 2 and want_s in serr, "mismatch via %s: server exit %s: %s"
              % (host, src, serr.strip()))

    # Two primaries are two soft fabrics: neither reaches the other's
    # device, and both say how to run the client.
    s, port, sout = start_server(nohuge_eal("sf", 0),
                                 ["--test", "ib_send_lat", "--timeout", "10"])
    if check(port is not None, "two fabrics: server listens"):
        rc, out, err = run(nohuge_eal("cf", 1),
                           ["--test", "ib_send_lat", "--connect", "localhost",
                            "-p", str(port), "--dev", "soft1", "--timeout", "10"])
        check(rc == 1 and "the server's device soft0 (soft) is not on this "
              "process's soft fabric" in err and "--proc-type=secondary" in err,
              "two fabrics: client exit %s: %s" % (rc, err.strip()))
        src, sout, serr = finish(s)
        check(src == 1 and "the client's device soft1 (soft) is not on this "
              "process's soft fabric" in serr,
              "two fabrics: server exit %s: %s" % (src, serr.strip()))


# ---- hugepages --------------------------------------------------------

hp = Hugepages(HP_ADD, "qpio-perf-huge.")









def pair(tag, app_s, app_c, kill_client_after=None, cdev="soft1", stimeout="20",
         kill_delay=0.0):
    """A primary server and a secondary client of one fabric."""
    pfx = prefix(tag)
    seal = ["-l", "0", "--file-prefix=" + pfx, "--huge-dir=" + hp.mnt, "-m",
            "128", "--no-pci", "--no-telemetry", "--log-level=lib.eal:error"]
    ceal = ["-l", "1" if os.cpu_count() > 1 else "0", "--proc-type=secondary",
            "--file-prefix=" + pfx, "--no-pci", "--no-telemetry",
            "--log-level=lib.eal:error"]
    s, port, sout = start_server(seal, app_s + ["--timeout", stimeout])
    if port is None:
        return None, sout, "", None, "", ""
    capp = app_c + ["--connect", "localhost", "-p", str(port), "--dev", cdev,
                    "--timeout", "20"]
    if kill_client_after is None:
        crc, cout, cerr = run(ceal, capp)
    else:
        c = subprocess.Popen([EXE] + ceal + ["--"] + capp, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        cout = ""
        while kill_client_after not in cout:
            line = c.stdout.readline()
            if line == "":
                break
            cout += line
        time.sleep(kill_delay)
        c.send_signal(signal.SIGKILL)
        crc, o2, cerr = finish(c)
        cout += o2
    src, o2, serr = finish(s)
    return crc, cout, cerr, src, sout + o2, serr


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": str(e)}


def case_soft():
    reason = hp.setup()
    if reason is not None:
        hp.teardown()
        print("SKIP: " + reason)
        return SKIP
    try:
        # SEND latency, every payload checked at both ends.
        sj, cj = os.path.join(TMP, "s.json"), os.path.join(TMP, "c.json")
        app = ["--test", "ib_send_lat", "-s", "64", "-n", "500", "--validate"]
        crc, cout, cerr, src, sout, serr = pair("lat", app + ["--json", sj],
                                                app + ["--json", cj])
        check(crc == 0 and src == 0, "send lat: client exit %s, server exit %s: %s %s"
              % (crc, src, cerr.strip(), serr.strip()))
        c, s = load(cj), load(sj)
        cr = c.get("results", [{}])[0] if c.get("results") else {}
        sr = s.get("results", [{}])[0] if s.get("results") else {}
        check(c.get("role") == "client" and s.get("role") == "server",
              "send lat: roles %s/%s" % (c.get("role"), s.get("role")))
        check(cr.get("bytes") == 64 and cr.get("iterations") == 500,
              "send lat: client row 64 bytes x %s" % cr.get("iterations"))
        check(cr.get("validate", {}).get("checked") == 500 and
              cr.get("validate", {}).get("mismatches") == 0,
              "send lat: client checked %s" % cr.get("validate"))
        check(sr.get("validate", {}).get("checked") == 500 and
              sr.get("validate", {}).get("mismatches") == 0,
              "send lat: server checked %s" % sr.get("validate"))
        check(any(l.split()[:2] == ["64", "500"] for l in cout.splitlines()),
              "send lat: the client prints the row")
        check("the client reports the latency" in sout and
              not any(l.split()[:2] == ["64", "500"] for l in sout.splitlines()),
              "send lat: the server prints no latency row")

        # WRITE bandwidth: the server checks the last 128 messages (one
        # per slot of -t 128) where they landed.
        scsv, ccsv = os.path.join(TMP, "s.csv"), os.path.join(TMP, "c.csv")
        app = ["--test", "ib_write_bw", "-s", "4096", "-n", "3000", "--validate"]
        crc, cout, cerr, src, sout, serr = pair(
            "bw", app + ["--json", sj, "--csv", scsv],
            app + ["--json", cj, "--csv", ccsv])
        check(crc == 0 and src == 0, "write bw: client exit %s, server exit %s: %s %s"
              % (crc, src, cerr.strip(), serr.strip()))
        c, s = load(cj), load(sj)
        cr = c.get("results", [{}])[0] if c.get("results") else {}
        sr = s.get("results", [{}])[0] if s.get("results") else {}
        check(cr.get("iterations") == 3000 and sr.get("iterations") == 3000,
              "write bw: both rows 3000 messages (%s, %s)"
              % (cr.get("iterations"), sr.get("iterations")))
        check(sr.get("validate", {}).get("checked") == 128 and
              sr.get("validate", {}).get("mismatches") == 0,
              "write bw: server checked %s" % sr.get("validate"))
        for path, role in ((ccsv, "client"), (scsv, "server")):
            try:
                with open(path) as f:
                    rows = [l.rstrip("\n").split(",") for l in f]
            except OSError:
                rows = [[]]
            check(len(rows) == 2 and rows[0][-1] == "role" and rows[1][-1] == role,
                  "write bw: %s CSV role column %s" % (role, rows[-1][-1:]))

        # A client on the server's device name: refused with the fix; the
        # server then waits --timeout (3 s) for a client and says so.
        app = ["--test", "ib_send_lat"]
        crc, cout, cerr, src, sout, serr = pair("dup", app, app, cdev="soft0",
                                                stimeout="3")
        check(crc == 1 and "--dev soft0: a device of that name is already on "
              "the fabric" in cerr and "--dev soft1" in cerr,
              "same device name: client exit %s: %s" % (crc, cerr.strip()))
        check(src == 1 and "no client connected within 3.0 s" in serr,
              "same device name: server exit %s: %s" % (src, serr.strip()))

        # A client killed mid-run: the server says so and exits 1.
        app = ["--test", "ib_send_bw", "-s", "4096", "-D", "30"]
        t0 = time.monotonic()
        crc, cout, cerr, src, sout, serr = pair("kill", app, app,
                                                kill_client_after="#bytes",
                                                kill_delay=1.0)
        dt = time.monotonic() - t0
        check(crc == -signal.SIGKILL, "client killed: exit %s" % crc)
        check(src == 1 and "the peer closed the connection (it exited or died)"
              in serr, "client killed: server exit %s: %s" % (src, serr.strip()))
        # A second into the size: the server is past the start barrier.
        check("waiting for the peer to start the size" not in serr,
              "client killed: mid-run, not at the start barrier")
        check(dt < 30, "client killed: the server ended after %.1f s of a 30 s run"
              % dt)
    finally:
        hp.teardown()
    return 0


def main():
    try:
        if CASE == "cli":
            rc = case_cli()
        elif CASE == "soft":
            rc = case_soft()
        else:
            print("unknown case " + CASE)
            return 1
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
        for p in prefixes:
            shutil.rmtree(os.path.join("/var/run/dpdk", p), ignore_errors=True)
    if rc == SKIP:
        return SKIP
    print("%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
