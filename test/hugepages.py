# SPDX-License-Identifier: BSD-3-Clause
"""2 MB hugepages for a test run of two DPDK processes (a primary and its
secondary share hugepage memory): the pages asked for are added to the
kernel's pool, a hugetlbfs of the run's own is mounted, and both are given
back at the end, to whatever the pool holds by then. Needs root; setup()
says why when the pages cannot be had, so the test can skip (exit 77)."""
import os
import shutil
import subprocess
import tempfile

SYS = "/sys/kernel/mm/hugepages/hugepages-2048kB"


def _read(name):
    try:
        with open(os.path.join(SYS, name)) as f:
            return int(f.read())
    except (OSError, ValueError):
        return -1


def _write(n):
    try:
        with open(os.path.join(SYS, "nr_hugepages"), "w") as f:
            f.write("%d\n" % n)
        return None
    except OSError as e:
        return str(e)


class Hugepages:
    """add pages for the run; the mount point's name starts with prefix."""

    def __init__(self, add, prefix):
        self.add = add
        self.prefix = prefix
        self.added = 0
        self.mnt = None
        self.mounted = False

    def setup(self):
        """None when the pages are there and mounted at self.mnt, else why
        not (call teardown() either way)."""
        if os.geteuid() != 0:
            return "needs root to reserve 2 MB hugepages (nr_hugepages, hugetlbfs mount)"
        nr = _read("nr_hugepages")
        if nr < 0:
            return "no 2 MB hugepages in this kernel (%s)" % SYS
        e = _write(nr + self.add)
        got = _read("nr_hugepages")
        if got > nr:
            self.added = got - nr
        free = _read("free_hugepages")
        if e is not None or free < self.add - 8:
            return ("the kernel gave %d of %d 2 MB hugepages asked for (%d free)%s"
                    % (got - nr, self.add, free, ": " + e if e else ""))
        self.mnt = tempfile.mkdtemp(prefix=self.prefix)
        r = subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M",
                            "nodev", self.mnt], capture_output=True, text=True)
        if r.returncode != 0:
            return "cannot mount hugetlbfs: " + r.stderr.strip()
        self.mounted = True
        return None

    def teardown(self):
        if self.mounted:
            if subprocess.run(["umount", self.mnt]).returncode != 0:
                subprocess.run(["umount", "-l", self.mnt])
            self.mounted = False
        if self.mnt:
            shutil.rmtree(self.mnt, ignore_errors=True)
            self.mnt = None
        if self.added > 0:
            nr = _read("nr_hugepages")
            if nr >= 0:
                _write(max(0, nr - self.added))
            self.added = 0
