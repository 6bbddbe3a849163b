#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio's main job: read a capture, send every frame over an RDMA link
# between two soft-NIC queue pairs, write the received frames to a capture,
# and check that output equals input frame for frame: the captured bytes
# and the order (the original length of a frame snapped at capture time is
# not carried by a link, so it is not compared).
#
#   usertools/qpio-forward-capture.sh [-b BUILDDIR] [-d DEVARGS] [-q KEY=VAL,...] [-r N] [-t rc|ud] [-k] IN.pcap [OUT.pcap]
#
#   -b BUILDDIR  build directory (default: build)
#   -d DEVARGS   rdma device of the link (default: soft0), for example
#                "ibv0,dev=rxe0"; created with qpio-testpmd --rdma-dev
#   -q KEY=VAL   more devargs for both qp ports (doc/guides/nics/qp.rst),
#                for example "timeout=4,retry_cnt=7"
#   -r N         offer frames a full tx queue refused again, up to N more
#                bursts (qpio-testpmd --tx-retry; default 0: dropped and
#                counted, as dpdk-testpmd does); for slow or lossy links
#   -t rc|ud     transport of the link (default: rc)
#   -k           keep OUT.pcap (default: removed when it matched, unless
#                OUT.pcap was given)
#
# Ports of the qpio-testpmd run (paired topology, io forwarding):
#   pcap0 (reads IN) -> qp0 ==RDMA link on DEVARGS==> qp1 -> pcap1 (writes OUT)
# (ports 0 to 3); each port's nonzero extended statistics are printed at
# the end (--show-xstats), qp0's send paths among them (tx_flat_packets,
# tx_wr_packets: doc/guides/nics/qp.rst).
# qpio-testpmd stops by itself once pcap0 has read the whole capture and
# the link is idle. Exit status: 0 identical, 1 different or failed run,
# 2 bad usage.
set -euo pipefail

usage() { sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'; }

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build"
transport=rc
keep=0
rdma_dev=""
tx_retry=0
qp_extra=""
while getopts "b:d:q:r:t:kh" o; do
	case "$o" in
	q) qp_extra=",$OPTARG" ;;
	b) build="$(cd "$OPTARG" && pwd)" ;;
	d) rdma_dev="$OPTARG" ;;
	r) tx_retry="$OPTARG" ;;
	t) transport="$OPTARG" ;;
	k) keep=1 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	usage >&2
	exit 2
fi
if ! [[ "$tx_retry" =~ ^[0-9]+$ ]]; then
	echo "qpio-forward-capture: -r takes a count of bursts, not '$tx_retry'" >&2
	exit 2
fi
case "$transport" in
rc|ud) ;;
*) echo "qpio-forward-capture: -t must be rc or ud, not '$transport'" >&2; exit 2 ;;
esac
in="$1"
if [ ! -r "$in" ]; then
	echo "qpio-forward-capture: cannot read capture '$in'" >&2
	exit 2
fi
testpmd="$build/app/testpmd/qpio-testpmd"
pcapcmp="$build/app/pcapcmp/qpio-pcapcmp"
for b in "$testpmd" "$pcapcmp"; do
	if [ ! -x "$b" ]; then
		echo "qpio-forward-capture: $b not built (run usertools/qpio-setup.sh)" >&2
		exit 1
	fi
done

if [ $# -eq 2 ]; then
	out="$2"
	keep=1
else
	out="$(mktemp --suffix=.pcap /tmp/qpio-forward.XXXXXX)"
fi

# The link's device: soft0 (created by the qp port itself), or the given
# devargs, created first with --rdma-dev and named in the qp ports.
dev_name=soft0
rdma_args=()
if [ -n "$rdma_dev" ]; then
	dev_name="${rdma_dev%%,*}"
	rdma_args=(--rdma-dev "$rdma_dev")
fi

# RC: frames up to 73728 bytes (the largest real captures hold 65,589-byte
# frames) cross as chains of at most 9 mbufs of 8192 bytes. UD carries one
# MTU (4096 bytes); larger frames are dropped and counted by the qp port.
len_args=(--mbuf-size=8320 --max-pkt-len=73728)
[ "$transport" = ud ] && len_args=(--mbuf-size=8320 --max-pkt-len=4096)
# Its own --file-prefix: a DPDK process sharing the default prefix with
# another one running (a test, a bench) can stall in EAL or telemetry init.
cmd=("$testpmd" -l 0-1 --no-huge --no-shconf --no-pci -m 512
	--file-prefix="qpio-fwd-$$" --log-level=lib.eal:warning --
	"${rdma_args[@]}"
	--dev "pcap0,rx_pcap=$in"
	--dev "qp0,dev=$dev_name,qp=$transport,peer=qp1$qp_extra"
	--dev "qp1,dev=$dev_name,qp=$transport,peer=qp0$qp_extra"
	--dev "pcap1,tx_pcap=$out"
	--forward-mode=io --port-topology=paired --nb-cores=1
	"${len_args[@]}" --total-num-mbufs=8192
	--rxd=128 --txd=128 --burst=32 --duration=600 --tx-retry="$tx_retry"
	--show-xstats)
echo "+ ${cmd[*]}"
rc=0
"${cmd[@]}" || rc=$?
if [ "$rc" != 0 ]; then
	echo "qpio-forward-capture: qpio-testpmd failed (exit $rc); see its messages above" >&2
	[ "$keep" = 1 ] || rm -f "$out"
	exit 1
fi
echo "+ $pcapcmp --ignore-len $in $out"
if "$pcapcmp" --ignore-len "$in" "$out"; then
	[ "$keep" = 1 ] || rm -f "$out"
	echo "qpio-forward-capture: output identical to $in"
	exit 0
fi
echo "qpio-forward-capture: output $out differs from $in (kept)" >&2
exit 1
