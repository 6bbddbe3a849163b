#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The main job (usertools/qpio-forward-capture.sh) on captures, each
# forwarded over an RDMA link and compared frame for frame.
#
#   main_job.sh BUILDDIR shipped          the capture the project ships
#   main_job.sh BUILDDIR shipped-ud       the same over a UD link
#   main_job.sh BUILDDIR shipped-wr       the same over RC on a soft NIC
#                                         without the flat send burst
#                                         (soft0,flat_burst=0): the qp
#                                         port's work-request tx path
#   main_job.sh BUILDDIR real PCAPDIR     every capture in PCAPDIR/real
#
# Exit 0 when every output is identical, 1 otherwise, 77 (skip) when
# PCAPDIR/real does not exist.
set -euo pipefail

build="$1"
what="$2"
root="$(cd "$(dirname "$0")/../.." && pwd)"
fwd="$root/usertools/qpio-forward-capture.sh"

transport=rc
dev=()
case "$what" in
shipped)
	files=("$root/data/linux-stack.pcap")
	;;
shipped-ud)
	files=("$root/data/linux-stack.pcap")
	transport=ud
	;;
shipped-wr)
	files=("$root/data/linux-stack.pcap")
	dev=(-d soft0,flat_burst=0)
	;;
real)
	dir="$3/real"
	if [ ! -d "$dir" ]; then
		echo "SKIP: shared captures not found at $dir"
		exit 77
	fi
	files=("$dir"/*.pcap)
	;;
*)
	echo "main_job.sh: unknown set '$what'" >&2
	exit 2
	;;
esac

# xstat LOG PORT NAME: the value qpio-testpmd printed for NAME of PORT at
# exit (--show-xstats prints nonzero ones only: 0 when absent).
xstat() {
	awk -v p="$2" -v k="$3:" '
		/^###### NIC extended statistics for port/ { in_p = ($NF == p) }
		in_p && $1 == k { v = $2 }
		END { print v + 0 }' "$1"
}

log=$(mktemp /tmp/qpio-main-job.XXXXXX)
trap 'rm -f "$log"' EXIT
fail=0
for f in "${files[@]}"; do
	echo "=== $f"
	if "$fwd" -b "$build" -t "$transport" "${dev[@]}" "$f" >"$log" 2>&1; then
		cat "$log"
		echo "PASS: $(basename "$f")"
	else
		cat "$log"
		echo "FAIL: $(basename "$f")"
		fail=1
		continue
	fi
	# The path qp0 (port 1) sent by: the flat send burst on RC, the WR
	# list on UD and on a soft NIC without the flat burst.
	flat=$(xstat "$log" 1 tx_flat_packets)
	wr=$(xstat "$log" 1 tx_wr_packets)
	echo "qp0 sent $flat frames by the flat burst, $wr in WR lists"
	case "$what" in
	shipped-wr|shipped-ud)
		if [ "$flat" != 0 ] || [ "$wr" = 0 ]; then
			echo "FAIL: $(basename "$f"): qp0 should send by WR lists only"
			fail=1
		fi
		;;
	shipped)
		if [ "$flat" = 0 ]; then
			echo "FAIL: $(basename "$f"): qp0 should send one-segment frames by the flat burst"
			fail=1
		fi
		;;
	esac
done
echo "main_job: ${#files[@]} captures, $([ $fail = 0 ] && echo all identical || echo FAILURES)"
exit $fail
