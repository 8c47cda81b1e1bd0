#!/usr/bin/env bash
# HDF5's parallel tests (the programs of testpar/, HDF5 1.10.8 from Debian's
# source built with our mpicc: scripts/build-hdf5.sh) over the prefixes of
# modes.sh. Each program writes its files under plain names in the mode's
# directory, as HDF5's own `make check` does in testpar/.
#   hdf5.sh PREFIX HDF5_DIR WORKDIR RESULTS MODE... [-- PROGRAM:NP[:ARGS]...]
# (ARGS with commas for blanks: testphdf5:2:-o,ccontw); APPS_REPEAT=N runs
# each program N times.
# Default programs and process counts: $HDF5_PROGRAMS below (at most 4
# processes: HDF5's own default of 6 does not fit 2 cores).
# A case passes when the program exits 0 (t_pflush1 always exits 1: it
# stops without MPI_Finalize on purpose) and its output reports no failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")

# testpar's TEST_PROG_PARA in their order (t_prestart reads what t_pshutdown
# left), then testpflush.sh's pair. t_cache and t_pread need 3 processes.
HDF5_PROGRAMS="t_mpi:2 t_bigio:2 testphdf5:2 t_cache:3 t_cache_image:2 t_pread:3 t_pshutdown:2
t_prestart:2 t_init_term:2 t_shapesame:2 t_filters_parallel:2 t_pflush:2"

# Tests that cannot pass in a mode (mode pattern, program or
# program.subtest of testphdf5 or t_shapesame, why). Over rdma: the cases
# run in an rfs-mount (modes.sh): the tests that make, open, stat or remove
# their file with POSIX or HDF5's serial driver do that through the mount.
# Over abt: none (over abt:rfs: and abt:rdma: HDF5's files, opened
# read-write, are buffered under the servers' leases: docs/abt.md).
SKIPS="
* t_cache_image HDF5's own CMake test list leaves it out (testpar/CMakeTests.cmake: do not test until new version is added); here it hangs over ufs: as well (smoke check 1, after rank 0's helper process)"

# --case NP PROGRAM [ARGS]: one run in the current directory; " No Errors"
# when the program (or t_pflush's pair) passed.
if [ "${1:-}" = --case ]; then
    np=$2 prog=$3
    shift 3
    # a program's output goes to the case's log as it comes (a case stopped
    # by its time limit shows how far it got) and to $out, judged after
    out=$(mktemp "${TMPDIR:-/tmp}/hdf5-case.XXXXXX")
    trap 'rm -f "$out"' EXIT
    run() {
        "$PREFIX_MPIEXEC" $MPIEXEC_FLAGS -n "$np" "$@" 2>&1 | tee "$out"
        return "${PIPESTATUS[0]}"
    }
    failed() { grep -qE 'FAILED|\*\*\* ?ERROR|[1-9][0-9]* errors? (detected|found)|Assertion' "$out"; }
    if [ "$(basename "$prog")" = t_pflush ]; then
        # part 1 flushes one file, leaves another unflushed, and _exits;
        # part 2 checks the first and that the second is not a valid file
        run "${prog}1"
        grep -q PASSED "$out" && ! failed || exit 1
        prog=${prog}2
    fi
    run "$prog" "$@" && ! failed || exit 1
    echo " No Errors"
    exit 0
fi

PREFIX=$(cd "$1" && pwd)
testpar=$2/src/testpar
work=$3
results=$4
shift 4
modes="" programs=$HDF5_PROGRAMS
while [ $# -gt 0 ] && [ "$1" != -- ]; do modes="$modes $1"; shift; done
[ $# -gt 0 ] && { shift; programs=$*; }
. "$here/../lib.sh"
. "$here/modes.sh"
runner_start "$work"

export PREFIX_MPIEXEC=$PREFIX/bin/mpiexec MPIEXEC_FLAGS
# HDF5's parallel example, against the static library the build left
hdf5_src=${testpar%/testpar}
"$PREFIX/bin/mpicc" -I"$hdf5_src/src" -o "$work/bin/ph5example" "$hdf5_src/examples/ph5example.c" \
    "$hdf5_src/src/.libs/libhdf5.a" -lz -lm -ldl || FAILED=$((FAILED + 1))
for mode in $modes; do
    mode_setup "$mode" "$work" || { FAILED=$((FAILED + 1)); echo "  FAIL $mode: no servers"; continue; }
    dir=$MODE_DIR
    mkdir -p "$dir"
    echo "HDF5's parallel tests over $mode"
    for entry in $programs; do
        # PROGRAM:NP, or PROGRAM:NP:ARGS with commas for blanks
        IFS=: read -r prog np args <<< "$entry"
        args=${args//,/ }
        why=$(skip_reason "$SKIPS" "$mode" "$prog")
        if [ -n "$why" ]; then
            SKIPPED=$((SKIPPED + 1))
            echo "  SKIP hdf5.$mode.$prog: $why"
            continue
        fi
        if [ "$prog" = testphdf5 ] || [ "$prog" = t_shapesame ]; then
            while read -r _ name _; do
                case $name in "$prog".*) ;; *) continue ;; esac
                why=$(skip_reason "$SKIPS" "$mode" "$name")
                [ -n "$why" ] || continue
                SKIPPED=$((SKIPPED + 1))
                echo "  SKIP hdf5.$mode.$name: $why"
                args="$args -x ${name#"$prog".}"
            done <<< "$SKIPS"
        fi
        # from a copy in the mode's directory, as HDF5's make check runs them in
        # testpar/: t_cache_image starts itself again by its relative name
        for p in $prog ${prog}1 ${prog}2; do
            [ ! -f "$testpar/$p" ] || cp "$testpar/$p" "$dir/$p"
        done
        for r in $(seq 1 "${APPS_REPEAT:-1}"); do
            # shellcheck disable=SC2086
            run_case "hdf5.$mode.$prog.np$np$(repeat_suffix "$r")" 900 env -C "$dir" $MODE_ENV \
                bash "$self" --case "$np" "./$prog" $args
        done
    done
    # HDF5's h5dump (Debian's, serial, POSIX) on what its parallel example wrote
    # through MPI-IO in this mode (the driver's: mode_driver_ran, mode_made_by_driver)
    # shellcheck disable=SC2086
    run_case "hdf5.$mode.h5dump" 300 env -C "$dir" $MODE_ENV bash -c '
        set -eo pipefail
        . "$2/modes.sh"
        "$PREFIX_MPIEXEC" $MPIEXEC_FLAGS -n 2 "$1" -c -f . 2>&1 | tee example.out
        mode_driver_ran example.out
        mode_made_by_driver ParaEg0.h5
        h5dump -d /Data1 ParaEg0.h5 > h5dump.out
        grep -q "DATASET \"/Data1\"" h5dump.out
        grep -q "(0,0): 1, 2, 3," h5dump.out
        rm -f ParaEg*.h5 h5dump.out example.out
        echo " No Errors"
        ' h5dump "$work/bin/ph5example" "$here"
    mode_done
done
stop_all_rfsd
write_results "$results"
