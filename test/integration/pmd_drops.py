#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Frames the kernel drops in front of net_af_packet and net_af_xdp are
counted: net_af_packet's ring overruns in the eth port's imissed
(rx_missed_errors, drivers/net/eth/eth_kdrops.c), net_af_xdp's in the
interface's rx_dropped (veth counts the frames its XDP program could not
redirect into a full AF_XDP ring).

  pmd_drops.py TESTPMD

As root, in a network namespace of its own with a veth pair (IPv6 off,
so the kernel sends nothing on it), qpio-testpmd -i holds an eth port on
one end, started but not forwarding, with a small ring (net_af_packet
framecnt=64, net_af_xdp --rxd=64). 3000 frames are written on the other
end with an AF_PACKET socket, in bursts of 100 with 1 ms between bursts
(so that the kernel's input backlog drops none); then forwarding starts
(rxonly), stops, and the counters must satisfy, exactly:

  net_af_packet: rx_good_packets + rx_missed_errors = 3000, the veth
                 end's rx_dropped 0, rx_missed_errors above 0;
  net_af_xdp:    rx_good_packets + the veth end's rx_dropped = 3000,
                 rx_dropped above 0, rx_missed_errors (XDP_STATISTICS
                 rx_dropped: frames without a fill buffer) among them.

Exit 0 when both PMDs pass, 1 when one fails, 77 where namespaces cannot
be made (not root) or a tool is missing.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

SKIP = 77
SENT = 3000
BURST = 100
TESTPMD = sys.argv[1]
ID = "%05d" % (os.getpid() % 100000)
NS = "qpdN" + ID
VP, VS = "qpdp" + ID, "qpds" + ID      # PMD end, sender end


def sh(*cmd, check=True):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()))
    return r.stdout


def in_ns(*cmd, check=True):
    return sh("ip", "netns", "exec", NS, *cmd, check=check)


class Testpmd:
    """qpio-testpmd -i with its output gathered by a thread."""

    def __init__(self, args):
        self.p = subprocess.Popen(["ip", "netns", "exec", NS, TESTPMD] + args,
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        self.out = ""
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            with self.lock:
                self.out += line

    def text(self):
        with self.lock:
            return self.out

    def wait_for(self, what, since=0, secs=30):
        end = time.time() + secs
        while time.time() < end:
            t = self.text()
            if what in t[since:]:
                return True
            if self.p.poll() is not None:
                time.sleep(0.2)
                return what in self.text()[since:]
            time.sleep(0.05)
        return False

    def cmd(self, line, want, secs=30):
        since = len(self.text())
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.wait_for(want, since, secs)

    def end(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.flush()
            self.p.wait(timeout=30)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            self.p.kill()
            self.p.wait()
        return self.p.returncode


def send_frames(n):
    """n frames of 60 bytes from VS, in bursts, inside the namespace."""
    code = ("import socket,time,sys\n"
            "s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\n"
            "s.bind((%r,0))\n"
            "f=bytes.fromhex('ffffffffffff020000000001'+'88b5')+bytes(46)\n"
            "for i in range(%d):\n"
            "    s.send(f)\n"
            "    if i %% %d == %d: time.sleep(0.001)\n"
            % (VS, n, BURST, BURST - 1))
    in_ns("python3", "-c", code)


def one(pmd):
    devargs = {"af_packet": "eth0,vdev=net_af_packet0,iface=%s,framecnt=64" % VP,
               "af_xdp": "eth0,vdev=net_af_xdp0,iface=%s" % VP}[pmd]
    t = Testpmd(["-l", "0-1", "--no-huge", "--no-shconf", "--no-pci", "-m",
                 "256", "--file-prefix=qpio_pmd_drops_%s_%s" % (pmd, ID),
                 "--log-level=lib.eal:error", "--", "--dev", devargs,
                 "--forward-mode=rxonly", "--rxd=64", "--txd=64",
                 "--total-num-mbufs=8191", "-i"])
    if not t.wait_for("Interactive mode"):
        print("FAIL: %s: testpmd did not reach its prompt:\n%s" % (pmd, t.text()))
        t.end()
        return False
    rx_dropped0 = int(in_ns("cat", "/sys/class/net/%s/statistics/rx_dropped" % VP))
    send_frames(SENT)
    time.sleep(0.5)
    ok = t.cmd("start", "started") and t.cmd("stop", "stopped")
    ok = ok and t.cmd("show port xstats 0", "rx_missed_errors")
    rc = t.end()
    out = t.text()
    rx_dropped = int(in_ns("cat", "/sys/class/net/%s/statistics/rx_dropped" % VP)) - rx_dropped0
    rx = re.findall(r"^rx_good_packets: (\d+)$", out, re.M)
    missed = re.findall(r"^rx_missed_errors: (\d+)$", out, re.M)
    if not ok or not rx or not missed:
        print("FAIL: %s: no port statistics (testpmd exit %s):\n%s" % (pmd, rc, out[-3000:]))
        return False
    rx, missed = int(rx[-1]), int(missed[-1])
    for dev in (VP, VS):
        print("  %s: %s" % (dev, " ".join(
            "%s %s" % (c, in_ns("cat", "/sys/class/net/%s/statistics/%s" % (dev, c)).strip())
            for c in ("rx_packets", "rx_dropped", "tx_packets", "tx_dropped"))))
    if pmd == "af_packet":
        # the ring's drops are the PMD's missed, the interface drops none
        total = rx + missed + rx_dropped
        good = total == SENT and missed > 0 and rx_dropped == 0
    else:
        # the interface counts every frame XDP could not hand over; the
        # PMD's missed (XDP_STATISTICS rx_dropped) are some of those
        total = rx + rx_dropped
        good = total == SENT and rx_dropped > 0 and missed <= rx_dropped
    print("%s: %s: sent %d = %d counted: rx_good_packets %d, rx_missed_errors %d, "
          "veth rx_dropped %d" % ("ok" if good else "FAIL", pmd, SENT, total, rx,
                                  missed, rx_dropped))
    if not good:
        print(out[-3000:])
    return good


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root to create network namespaces")
        return SKIP
    for tool in ("ip", "python3"):
        if shutil.which(tool) is None:
            print("SKIP: %s missing (usertools/install-deps.sh)" % tool)
            return SKIP
    if subprocess.run(["ip", "netns", "add", NS], capture_output=True).returncode:
        print("SKIP: cannot create network namespaces here")
        return SKIP
    fails = 0
    try:
        in_ns("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        in_ns("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
        in_ns("ip", "link", "set", "lo", "up")
        in_ns("ip", "link", "add", VP, "type", "veth", "peer", "name", VS)
        in_ns("ip", "link", "set", VP, "up")
        in_ns("ip", "link", "set", VS, "up")
        for pmd in ("af_packet", "af_xdp"):
            if not one(pmd):
                fails += 1
    finally:
        pids = sh("ip", "netns", "pids", NS, check=False).split()
        for pid in pids:
            try:
                os.kill(int(pid), 9)
            except OSError:
                pass
        sh("ip", "netns", "del", NS, check=False)
    return 1 if fails else 0


sys.exit(main())
