#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""qpio-gateway's counters on a known mix of frames: every frame a site
receives ends in exactly one of its counters (doc/guides/sample_app_ug/
gateway.rst), each class in the one it belongs to.

  gateway_account.py GATEWAY GATEWAY.CONF [--queues N] [--overrun]

As root: three network namespaces, the gateway's between two veth pairs
(site a: qgaa<id>, site b: qgab<id>); host a's end has no address and
IPv6 off, so its kernel sends nothing; host b's end has 10.2.0.2/24 (it
answers the gateway's ARP). From host a an AF_PACKET socket writes, to
the gateway's MAC, 188 frames in bursts with pauses (no ring overrun):

  100 UDP 10.1.0.2 -> 10.2.0.2, TTL 64     routed (fwd4), then site b
                                          (16 flows: source ports
                                          40000..40015)
   10 the same with TTL 1                  ttl, ICMP time exceeded
   20 UDP to 10.9.0.1 (no route)           no_route, ICMP unreachable
   10 IPv4 headers with IHL 4              bad
   40 EtherType 0x88b5                     other
    5 UDP to 10.1.0.1 (the gateway's)      local
    3 ARP requests for 10.1.0.1            arp replies

and the gateway's exit counters must be, exactly: site a eth rx 188, each
class as above, ICMP errors 10 and 20 sent and none limited, missed 0;
site b link rx 100 and fwd4 100; on both sites eth rx + link rx = fwd4 +
fwd6 + arp replies + nd adverts + ttl + bad + no_route + mtu + local +
other; site b's routed frames are each sent on its interface, or dropped
waiting for host b (neigh: a burst beyond the 16 it holds before host b
answers), or counted in tx drops, and none is held at exit.

With --queues N (N > 1) the gateway runs two worker lcores with N queues
per port (net_af_packet qpairs=N); the same counts must hold for each
site's sums, and besides: every queue of site a received some of the
frames (the kernel spread the flows), the queues' counts sum to the
site's, and site b's queue q received over the link exactly what site
a's queue q sent (one RC QP per queue), while site b's queues, whichever
of them heard host b's ARP reply, all reached host b.

With --overrun the frames overrun the PMD: 10 routed frames first (site
b learns host b), then the gateway is stopped (SIGSTOP) while 8000 more
are written, more than its net_af_packet ring holds (4096), and
continued (SIGCONT). Then, exactly: site a's eth rx + missed + the
interface's rx_dropped = 8010 sent, missed above 0, every frame received
routed (fwd4 = eth rx), routed = link tx + tx drops, site b's link rx =
site a's link tx = site b's fwd4, and site b's fwd4 = what it sent on its
interface (less its own ARP and ND) + neigh + held + tx drops: every
frame in one place. The gateway's telemetry (/qpio/gateway/stats,a over
EAL's socket, read as dpdk-telemetry.py reads it) gives the same eth rx,
missed and rx_dropped while it still runs. Exit 0 pass, 1 fail, 77 where
namespaces cannot be made.
"""
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from telemetry import Telemetry, runtime_dir  # noqa: E402

SKIP = 77
GW, CONF = sys.argv[1], sys.argv[2]
ARGS = sys.argv[3:]
QUEUES = int(ARGS[ARGS.index("--queues") + 1]) if "--queues" in ARGS else 1
OVERRUN = "--overrun" in ARGS
PRE, OVER = 10, 8000
ID = "%05d" % (os.getpid() % 100000)
NSG, NSA, NSB = "qgaG" + ID, "qgaA" + ID, "qgaB" + ID
VA, VB = "qgaa" + ID, "qgab" + ID
MIX = {"fwd": 100, "ttl": 10, "noroute": 20, "bad": 10, "other": 40,
       "local": 5, "arp": 3}
TOTAL = sum(MIX.values())


def sh(*cmd, check=True):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()))
    return r.stdout


def cksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ipv4(src, dst, ttl, payload, proto=17, ihl=5):
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 20 + len(payload), 0x1234,
                    0x4000, ttl, proto, 0, socket.inet_aton(src),
                    socket.inet_aton(dst))
    h = h[:10] + struct.pack("!H", cksum(h)) + h[12:]
    return h + payload


def udp(dport, sport=40000):
    return struct.pack("!HHHH", sport, dport, 8 + 32, 0) + bytes(32)


def routed(gw_mac, my_mac, n):
    """n UDP frames 10.1.0.2 -> 10.2.0.2 in 16 flows (source ports)."""
    eth = gw_mac + my_mac + b"\x08\x00"
    return [eth + ipv4("10.1.0.2", "10.2.0.2", 64, udp(9, 40000 + i % 16))
            for i in range(n)]


def frames(gw_mac, my_mac):
    eth = gw_mac + my_mac + b"\x08\x00"
    out = routed(gw_mac, my_mac, MIX["fwd"])
    out += [eth + ipv4("10.1.0.2", "10.2.0.2", 1, udp(9))] * MIX["ttl"]
    out += [eth + ipv4("10.1.0.2", "10.9.0.1", 64, udp(9))] * MIX["noroute"]
    out += [eth + ipv4("10.1.0.2", "10.2.0.2", 64, udp(9), ihl=4)] * MIX["bad"]
    out += [gw_mac + my_mac + b"\x88\xb5" + bytes(46)] * MIX["other"]
    out += [eth + ipv4("10.1.0.2", "10.1.0.1", 64, udp(9))] * MIX["local"]
    arp = (b"\xff" * 6 + my_mac + b"\x08\x06" +
           struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + my_mac +
           socket.inet_aton("10.1.0.2") + bytes(6) +
           socket.inet_aton("10.1.0.1") + bytes(18))
    out += [arp] * MIX["arp"]
    return out


SENDER = r"""
import socket, sys, time
frames = [bytes.fromhex(l) for l in sys.stdin.read().split()]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
for i, f in enumerate(frames):
    s.send(f)
    if i % 20 == 19:
        time.sleep(0.005)
"""


def send(fr):
    """Write the frames from host a (bursts of 20, 5 ms apart)."""
    r = subprocess.run(["ip", "netns", "exec", NSA, "python3", "-c", SENDER,
                        VA + "h"], input="\n".join(f.hex() for f in fr),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("the sender: %s" % r.stderr)


def mac_of(ns, dev):
    out = sh("ip", "-n", ns, "-o", "link", "show", dev)
    return bytes.fromhex(re.search(r"link/ether ([0-9a-f:]+)",
                                   out).group(1).replace(":", ""))


def counters(log, site):
    """The site's exit counters by name."""
    c = {}
    pats = {
        r"eth rx (\d+) tx (\d+), link rx (\d+) tx (\d+), routed ipv4 (\d+) "
        r"ipv6 (\d+)": ["eth_rx", "eth_tx", "link_rx", "link_tx", "fwd4",
                        "fwd6"],
        r"arp replies (\d+) requests (\d+), nd adverts (\d+) solicits (\d+)":
            ["arp_replies", "arp_requests", "nd_adverts", "nd_solicits"],
        r"drops ttl (\d+) bad (\d+) no_route (\d+) neigh (\d+) tx (\d+) "
        r"mtu (\d+); local (\d+) other (\d+)":
            ["ttl", "bad", "no_route", "neigh", "tx", "mtu", "local", "other"],
        r"held for a neighbor at exit (\d+)": ["held"],
        r"icmp errors sent: time exceeded (\d+) unreachable (\d+) too big "
        r"(\d+); not sent: rate (\d+) barred (\d+)":
            ["icmp_te", "icmp_unreach", "icmp_big", "icmp_rate",
             "icmp_barred"],
        r"before the site: eth port missed (\d+) errors (\d+) nombuf (\d+); "
        r"\S+ rx_dropped (\d+)": ["missed", "errors", "nombuf", "rx_dropped"],
    }
    for pat, names in pats.items():
        m = re.search(r"^site %s: %s$" % (site, pat), log, re.M)
        if m is None:
            raise RuntimeError("no line '%s' for site %s" % (pat, site))
        for n, v in zip(names, m.groups()):
            c[n] = int(v)
    return c


def queue_counters(log, site):
    """Per queue of the site: (eth_rx, eth_tx, link_rx, link_tx, fwd4)."""
    pat = (r"^site %s queue (\d+) \(lcore \d+\): eth rx (\d+) tx (\d+), "
           r"link rx (\d+) tx (\d+), routed ipv4 (\d+) ipv6 \d+$" % site)
    return {int(m.group(1)): tuple(int(v) for v in m.groups()[1:])
            for m in re.finditer(pat, log, re.M)}


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root to create network namespaces")
        return SKIP
    try:
        sh("ip", "netns", "add", NSG)
    except RuntimeError as e:
        print("SKIP: cannot create a network namespace: %s" % e)
        return SKIP
    gw = None
    try:
        sh("ip", "netns", "add", NSA)
        sh("ip", "netns", "add", NSB)
        for v, ns in ((VA, NSA), (VB, NSB)):
            sh("ip", "-n", NSG, "link", "add", v, "type", "veth", "peer",
               "name", v + "h", "netns", ns)
            for n, dev in ((NSG, v), (ns, v + "h")):
                sh("ip", "netns", "exec", n, "sysctl", "-qw",
                   "net.ipv6.conf.%s.disable_ipv6=1" % dev)
                sh("ip", "-n", n, "link", "set", dev, "up")
        sh("ip", "-n", NSB, "addr", "add", "10.2.0.2/24", "dev", VB + "h")
        log_path = "/tmp/qpio-gw-account-%s.log" % ID
        log = open(log_path, "w")
        # Two queues: two workers, queue 0 of both sites on one, queue 1
        # on the other (the main lcore sleeps beside the first).
        lcores = ["-l", "0-1"] if QUEUES == 1 else ["--lcores=0@0,1@0,2@1"]
        gw = subprocess.Popen(
            ["ip", "netns", "exec", NSG, GW] + lcores + ["--no-huge",
             "--no-pci", "-m", "512", "--file-prefix=qpio-gwacc-" + ID,
             "--log-level=lib.eal:error", "--", "--conf", CONF, "--iface-a",
             VA, "--iface-b", VB, "--pmd", "af_packet", "--queues",
             str(QUEUES), "--duration", "8"],
            stdout=log, stderr=subprocess.STDOUT)
        for _ in range(100):
            if "gateway running" in open(log_path).read() or \
               gw.poll() is not None:
                break
            time.sleep(0.1)
        if "gateway running" not in open(log_path).read():
            print(open(log_path).read())
            print("FAIL: the gateway did not start")
            return 1
        gmac, hmac = mac_of(NSG, VA), mac_of(NSA, VA + "h")
        if OVERRUN:
            send(routed(gmac, hmac, PRE))
            time.sleep(0.5)
            os.kill(gw.pid, signal.SIGSTOP)
            try:
                send(routed(gmac, hmac, OVER))
            finally:
                os.kill(gw.pid, signal.SIGCONT)
            tel = Telemetry(os.path.join(runtime_dir("qpio-gwacc-" + ID),
                                         "dpdk_telemetry.v2"))
            # until site a has taken and sent on what its ring held
            # (bounded; the counts are what is checked)
            for _ in range(50):
                ta = tel.cmd("/qpio/gateway/stats,a")
                if ta["eth_rx"] + ta["missed"] + ta["rx_dropped"] == \
                        PRE + OVER and ta["fwd4"] == ta["eth_rx"] and \
                        ta["link_tx"] + ta["tx_drops"] == ta["fwd4"]:
                    break
                time.sleep(0.1)
        else:
            send(frames(gmac, hmac))
        gw.wait(timeout=60)
        log.close()
        out = open(log_path).read()
        os.unlink(log_path)
        a, b = counters(out, "a"), counters(out, "b")
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        if gw is not None and gw.poll() is None:
            gw.kill()
            gw.wait()
        for ns in (NSG, NSA, NSB):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    fails = []

    def want(site, c, name, v):
        if c[name] != v:
            fails.append("site %s %s %d, want %d" % (site, name, c[name], v))

    if OVERRUN:
        for k, name in (("eth_rx", "eth_rx"), ("missed", "missed"),
                        ("rx_dropped", "rx_dropped"), ("fwd4", "fwd4"),
                        ("link_tx", "link_tx"), ("tx_drops", "tx")):
            if ta[k] != a[name]:
                fails.append("telemetry site a %s %d, at exit %d" %
                             (k, ta[k], a[name]))
        if ta["queues"] != 1:
            fails.append("telemetry queues %d, want 1" % ta["queues"])
        want("a", a, "eth_rx", PRE + OVER - a["missed"] - a["rx_dropped"])
        if a["missed"] == 0:
            fails.append("site a missed 0: the ring was not overrun")
        want("a", a, "fwd4", a["eth_rx"])
        want("a", a, "link_tx", a["fwd4"] - a["tx"])
        want("b", b, "link_rx", a["link_tx"])
        want("b", b, "fwd4", b["link_rx"])
    else:
        want("a", a, "eth_rx", TOTAL)
        want("a", a, "fwd4", MIX["fwd"])
        want("a", a, "ttl", MIX["ttl"])
        want("a", a, "no_route", MIX["noroute"])
        want("a", a, "bad", MIX["bad"])
        want("a", a, "other", MIX["other"])
        want("a", a, "local", MIX["local"])
        want("a", a, "arp_replies", MIX["arp"])
        want("a", a, "icmp_te", MIX["ttl"])
        want("a", a, "icmp_unreach", MIX["noroute"])
        want("a", a, "icmp_rate", 0)
        want("a", a, "missed", 0)
        want("a", a, "link_tx", MIX["fwd"])
        want("b", b, "link_rx", MIX["fwd"])
        want("b", b, "fwd4", MIX["fwd"])
        # a packet one queue held leaves when another hears the answer
        want("b", b, "held", 0)
    # Site b: routed = sent on the interface (less its own ARP and ND) +
    # dropped waiting for host b (a burst beyond the 16 held before host b
    # answers: timing) + held + tx drops.
    want("b", b, "fwd4", b["eth_tx"] - b["arp_requests"] -
         b["arp_replies"] - b["nd_solicits"] - b["nd_adverts"] +
         b["neigh"] + b["held"] + b["tx"])
    if QUEUES > 1:
        qa, qb = queue_counters(out, "a"), queue_counters(out, "b")
        if sorted(qa) != list(range(QUEUES)) or \
           sorted(qb) != list(range(QUEUES)):
            fails.append("queue lines: site a %s, site b %s, want 0..%d" %
                         (sorted(qa), sorted(qb), QUEUES - 1))
        else:
            for q in range(QUEUES):
                if qa[q][0] == 0:
                    fails.append("site a queue %d received nothing: the "
                                 "flows did not spread" % q)
                if qb[q][2] != qa[q][3]:
                    fails.append("site b queue %d link rx %d != site a "
                                 "queue %d link tx %d" % (q, qb[q][2], q,
                                                          qa[q][3]))
            for i, name in enumerate(("eth_rx", "eth_tx", "link_rx",
                                      "link_tx", "fwd4")):
                for site, qc, c in (("a", qa, a), ("b", qb, b)):
                    got = sum(v[i] for v in qc.values())
                    if got != c[name]:
                        fails.append("site %s: queues' %s sum to %d, not "
                                     "%d" % (site, name, got, c[name]))
    for site, c in (("a", a), ("b", b)):
        ends = sum(c[k] for k in ("fwd4", "fwd6", "arp_replies",
                                  "nd_adverts", "ttl", "bad", "no_route",
                                  "mtu", "local", "other"))
        if c["eth_rx"] + c["link_rx"] != ends:
            fails.append("site %s: eth rx %d + link rx %d != %d in the "
                         "counters" % (site, c["eth_rx"], c["link_rx"], ends))
    if fails:
        print(out)
        for f in fails:
            print("FAIL: " + f)
        return 1
    if OVERRUN:
        print("PASS: %d frames sent, overrunning the ring: site a eth rx %d "
              "+ missed %d + rx_dropped %d; site b routed %d, neigh %d, "
              "held %d, tx %d" % (PRE + OVER, a["eth_rx"], a["missed"],
                                  a["rx_dropped"], b["fwd4"], b["neigh"],
                                  b["held"], b["tx"]))
        return 0
    print("PASS: %d frames, each in its counter; site b routed %d, held at "
          "exit %d, neigh %d, tx %d" % (TOTAL, b["fwd4"], b["held"],
                                        b["neigh"], b["tx"]))
    if QUEUES > 1:
        print("PASS: %d queues; site a eth rx per queue %s, site b link rx "
              "per queue %s" % (QUEUES, [qa[q][0] for q in range(QUEUES)],
                                [qb[q][2] for q in range(QUEUES)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
