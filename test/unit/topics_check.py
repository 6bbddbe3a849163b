#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check the topic globs of test/unit/meson.build against a Criterion
binary's topics (its suites, from --list).

    topics_check.py BINARY GLOB [GLOB...]

Each GLOB (fnmatch rules, as Criterion's --filter reads '*') must name
at least one topic, and no topic may be named by two GLOBs: a glob that
names nothing would give a meson test that runs no test and passes, and
a topic named twice would run twice. Exit 0, or 1 with every fault
printed.
"""
import fnmatch
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = subprocess.run([sys.argv[1], '--list'], capture_output=True,
                         text=True, check=True).stdout
    topics = re.findall(r'^(\w+): \d+ tests?$', out, re.M)
    if not topics:
        print(f'{sys.argv[1]} --list printed no topic', file=sys.stderr)
        return 1
    faults = []
    owner = {}
    for glob in sys.argv[2:]:
        named = fnmatch.filter(topics, glob)
        if not named:
            faults.append(f"'{glob}' names no topic of {sys.argv[1]}")
        for t in named:
            if t in owner:
                faults.append(f"topic {t} is named by '{owner[t]}' and "
                              f"'{glob}'")
            owner[t] = glob
    for f in faults:
        print(f, file=sys.stderr)
    print(f'{len(topics)} topics, {len(owner)} in meson tests of their own, '
          f'{len(topics) - len(owner)} in unit')
    return 1 if faults else 0


if __name__ == '__main__':
    sys.exit(main())
