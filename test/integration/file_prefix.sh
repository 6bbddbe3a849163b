#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Every script of the tree that starts a DPDK process gives it its own
# --file-prefix: two DPDK processes on the default prefix share its runtime
# directory, and the second can stall for seconds in EAL or telemetry
# initialisation. A script starts a DPDK process when it passes EAL
# options (--no-huge, --no-pci, --lcores, -l N-M); for each script, the
# number of --file-prefix options must be at least the number of EAL
# option lists (counted by their --no-pci or --lcores, one per command).
#
#   file_prefix.sh SOURCE_ROOT
set -u
root=$1
fail=0
checked=0
while IFS= read -r f; do
	case "$f" in */file_prefix.sh) continue ;; esac
	# EAL option lists: lines holding --no-pci, or --lcores / "-l N-M"
	# without --no-pci on the same line.
	eal=$(grep -E -c -- '--no-pci|--lcores[= ]|(^|[ (])-l [0-9]' "$f")
	[ "$eal" = 0 ] && continue
	pfx=$(grep -c -- '--file-prefix' "$f")
	checked=$((checked + 1))
	if [ "$pfx" -lt 1 ]; then
		echo "FAIL: $f starts a DPDK process without --file-prefix" \
		     "($eal EAL option lines, no --file-prefix)"
		fail=1
	else
		echo "ok: $f ($eal EAL option lines, $pfx --file-prefix)"
	fi
done < <(cd "$root" && find usertools bench test -name '*.sh' | sort | sed "s|^|$root/|")
echo "file-prefix: $checked scripts start DPDK processes"
[ "$checked" -gt 0 ] || { echo "FAIL: no script found under $root"; exit 1; }
exit $fail
