#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build examples/rc_msg out of the tree against an installed qpio, with
# pkg-config only, then run it; check what the install holds.
#
#   out_of_tree.sh staged BUILDDIR   meson install --destdir into a
#                                    temporary stage (pkg-config with
#                                    PKG_CONFIG_SYSROOT_DIR, run with
#                                    LD_LIBRARY_PATH)
#   out_of_tree.sh prefix PREFIX     an install made with
#                                    meson setup --prefix=PREFIX; ninja
#                                    install (run through the rpath)
set -u

mode=$1
arg=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL (install $mode): $*"
	exit 1
}

eal=(-l 0-1 --no-huge --no-shconf --no-pci --no-telemetry
     --log-level=lib.eal:error --file-prefix="qpio-it-inst-$$")

command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }
case $mode in
staged)
	build=$arg
	opts=$(meson introspect "$build" --buildoptions) || fail "introspect"
	prefix=$(python3 -c 'import json,sys
o={x["name"]:x["value"] for x in json.load(sys.stdin)}
print(o["prefix"])' <<<"$opts")
	libdir=$(python3 -c 'import json,sys
o={x["name"]:x["value"] for x in json.load(sys.stdin)}
print(o["libdir"])' <<<"$opts")
	case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
	stage=$tmp/stage
	meson install -C "$build" --destdir "$stage" --no-rebuild --quiet \
		>"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "meson install"; }
	root=$stage$prefix
	lib=$stage$libdir
	# libqpio.pc is relocatable (prefix=${pcfiledir}/...): pointing
	# PKG_CONFIG_PATH at the stage is enough.
	export PKG_CONFIG_PATH=$lib/pkgconfig
	grep -q '^prefix=${pcfiledir}' "$lib/pkgconfig/libqpio.pc" ||
		fail "libqpio.pc is not relocatable: reconfigure with -Dpkgconfig.relocatable=true (usertools/qpio-setup.sh does)"
	run_env=(env LD_LIBRARY_PATH="$lib")
	rpath=()
	;;
prefix)
	root=$arg
	pc=$(find "$root" -name libqpio.pc -path '*/pkgconfig/*' | head -1)
	[ -n "$pc" ] || fail "no libqpio.pc under $root"
	export PKG_CONFIG_PATH=$(dirname "$pc")
	lib=$(readlink -f "$(pkg-config --variable=libdir libqpio)")
	[ "${lib#"$root"}" != "$lib" ] || fail "libdir $lib is not under $root"
	run_env=(env -u LD_LIBRARY_PATH)
	rpath=(-Wl,-rpath,"$lib")
	;;
*)
	echo "usage: $0 staged BUILDDIR | prefix PREFIX"
	exit 2
	;;
esac

# Each library: versioned file, soname with major.minor, a development
# symlink, and only qpio_ symbols exported.
n=0
for so in "$lib"/libqpio_*.so; do
	[ -L "$so" ] || fail "$so is not the development symlink"
	real=$(readlink -f "$so")
	soname=$(readelf -d "$real" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
	[[ $soname =~ ^libqpio_[a-z_]+\.so\.[0-9]+\.[0-9]+$ ]] ||
		fail "$(basename "$real"): soname '$soname'"
	[ -e "$lib/$soname" ] || fail "no $soname link"
	other=$(nm -D --defined-only "$real" | awk '$3 !~ /^(qpio_|QPIO_0\.1$|INTERNAL$)/ { print $3 }')
	[ -z "$other" ] || fail "$(basename "$real") exports: $other"
	n=$((n + 1))
done
[ $n -ge 7 ] || fail "$n libraries installed, want 7 or more"
[ -f "$root/include/qpio/qpio_rdma.h" ] || fail "no include/qpio/qpio_rdma.h"
[ -f "$root/include/qpio/qpio_config.h" ] || fail "no include/qpio/qpio_config.h"

# The example, built with nothing but pkg-config.
cflags=$(pkg-config --cflags libqpio) || fail "pkg-config --cflags"
libs=$(pkg-config --libs libqpio) || fail "pkg-config --libs"
# shellcheck disable=SC2086
cc -O2 -o "$tmp/rc_msg" "$src/examples/rc_msg/main.c" $cflags $libs \
	"${rpath[@]}" 2>"$tmp/cc.log" || { cat "$tmp/cc.log"; fail "compile"; }
"${run_env[@]}" "$tmp/rc_msg" "${eal[@]}" -- --count 1000 >"$tmp/out" 2>&1 ||
	{ cat "$tmp/out"; fail "rc_msg did not run"; }
grep -q '^received: 1000 messages, 64000 bytes, 0 bad$' "$tmp/out" ||
	{ cat "$tmp/out"; fail "rc_msg: wrong result"; }
# The libraries it runs on are the installed ones.
"${run_env[@]}" ldd "$tmp/rc_msg" | grep -q "$lib/libqpio_rdma.so" ||
	fail "rc_msg does not load the installed libqpio_rdma"

if [ "$mode" = prefix ]; then
	# Installed programs find their libraries through the rpath.
	"${run_env[@]}" "$root/bin/qpio-testpmd" "${eal[@]}" -- \
		--dev ring0,peer=ring1 --dev ring1,peer=ring0 --tx-first \
		--max-packets=1000 >"$tmp/out" 2>&1 ||
		{ cat "$tmp/out"; fail "installed qpio-testpmd did not run"; }
fi
echo "PASS (install $mode): $n libraries, rc_msg built with pkg-config and run"
