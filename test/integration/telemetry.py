#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The /qpio/... telemetry commands on a running qpio-testpmd, read over
EAL's telemetry socket the way dpdk-telemetry.py reads it (and with
dpdk-telemetry.py itself when it is installed).

Two qp ports over soft RDMA devices, rxonly with --tx-first: each port
sends one burst of 32 frames of 64 bytes and receives the other's, so
the counters end at known values.

    telemetry.py PATH/TO/qpio-testpmd
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BURST = 32
FRAME = 64


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def runtime_dir(prefix):
    # EAL's rule (eal_create_runtime_dir), as dpdk-telemetry.py has it.
    if os.getuid() == 0:
        base = "/var/run"
    else:
        base = os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix)


class Telemetry:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect(path)
        self.hello = json.loads(self.sock.recv(1024).decode())
        self.max_len = self.hello["max_output_len"]

    def cmd(self, text):
        self.sock.send(text.encode())
        reply = json.loads(self.sock.recv(self.max_len).decode())
        key = text.split(",", 1)[0]
        if list(reply) != [key]:
            fail(f"{text}: reply {reply}")
        return reply[key]


def expect(what, got, want):
    if got != want:
        fail(f"{what}: {got!r}, want {want!r}")


def main():
    tp = sys.argv[1]
    prefix = f"qpio-it-tel-{os.getpid()}"
    tmp = tempfile.mkdtemp()
    out_path = os.path.join(tmp, "out")
    cmd = [tp, "-l", "0-1", "--no-huge", "--no-shconf", "--no-pci",
           "-m", "512", "--log-level=lib.eal:error",
           f"--file-prefix={prefix}", "--",
           "--dev", "qp0,dev=soft0,qp=rc,peer=qp1",
           "--dev", "qp1,dev=soft1,qp=rc,peer=qp0",
           "--forward-mode=rxonly", "--tx-first", "--duration=120"]
    with open(out_path, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        check(proc, prefix, out_path)
    except BaseException:
        proc.kill()
        proc.wait()
        print(open(out_path).read())
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check(proc, prefix, out_path):
    path = os.path.join(runtime_dir(prefix), "dpdk_telemetry.v2")
    for _ in range(600):
        if proc.poll() is not None:
            fail(f"qpio-testpmd exited with {proc.returncode}")
        if os.path.exists(path) and \
                "Forwarding started" in open(out_path).read():
            break
        time.sleep(0.1)
    else:
        fail(f"no telemetry socket at {path}")
    tel = Telemetry(path)
    expect("hello pid", tel.hello["pid"], proc.pid)

    # Wait until both bursts have been received (bounded, no timing
    # assertion: the count is what is checked).
    for _ in range(600):
        if all(tel.cmd(f"/qpio/port/stats,{p}")["ipackets"] == BURST
               for p in (0, 1)):
            break
        time.sleep(0.05)
    expect("/qpio/port/list", tel.cmd("/qpio/port/list"), [0, 1])
    for p in (0, 1):
        st = tel.cmd(f"/qpio/port/stats,{p}")
        expect(f"port {p} stats", st, {
            "ipackets": BURST, "opackets": BURST,
            "ibytes": BURST * FRAME, "obytes": BURST * FRAME,
            "imissed": 0, "ierrors": 0, "oerrors": 0, "rx_nombuf": 0})
        xs = tel.cmd(f"/qpio/port/xstats,{p}")
        for k, v in (("rx_good_packets", BURST),
                     ("tx_good_packets", BURST),
                     ("rx_good_bytes", BURST * FRAME),
                     ("rx_q0_packets", BURST), ("tx_q0_bytes", BURST * FRAME)):
            expect(f"port {p} xstat {k}", xs.get(k), v)
        info = tel.cmd(f"/qpio/port/info,{p}")
        expect(f"port {p} name", info["name"], f"qp{p}")
        expect(f"port {p} driver", info["driver"], "qp")
        expect(f"port {p} state", info["state"], "started")
        link = tel.cmd(f"/qpio/port/link,{p}")
        expect(f"port {p} link", link["status"], "UP")
    for bad in ("/qpio/port/stats,2", "/qpio/port/stats,x",
                "/qpio/port/stats", "/qpio/port/xstats,99999"):
        expect(bad, tel.cmd(bad), None)

    expect("/qpio/rdma/list", tel.cmd("/qpio/rdma/list"), ["soft0", "soft1"])
    for dev in ("soft0", "soft1"):
        info = tel.cmd(f"/qpio/rdma/info,{dev}")
        expect(f"{dev} driver", info["driver"], "soft")
        # Two MRs: the mempool's one chunk and the qp port's credit word.
        for k, v in (("nb_pd", 1), ("nb_qp", 1), ("nb_cq", 2), ("nb_mr", 2),
                     ("nb_ah", 0), ("nb_srq", 0)):
            expect(f"{dev} {k}", info[k], v)
        qpns = tel.cmd(f"/qpio/rdma/qps,{dev}")
        expect(f"{dev} QP count", len(qpns), 1)
        qp = tel.cmd(f"/qpio/rdma/qp,{dev},{qpns[0]}")
        expect(f"{dev} qp type", qp["type"], "RC")
        expect(f"{dev} qp state", qp["state"], "RTS")
        # One burst of 32 sends, one doorbell, nothing refused.
        for k, v in (("wqes_posted", BURST), ("sq_doorbells", 1),
                     ("wqes_per_doorbell", "32.00"), ("rnr_naks", 0),
                     ("rnr_exceeded", 0), ("retry_exceeded", 0),
                     ("flushed", 0)):
            expect(f"{dev} qp {k}", qp.get(k), v)
        if "empty_polls" in qp:
            fail(f"{dev}: empty_polls shown on a QP (polls are of CQs)")
        cqns = tel.cmd(f"/qpio/rdma/cqs,{dev}")
        expect(f"{dev} CQs", sorted(cqns), sorted({qp["send_cqn"],
                                                    qp["recv_cqn"]}))
        for cqn in cqns:
            cq = tel.cmd(f"/qpio/rdma/cq,{dev},{cqn}")
            expect(f"{dev} cq {cqn} users", cq["qp_users"], 1)
            expect(f"{dev} cq {cqn} overflows", cq["overflows"], 0)
            if not 0 <= cq["occupancy"] <= cq["depth"]:
                fail(f"{dev} cq {cqn}: occupancy {cq['occupancy']}")
            # Measured at each poll; never above the depth. (The unit
            # suite 'stats' pins exact values.)
            if not 0 <= cq["occupancy_hwm"] <= cq["depth"]:
                fail(f"{dev} cq {cqn}: occupancy_hwm {cq['occupancy_hwm']}")
        # rxonly keeps polling an idle receive CQ: its empty polls grow.
        rcq = f"/qpio/rdma/cq,{dev},{qp['recv_cqn']}"
        first = tel.cmd(rcq)["empty_polls"]
        if first == 0:
            fail(f"{dev}: the idle receive CQ counted no empty poll")
        for _ in range(600):
            if tel.cmd(rcq)["empty_polls"] > first:
                break
            time.sleep(0.05)
        else:
            fail(f"{dev}: empty_polls stayed at {first} while rxonly polls")
        # 32 frames arrived in one burst and were all polled.
        hwm = tel.cmd(rcq)["occupancy_hwm"]
        if not 1 <= hwm <= BURST:
            fail(f"{dev}: receive CQ occupancy_hwm {hwm}, want 1..{BURST}")
        expect(f"{dev} qp 999999", tel.cmd(f"/qpio/rdma/qp,{dev},999999"),
               None)
    expect("rdma info of nothing", tel.cmd("/qpio/rdma/info,soft7"), None)

    expect("/qpio/mr/mempools", tel.cmd("/qpio/mr/mempools"),
           ["mb_pool_0", "mb_pool_0"])
    mp = tel.cmd("/qpio/mr/mempool,mb_pool_0")
    expect("mb_pool_0 registrations (one per PD)", mp["registrations"], 2)
    expect("mb_pool_0 lkeys", len(mp["lkeys"]), mp["nb_mr"])
    expect("mb_pool_0 size (qpio-testpmd's smallest pool)", mp["size"], 8192)
    # Each qp port keeps its 1024 receive descriptors posted.
    if not 2 * 1024 <= mp["in_flight"] < mp["size"]:
        fail(f"mb_pool_0 in_flight {mp['in_flight']}, want >= 2048")
    cache = tel.cmd("/qpio/mr/cache")
    # One lkey cache per qp port queue (2 ports x rx + tx). mb_pool_0 is one
    # memory chunk, so each qp port takes its lkey once at queue setup and
    # the per-frame caches are never asked.
    expect("/qpio/mr/cache", cache, {"caches": 4, "hits": 0, "misses": 0})

    # Debian's client, unchanged, on the same socket.
    client = shutil.which("dpdk-telemetry.py")
    if client is None:
        print("dpdk-telemetry.py not installed (dpdk-dev): its pass skipped")
    else:
        r = subprocess.run([client, "-f", prefix],
                           input="/qpio/port/stats,1\n/qpio/rdma/list\n",
                           capture_output=True, text=True, timeout=60)
        lines = [json.loads(x) for x in r.stdout.splitlines() if x]
        expect("dpdk-telemetry.py replies", lines, [
            {"/qpio/port/stats": tel.cmd("/qpio/port/stats,1")},
            {"/qpio/rdma/list": ["soft0", "soft1"]}])

    proc.terminate()
    rc = proc.wait(timeout=60)
    expect("exit status after SIGTERM", rc, 0)
    out = open(out_path).read()
    if "mbufs not returned to pool mb_pool_0: 0" not in out:
        fail("mbufs not returned")
    print("telemetry: port, rdma and mr commands give the known counters")


if __name__ == "__main__":
    main()
