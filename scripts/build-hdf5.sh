#!/usr/bin/env bash
# Build parallel HDF5 (Debian's source package, 1.10.8 on bookworm) with our
# mpicc, under a cache directory, once: what its parallel tests need and no
# more (the C library, static, with zlib for the deflate filter; the test
# helper library; the programs of testpar/). No tools, no high-level
# library, no Fortran or C++.
#
#   build-hdf5.sh MPI_PREFIX DIR
#
# DIR is keyed by the MPICH build (see the Makefile); the programs are in
# DIR/src/testpar (test/apps/hdf5.sh runs them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

mpi=$1
dir=$2
jobs=$(( $(nproc) + 1 ))

[ -f "$dir/.built" ] && exit 0
. "$here/apt-source.sh"
apt_source hdf5 "$dir"
log() { echo "build-hdf5: $*"; }
log "configuring and building $(basename "$(readlink "$dir/src")") with $mpi/bin/mpicc"
(
    cd "$dir/src"
    ./configure CC="$mpi/bin/mpicc" --enable-parallel --disable-shared --enable-static \
        --disable-hl --disable-tools --disable-fortran --disable-cxx --disable-java \
        --enable-build-mode=production --with-zlib --without-szlib \
        --disable-dependency-tracking
    make -j"$jobs" -C src
    make -j"$jobs" -C test libh5test.la
    make -j"$jobs" -C testpar t_mpi t_bigio testphdf5 t_cache t_cache_image t_pread t_pshutdown \
        t_prestart t_init_term t_shapesame t_filters_parallel t_pflush1 t_pflush2
) > "$dir/build.log" 2>&1 || { tail -30 "$dir/build.log"; exit 1; }
touch "$dir/.built"
