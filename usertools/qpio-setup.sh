#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Install the dependencies, then configure (or reconfigure) and build qpio.
#
#   usertools/qpio-setup.sh [BUILDDIR] [meson options...]
#
# BUILDDIR defaults to "build". Example for a sanitizer build:
#   usertools/qpio-setup.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-build}
[ $# -gt 0 ] && shift

"$top/usertools/install-deps.sh"

cd "$top"
# A relocatable libqpio.pc (the project default, repeated here for build
# directories made before it was) serves --prefix and --destdir installs.
if [ -f "$builddir/build.ninja" ]; then
	meson setup --reconfigure "$builddir" -Dpkgconfig.relocatable=true "$@"
else
	meson setup "$builddir" -Dpkgconfig.relocatable=true "$@"
fi
ninja -C "$builddir"
