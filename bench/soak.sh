#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Soak: N frames (default 10^8) of random sizes in random bursts through an
# RC link between two soft-NIC QPs, every payload checked, mbufs and WQEs
# accounted at the end (build/bench/qpio-soak; see bench/soak.c). Prints
# the counts and the machine load; exits 0 only with 0 lost, 0 bad and
# 0 leaked. Not part of the tests: 10^8 frames take minutes to hours
# depending on the machine and its load.
#
#   bench/soak.sh [-n FRAMES] [-s MAX_SIZE] [-b MAX_BURST] [--seed N]
#                 [--faults fault_KEY=VAL,...] [--timeout N] [-B BUILDDIR]
#
# With faults (soft NIC fault_* devargs on the sending device), e.g.
#   bench/soak.sh --timeout 1 --faults fault_drop_ppm=1000,fault_rnr_ppm=1000,fault_delay_us=2
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	-B) build=$2; shift 2 ;;
	-h|--help) sed -n '3,15p' "$0"; exit 0 ;;
	*) args+=("$1"); shift ;;
	esac
done
soak=$build/bench/qpio-soak
[ -x "$soak" ] || { echo "soak: $soak not built (usertools/qpio-setup.sh)" >&2; exit 2; }
echo "soak: load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
# Its own --file-prefix: another DPDK process may be running.
exec "$soak" -l 0 --no-huge --no-shconf --no-pci --no-telemetry -m 512 \
	--file-prefix="qpio-soak-$$" --log-level=lib.eal:error -- "${args[@]}"
