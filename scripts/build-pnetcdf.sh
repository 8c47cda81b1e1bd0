#!/usr/bin/env bash
# Build PnetCDF (Debian's source package, 1.12.3 on bookworm) with our
# mpicc, under a cache directory, once:
#
#   build-pnetcdf.sh MPI_PREFIX DIR
#
# DIR is keyed by the MPICH build (see the Makefile). What is built: the C
# library (no Fortran, no C++) and its test helper library; the test
# programs are compiled by the runner (test/apps/pnetcdf.sh) from DIR/src.
set -euo pipefail

mpi=$1
dir=$2
jobs=$(( $(nproc) + 1 ))
log() { echo "build-pnetcdf: $*"; }

[ -f "$dir/.built" ] && exit 0
rm -rf "$dir"
mkdir -p "$dir"
log "fetching PnetCDF with apt-get source"
(cd "$dir" && apt-get source --download-only -qq pnetcdf 2>&1 \
    | grep -v '^W: Download is performed unsandboxed' || true)
tarball=$(ls "$dir"/pnetcdf_*.orig.tar.* 2>/dev/null | head -1)
[ -n "$tarball" ] || { echo "build-pnetcdf: apt-get source did not give PnetCDF" >&2; exit 1; }
tar -C "$dir" -xf "$tarball"
src=$(ls -d "$dir"/pnetcdf-*/ | head -1)
ln -sfn "$src" "$dir/src"
log "configuring and building $(basename "$src") with $mpi/bin/mpicc"
(
    cd "$dir/src"
    autoreconf -fi
    ./configure --disable-fortran --disable-cxx --disable-shared MPICC="$mpi/bin/mpicc"
    make -j"$jobs"
    make -C test/common libtestutils.la
) > "$dir/build.log" 2>&1 || { tail -30 "$dir/build.log"; exit 1; }
touch "$dir/.built"
