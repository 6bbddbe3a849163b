#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two hosts for real: two qemu VMs (TCG), each with its own kernel and its
# own rdma_rxe device on its own virtio NIC; the two NICs are joined only
# by a qemu socket link (UDP on the host's loopback), so RoCEv2 crosses a
# link between two kernels. In them (test/rxe/two_guest.sh and
# two_vms_guest.py): rping across the link, qpio-testpmd forwarding
# captures from VM a to VM b over a qp port connected through librdmacm,
# byte-identical, and a disconnect test (the sender killed: link down
# once, receives flushed once, mbufs back).
#
#   test/rxe/two_vms.sh [-b BUILDDIR] [-c CAPTURE]... [-k] [-t SECONDS]
#
#   -b, -c, -k, -t  as test/rxe/run.sh (captures default to its own; VM
#                   time limit default 600 s each)
#
# Exit status: 0 both VMs passed, 1 one failed, 77 skipped (qemu, the
# kernel package, modules or tools missing: run.sh prints the reason),
# 2 bad usage.
set -uo pipefail

usage() { sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; }

here="$(cd "$(dirname "$0")" && pwd -P)"
args=()
limit=600
while getopts "b:c:kt:h" o; do
	case "$o" in
	b) args+=(-b "$OPTARG") ;;
	c) args+=(-c "$OPTARG") ;;
	k) args+=(-k) ;;
	t) limit="$OPTARG" ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { usage >&2; exit 2; }
command -v rping >/dev/null || { echo "two-vms: SKIP: rping not found (package rdmacm-utils)"; exit 77; }
command -v python3 >/dev/null || { echo "two-vms: SKIP: python3 not found"; exit 77; }

# Two free UDP ports of the host's loopback for the link.
read -r pa pb < <(python3 -c '
import socket
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
mac_a=52:54:00:71:78:01
mac_b=52:54:00:71:78:02
nic() { # local port, remote port, MAC
	echo "-netdev socket,id=n0,udp=127.0.0.1:$2,localaddr=127.0.0.1:$1 -device virtio-net-pci,netdev=n0,mac=$3"
}
log="$(mktemp -d /tmp/qpio-two-vms.XXXXXX)"
trap 'rm -rf "$log"' EXIT
start=$(date +%s)
"$here/run.sh" "${args[@]}" -t "$limit" -g "$here/two_guest.sh" \
	-e QPIO_VM_ROLE=b -e QPIO_VM_MAC=$mac_b -q "$(nic "$pb" "$pa" $mac_b)" \
	> "$log/b.log" 2>&1 &
vb=$!
"$here/run.sh" "${args[@]}" -t "$limit" -g "$here/two_guest.sh" \
	-e QPIO_VM_ROLE=a -e QPIO_VM_MAC=$mac_a -q "$(nic "$pa" "$pb" $mac_a)" \
	> "$log/a.log" 2>&1 &
va=$!
# The VMs' consoles, prefixed, as they run.
tail -n +1 -F "$log/a.log" 2>/dev/null | sed -u 's/^/[a] /' &
ta=$!
tail -n +1 -F "$log/b.log" 2>/dev/null | sed -u 's/^/[b] /' &
tb=$!
wait "$va"; ra=$?
wait "$vb"; rb=$?
sleep 0.5
kill "$ta" "$tb" 2>/dev/null
wait "$ta" "$tb" 2>/dev/null
echo "two-vms: both VMs ran $(( $(date +%s) - start )) s (VM a exit $ra, VM b exit $rb)"
if [ "$ra" = 77 ] || [ "$rb" = 77 ]; then
	grep -h "SKIP" "$log/a.log" "$log/b.log" | head -1
	exit 77
fi
[ "$ra" = 0 ] && [ "$rb" = 0 ] && { echo "two-vms: PASS"; exit 0; }
echo "two-vms: FAIL" >&2
exit 1
