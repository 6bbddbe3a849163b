#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""qpio-testpmd as two processes joined by a connected qp port
(listen= / connect= over lib/cm), as two hosts would be.

  qp_connect.py TESTPMD PCAPCMP SRCROOT forward   captures from process A
        (pcap0 -> qp1,connect=) to process B (qp0,listen= -> pcap1), RC
        and UD, byte-identical (qpio-pcapcmp --ignore-len)
  qp_connect.py TESTPMD PCAPCMP SRCROOT peer-kill  B receives from A
        (txonly); A is killed with SIGKILL mid-transfer: B's link goes
        down once (cm_link_downs 1), its posted receives are flushed
        (rx_flushed 1..rxd), no mbuf is lost; with reconnect=1 a new A
        links again (cm_link_ups 2)
  qp_connect.py TESTPMD PCAPCMP SRCROOT link-wait  --link-wait=1 with no
        listener: exit 1 naming the port (no hugepages needed)

Soft devices in two processes must share one fabric: B is the DPDK
primary (soft0), A a secondary (soft1) of the same --file-prefix, on
hugepages. The script reserves 2 MB hugepages and mounts a hugetlbfs of
its own (as test/perf/perf_remote.py does) and gives them back; it exits
77 with the reason where that is impossible.

With QPIO_CONNECT_RDMA_DEV (an ibv devargs, "ibv0,dev=rxe0") and
QPIO_CONNECT_ADDR (an IP address of that device's netdev) the two
processes are independent (--no-huge), each with its own ibv device, and
the connection goes through librdmacm (test/rxe/guest.sh does this: RC
over the IB CM, UD over SIDR).

With QPIO_CONNECT_WIRE=1 (root) each process has a soft device on the
wire (soft0,wire=net_af_packet0,...,mtu=9000) on one end of a veth pair of
MTU 9000, its own, and the connection is the IB CM on QP1 over RoCEv2
(RC: REQ, REP, RTU; UD: SIDR), as between two hosts with ordinary NICs;
the frames cross the kernel's veth as RoCEv2 packets at path MTU 4096.
In peer-kill the killed sender says nothing on the wire; the receiver
learns of it when the new sender's REQ comes from the same QP number
(REJ "stale connection", and a DREQ ends the old link), then the new
sender links on its next try.
Exit 0 when every check passes, 1 if not.
"""
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from hugepages import Hugepages  # noqa: E402 (test/hugepages.py)

SKIP = 77
HP_ADD = 96
TESTPMD, PCAPCMP, SRC, CASE = sys.argv[1:5]
RXD = 128
IBV = os.environ.get("QPIO_CONNECT_RDMA_DEV", "")
ADDR = os.environ.get("QPIO_CONNECT_ADDR", "127.0.0.1") if IBV else "127.0.0.1"
IBV_NAME = IBV.split(",")[0]
WIRE = os.environ.get("QPIO_CONNECT_WIRE", "") == "1" and not IBV
VETH = ("qcw%da" % os.getpid(), "qcw%db" % os.getpid())
if WIRE:
    ADDR = "10.0.91.1"
TMP = tempfile.mkdtemp(prefix="qpio-qp-connect.")
failures = 0
hp = Hugepages(HP_ADD, "qpio-qp-connect-huge.")


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures += 1
    return ok










def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def frames(path):
    """Number of records of a classic pcap file."""
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


def eal(tag, secondary):
    pfx = "qpio_qp_connect_%s_%d" % (tag, os.getpid())
    e = ["-l", "0-1", "--file-prefix=" + pfx, "--no-pci", "--no-telemetry",
         "--log-level=lib.eal:error"]
    if IBV or WIRE:
        # Two independent processes, each with its own device.
        e = e[:2] + ["--file-prefix=%s_%s" % (pfx, "a" if secondary else "b"),
                     "--no-huge", "--no-shconf", "-m", "512"] + e[3:]
    if WIRE:
        # A on the veth's first end, B on its second; ring frames of
        # 12288 bytes for the MTU of 9000.
        return e + ["--vdev=net_af_packet0,iface=%s,framesz=12288,"
                    "blocksz=12288" % VETH[0 if secondary else 1]]
    if IBV:
        return e
    if secondary:
        return e + ["--proc-type=secondary"]
    return e + ["--huge-dir=" + hp.mnt]


def start(eal_args, app):
    cmd = [TESTPMD] + eal_args + ["--"] + app
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def wait_for(p, what, lines):
    """Read p's output into lines until a line holds what; False at EOF."""
    for line in p.stdout:
        lines.append(line)
        if what in line:
            return True
    return False


def start_listener(eal_args, app, lines):
    """The primary, once it listens: a secondary started before the
    primary's EAL is up cannot attach."""
    p = start(eal_args, app)
    if not wait_for(p, "listening on", lines):
        print("".join(lines))
    return p


def finish(p, timeout=120):
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        return None, out + "\n(killed: no exit within %d s)" % timeout
    return p.returncode, out


def xstat(out, name):
    m = re.findall(r"^%s: (\d+)$" % re.escape(name), out, re.M)
    return int(m[-1]) if m else 0


def dev(role):
    """Device args of the listener (B) or the connector (A)."""
    if IBV:
        return ["--rdma-dev", IBV], IBV_NAME
    if WIRE:
        return ["--rdma-dev", "soft0,wire=net_af_packet0,ip=10.0.91.%d,"
                "mtu=9000" % (1 if role == "b" else 2)], "soft0"
    return [], "soft0" if role == "b" else "soft1"


def forward_one(tag, cap, transport):
    n = frames(cap)
    out = os.path.join(TMP, "%s-%s" % (tag, os.path.basename(cap)))
    tcp = free_port()
    lens = (["--mbuf-size=8320", "--max-pkt-len=73728"] if transport == "rc"
            else ["--mbuf-size=8320", "--max-pkt-len=4096"])
    common = ["--forward-mode=io", "--port-topology=paired", "--nb-cores=1",
              "--total-num-mbufs=4096", "--rxd=%d" % RXD, "--txd=%d" % RXD,
              "--burst=32", "--link-wait=30", "--show-xstats"] + lens
    blines = []
    veth_rx = veth_rx_packets()
    bdev, bname = dev("b")
    adev, aname = dev("a")
    b = start_listener(eal(tag, False),
                       bdev + ["--dev", "qp0,dev=%s,qp=%s,listen=%s:%d"
                               % (bname, transport, ADDR, tcp),
                               "--dev", "pcap1,tx_pcap=" + out,
                               "--max-packets=%d" % n, "--duration=120"]
                       + common, blines)
    a = start(eal(tag, True),
              adev + ["--dev", "pcap0,rx_pcap=" + cap,
                      "--dev", "qp1,dev=%s,qp=%s,connect=%s:%d"
                      % (aname, transport, ADDR, tcp),
                      "--tx-retry=1000000", "--duration=120"] + common)
    arc, aout = finish(a)
    brc, bout = finish(b)
    bout = "".join(blines) + bout
    name = "%s %s (%d frames)" % (transport, os.path.basename(cap), n)
    if not check(arc == 0 and brc == 0, "%s: sender exit %s, receiver exit %s"
                 % (name, arc, brc)):
        print(aout[-3000:] + "\n----\n" + bout[-3000:])
        return
    ok = check(xstat(aout, "cm_link_ups") == 1 and
               xstat(bout, "cm_link_ups") == 1,
               "%s: one link up at each end" % name)
    ok &= bool(check("mbufs not returned to pool mb_pool_0: 0" in bout and
                     re.search(r"mbufs not returned to pool mb_pool_0(_\d+)?: 0",
                               aout),
                     "%s: every mbuf back at both ends" % name))
    if WIRE:
        got = veth_rx_packets() - veth_rx
        ok &= check(got >= n, "%s: the frames crossed the veth as RoCEv2 "
                    "packets (%d packets in at B's end, at least %d)"
                    % (name, got, n))
    r = subprocess.run([PCAPCMP, "--ignore-len", cap, out], capture_output=True,
                       text=True)
    ok &= check(r.returncode == 0, "%s: byte-identical after the connection: %s"
                % (name, (r.stdout + r.stderr).strip()))
    if not ok:
        print(aout[-3000:] + "\n----\n" + bout[-3000:])


def veth_rx_packets():
    """Packets the kernel counted in at B's end of the veth (0 off the
    wire)."""
    if not WIRE:
        return 0
    with open("/sys/class/net/%s/statistics/rx_packets" % VETH[1]) as f:
        return int(f.read())


def wire_setup():
    """The veth pair of MTU 9000 (test/veth.sh); why not, else None."""
    if os.geteuid() != 0:
        return "needs root for a veth pair"
    if shutil.which("ip") is None:
        return "ip (iproute2) not installed"
    r = subprocess.run(["bash", "-c", '. "$0"; veth_up "$1" "$2" && '
                        'ip link set "$1" mtu 9000 && ip link set "$2" mtu 9000',
                        os.path.join(SRC, "test", "veth.sh"), VETH[0], VETH[1]],
                       capture_output=True, text=True)
    if r.returncode != 0:
        subprocess.run(["ip", "link", "del", VETH[0]], stderr=subprocess.DEVNULL)
        return "cannot create a veth pair of MTU 9000: " + r.stderr.strip()
    return None


def case_forward():
    caps = [os.path.join(SRC, "data", "linux-stack.pcap")]
    real = os.path.join(SRC, "..", "shared", "data", "pcap", "real")
    if os.path.isdir(real):
        small = sorted(f for f in os.listdir(real) if f.endswith(".pcap") and
                       os.path.getsize(os.path.join(real, f)) < 100 * 1024)
        caps += [os.path.join(real, f) for f in small[:2]]
    for i, c in enumerate(caps):
        forward_one("rc%d" % i, c, "rc")
    forward_one("ud", caps[0], "ud")


def wait_rx(p, lines):
    """Read p's output until its periodic stats show frames received."""
    for line in p.stdout:
        lines.append(line)
        m = re.search(r"RX-packets: (\d+)", line)
        if m and int(m.group(1)) > 0:
            return True
    return False


def case_peer_kill():
    tcp = free_port()
    common = ["--nb-cores=1", "--total-num-mbufs=2048", "--rxd=%d" % RXD,
              "--txd=%d" % RXD, "--link-wait=30"]
    lines = []
    bdev, bname = dev("b")
    adev, aname = dev("a")
    b = start_listener(eal("kill", False),
                       bdev + ["--dev", "qp0,dev=%s,qp=rc,listen=%s:%d,"
                               "reconnect=1" % (bname, ADDR, tcp),
                               "--forward-mode=rxonly", "--stats-period=1",
                               "--show-xstats",
                               "--duration=%d" % (40 if IBV else 12)]
                       + common, lines)
    a = start(eal("kill", True),
              adev + ["--dev", "qp1,dev=%s,qp=rc,connect=%s:%d"
                      % (aname, ADDR, tcp),
                      "--forward-mode=txonly", "--duration=60"] + common)
    got = wait_rx(b, lines)
    check(got, "the receiver counts frames from the sender before the kill")
    a.send_signal(signal.SIGKILL)
    arc, aout = finish(a)
    check(arc == -signal.SIGKILL, "the sender died of SIGKILL (%s)" % arc)
    # A new sender, with an orderly end: the listener has reconnect=1.
    a2 = start(eal("kill", True),
               adev + ["--dev", "qp1,dev=%s,qp=rc,connect=%s:%d"
                       % (aname, ADDR, tcp),
                       "--forward-mode=txonly", "--duration=1"] + common)
    a2rc, a2out = finish(a2)
    brc, bout = finish(b)
    bout = "".join(lines) + bout
    check(a2rc == 0, "the second sender linked and ended (exit %s)" % a2rc)
    check(brc == 0, "the receiver ran to its end (exit %s)" % brc)
    downs, ups = xstat(bout, "cm_link_downs"), xstat(bout, "cm_link_ups")
    check(ups == 2 and downs == 2,
          "two links up and two down at the receiver (killed, then ended): "
          "ups %d, downs %d" % (ups, downs))
    fl = xstat(bout, "rx_flushed")
    # Receives are reposted in groups of 32: a link goes down with
    # RXD - 31 .. RXD of them posted, each flushed once.
    lo, hi = 2 * (RXD - 31), 2 * RXD
    check(lo <= fl <= hi,
          "each link's posted receives flushed once: rx_flushed %d in [%d, %d]"
          % (fl, lo, hi))
    check("mbufs not returned to pool mb_pool_0: 0" in bout,
          "every mbuf back at the receiver")
    if failures:
        print(bout[-4000:] + "\n----\n" + a2out[-2000:])


def case_link_wait():
    """--link-wait on a port whose listener never comes: exit 1 naming the
    port, without hugepages (the port never links)."""
    tcp = free_port()
    p = start(["-l", "0-1", "--no-huge", "--no-shconf", "--no-pci",
               "--no-telemetry", "--log-level=lib.eal:error",
               "--file-prefix=qpio_qp_connect_lw_%d" % os.getpid()],
              ["--dev", "qp1,dev=soft1,qp=rc,connect=127.0.0.1:%d" % tcp,
               "--forward-mode=txonly", "--link-wait=1", "--duration=5",
               "--show-xstats"])
    rc, out = finish(p)
    check(rc == 1, "exit 1 when a link stays down (exit %s)" % rc)
    check("port 0 (qp1): link still down after --link-wait=1 s" in out,
          "the message names the port and the wait")
    check("mbufs not returned to pool mb_pool_0: 0" in out,
          "every mbuf back after the failed start")


def main():
    if CASE == "link-wait":
        case_link_wait()
        shutil.rmtree(TMP, ignore_errors=True)
        print("qp_connect %s: %s" % (CASE, "every check passed" if failures == 0
                                     else "%d checks failed" % failures))
        return 1 if failures else 0
    if CASE not in ("forward", "peer-kill"):
        shutil.rmtree(TMP, ignore_errors=True)
        print("%s: not a case (forward, peer-kill, link-wait)" % CASE)
        return 2
    reason = None if IBV else wire_setup() if WIRE else hp.setup()
    if reason is not None:
        hp.teardown()
        shutil.rmtree(TMP, ignore_errors=True)
        print("SKIP: " + reason)
        return SKIP
    try:
        {"forward": case_forward, "peer-kill": case_peer_kill}[CASE]()
    finally:
        if WIRE:
            subprocess.run(["ip", "link", "del", VETH[0]],
                           stderr=subprocess.DEVNULL)
        else:
            hp.teardown()
        shutil.rmtree(TMP, ignore_errors=True)
    print("qp_connect %s: %s" % (CASE, "every check passed" if failures == 0
                                 else "%d checks failed" % failures))
    return 1 if failures else 0


sys.exit(main())
