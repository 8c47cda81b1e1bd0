#!/usr/bin/env bash
# make check-trixie's part inside the trixie root (test/trixie/run.sh), in a
# clean clone REPO:
# - `make` as the README says: with Debian's MPICH source where the archive
#   serves it; else it must fail naming MPICH_SOURCE, and MPICH_SOURCE (4.2.1,
#   trixie's version) is given; then `make demo` and `make check` (the unit
#   and integration tests, ROMIO's and MPICH's io suites, PnetCDF over abt:);
# - ROMIO's suite over rfs:, abt:rfs: and rdma:, built with trixie's
#   mpicc.mpich and run unchanged on that build through its libmpich.so.12;
# - make openmpi for trixie's installed Open MPI, then check-openmpi's tests
#   (integration subset, trixie's parallel HDF5, ROMIO's suite).
#   inside.sh REPO WORK RESULTS [MPICH_SOURCE]
set -u
repo=$1
work=$2
results=$3
source=${4:-}
. "$repo/test/lib.sh"
runner_start "$work"
cd "$repo" || exit 1
suites=""     # the runners whose WORK/NAME.res are summed below

echo "trixie: make (Debian's MPICH source, if the archive serves it)"
if make > "$LOGDIR/make.out" 2>&1; then
    check make.debian_source true
    source=""
else
    tail -3 "$LOGDIR/make.out"
    check make.names_MPICH_SOURCE grep -q 'MPICH_SOURCE=PATH' "$LOGDIR/make.out"
fi
export MPICH_SOURCE=$source
if [ -z "$source" ] && ! [ -x build/install/bin/mpicc ]; then
    SKIPPED=$((SKIPPED + 1))
    echo "  SKIP trixie.mpich: no MPICH 4.2.1 source (the archive's answers 404; name one:" \
        "make check-trixie TRIXIE_MPICH_SOURCE=PATH)"
else
    if run_case make.mpich 1800 bash -c 'make && echo " No Errors"' &&
       run_case make.demo 300 bash -c 'make demo && echo " No Errors"'; then
        mpich_dir=$(make -s --no-print-directory print-MPICH_DIR)
        echo "trixie: make check"
        make check 2>&1 | tee "$LOGDIR/check.out"
        tail -1 "$LOGDIR/check.out" |
            sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' \
            > "$work/check.res"
        suites="$suites check"
        ROMIO_MPI=debian-mpich bash test/romio/run.sh "$repo/build/install" "$mpich_dir" \
            "$work/romio" "$work/romio.res" rfs abt-rfs rdma-4-65536-list
        suites="$suites romio"
    fi
fi

echo "trixie: Open MPI"
if run_case make.openmpi 1800 bash -c 'make openmpi && echo " No Errors"'; then
    ompi_dir=$(make -s --no-print-directory print-OPENMPI_DIR)
    make -s --no-print-directory build/obj/plain/rfsd build/obj/plain/rfs-mount > /dev/null
    bash test/openmpi/run.sh "$repo" "$ompi_dir" "$work/openmpi" "$work/openmpi.res"
    suites="$suites openmpi"
fi

for s in $suites; do
    read -r p f k < "$work/$s.res" 2>/dev/null || { p=0 f=1 k=0; }
    echo "  $s: $p passed, $f failed, $k skipped"
    PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) SKIPPED=$((SKIPPED + k))
done
write_results "$results"
