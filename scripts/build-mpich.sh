#!/usr/bin/env bash
# Build (or update) the patched MPICH under a cache directory.
#
#   build-mpich.sh REPO MPICH_DIR VERSION [SOURCE]
#
# SOURCE: an MPICH release tarball or source tree (MPICH_SOURCE); without
# it, Debian's source package of the release this runs on. VERSION is what
# scripts/mpich-version.sh says of it. MPICH 5 is configured with the MPI
# standard ABI too (libmpi_abi, mpicc_abi).
#
# MPICH_DIR is keyed by the MPICH version, the patch, the driver file lists
# and REPO's path (see the Makefile): it belongs to this checkout alone, so
# an existing one only needs an incremental `make`: the driver directories
# are symlinks into REPO, and make recompiles what changed and relinks
# libmpi; `make install` runs only when that rebuilt something, so that a
# `make` with nothing changed touches nothing. A missing or half-built
# MPICH_DIR is built from nothing: apt-get source, patch, autoreconf,
# configure, make, make install (about 5 minutes on 2 cores).
set -euo pipefail

repo=$(cd "$1" && pwd)
dir=$2
version=$3
source=${4:-}
jobs=$(( $(nproc) + 1 ))
src=$dir/src/mpich-$version
build=$dir/build
install=$dir/install

log() { echo "build-mpich: $*"; }
. "$repo/mpich-patch/lib.sh"

case $version in
    unknown-debian-*) die "no MPICH source: this is not Debian bookworm or trixie, whose MPICH" \
                          "make knows; name one with make MPICH_SOURCE=PATH (a release tarball or tree)" ;;
    unknown-*) die "MPICH_SOURCE=$source: no MPICH version found in it (maint/version.m4)" ;;
esac
[ -z "$source" ] || [ -e "$source" ] || die "MPICH_SOURCE=$source: no such file or directory"

mkdir -p "$dir"
if [ ! -f "$dir/.patched" ]; then
    rm -rf "$dir/src" "$build" "$install" "$dir"/.configured
    patched_source "$dir" mpich "$version" "$repo/mpich-patch/apply.sh" src/mpi/romio "$source"
    touch "$dir/.patched"
fi

# The driver directories in the ROMIO tree: links into this checkout, made
# at patching and checked on every later run.
link_drivers "$src/src/mpi/romio" "$repo"

if [ ! -f "$dir/.configured" ]; then
    fs=$(file_systems ufs+nfs+testfs "$repo")
    mapfile -t args < <(grep -v '^#' "$repo/mpich-patch/configure.args")
    case $version in 4.*) ;; *) args+=(--enable-mpi-abi) ;; esac
    log "configuring MPICH ($fs) in $build"
    rm -rf "$build"; mkdir -p "$build"
    (cd "$build" && "$src/configure" --prefix="$install" --with-file-system="$fs" "${args[@]}") \
        > "$dir/configure.log" 2>&1 || { tail -40 "$dir/configure.log"; exit 1; }
    touch "$dir/.configured"
fi

make -C "$build" -j"$jobs" > "$dir/make.log" 2>&1 || { grep -E 'error|Error' "$dir/make.log" | head -40; tail -20 "$dir/make.log"; exit 1; }
# .installed: the time of the last complete install. A build file newer
# than it is what this make rebuilt (a driver edit relinks libmpi).
if [ ! -f "$dir/.installed" ] ||
   [ -n "$(find "$build" -newer "$dir/.installed" -type f -print -quit)" ]; then
    log "make install"
    rm -f "$dir/.installed"
    make -C "$build" install > "$dir/install.log" 2>&1 || { tail -40 "$dir/install.log"; exit 1; }
    touch "$dir/.installed"
fi
# Programs built against Debian's MPICH packages link libmpich.so.12 (MPICH's
# ABI since 3.1). MPICH's own name is libmpi.so.12 in a release, libmpi.so.0
# in a tree made from git (its maint/version.m4 says 0:0:0 until release).
link "$install/lib/libmpich.so.12" "$(cd "$install/lib" && ls | grep -E '^libmpi\.so\.[0-9]+$' | head -1)"
