#!/usr/bin/env bash
# MPICH's own MPI-IO tests (test/mpi/io of the MPICH source, configured and
# built with our mpicc, cached beside the MPICH build), their hard-coded
# relative file names put on a driver by ROMIO_FSTYPE_FORCE, one pass per
# PASS:
#   rfs          every test over rfs: (a live rfsd)
#   rdma         every test over rdma: (4 servers, stripe unit 64 KiB,
#                disk-directed collectives)
#   abt-rfs      every test over abt: over rfs:
#   abt-ufs      every test over abt: over ufs: (plain names, local)
#   coll-disk_directed, coll-two_phase
#                the collective tests over rdma: (4 servers, unit 4096) with
#                that rdma_coll (the nonblocking collectives are ROMIO's
#                two-phase in both)
# The process counts and arguments are those of the suite's testlist.
# Pass = exit 0 and " No Errors". Where the file is on a server, the tests
# run in a directory of their own and nothing may appear there (every byte
# goes through the driver); a test named in ./posix (it removes or checks
# its file with POSIX calls on the same name) runs in the server's export
# root instead, where those calls see the server's file; over rdma: it is
# skipped with the reason (a striped file has no POSIX path), counted.
#   run.sh PREFIX MPICH_DIR WORKDIR RESULTS [PASS...]
#   (default: rfs coll-disk_directed coll-two_phase, make check's)
set -u
here=$(cd "$(dirname "$0")" && pwd)
PREFIX=$1
mpich_dir=$2
work=$3
results=$4
shift 4
passes=${*:-rfs coll-disk_directed coll-two_phase}
. "$here/../lib.sh"
runner_start "$work"

src=$(echo "$mpich_dir"/src/mpich-*/test/mpi)
build=$mpich_dir/testmpi
if [ ! -f "$build/.configured" ]; then
    echo "configuring MPICH's test/mpi with our mpicc"
    rm -rf "$build" && mkdir -p "$build"
    (cd "$build" && "$src/configure" MPICC="$PREFIX/bin/mpicc" CC="$PREFIX/bin/mpicc" \
        --disable-fortran --disable-cxx) > "$work/configure.log" 2>&1 \
        || { tail -20 "$work/configure.log"; echo "0 1 0" > "$results"; exit 1; }
    touch "$build/.configured"
fi
if ! make -C "$build/util" > "$work/build.log" 2>&1 || ! make -C "$build/io" >> "$work/build.log" 2>&1; then
    tail -20 "$work/build.log"
    echo "0 1 0" > "$results"
    exit 1
fi

# Known bugs of ours, not fixed yet (pass pattern, test, what): skipped with
# this reason, counted, so that the lane's other tests still count in CI.
SKIPS=""

# The reason ./posix gives for NAME, or nothing.
posix_reason() {
    awk -v n="$1" '$1 == n { $1 = ""; sub(/^ /, ""); print; exit }' "$here/posix"
}

root=$work/root
cwd=$work/cwd
mkdir -p "$cwd" "$work/abt-ufs"
start_rfsd "$root" "$work" mpich-io || exit 1
rfs_port=$RFSD_PORT
rdma_up=""

for pass in $passes; do
    filter=all dir=$cwd posix_dir=$root hints=/dev/null
    case $pass in
        rfs) force="ROMIO_FSTYPE_FORCE=rfs: ROMIO_RFS_SERVER=127.0.0.1:$rfs_port" ;;
        abt-rfs) force="ROMIO_FSTYPE_FORCE=abt: ROMIO_ABT_INNER=rfs: ROMIO_RFS_SERVER=127.0.0.1:$rfs_port" ;;
        abt-ufs) force="ROMIO_FSTYPE_FORCE=abt:" dir=$work/abt-ufs posix_dir=$dir ;;
        rdma|coll-*)
            if [ -z "$rdma_up" ]; then
                start_rdma_servers 4 "$work" mpich-io-rdma || exit 1
                rdma_up=1
            fi
            force="ROMIO_FSTYPE_FORCE=rdma: ROMIO_RDMA_SERVERS=$RDMA_SERVERS" posix_dir=""
            hints=$work/$pass.hints
            if [ "$pass" = rdma ]; then
                printf 'rdma_coll disk_directed\nstriping_unit 65536\n' > "$hints"
            else
                filter=coll
                printf 'rdma_coll %s\nstriping_unit 4096\n' "${pass#coll-}" > "$hints"
            fi
            ;;
        *) echo "run.sh: unknown pass $pass" >&2; exit 2 ;;
    esac
    echo "MPICH test/mpi/io, pass $pass"
    while read -r name np rest; do
        case "$name" in ''|'#'*) continue ;; esac
        if [ $filter = coll ]; then
            case "$name" in
                *coll*|*aggregation*|*darray*|i_hindexed|setviewcur|i_setviewcur|rdwrord|i_rdwrord) ;;
                *) continue ;;
            esac
        fi
        why=$(skip_reason "$SKIPS" "$pass" "$name")
        if [ -n "$why" ]; then
            SKIPPED=$((SKIPPED + 1))
            echo "  SKIP mpich-io.$pass.$name: $why"
            continue
        fi
        at=$dir
        why=$(posix_reason "$name")
        if [ -n "$why" ]; then
            if [ -z "$posix_dir" ]; then
                SKIPPED=$((SKIPPED + 1))
                echo "  SKIP mpich-io.$pass.$name: $why; a striped rdma: file has no POSIX path"
                continue
            fi
            at=$posix_dir
        fi
        args=""
        for kv in $rest; do
            case $kv in arg=*) args="$args ${kv#arg=}" ;; esac
        done
        # zero_count opens its own executable by name: it must be on the server too
        cp "$build/io/$name" "$at/$name" && cp "$build/io/$name" "$root/$name"
        # shellcheck disable=SC2086
        run_case "mpich-io.$pass.$name" 300 env -C "$at" $force ROMIO_HINTS="$hints" \
            "$PREFIX/bin/mpiexec" $MPIEXEC_FLAGS -n "$np" "./$name" $args
        # the ordinary files the tests leave behind go, so a 2 GiB one does not stay
        find "$root" "$work/abt-ufs" -maxdepth 1 -type f ! -perm -u+x -size +100M -delete
        for r in ${RDMA_ROOTS:-}; do find "$r" -maxdepth 1 -type f -delete; done
        # nothing may have been written locally: every byte goes through the driver
        stray=$(find "$cwd" -type f ! -perm -u+x | head -3)
        if [ -n "$stray" ]; then
            FAILED=$((FAILED + 1))
            echo "  FAIL mpich-io.$pass.$name wrote local files: $stray"
            rm -f $stray
        fi
    done < "$build/io/testlist"
done

stop_all_rfsd
write_results "$results"
