#!/usr/bin/env bash
# Build (or update) Open MPI's ROMIO io component with this suite's drivers,
# for the Open MPI that Debian installed (libopenmpi-dev): 4.1 (bookworm,
# ROMIO 3.2.1: mca_io_romio321.so, which replaces Open MPI's own) or 5.0
# (trixie, ROMIO 3.4.1: mca_io_romiodrivers.so, beside the romio341 built
# into libmpi), in DIR/components, which Open MPI loads from when that
# directory comes first in its component path (docs/openmpi.md).
#
#   build-openmpi.sh REPO DIR VERSION
#
# VERSION is what scripts/openmpi-version.sh says; DIR is keyed like the
# MPICH build (the Makefile's OPENMPI_DIR). From nothing: apt-get source
# openmpi, the upstream tarball patched (openmpi-patch/apply.sh), autoreconf
# in ROMIO, Open MPI configured as Debian configures it
# (openmpi-patch/configure-MAJOR.MINOR.args, dpkg-buildflags), and only ROMIO
# and the component built. Later runs: an incremental make of both (the
# drivers are symlinks into REPO); the installed copy is replaced only when
# it differs. Nothing outside DIR is written.
set -euo pipefail

repo=$(cd "$1" && pwd)
dir=$2
version=$3
jobs=$(( $(nproc) + 1 ))
src=$dir/src/openmpi-$version
build=$dir/build
log() { echo "build-openmpi: $*"; }
. "$repo/mpich-patch/lib.sh"
. "$repo/openmpi-patch/layout.sh"

openmpi_layout "$version" ||
    die "Open MPI '$version' (libopenmpi-dev): make openmpi knows 4.1.x (bookworm) and 5.0.x (trixie)"
args_file=$repo/openmpi-patch/configure-${version%.*}.args
so=mca_io_$OMPI_IO.so

# The component is loaded by the installed libmpi: built from its version.
installed=$(dpkg-query -W -f='${Version}' libopenmpi-dev 2>/dev/null || true)
installed=${installed#*:}
[ "${installed%-*}" = "$version" ] ||
    die "Debian's libopenmpi-dev is '${installed:-not installed}', this build is for Open MPI $version"

mkdir -p "$dir"
if [ ! -f "$dir/.patched" ]; then
    rm -rf "$dir/src" "$build" "$dir/components" "$dir"/.configured
    # Debian's own patches (4.1.4-3, 5.0.7-1) touch nothing the io component
    # compiles (wrapper data, pkg-config files, man pages, other
    # architectures and the Hurd, the ofi mtl, the library directory's name,
    # shmem, tests): the upstream tree.
    patched_source "$dir" openmpi "$version" "$repo/openmpi-patch/apply.sh" "$OMPI_ROMIO"
    touch "$dir/.patched"
fi

link_drivers "$src/$OMPI_ROMIO" "$repo"

if [ ! -f "$dir/.configured" ]; then
    mapfile -t args < <(grep -v '^#' "$args_file")
    fs=$(file_systems testfs+ufs+nfs "$repo")
    log "configuring Open MPI $version (ROMIO: $fs) in $build"
    rm -rf "$build"; mkdir -p "$build"
    # debian/rules: dpkg-buildflags, plus -O3
    (cd "$build" && "$src/configure" "${args[@]}" --with-io-romio-flags="--with-file-system=$fs" \
        CFLAGS="$(dpkg-buildflags --get CFLAGS) -O3" CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS)" \
        LDFLAGS="$(dpkg-buildflags --get LDFLAGS)") > "$dir/configure.log" 2>&1 \
        || { tail -40 "$dir/configure.log"; exit 1; }
    touch "$dir/.configured"
fi

# ROMIO first: from 5.0 it is not a subdirectory of the component, whose
# Makefile only links it.
{ make -C "$build/$OMPI_ROMIO" -j"$jobs" && make -C "$build/$OMPI_COMPONENT" -j"$jobs"; } \
    > "$dir/make.log" 2>&1 \
    || { grep -E 'error|Error' "$dir/make.log" | head -40; tail -20 "$dir/make.log"; exit 1; }
mkdir -p "$dir/components"
cmp -s "$build/$OMPI_COMPONENT/.libs/$so" "$dir/components/$so" ||
    install -m 644 "$build/$OMPI_COMPONENT/.libs/$so" "$dir/components/$so"
