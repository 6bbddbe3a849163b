#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""qpio-perf end to end on the soft NIC: short runs of every test, mode and
transport the verbs allow, each JSON record parsed and checked against the
qpio-perf/1 schema (doc/guides/tools/perf.rst), --validate clean, the
corruption hook caught, --expect and --strict exit codes, --rate achieved.

usage: perf_e2e.py QPIO_PERF CASE
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

PERF = sys.argv[1]
CASE = sys.argv[2]
EAL = ["-l", "0-1", "--no-huge", "--no-shconf", "--no-pci",
       "--log-level=lib.eal:error"]
TMP = tempfile.mkdtemp(prefix="qpio-perf-e2e.")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
runs = 0
failures = []

LAT_KEYS = ["count", "p50", "p90", "p99", "p99.9", "p99.99", "p99.999",
            "t_min", "t_max", "t_typical", "t_avg", "t_stdev", "max"]
CAPS = ["max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge",
        "max_inline_data"]


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_schema(doc, where):
    """The qpio-perf/1 record layout, field by field."""
    ok = check(doc.get("schema") == "qpio-perf/1", where + ": schema")
    for k, t in (("test", str), ("mode", str), ("transport", str),
                 ("status", str), ("options", dict), ("results", list),
                 ("expect", list)):
        ok &= check(isinstance(doc.get(k), t), "%s: %s is %s" % (where, k, t.__name__))
    if not ok:
        return False
    ok &= check(doc["test"] in ("send", "write", "read", "atomic"), where + ": test")
    ok &= check(doc.get("role") == "local", where + ": role of a one-process run")
    ok &= check(doc["mode"] in ("lat", "bw"), where + ": mode")
    ok &= check(doc["transport"] in ("RC", "UC", "UD"), where + ": transport")
    ok &= check(num(doc.get("tsc_hz")) and doc["tsc_hz"] > 0, where + ": tsc_hz")
    for k in ("iterations", "duration_s", "qps", "tx_depth", "rx_depth",
              "post_list", "cq_mod", "inline", "sge", "rate_pps"):
        ok &= check(num(doc["options"].get(k)), where + ": options." + k)
    for k in ("bidirectional", "validate", "strict"):
        ok &= check(isinstance(doc["options"].get(k), bool), where + ": options." + k)
    for r in doc["results"]:
        for k in ("bytes", "iterations", "seconds", "bw_peak_mib_s",
                  "bw_avg_mib_s", "bw_avg_gbit_s", "msg_rate_mpps",
                  "rate_target_pps", "rate_achieved_pps"):
            ok &= check(num(r.get(k)), where + ": result." + k)
        lat = r.get("latency_us", {})
        for k in LAT_KEYS:
            ok &= check(num(lat.get(k)), where + ": latency_us." + k)
        if ok and lat["count"] > 0:
            ok &= check(lat["t_min"] <= lat["p50"] <= lat["p99"] <= lat["p99.9"]
                        <= lat["p99.99"] <= lat["p99.999"] <= lat["max"],
                        where + ": percentiles in order")
        v = r.get("validate", {})
        ok &= check(isinstance(v.get("enabled"), bool), where + ": validate.enabled")
        for k in ("checked", "mismatches", "lost"):
            ok &= check(num(v.get(k)), where + ": validate." + k)
        c = r.get("caps", {})
        ok &= check(isinstance(c.get("device"), str), where + ": caps.device")
        ok &= check(num(c.get("path_mtu")), where + ": caps.path_mtu")
        for part in ("requested", "granted"):
            for k in CAPS:
                ok &= check(num(c.get(part, {}).get(k)),
                            "%s: caps.%s.%s" % (where, part, k))
        ok &= check(isinstance(c.get("cut"), list), where + ": caps.cut")
    for g in doc["expect"]:
        ok &= check(isinstance(g.get("gate"), str) and num(g.get("value")) and
                    isinstance(g.get("pass"), bool), where + ": expect entry")
    return ok


