#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print, last, what each failed test of a meson test run printed.

    failed_tests.py TESTLOG_JSON [LINES]

TESTLOG_JSON is meson's build/meson-logs/testlog.json (one JSON object a
line). For every test whose result is not OK, SKIP or EXPECTEDFAIL it
prints the test's name, result and return code, then the last LINES
(default 150) lines of its output, so that a log cut to its end still
shows why each test failed. Exit 0 when it read the file, 2 when it could
not.
"""
import json
import sys

PASSED = {"OK", "SKIP", "EXPECTEDFAIL"}


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    lines = int(argv[2]) if len(argv) == 3 else 150
    rows, bad = [], 0
    try:
        with open(argv[1], encoding="utf-8", errors="replace") as f:
            for l in f:
                if not l.strip("\0 \n"):
                    continue
                try:
                    rows.append(json.loads(l.strip("\0")))
                except ValueError:
                    bad += 1
    except OSError as e:
        print(f"failed_tests: {argv[1]}: {e}", file=sys.stderr)
        return 2
    if bad:
        print(f"== {bad} line(s) of {argv[1]} are not JSON: skipped")
    failed = [r for r in rows if r.get("result") not in PASSED]
    print(f"== {len(failed)} failed test(s) of {len(rows)}: the end of each one's output")
    for r in failed:
        out = (r.get("stdout") or "").splitlines()
        print(f"== {r.get('name')}: {r.get('result')} (exit {r.get('returncode')}), "
              f"last {min(lines, len(out))} of {len(out)} lines")
        for l in out[-lines:]:
            print(f"   {l}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
