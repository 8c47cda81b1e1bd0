#!/usr/bin/env bash
# PnetCDF's parallel tests (the `ptest` lists of its C test directories, as
# its parallel_run.sh scripts run them: each program on a new file, then
# ncvalidator on what it wrote), built with our mpicc against the cached
# PnetCDF (scripts/build-pnetcdf.sh), over the prefixes of modes.sh.
#   pnetcdf-ptest.sh PREFIX PNETCDF_DIR WORKDIR RESULTS MODE... [-- PROGRAM...]
# PROGRAMs (DIR/NAME, as in the lists below) limit the run to those; the
# process counts are the lists' own, at most 4 (make check-apps-full runs
# them all; PNETCDF_NPROCS=N keeps only the count N, PNETCDF_NPROCS=lowest
# the first of each list).
set -u
here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")

# DIR: the process counts of its ptest targets (6 and more left out: at most
# 4 processes on this machine's 2 cores).
PTEST_NPROCS="C:4 cdf_format:4 header:2,4 testcases:2,4 nonblocking:2,4"

# --case NP PROGRAMS ARGS FILES VALIDATOR COPY: one case, run by run_case in
# the mode's directory with its environment: each program of PROGRAMS (a
# +-separated list, run in turn on the same file) with ARGS, then
# ncvalidator on each of FILES ("-" for none); on a mode where POSIX does not
# see the driver's files, on a copy read through MPI-IO (COPY: mpi_copy).
if [ "${1:-}" = --case ]; then
    np=$2 progs=$3 args=$4 files=$5 validator=$6 copy=$7
    for p in ${progs//+/ }; do
        # shellcheck disable=SC2086
        "$PREFIX_MPIEXEC" $MPIEXEC_FLAGS -n "$np" "$p" $args || exit 1
    done
    [ "$files" = - ] && { echo " No Errors"; exit 0; }
    for f in ${files//,/ }; do
        if [ "$MODE_POSIX" = 1 ]; then
            "$validator" -q "$f" || { echo "ncvalidator: $f is not a valid file"; exit 1; }
        else
            local_copy=$(mktemp "${TMPDIR:-/tmp}/ptest-copy.XXXXXX")
            "$PREFIX_MPIEXEC" $MPIEXEC_FLAGS -n 1 "$copy" "$f" "$local_copy" \
                && "$validator" -q "$local_copy"
            rc=$?
            rm -f "$local_copy"
            [ $rc -eq 0 ] || { echo "ncvalidator: $f (read through MPI-IO) is not valid"; exit 1; }
        fi
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
"$PREFIX/bin/mpicc" -std=c11 -O2 -Wall -Werror -o "$work/bin/mpi_copy" "$here/mpi_copy.c" \
    || { echo "0 1 0" > "$results"; exit 1; }
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

# Over rdma: (no POSIX path), the programs that open a file, or create one
# with NC_NOCLOBBER: PnetCDF 1.12.3 does these with POSIX calls on the name.
POSIX_WHY="PnetCDF opens a file after reading its signature with open(2) on the name \
(ncmpi_open, ncmpi_inq_file_format: dispatchers/file.c:1200), checks NC_NOCLOBBER with \
access(2) and empties a file created again with truncate(2) (ncmpio_create.c:84, :108): \
a striped rdma: file has no POSIX path"
# And the programs that create one file again with NC_CLOBBER, which
# PnetCDF empties with access(2) and truncate(2) on the name
# (ncmpio_create.c:84, :108): MPI_File_open does not truncate.
RECREATE="testcases/test_erange"
uses_posix() {
    local p
    for p in ${2//+/ }; do
        grep -qE 'ncmpi_open|ncmpi_inq_file_format|NC_NOCLOBBER' "$src/test/$1/$p.c" && return 0
        [[ " $RECREATE " == *" $1/$p "* ]] && return 0
    done
    return 1
}

export PREFIX_MPIEXEC=$PREFIX/bin/mpiexec MPIEXEC_FLAGS
for mode in $modes; do
    mode_setup "$mode" "$work" || { FAILED=$((FAILED + 1)); echo "  FAIL $mode: no servers"; continue; }
    posix=1
    mode_posix "$mode" || posix=0
    dir=$MODE_DIR
    mkdir -p "$dir/inq"
    cp "$src"/test/cdf_format/test_*.nc "$dir/inq/"
    echo "PnetCDF's parallel tests over $mode"
    for entry in $PTEST_NPROCS; do
        d=${entry%%:*}
        while IFS='|' read -r name progs args files; do
            [ -z "$only" ] || [[ $only == *" $d/$name "* ]] || continue
            if [ $posix = 0 ] && uses_posix "$d" "$progs"; then
                SKIPPED=$((SKIPPED + 1))
                echo "  SKIP pnetcdf.$mode.$d.$name: $POSIX_WHY"
                continue
            fi
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
                # shellcheck disable=SC2086
                run_case "pnetcdf.$mode.$d.$name.np$n" 600 env -C "$dir" $MODE_ENV \
                    MODE_POSIX=$posix bash "$self" --case "$n" "$bins" "${a//INQ/inq}" "$f" \
                    "$validator" "$work/bin/mpi_copy"
            done
        done < <(cases_of "$d")
    done
    mode_done
done
stop_all_rfsd
write_results "$results"