def run(args, want_rc=0, json_out=True, eal=None):
    """Run qpio-perf; return (rc, stdout, stderr, json or None)."""
    global runs
    runs += 1
    prefix = "perf-e2e-%s-%d-%d" % (CASE, os.getpid(), runs)
    jpath = os.path.join(TMP, "%d.json" % runs)
    cmd = [PERF] + (eal if eal is not None else EAL) + \
        ["--file-prefix=" + prefix, "--"] + args
    if json_out:
        cmd += ["--json", jpath]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    where = " ".join(args)
    check(p.returncode == want_rc, "%s: exit %d, wanted %d\n%s%s" %
          (where, p.returncode, want_rc, p.stdout[-1500:], p.stderr[-1500:]))
    doc = None
    if json_out and os.path.exists(jpath):
        with open(jpath) as f:
            doc = json.load(f)
        check_schema(doc, where)
    return p.returncode, p.stdout, p.stderr, doc


def clean_run(args, n_sizes=1):
    """A --validate run that must pass with every payload checked."""
    rc, out, err, doc = run(args + ["--validate"])
    where = " ".join(args)
    if doc is None:
        check(False, where + ": no JSON written")
        return None
    check(len(doc["results"]) == n_sizes, "%s: %d results" % (where, len(doc["results"])))
    for r in doc["results"]:
        v = r["validate"]
        check(v["enabled"] is True, where + ": validate enabled")
        check(v["mismatches"] == 0, "%s: %d mismatches" % (where, v["mismatches"]))
        check(v["checked"] > 0, where + ": nothing checked")
        check(r["iterations"] > 0, where + ": no iterations")
        check(r["latency_us"]["count"] > 0, where + ": empty histogram")
    check(doc["status"] == "pass", where + ": status " + doc["status"])
    return doc


def transport_matrix(qpt):
    tests = {"RC": ["send", "write", "read", "atomic"], "UC": ["send", "write"],
             "UD": ["send"]}[qpt]
    for t in tests:
        for mode in ("lat", "bw"):
            n = 2000
            args = ["--test", t, "--mode", mode, "-c", qpt, "-n", str(n)]
            doc = clean_run(args)
            if doc is None:
                continue
            r = doc["results"][0]
            where = " ".join(args)
            check(doc["test"] == t and doc["mode"] == mode and
                  doc["transport"] == qpt, where + ": echo of the options")
            if qpt == "RC" or mode == "lat":
                # Nothing is lost: every message was checked once per end.
                check(r["validate"]["lost"] == 0, where + ": lost")
                check(r["iterations"] == n, "%s: %d iterations" % (where, r["iterations"]))
                want = n * (2 if t == "send" and mode == "lat" or
                            t == "write" and mode == "lat" else 1)
                check(r["validate"]["checked"] == want, "%s: checked %d, wanted %d"
                      % (where, r["validate"]["checked"], want))
            else:
                # UC/UD may drop when the receiver has no receive posted:
                # every message is either checked or counted lost.
                check(r["validate"]["checked"] + r["validate"]["lost"] == n,
                      "%s: checked %d + lost %d != %d" % (where, r["validate"]["checked"],
                                                       r["validate"]["lost"], n))
    # Refused combinations exit 2 with the rule named.
    for t in {"RC": [], "UC": ["read", "atomic"],
              "UD": ["write", "read", "atomic"]}[qpt]:
        rc, out, err, _ = run(["--test", t, "--mode", "bw", "-c", qpt], 2, False)
        check(("UD carries SEND only" if qpt == "UD" else "UC has no RDMA READ")
              in err, "%s %s: refusal message: %s" % (qpt, t, err))


