#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""SIGINT to usertools/qpio-gateway-demo.sh in the middle of its traffic
stops it at once and leaves nothing behind.

  gateway_demo_sigint.py DEMO BUILD

Starts the demo (--seconds 20, so an iperf3 run is under way), waits
for its first iperf3 check to begin, sends SIGINT to the script alone
(as a supervisor or a test harness does, not to its process group), and
checks: it exits with status 130 within 10 s; its three network
namespaces (qgwA/qgwB/qgwG<id>) are gone; no process of it is left (its
gateway's --file-prefix qpio-gw-<id> on no command line, nothing in its
namespaces); and DPDK's runtime directory /var/run/dpdk/qpio-gw-<id> is
gone. On a failure what the demo left is removed after the checks. Exit
0 pass, 1 fail, 77 where the demo skips (not root, no namespaces, a tool
missing).
"""
import os
import signal
import subprocess
import sys
import time

DEMO, BUILD = sys.argv[1:3]


def sweep(ident):
    """Remove what a demo that failed to clean up left: the processes in
    its namespaces, the namespaces, the gateway's runtime directory (after
    the checks looked at them, so a failure is reported and still leaves
    the machine clean)."""
    for ns in ("qgwA" + ident, "qgwB" + ident, "qgwG" + ident):
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True,
                              text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    subprocess.run(["rm", "-rf", "/var/run/dpdk/qpio-gw-" + ident])


def main():
    p = subprocess.Popen([DEMO, "--build", BUILD, "--seconds", "20"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    ident = "%05d" % (p.pid % 100000)
    lines = []
    started = False
    for line in p.stdout:
        lines.append(line)
        if line.startswith("SKIP:"):
            p.wait()
            print(line.strip())
            return 77
        if "PASS: ping -6 b -> a" in line:
            started = True       # the next check is iperf3 TCP, 20 s
            break
    if not started:
        p.wait()
        print("FAIL: the demo never reached its iperf3 checks:\n" + "".join(lines))
        return 1
    time.sleep(2)
    t0 = time.time()
    os.kill(p.pid, signal.SIGINT)
    try:
        rest, _ = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        rest, _ = p.communicate()
        print("FAIL: no exit within 10 s of SIGINT:\n" + "".join(lines) + rest)
        sweep(ident)
        return 1
    took = time.time() - t0
    fails = 0

    def check(ok, what):
        nonlocal fails
        print(("ok: " if ok else "FAIL: ") + what)
        fails += not ok

    check(p.returncode == 130, "exit status %d (want 130) after %.1f s"
          % (p.returncode, took))
    time.sleep(0.5)
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True,
                        text=True).stdout
    left = [n for n in ("qgwA" + ident, "qgwB" + ident, "qgwG" + ident)
            if n in ns]
    check(not left, "namespaces gone (left: %s)" % (" ".join(left) or "none"))
    procs = subprocess.run(["pgrep", "-f", "qpio-gw-" + ident],
                           capture_output=True, text=True).stdout.split()
    check(not procs, "no gateway process left (pids: %s)"
          % (" ".join(procs) or "none"))
    rd = "/var/run/dpdk/qpio-gw-" + ident
    check(not os.path.exists(rd), "runtime directory %s gone" % rd)
    if fails:
        print("".join(lines) + rest)
        sweep(ident)
    return 1 if fails else 0


sys.exit(main())
