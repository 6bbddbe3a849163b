#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Run the ibv driver against Linux Soft-RoCE (rdma_rxe) in a small VM.
#
#   test/rxe/run.sh [-b BUILDDIR] [-c CAPTURE]... [-e VAR=VALUE]... [-f FILTER] [-g GUEST] [-k] [-n] [-q QEMU_ARGS] [-t SECONDS]
#
#   -b BUILDDIR  qpio build directory (default: build)
#   -c CAPTURE   a capture for step (b); repeat for more (default: the
#                shipped data/linux-stack.pcap and the first two files
#                under 100 KiB of ../shared/data/pcap/real next to the
#                tree, when that folder exists)
#   -e VAR=VALUE a variable for the guest script (in /tmp/out/env; repeat)
#   -f FILTER    Criterion --filter of step (a) (default: test/rxe/filter)
#   -g GUEST     run this script in the VM instead of test/rxe/guest.sh
#                (bench/perf-vs-perftest.guest.sh); it finds QPIO_ROOT and
#                QPIO_BUILD in /tmp/out/env and writes /tmp/out/rc; a
#                capture it leaves in /tmp/out with /tmp/out/capture-check
#                is judged by test/rxe/capture_check.sh on the host after
#                the VM (tshark natively, not under TCG)
#   -k           keep the work directory (initramfs, logs)
#   -n           plan only: print the kernel, the shares and the guest's
#                paths, build the initramfs, and exit 0 without booting
#   -q QEMU_ARGS more qemu arguments, split at blanks (a NIC: -netdev ...
#                -device virtio-net-pci,..., as test/rxe/two_vms.sh does)
#   -t SECONDS   VM time limit (default: 1080)
#
# The VM is built from Debian packages only: the kernel and modules of
# linux-image-amd64, busybox-static for the initramfs, qemu-system-x86 in
# TCG mode (no KVM needed). The host's root file system is shared read-only
# over virtio-9p; the guest chroots into it, so the binaries and libraries
# (rdma-core, ibverbs-providers, the qpio build) are the host's. The guest
# mounts tmpfs over /tmp, /run and /dev/shm, which would hide a source
# tree, build or capture there: the tree and the build are then shared
# read-only on their own and mounted at the same path, and such captures
# are copied into the results share. Inside,
# test/rxe/guest.sh creates rxe0 on a veth end and runs:
#   (c) ibv_rc_pingpong over rxe0 loopback (checks the VM itself),
#   (e) rping over rxe0 loopback (rdma_cm), when rdmacm-utils is there,
#   (a) the unit tests against "ibv0,dev=rxe0" (both ends on rxe0; lib/cm
#       over librdmacm listens on veth0's address 10.0.77.1),
#   (b) usertools/qpio-forward-capture.sh over an RC link on rxe0 for
#       each capture, when qpio-testpmd is built,
#   (f) two qpio-testpmd processes joined by qp ports connected through
#       librdmacm (test/integration/qp_connect.py, RC and UD): captures
#       byte-identical, a sender killed mid-transfer,
#   (d) qpio-perf send/write/read/atomic, lat and bw, with --validate,
#   (g) qpio-pingpong on ibv0,dev=rxe0 (flat-burst SENDs, every ack
#       checked).
# Exit status: 0 all passed, 1 a step failed, 77 skipped (qemu, kernel,
# modules or tools missing; the reason is printed), 2 bad usage.
set -euo pipefail

usage() { sed -n '3,51p' "$0" | sed 's/^# \{0,1\}//'; }

# Physical paths: the guest sees the host's directories, not its symlinks.
here="$(cd "$(dirname "$0")" && pwd -P)"
root="$(cd "$here/../.." && pwd -P)"
build="$root/build"
captures=()
filter=""
guest="$here/guest.sh"
keep=0
plan=0
limit=1080
guest_env=()
qemu_extra=()
while getopts "b:c:e:f:g:knq:t:h" o; do
	case "$o" in
	b) build="$(cd "$OPTARG" && pwd -P)" ;;
	c) captures+=("$(readlink -f "$OPTARG")") ;;
	f) filter="$OPTARG" ;;
	g) guest="$(readlink -f "$OPTARG")" ;;
	k) keep=1 ;;
	n) plan=1 ;;
	e) case "$OPTARG" in
	   [A-Za-z_]*=*) guest_env+=("$OPTARG") ;;
	   *) echo "rxe: -e needs VAR=VALUE, not '$OPTARG'" >&2; exit 2 ;;
	   esac ;;
	q) read -r -a q <<< "$OPTARG"; qemu_extra+=("${q[@]}") ;;
	t) limit="$OPTARG" ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { usage >&2; exit 2; }

