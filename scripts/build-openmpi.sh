#!/usr/bin/env bash
# Build (or update) Open MPI's ROMIO io component with this suite's drivers,
# for the Open MPI that Debian installed (libopenmpi-dev): mca_io_romio321.so
# in DIR/components, which Open MPI loads instead of its own when that
# directory comes first in its component path (docs/openmpi.md).
#
#   build-openmpi.sh REPO DIR
#
# DIR is keyed like the MPICH build (the Makefile's OPENMPI_DIR). From
# nothing: apt-get source openmpi, the upstream tarball patched
# (openmpi-patch/apply.sh), autoreconf in ROMIO, Open MPI configured as
# Debian configures it (openmpi-patch/configure.args, dpkg-buildflags), and
# only the component built. Later runs: an incremental make of the component
# (the drivers are symlinks into REPO); the installed copy is replaced only
# when it differs. Nothing outside DIR is written.
set -euo pipefail

repo=$(cd "$1" && pwd)
dir=$2
version=4.1.4
jobs=$(( $(nproc) + 1 ))
src=$dir/src/openmpi-$version
build=$dir/build
component=$build/ompi/mca/io/romio321
log() { echo "build-openmpi: $*"; }
. "$repo/mpich-patch/lib.sh"

# The component is loaded by the installed libmpi: built from its version.
installed=$(dpkg-query -W -f='${Version}' libopenmpi-dev 2>/dev/null || true)
[ "${installed%%-*}" = "$version" ] ||
    die "Debian's libopenmpi-dev is '${installed:-not installed}', this build is for Open MPI $version"

mkdir -p "$dir"
if [ ! -f "$dir/.patched" ]; then
    rm -rf "$dir/src" "$build" "$dir/components" "$dir"/.configured
    # Debian's own patches touch nothing the io component compiles (wrapper
    # data, man pages, other architectures, the ofi mtl): the upstream tree.
    patched_source "$dir" openmpi "$version" "$repo/openmpi-patch/apply.sh" \
        ompi/mca/io/romio321/romio
    touch "$dir/.patched"
fi

link_drivers "$src/ompi/mca/io/romio321/romio" "$repo"

if [ ! -f "$dir/.configured" ]; then
    mapfile -t args < <(grep -v '^#' "$repo/openmpi-patch/configure.args")
    fs=$(file_systems testfs+ufs+nfs "$repo")
    log "configuring Open MPI (ROMIO: $fs) in $build"
    rm -rf "$build"; mkdir -p "$build"
    # debian/rules: dpkg-buildflags, plus -O3
    (cd "$build" && "$src/configure" "${args[@]}" --with-io-romio-flags="--with-file-system=$fs" \
        CFLAGS="$(dpkg-buildflags --get CFLAGS) -O3" CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS)" \
        LDFLAGS="$(dpkg-buildflags --get LDFLAGS)") > "$dir/configure.log" 2>&1 \
        || { tail -40 "$dir/configure.log"; exit 1; }
    touch "$dir/.configured"
fi

make -C "$component" -j"$jobs" > "$dir/make.log" 2>&1 \
    || { grep -E 'error|Error' "$dir/make.log" | head -40; tail -20 "$dir/make.log"; exit 1; }
mkdir -p "$dir/components"
cmp -s "$component/.libs/mca_io_romio321.so" "$dir/components/mca_io_romio321.so" ||
    install -m 644 "$component/.libs/mca_io_romio321.so" "$dir/components/mca_io_romio321.so"
