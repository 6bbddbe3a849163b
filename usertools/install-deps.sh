#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Install every Debian 12 package qpio needs to build, test and run.
# Idempotent: packages already present are left alone. Run as root.
#
#   usertools/install-deps.sh          build + test dependencies, including
#                                      the Soft-RoCE VM test's (qemu, kernel)
#   usertools/install-deps.sh --rxe    the same (kept for older scripts)
#   usertools/install-deps.sh --record also what qpio-record-capture.sh needs
#   usertools/install-deps.sh --bench  also dpdk-testpmd for bench/memif-vs-qpio.sh
#                                      and valgrind for bench/instructions.sh
#   Options combine: --rxe --record --bench.
set -euo pipefail

pkgs=(
	build-essential meson ninja-build pkg-config python3-pyelftools
	libdpdk-dev dpdk dpdk-dev
	libibverbs-dev rdma-core ibverbs-utils ibverbs-providers
	librdmacm-dev rdmacm-utils
	libnuma-dev libpcap-dev libcriterion-dev
	clang libclang-rt-14-dev tcpdump
	zlib1g-dev tshark
	perftest
)
rxe_pkgs=(
	qemu-system-x86 linux-image-amd64 busybox-static kmod cpio iproute2
)
record_pkgs=(
	tcpdump dnsmasq-base iputils-ping iproute2 ethtool python3
)
# dpdk-testpmd for bench/memif-vs-qpio.sh; valgrind for bench/instructions.sh.
# perftest (ib_send_bw, ...) is in the default set: the Soft-RoCE VM runs
# it from this root file system, in rxe-wire's rows against qpio-perf
# --perftest and in bench/perf-vs-perftest.sh.
bench_pkgs=(
	dpdk-dev valgrind
)
# examples/gateway's demo and its integration test (namespaces, veth
# offloads, ping, ping -6, iperf3, python3's http.server).
gateway_pkgs=(
	iproute2 iputils-ping ethtool iperf3 python3
)

want_record=0
want_bench=0
for a in "$@"; do
	case "$a" in
	--rxe) ;;
	--record) want_record=1 ;;
	--bench) want_bench=1 ;;
	-h|--help) sed -n '3,13p' "$0"; exit 0 ;;
	*) echo "install-deps: unknown option '$a'" >&2; exit 2 ;;
	esac
done
# The README's test command boots the Soft-RoCE VM, so its packages are
# part of the default set.
pkgs+=("${rxe_pkgs[@]}")
pkgs+=("${gateway_pkgs[@]}")
[ "$want_record" = 1 ] && pkgs+=("${record_pkgs[@]}")
[ "$want_bench" = 1 ] && pkgs+=("${bench_pkgs[@]}")

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: must run as root (apt-get install)" >&2
	exit 1
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps: all ${#pkgs[@]} packages present"
	exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt/dpkg run (a parallel build, unattended upgrades)
# instead of failing on its lock.
apt_lock=(-o DPkg::Lock::Timeout=900)
apt-get "${apt_lock[@]}" update -qq
apt-get "${apt_lock[@]}" install -y -qq --no-install-recommends "${missing[@]}"