skip() { echo "rxe: SKIP: $*"; exit 77; }

# --- what the VM needs ------------------------------------------------------
qemu="$(command -v qemu-system-x86_64 || true)"
[ -n "$qemu" ] || skip "qemu-system-x86_64 not found (usertools/install-deps.sh --rxe)"
busybox=""
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then busybox="$b"; break; fi
done
[ -n "$busybox" ] || skip "static busybox not found (package busybox-static)"
command -v modprobe >/dev/null || skip "modprobe not found (package kmod)"
command -v cpio >/dev/null || skip "cpio not found (package cpio)"
for t in ip rdma ibv_rc_pingpong ibv_devinfo; do
	command -v "$t" >/dev/null ||
		skip "$t not found (packages iproute2, ibverbs-utils)"
done
[ -e /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so ] ||
	ls /usr/lib/*/libibverbs/librxe-rdmav*.so >/dev/null 2>&1 ||
	skip "the rxe provider is missing (package ibverbs-providers)"
kver=""
for k in $(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V -r); do
	v="${k#/boot/vmlinuz-}"
	if modprobe -S "$v" --show-depends rdma_rxe >/dev/null 2>&1; then
		kver="$v"; break
	fi
done
[ -n "$kver" ] || skip "no /boot/vmlinuz-* with rdma_rxe modules (package linux-image-amd64)"
[ -r "/boot/vmlinuz-$kver" ] || skip "/boot/vmlinuz-$kver is not readable"
unit="$build/test/unit/qpio-unit-tests"
[ -x "$unit" ] || { echo "rxe: $unit not built" >&2; exit 1; }
[ -n "$filter" ] || filter="$(grep -v '^#' "$here/filter" | tr -d '\n ')"
if [ ${#captures[@]} -eq 0 ]; then
	[ -r "$root/data/linux-stack.pcap" ] && captures+=("$root/data/linux-stack.pcap")
	real="$(readlink -f "$root/../shared/data/pcap/real" 2>/dev/null || true)"
	if [ -n "$real" ] && [ -d "$real" ]; then
		while read -r f; do
			captures+=("$f")
		done < <(find "$real" -maxdepth 1 -name '*.pcap' -size -100k | sort | head -n 2)
	fi
fi

# --- what the guest's own tmpfs mounts would hide --------------------------
# The guest mounts tmpfs over /tmp, /run and /dev/shm (guest.sh writes
# there), so a tree, build or capture under them is not seen through the
# host root share: the tree and the build go as shares of their own,
# mounted read-only at the same path after the tmpfs, captures as copies.
hidden() {
	case "$1" in
	/tmp | /tmp/* | /run | /run/* | /dev/shm | /dev/shm/*) return 0 ;;
	esac
	return 1
}
shares=()
hidden "$root" && shares+=("$root")
case "$build/" in
"$root"/*) ;;
*) hidden "$build" && shares+=("$build") ;;
esac
for s in "${shares[@]}"; do
	case "$s" in
	/tmp/out | /tmp/out/*)
		echo "rxe: $s cannot be shared: the guest mounts its results on /tmp/out; move the tree" >&2
		exit 2 ;;
	esac
done

work="$(mktemp -d /tmp/qpio-rxe.XXXXXX)"
cleanup() { [ "$keep" = 1 ] && echo "rxe: work directory $work" || rm -rf "$work"; }
trap cleanup EXIT
ird="$work/initramfs"
out="$work/out"
mkdir -p "$ird"/{bin,dev,proc,sys,host,lib/modules} "$out"
cp "$busybox" "$ird/bin/busybox"
for a in sh mount umount insmod mkdir chroot poweroff sleep cat echo tee; do
	ln -s busybox "$ird/bin/$a"
done
# virtio + 9p to reach the host root, then Soft-RoCE and its crc32
# provider, the RDMA connection manager's user interface (librdmacm, for
# lib/cm and rping), then veth and virtio-net (the NIC of -q), and netem
# (loss and reordering on the veth pair, test/rxe/wire_guest.sh), and
# tc's clsact, u32 and gact (one CM message dropped on the veth pair,
# test/rxe/cm_guest.sh), and 8021q (rxe on VLAN 100,
# test/rxe/wire_guest.sh); modprobe prints each module after its
# dependencies.
mods=(virtio_pci 9pnet_virtio 9p crc32_generic rdma_rxe rdma_ucm veth virtio_net
	sch_netem sch_ingress cls_u32 act_gact 8021q)
: > "$ird/lib/modules/order"
for m in "${mods[@]}"; do
	modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r ko; do
	cp "$ko" "$ird/lib/modules/"
	basename "$ko" >> "$ird/lib/modules/order"
done
# Shares of hidden paths: "mount_tag path" per line, read by init.
share_args=()
: > "$ird/shares"
for i in "${!shares[@]}"; do
	share_args+=(-virtfs "local,path=${shares[$i]},mount_tag=tree$i,security_model=none,readonly=on,multidevs=remap")
	echo "tree$i ${shares[$i]}" >> "$ird/shares"
done
cat > "$ird/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /lib/modules/order); do
	insmod /lib/modules/$m || echo "rxe-vm: insmod $m failed"
done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /host || {
	echo "rxe-vm: cannot mount the host root"; poweroff -f; }
mount -t proc proc /host/proc
mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev
mount -t tmpfs tmp /host/tmp
mount -t tmpfs run /host/run
mkdir -p /host/dev/shm /host/tmp/out
mount -t tmpfs shm /host/dev/shm
mount -t 9p -o trans=virtio,version=9p2000.L out /host/tmp/out || {
	echo "rxe-vm: cannot mount the results share"; poweroff -f; }
while read -r tag path; do
	mkdir -p "/host$path" &&
		mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 "$tag" "/host$path" || {
		echo "rxe-vm: cannot mount $path (share $tag) over the guest's tmpfs" |
			tee /host/tmp/out/init-error
		umount /host/tmp/out
		poweroff -f
	}
done < /shares
chroot /host /bin/bash /tmp/out/guest.sh
sync
umount /host/tmp/out
poweroff -f
INIT
chmod +x "$ird/init"
(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs.gz"

cp "$guest" "$out/guest.sh"
cat > "$out/env" <<ENV
QPIO_ROOT='$root'
QPIO_BUILD='$build'
QPIO_FILTER='$filter'
ENV
for v in "${guest_env[@]}"; do
	printf "%s='%s'\n" "${v%%=*}" "${v#*=}"
done >> "$out/env"
# Settings of a -g guest script (QPIO_BENCH_*) go along.
for v in $(compgen -e | grep '^QPIO_BENCH_' || true); do
	printf "%s='%s'\n" "$v" "${!v}"
done >> "$out/env"
# One capture per line, read into an array by guest.sh; those under a
# path the guest hides travel as copies in the results share.
for i in "${!captures[@]}"; do
	c="${captures[$i]}"
	if hidden "$c"; then
		mkdir -p "$out/cap"
		cp "$c" "$out/cap/$i-$(basename "$c")"
		captures[$i]="/tmp/out/cap/$i-$(basename "$c")"
	fi
done
printf '%s\n' "${captures[@]}" > "$out/captures"

# --- boot -----------------------------------------------------------------------
echo "rxe: kernel $kver, initramfs $(du -h "$work/initramfs.gz" | cut -f1), qemu TCG with 2 vCPUs"
echo "rxe: tree $root, build $build"
for i in "${!shares[@]}"; do
	echo "rxe: share ${shares[$i]} as tree$i (the guest's tmpfs would hide it)"
done
for c in "${captures[@]}"; do
	echo "rxe: capture $c"
done
if [ "$plan" = 1 ]; then
	echo "rxe: plan only (-n): not booting"
	exit 0
fi
start=$(date +%s)
set +e
timeout --foreground -k 10 "$limit" "$qemu" \
	-machine q35 -accel tcg -cpu max -smp 2 -m 2048 \
	-nographic -no-reboot -nic none \
	-kernel "/boot/vmlinuz-$kver" -initrd "$work/initramfs.gz" \
	-append "console=ttyS0 panic=-1 quiet loglevel=3" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path="$out",mount_tag=out,security_model=none,multidevs=remap \
	"${share_args[@]}" "${qemu_extra[@]}" \
	< /dev/null
qrc=$?
set -e
echo "rxe: VM ran $(( $(date +%s) - start )) s (qemu exit $qrc)"
if [ -f "$out/init-error" ]; then
	echo "rxe: FAIL: $(cat "$out/init-error")" >&2
	exit 1
fi
if [ ! -f "$out/rc" ]; then
	echo "rxe: FAIL: the VM did not report a result" >&2
	exit 1
fi
rc="$(cat "$out/rc")"
echo "rxe: guest result $rc"
# A capture the guest left for tshark (DIR/capture-check names the
# suite's rules) is judged here, natively, after the VM.
if [ -f "$out/capture-check" ]; then
	"$here/capture_check.sh" "$out" || rc=1
	echo "rxe: result with the capture's check $rc"
fi
exit "$rc"
