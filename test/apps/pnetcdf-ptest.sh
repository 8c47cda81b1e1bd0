#!/usr/bin/env bash
# PnetCDF's parallel tests (the `ptest` lists of its C test directories, as
# its parallel_run.sh scripts run them: each program on a new file, then
# ncvalidator on what it wrote), built with our mpicc against the cached
# PnetCDF (scripts/build-pnetcdf.sh), over the prefixes of modes.sh.
#   pnetcdf-ptest.sh PREFIX PNETCDF_DIR WORKDIR RESULTS MODE... [-- PROGRAM...]
# PROGRAMs (DIR/NAME, as in the lists below) limit the run to those; the
# process counts are the lists' own, at most 4 (make check-apps-full runs
# them all; PNETCDF_NPROCS=N keeps only the count N, PNETCDF_NPROCS=lowest
# the first of each list); APPS_REPEAT=N runs each case N times.
set -u
here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")

# DIR: the process counts of its ptest targets (6 and more left out: at most
# 4 processes on this machine's 2 cores).
PTEST_NPROCS="C:4 cdf_format:4 header:2,4 testcases:2,4 nonblocking:2,4"

# --case NP PROGRAMS ARGS FILES VALIDATOR: one case, run by run_case in the
# mode's directory with its environment: each program of PROGRAMS (a
# +-separated list, run in turn on the same file) with ARGS, then
# ncvalidator and netCDF's ncdump on each of FILES ("-" for none), read by
# POSIX (over rdma:, through the rfs-mount the mode runs in, and each file
# checked to be the driver's: mode_made_by_driver).
if [ "${1:-}" = --case ]; then
    . "$here/modes.sh"
    np=$2 progs=$3 args=$4 files=$5 validator=$6
    out=$(mktemp "${TMPDIR:-/tmp}/ptest-case.XXXXXX")
    trap 'rm -f "$out"' EXIT
    for p in ${progs//+/ }; do
        # shellcheck disable=SC2086
        "$PREFIX_MPIEXEC" $MPIEXEC_FLAGS -n "$np" "$p" $args 2>&1 | tee -a "$out"
        [ "${PIPESTATUS[0]}" = 0 ] || exit 1
    done
    [ "$files" = - ] && { echo " No Errors"; exit 0; }
    mode_driver_ran "$out" || exit 1
    for f in ${files//,/ }; do
        "$validator" -q "$f" || { echo "ncvalidator: $f is not a valid file"; exit 1; }
        ncdump -h "$f" > /dev/null || { echo "ncdump: cannot read $f"; exit 1; }
        mode_made_by_driver "$f" || exit 1
    done
    echo " No Errors"
    exit 0
fi

PREFIX=$(cd "$1" && pwd)
src=$2/src
work=$3
results=$4
shift 4
modes="" only=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do modes="$modes $1"; shift; done
[ $# -gt 0 ] && { shift; only=" $* "; }
. "$here/../lib.sh"
. "$here/modes.sh"
runner_start "$work"

# The test programs, built once in the cached tree (PnetCDF's own rules).
if [ ! -f "$src/test/.ptest-built" ]; then
    echo "building PnetCDF's test programs"
    for entry in $PTEST_NPROCS; do
        make -j"$(( $(nproc) + 1 ))" -C "$src/test/${entry%%:*}" tests-local || exit 1
    done > "$work/build.log" 2>&1 || { tail -20 "$work/build.log"; echo "0 1 0" > "$results"; exit 1; }
    touch "$src/test/.ptest-built"
fi
validator=$src/src/utils/ncvalidator/ncvalidator

# The programs of DIR's list, each as CASE|PROGRAMS|ARGS|FILES (OUT: the
# output file's name), with parallel_run.sh's exceptions: the C example is a
# writer and a reader of one file; test_inq_format reads the sample files
# of its directory (copied into the mode's directory as INQ); put_all_kinds and
# iput_all_kinds write three files (OUT1, OUT2, OUT5); tst_version and
# mcoll_perf are not validated.
cases_of() {
    local d=$1 p
    case $d in
        C) echo "pres_temp_4D|pres_temp_4D_wr+pres_temp_4D_rd|OUT|OUT"; return ;;
        cdf_format)
            echo "test_inq_format|test_inq_format|INQ|-"
            echo "cdf_type|cdf_type|OUT|OUT"
            echo "dim_cdf12|dim_cdf12|OUT|OUT"
            return ;;
    esac
    for p in $(make -s -C "$src/test/$d" -f Makefile -f "$here/print.mk" print-check_PROGRAMS); do
        case $p in
            put_all_kinds|iput_all_kinds) echo "$p|$p|OUT|OUT1,OUT2,OUT5" ;;
            tst_version) echo "$p|$p||-" ;;
            mcoll_perf) echo "$p|$p|OUT|-" ;;
            *) echo "$p|$p|OUT|OUT" ;;
        esac
    done
}

export PREFIX_MPIEXEC=$PREFIX/bin/mpiexec MPIEXEC_FLAGS
for mode in $modes; do
    mode_setup "$mode" "$work" || { FAILED=$((FAILED + 1)); echo "  FAIL $mode: no servers"; continue; }
    dir=$MODE_DIR
    mkdir -p "$dir/inq"
    cp "$src"/test/cdf_format/test_*.nc "$dir/inq/"
    echo "PnetCDF's parallel tests over $mode"
    for entry in $PTEST_NPROCS; do
        d=${entry%%:*}
        while IFS='|' read -r name progs args files; do
            [ -z "$only" ] || [[ $only == *" $d/$name "* ]] || continue
            nps=${entry#*:}
            case ${PNETCDF_NPROCS:-} in
                '') ;;
                lowest) nps=${nps%%,*} ;;
                *) [[ ,$nps, == *,$PNETCDF_NPROCS,* ]] && nps=$PNETCDF_NPROCS || nps="" ;;
            esac
            for n in ${nps//,/ }; do
                out=$name.np$n.nc
                a=${args//OUT/$out} f=${files//OUT/$out}
                bins=""
                for p in ${progs//+/ }; do bins="$bins${bins:++}$src/test/$d/$p"; done
                for r in $(seq 1 "${APPS_REPEAT:-1}"); do
                    # shellcheck disable=SC2086
                    run_case "pnetcdf.$mode.$d.$name.np$n$(repeat_suffix "$r")" 600 \
                        env -C "$dir" $MODE_ENV \
                        bash "$self" --case "$n" "$bins" "${a//INQ/inq}" "$f" "$validator"
                done
            done
        done < <(cases_of "$d")
    done
    mode_done
done
stop_all_rfsd
write_results "$results"
