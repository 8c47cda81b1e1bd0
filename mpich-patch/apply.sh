#!/usr/bin/env bash
# Register this suite's ROMIO drivers in an MPICH source tree: 4.0.x, 4.2.x,
# 4.3.x or 5.0.x (the ROMIO generations whose anchors this file knows).
#
#   apply.sh MPICH_SRC REPO
#
# Source-level edits only (configure.ac, Makefile.mk, adio.h, adioi_fs_proto.h,
# ad_fstype.c; lib.sh); the caller runs `autoreconf -vif -I confdb` in
# src/mpi/romio afterwards. The driver directories are linked into the ROMIO
# tree, so editing a driver needs no re-patching. Each edit checks that its
# anchor exists, and an MPICH version not listed below is refused, so another
# MPICH fails loudly instead of half-patching.
set -euo pipefail

src=$1
repo=$(cd "$2" && pwd)
. "$(dirname "$0")/lib.sh"

version=$(mpich_version < "$src/maint/version.m4" 2>/dev/null || true)
[ -n "$version" ] || die "$src: no maint/version.m4 with MPICH's version (not an MPICH source tree?)"

table_anchors
case $version in
    4.0.*) register_prefix() { register_prefix_rows3 "$@"; } ;;
    4.2.*|4.3.*|5.0.*) register_prefix() { register_prefix_rows4 "$@"; } ;;
    *) die "MPICH $version: its ROMIO is not one this patch knows (4.0.x, 4.2.x, 4.3.x, 5.0.x)" ;;
esac
echo "romio-patch: MPICH $version"

register_drivers "$src/src/mpi/romio" "$repo"
hook_mount_detection "$src/src/mpi/romio"
mark_version "$src/src/mpi/romio" "$version"
