#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""One side of the two-VM test (test/rxe/two_vms.sh), run by two_guest.sh.

  two_vms_guest.py a|b BUILDDIR CAPTURES_FILE

VM b (10.0.78.2) listens, VM a (10.0.78.1) connects; each has its own
kernel and its own rxe0 on its own virtio NIC, and the NICs are joined
only by qemu's socket link. Steps, in the same order on both sides (the
connecting side retries until the listening side is there):

  1. rping: server on b, client on a (rdma_cm over the link).
  2. each capture: qpio-testpmd on a reads it into qp1,connect=..., the
     one on b writes what qp0,listen=... receives; b checks the output
     is byte-identical (qpio-pcapcmp --ignore-len).
  3. disconnect: a sends (txonly) and is killed with SIGKILL once it has
     sent; b sees the link go down once (cm_link_downs 1), its posted
     receives flushed once (rx_flushed RXD-31..RXD), no mbuf lost.

Prints "ok:"/"FAIL:" lines; exit 0 when every check passed, 1 if not.
"""
import os
import re
import signal
import struct
import subprocess
import sys
import time

ROLE, BUILD, CAPS = sys.argv[1:4]
TESTPMD = os.path.join(BUILD, "app", "testpmd", "qpio-testpmd")
PCAPCMP = os.path.join(BUILD, "app", "pcapcmp", "qpio-pcapcmp")
PEER = "10.0.78.2"
RXD = 128
WAIT = "300"   # --link-wait: the other VM may be far behind under TCG
failures = 0


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures += 1
    return ok


def frames(path):
    with open(path, "rb") as f:
        magic = f.read(24)[:4]
        end = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        n = 0
        while True:
            h = f.read(16)
            if len(h) < 16:
                return n
            f.seek(struct.unpack(end + "IIII", h)[2], 1)
            n += 1


def testpmd(tag, app):
    cmd = [TESTPMD, "-l", "0-1", "--no-huge", "--no-shconf", "-m", "512",
           "--no-pci", "--no-telemetry", "--log-level=lib.eal:error",
           "--file-prefix=two_%s_%s" % (ROLE, tag), "--",
           "--rdma-dev", "ibv0,dev=rxe0", "--nb-cores=1",
           "--rxd=%d" % RXD, "--txd=%d" % RXD, "--link-wait=" + WAIT] + app
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def finish(p, timeout=600):
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        out += "\n(killed: no exit within %d s)" % timeout
    return p.returncode, out


def xstat(out, name):
    m = re.findall(r"^%s: (\d+)$" % re.escape(name), out, re.M)
    return int(m[-1]) if m else 0


def step_rping():
    if ROLE == "b":
        r = subprocess.run(["timeout", "300", "rping", "-s", "-a", PEER, "-p",
                            "7170", "-C", "10"], capture_output=True, text=True)
        check(r.returncode == 0, "rping server: 10 pings from the other VM "
              "(exit %d) %s" % (r.returncode, r.stderr.strip()[-200:]))
        return
    end = time.time() + 300
    while True:
        r = subprocess.run(["timeout", "60", "rping", "-c", "-a", PEER, "-p",
                            "7170", "-C", "10", "-S", "64", "-v"],
                           capture_output=True, text=True)
        if r.returncode == 0 or time.time() > end:
            break
        time.sleep(1)
    check(r.returncode == 0 and r.stdout.count("ping data") == 10,
          "rping client: 10 pings across the link (exit %d)" % r.returncode)


def step_forward(i, cap):
    n = frames(cap)
    lens = ["--mbuf-size=8320", "--max-pkt-len=73728",
            "--total-num-mbufs=4096", "--forward-mode=io",
            "--port-topology=paired", "--burst=32", "--show-xstats"]
    port = 7471 + i
    name = "%s (%d frames)" % (os.path.basename(cap), n)
    if ROLE == "a":
        p = testpmd("fwd%d" % i, lens + [
            "--dev", "pcap0,rx_pcap=" + cap,
            "--dev", "qp1,dev=ibv0,qp=rc,connect=%s:%d" % (PEER, port),
            "--tx-retry=1000000", "--duration=600"])
        rc, out = finish(p)
        check(rc == 0 and xstat(out, "cm_link_ups") == 1 and
              re.search(r"mbufs not returned to pool mb_pool_0: 0", out),
              "%s: sent over the connected qp port, every mbuf back (exit %s)"
              % (name, rc)) or print(out[-3000:])
        return
    outp = "/tmp/out/two-%d.pcap" % i
    p = testpmd("fwd%d" % i, lens + [
        "--dev", "qp0,dev=ibv0,qp=rc,listen=%s:%d" % (PEER, port),
        "--dev", "pcap1,tx_pcap=" + outp, "--max-packets=%d" % n,
        "--duration=600"])
    rc, out = finish(p)
    if not check(rc == 0 and "mbufs not returned to pool mb_pool_0: 0" in out,
                 "%s: received, every mbuf back (exit %s)" % (name, rc)):
        print(out[-3000:])
        return
    r = subprocess.run([PCAPCMP, "--ignore-len", cap, outp], capture_output=True,
                       text=True)
    check(r.returncode == 0, "%s: byte-identical from the other VM: %s"
          % (name, (r.stdout + r.stderr).strip()))
    os.remove(outp)


def step_kill():
    port = 7490
    if ROLE == "a":
        p = testpmd("kill", ["--dev", "qp1,dev=ibv0,qp=rc,connect=%s:%d"
                             % (PEER, port), "--forward-mode=txonly",
                             "--total-num-mbufs=2048", "--stats-period=1",
                             "--duration=600"])
        sent = False
        for line in p.stdout:
            m = re.search(r"TX-packets: (\d+)", line)
            if m and int(m.group(1)) > 0:
                sent = True
                break
        p.send_signal(signal.SIGKILL)
        rc, _ = finish(p)
        check(sent and rc == -signal.SIGKILL,
              "sender killed with SIGKILL after it sent (exit %s)" % rc)
        return
    p = testpmd("kill", ["--dev", "qp0,dev=ibv0,qp=rc,listen=%s:%d"
                         % (PEER, port), "--forward-mode=rxonly",
                         "--total-num-mbufs=2048", "--show-xstats",
                         "--duration=15"])
    rc, out = finish(p)
    fl = xstat(out, "rx_flushed")
    check(rc == 0, "receiver ran to its end (exit %s)" % rc)
    check(xstat(out, "rx_good_packets") > 0, "frames arrived before the kill: %d"
          % xstat(out, "rx_good_packets"))
    check(xstat(out, "cm_link_ups") == 1 and xstat(out, "cm_link_downs") == 1,
          "the link went down once when the peer died (ups %d, downs %d)"
          % (xstat(out, "cm_link_ups"), xstat(out, "cm_link_downs")))
    check(RXD - 31 <= fl <= RXD, "posted receives flushed once: rx_flushed %d "
          "in [%d, %d]" % (fl, RXD - 31, RXD))
    check("mbufs not returned to pool mb_pool_0: 0" in out,
          "every mbuf back at the receiver")
    if failures:
        print(out[-3000:])


def main():
    caps = [c for c in open(CAPS).read().split("\n") if c]
    t0 = time.time()
    step_rping()
    print("== vm-%s: rping done at %d s" % (ROLE, time.time() - t0), flush=True)
    for i, c in enumerate(caps):
        step_forward(i, c)
    print("== vm-%s: %d captures done at %d s" % (ROLE, len(caps),
                                                 time.time() - t0), flush=True)
    step_kill()
    print("== vm-%s: disconnect test done at %d s, %s" % (
        ROLE, time.time() - t0, "every check passed" if failures == 0 else
        "%d checks failed" % failures), flush=True)
    return 1 if failures else 0


sys.exit(main())