def case_cli():
    rc, out, err, _ = run(["--help"], 0, False)
    check("--test" in out and "exit status" in out, "--help text")
    # -h / --help with no "--" at all: the application's usage, exit 0,
    # EAL not set up (as qpio-testpmd does).
    for h in ("--help", "-h"):
        p = subprocess.run([PERF, h], capture_output=True, text=True, timeout=30)
        check(p.returncode == 0, "%s without --: exit status %d" % (h, p.returncode))
        check(p.stdout.startswith("usage: qpio-perf [EAL options] -- --test TEST "
                                  "[--mode lat|bw]"), "%s without --: usage" % h)
        check("EAL: " not in p.stdout + p.stderr, "%s without --: EAL set up" % h)
    rc, out, err, _ = run(["--test", "ib_send_lat", "-q", "2"], 2, False)
    check("a latency test has one message in flight" in err, "-q refusal: " + err)
    rc, out, err, _ = run(["--test", "send", "--mode", "lat", "-s", "x"], 2, False)
    check("-s 'x': must be a decimal integer" in err, "-s refusal: " + err)
    rc, out, err, _ = run(["--test", "send", "--mode", "bw", "-n", "300",
                           "--validate", "--corrupt-at", "300"], 2, False)
    check("qpio-perf: --corrupt-at 300: beyond the run, whose QP 0 sends "
          "messages 0..299 (-n 300); give N below 300" in err,
          "--corrupt-at refusal: " + err)
    rc, out, err, _ = run(["--test", "ib_send_lat", "--json", "/nonexistent/x.json"],
                          2, False)
    check("--json /nonexistent/x.json: cannot write it" in err, "json path: " + err)
    # A record file that cannot be written (a full disk) fails the run,
    # naming the option and the file.
    for o in ("--json", "--csv"):
        rc, out, err, _ = run(["--test", "ib_send_bw", "-n", "10", "-s", "64",
                               o, "/dev/full"], 1, False)
        check("qpio-perf: %s /dev/full: cannot write: No space left on device"
              % o in err, "%s /dev/full: %s" % (o, err))
    rc, out, err, _ = run(["--test", "ib_send_lat", "--dev", "nosuch0"], 1, False)
    check("qpio-perf: nosuch0: No such device" in err, "bad device: " + err)
    # One lcore only: the two ends need two.
    rc, out, err, _ = run(["--test", "ib_send_lat", "-n", "10"], 2, False,
                          eal=["-l", "0", "--no-huge", "--no-shconf", "--no-pci",
                               "--log-level=lib.eal:error"])
    check("two lcores" in err, "one lcore refusal: " + err)
    # The perftest table headers, with the extra columns.
    rc, out, err, _ = run(["--test", "ib_send_lat", "-n", "100"], 0, False)
    check(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
          "t_avg[usec]    t_stdev[usec]   99% percentile[usec]   "
          "99.9% percentile[usec]" in out, "lat header")
    check("99.99% percentile[usec]   99.999% percentile[usec]   max[usec]" in out,
          "lat extra columns")
    rc, out, err, _ = run(["--test", "ib_write_bw", "-n", "100", "-s", "64"], 0, False)
    check(" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   "
          "MsgRate[Mpps]" in out, "bw header")
    rc, out, err, _ = run(["--test", "ib_write_bw", "-n", "100", "-s", "64",
                           "--report_gbits"], 0, False)
    check("BW peak[Gb/sec]    BW average[Gb/sec]" in out, "gbits header")
    # CSV with the same schema name and granted caps on every row.
    csv = os.path.join(TMP, "x.csv")
    run(["--test", "ib_send_bw", "-a", "-n", "20", "--csv", csv], 0, False)
    with open(csv) as f:
        rows = [l.rstrip("\n").split(",") for l in f]
    check(len(rows) == 1 + 23, "csv rows: %d" % len(rows))
    check(rows[0][0] == "schema" and "granted_max_inline_data" in rows[0], "csv header")
    check(all(r[0] == "qpio-perf/1" and len(r) == len(rows[0]) for r in rows[1:]),
          "csv rows carry the schema and every column")


