#!/usr/bin/env bash
# Build PnetCDF (Debian's source package, 1.12.3 on bookworm) with our
# mpicc, under a cache directory, once:
#
#   build-pnetcdf.sh MPI_PREFIX DIR
#
# DIR is keyed by the MPICH build (see the Makefile). What is built: the C
# library (no Fortran, no C++), its utilities (ncvalidator) and its test
# helper library; the test programs are compiled by the runners
# (test/apps/pnetcdf.sh, test/apps/pnetcdf-ptest.sh) from DIR/src.
set -euo pipefail

mpi=$1
dir=$2
jobs=$(( $(nproc) + 1 ))
log() { echo "build-pnetcdf: $*"; }

[ -f "$dir/.built" ] && exit 0
. "$(dirname "$0")/apt-source.sh"
# Where the archive serves no PnetCDF source (trixie's answers 404 here), its
# tests are skipped with that reason (test/apps/pnetcdf.sh): the rest runs.
if ! apt_source pnetcdf "$dir"; then
    echo "the archive gave no PnetCDF source (apt-get source pnetcdf)" > "$dir/.unavailable"
    log "$(cat "$dir/.unavailable"): its tests will be skipped"
    exit 0
fi
log "configuring and building $(basename "$(readlink "$dir/src")") with $mpi/bin/mpicc"
(
    cd "$dir/src"
    autoreconf -fi
    ./configure --disable-fortran --disable-cxx --disable-shared MPICC="$mpi/bin/mpicc"
    make -j"$jobs"
    make -C test/common libtestutils.la
) > "$dir/build.log" 2>&1 || { tail -30 "$dir/build.log"; exit 1; }
touch "$dir/.built"
