#!/usr/bin/env bash
# PnetCDF's own test programs over abt: (issue 20: they read fill values
# instead of written data, or hung, over abt:ufs: with 2 processes), built
# with our mpicc against the cached PnetCDF (scripts/build-pnetcdf.sh), in
# three modes:
#   abt-ufs  plain names in a local directory, ROMIO_FSTYPE_FORCE=abt:
#   abt-rfs  the same under a live rfsd's root, with ROMIO_ABT_INNER=rfs:
#   ufs      the same local names without abt: the baseline of the run
# PnetCDF checks and truncates its files with POSIX calls on the name, so
# the names are plain paths (relative to the rfsd root, which is the
# working directory) that POSIX and the driver resolve to one file.
# The failures were timing-dependent: each program runs PNETCDF_REPEAT
# times (default 3) with each process count of PNETCDF_NPROCS (default 2;
# 4 processes on 2 cores take minutes for erange_fill, even over ufs:),
# each run on a new file; a case passes when every run exits 0 and prints
# "pass".
#   pnetcdf.sh PREFIX PNETCDF_DIR WORKDIR RESULTS
set -u
here=$(cd "$(dirname "$0")" && pwd)

PROGRAMS="testcases/flexible testcases/tst_vars_fill testcases/varn_int testcases/erange_fill
nonblocking/i_varn_indef nonblocking/i_varn_int64"

# --case DIR NP REPEAT PROGRAM [ENV...]: the runs of one case (run_case
# runs this under its timeout); " No Errors" when all of them passed.
if [ "${1:-}" = --case ]; then
    dir=$2 np=$3 repeat=$4 prog=$5
    shift 5
    for i in $(seq 1 "$repeat"); do
        mkdir -p "$dir/run$i"
        out=$(cd "$dir/.." && env "$@" "$PREFIX_MPIEXEC" $MPIEXEC_FLAGS -n "$np" "$prog" \
            "$(basename "$dir")/run$i/t.nc" 2>&1)
        rc=$?
        echo "run $i: exit $rc: $out"
        [ $rc -eq 0 ] && grep -q "pass" <<< "$out" || exit 1
    done
    echo " No Errors"
    exit 0
fi

PREFIX=$(cd "$1" && pwd)
pnetcdf=$2/src
work=$3
results=$4
. "$here/../lib.sh"
runner_start "$work"
if [ -f "$2/.unavailable" ]; then
    SKIPPED=1
    echo "  SKIP pnetcdf: $(cat "$2/.unavailable")"
    write_results "$results"
    exit 0
fi
repeat=${PNETCDF_REPEAT:-3}
nprocs=${PNETCDF_NPROCS:-2}

for p in $PROGRAMS; do
    name=$(basename "$p") c=$pnetcdf/test/$p.c
    if [ ! -f "$c" ]; then
        c=$work/bin/$name.c
        m4 -DPNETCDF -I"$pnetcdf/m4" "$pnetcdf/test/$p.m4" > "$c"
    fi
    "$PREFIX/bin/mpicc" -O2 -w -I"$pnetcdf/src/include" -I"$pnetcdf/test/common" -o \
        "$work/bin/$name" "$c" "$pnetcdf/test/common/.libs/libtestutils.a" \
        "$pnetcdf/src/libs/.libs/libpnetcdf.a" -lm > "$LOGDIR/$name.build" 2>&1 \
        || rm -f "$work/bin/$name"
done

start_rfsd "$work/rfs-root" "$work" pnetcdf || exit 1
export PREFIX_MPIEXEC=$PREFIX/bin/mpiexec MPIEXEC_FLAGS
for mode in ufs abt-ufs abt-rfs; do
    case $mode in
        ufs) top=$work/ufs env="" ;;
        abt-ufs) top=$work/abt-ufs env="ROMIO_FSTYPE_FORCE=abt:" ;;
        abt-rfs) top=$work/rfs-root
            env="ROMIO_FSTYPE_FORCE=abt: ROMIO_ABT_INNER=rfs: ROMIO_RFS_SERVER=127.0.0.1:$RFSD_PORT" ;;
    esac
    echo "PnetCDF's tests ($mode)"
    for p in $PROGRAMS; do
        name=$(basename "$p")
        if [ ! -x "$work/bin/$name" ]; then
            FAILED=$((FAILED + 1))
            echo "  FAIL pnetcdf.$mode.$name (does not build: $LOGDIR/$name.build)"
            continue
        fi
        for np in $nprocs; do
            # shellcheck disable=SC2086
            run_case "pnetcdf.$mode.$name.np$np" 900 bash "$0" --case \
                "$top/$name.np$np" "$np" "$repeat" "$work/bin/$name" $env
        done
    done
done
stop_all_rfsd
write_results "$results"