def case_options():
    # Multi-QP, bidirectional, post lists, moderation, several SGEs.
    doc = clean_run(["--test", "send", "--mode", "bw", "-q", "4", "-b", "-l", "8",
                     "-Q", "16", "--sge", "3", "-s", "300", "-n", "1000"])
    if doc:
        r = doc["results"][0]
        check(r["iterations"] == 8000, "send -q 4 -b iterations %d" % r["iterations"])
        check(r["validate"]["checked"] == 8000, "send -q 4 -b checked")
        # One timing per signaled WR: every 16th and the last, per QP and end.
        check(r["latency_us"]["count"] == (1000 // 16 + 1) * 4 * 2,
              "timings %d" % r["latency_us"]["count"])
    doc = clean_run(["--test", "write", "--mode", "bw", "-q", "3", "-b", "-l", "4",
                     "--sge", "2", "-s", "4096", "-n", "1000"])
    doc = clean_run(["--test", "read", "--mode", "bw", "-q", "2", "--sge", "4",
                     "-s", "1000", "-n", "1000"])
    doc = clean_run(["--test", "atomic", "--mode", "bw", "-A", "CMP_AND_SWP", "-q",
                     "2", "-b", "-n", "1000"])
    if doc:
        check(doc["options"]["atomic_op"] == "CMP_AND_SWP", "CAS echoed")
        check(doc["results"][0]["validate"]["checked"] == 4000, "CAS checked")
    clean_run(["--test", "atomic", "--mode", "lat", "-A", "CMP_AND_SWP", "-n", "500"])
    # Every size, duration runs.
    clean_run(["--test", "write", "--mode", "bw", "-a", "-n", "20"], 23)
    doc = clean_run(["--test", "send", "--mode", "lat", "-D", "0.3"])
    if doc:
        check(doc["options"]["duration_s"] == 0.3, "-D echoed")
    doc = clean_run(["--test", "read", "--mode", "bw", "-D", "0.3", "-q", "2"])
    if doc:
        r = doc["results"][0]
        check(r["iterations"] == r["validate"]["checked"], "-D bw: every read checked")
        check(0.25 <= r["seconds"] <= 10, "-D 0.3 measured %.3f s" % r["seconds"])


def case_corrupt():
    # One corrupted message: --validate counts exactly one mismatch and the
    # run fails (exit 1). Atomics in bw with one WR in flight so that the
    # disturbed counter is seen by exactly one atomic.
    for t in ("send", "write", "read", "atomic"):
        for mode in ("lat", "bw"):
            args = ["--test", t, "--mode", mode, "-n", "300", "--validate",
                    "--corrupt-at", "123"]
            if t != "atomic":
                args += ["-s", "64"]
            if t == "atomic" and mode == "bw":
                args += ["-t", "1", "-Q", "1"]
            rc, out, err, doc = run(args, 1)
            where = " ".join(args)
            if check(doc is not None, where + ": JSON"):
                v = doc["results"][0]["validate"]
                check(v["mismatches"] == 1, "%s: %d mismatches" % (where, v["mismatches"]))
                check(doc["status"] == "failed", where + ": status")
            check("--validate: 1 mismatches" in err, where + ": message " + err)
    # Without --validate the hook is not looked for: the run passes.
    run(["--test", "send", "--mode", "bw", "-n", "300", "-s", "64",
         "--corrupt-at", "5"], 0)


def case_expect():
    rc, out, err, doc = run(["--test", "ib_send_lat", "-n", "500", "--expect",
                             "p99<=10000ms,mismatches<=0,t_min>0ns"], 0)
    if doc:
        check(len(doc["expect"]) == 3 and all(g["pass"] for g in doc["expect"]),
              "passing gates")
    check(out.count("PASS") == 3, "three PASS lines")
    rc, out, err, doc = run(["--test", "ib_send_lat", "-n", "500", "--expect",
                             "p50<0.001ns,mpps>=0"], 3)
    if doc:
        check([g["pass"] for g in doc["expect"]] == [False, True], "failing gate")
        check(doc["status"] == "expect-failed", "status expect-failed")
    rc, out, err, doc = run(["--test", "ib_write_bw", "-n", "500", "-s", "64",
                             "--expect", "mpps>=1000000"], 3)


def case_rate():
    # Open loop at 20000 msg/s for 1 s. Sanity bound only: the achieved
    # rate is within a factor of two of the target on a loaded machine.
    rc, out, err, doc = run(["--test", "send", "--mode", "bw", "--rate", "20000",
                             "-D", "1", "-s", "64"])
    if doc:
        r = doc["results"][0]
        check(r["rate_target_pps"] == 20000, "rate target echoed")
        a = r["rate_achieved_pps"]
        check(10000 <= a <= 40000, "rate achieved %.0f for 20000" % a)
        check(r["latency_us"]["count"] == r["iterations"],
              "every message timed from its scheduled time (%d of %d)"
              % (r["latency_us"]["count"], r["iterations"]))
    doc = clean_run(["--test", "write", "--mode", "bw", "--rate", "5000", "-n",
                     "1000", "-s", "64", "-q", "2"])
    if doc:
        r = doc["results"][0]
        check(r["iterations"] == 2000, "rate -n iterations")
        check(0.1 <= r["seconds"] <= 1.0, "2000 messages at 5000/s took %.3f s"
              % r["seconds"])


def case_run_infinitely():
    # A row every 0.2 s until SIGINT, then the usual table and record.
    global runs
    runs += 1
    jpath = os.path.join(TMP, "inf.json")
    p = subprocess.Popen([PERF] + EAL + ["--file-prefix=perf-e2e-inf-%d" % os.getpid(),
                          "--", "--test", "ib_write_bw", "-s", "64", "--rate", "20000",
                          "--run_infinitely", "-D", "0.2", "--json", jpath],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    import signal
    import time
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    check(p.returncode == 0, "run_infinitely exit %d\n%s%s" % (p.returncode, out, err))
    rows = [l for l in out.splitlines() if l.startswith(" interval ")]
    check(len(rows) >= 3, "%d interval rows:\n%s" % (len(rows), out))
    if os.path.exists(jpath):
        with open(jpath) as f:
            doc = json.load(f)
        check_schema(doc, "run_infinitely")
        check(doc["options"]["run_infinitely"] is True, "run_infinitely echoed")
        check(doc["results"][0]["iterations"] > 0, "iterations counted")
    else:
        check(False, "run_infinitely: no JSON written")


def case_caps():
    # The soft NIC allows 256 bytes inline: a request of 1024 is cut and
    # reported; --strict refuses it.
    rc, out, err, doc = run(["--test", "ib_send_lat", "-n", "100", "-I", "1024"], 0)
    check("max_inline_data: requested 1024, granted 256" in err, "cut warning: " + err)
    if doc:
        c = doc["results"][0]["caps"]
        check(c["requested"]["max_inline_data"] == 1024, "requested inline")
        check(c["granted"]["max_inline_data"] == 256, "granted inline")
        check(len(c["cut"]) == 1 and c["cut"][0]["cap"] == "max_inline_data" and
              c["cut"][0]["granted"] == 256, "cut entry")
    rc, out, err, doc = run(["--test", "ib_send_lat", "-n", "100", "-I", "1024",
                             "--strict"], 2, False)
    check("--strict" in err, "strict message: " + err)
    # Requests the device meets exactly: nothing cut, depths as granted.
    rc, out, err, doc = run(["--test", "ib_send_bw", "-n", "100", "-t", "64",
                             "-r", "256", "-I", "64", "--strict"])
    if doc:
        c = doc["results"][0]["caps"]
        check(c["cut"] == [], "nothing cut")
        check(c["granted"]["max_send_wr"] == 64 and c["granted"]["max_recv_wr"] == 256
              and c["granted"]["max_inline_data"] == 64,
              "granted caps %s" % c["granted"])
        check(c["device"] == "soft0" and c["driver"] == "soft", "device named")
    # UD messages larger than the MTU are refused with the rule.
    rc, out, err, _ = run(["--test", "ib_send_lat", "-c", "UD", "-s", "8192"], 2, False)
    check("a UD message is one packet" in err, "UD size refusal: " + err)
    # Two devices: the server end on its own device.
    clean_run(["--test", "write", "--mode", "lat", "--dev", "soft0", "--dev",
               "soft1", "-n", "200"])


cases = {
    "cli": case_cli,
    "rc": lambda: transport_matrix("RC"),
    "uc": lambda: transport_matrix("UC"),
    "ud": lambda: transport_matrix("UD"),
    "options": case_options,
    "corrupt": case_corrupt,
    "expect": case_expect,
    "rate": case_rate,
    "run-infinitely": case_run_infinitely,
    "caps": case_caps,
}
if CASE not in cases:
    sys.exit("unknown case " + CASE)
cases[CASE]()
print("%s: %d runs, %d failures" % (CASE, runs, len(failures)))
sys.exit(1 if failures else 0)
