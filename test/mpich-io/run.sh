#!/usr/bin/env bash
# MPICH's own MPI-IO tests (test/mpi/io of the MPICH source, configured and
# built with our mpicc, cached beside the MPICH build) run over rfs: with
# ROMIO_FSTYPE_FORCE=rfs: and ROMIO_RFS_SERVER pointing at a live rfsd:
# their hard-coded relative file names go to the server's export root.
# The process counts and arguments are those of the suite's testlist.
# Pass = exit 0 and " No Errors". A test named in ./skip (with the reason
# it cannot pass over any remote file system) is counted as skipped, in
# every pass it would have run in, with the reason printed.
#   run.sh PREFIX MPICH_DIR WORKDIR RESULTS
set -u
here=$(cd "$(dirname "$0")" && pwd)
PREFIX=$1
mpich_dir=$2
work=$3
results=$4
. "$here/../lib.sh"
LOGDIR=$work/logs
mkdir -p "$LOGDIR"
trap stop_all_rfsd EXIT

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

# The reason ./skip gives for NAME, or nothing.
skip_reason() {
    awk -v n="$1" '$1 == n { $1 = ""; sub(/^ /, ""); print; exit }' "$here/skip"
}

root=$work/root
cwd=$work/cwd
mkdir -p "$cwd"
start_rfsd "$root" "$work" mpich-io || exit 1
echo "MPICH test/mpi/io over rfs: (ROMIO_FSTYPE_FORCE=rfs:, server 127.0.0.1:$RFSD_PORT)"
while read -r name np rest; do
    case "$name" in ''|'#'*) continue ;; esac
    why=$(skip_reason "$name")
    if [ -n "$why" ]; then
        SKIPPED=$((SKIPPED + 1))
        echo "  SKIP mpich-io.$name: $why"
        continue
    fi
    args=""
    for kv in $rest; do
        case $kv in arg=*) args="$args ${kv#arg=}" ;; esac
    done
    # zero_count opens its own executable by name: it must be on the server too
    cp "$build/io/$name" "$cwd/$name" && cp "$build/io/$name" "$root/$name"
    # shellcheck disable=SC2086
    run_case "mpich-io.$name" 300 env -C "$cwd" ROMIO_FSTYPE_FORCE=rfs: \
        ROMIO_RFS_SERVER="127.0.0.1:$RFSD_PORT" "$PREFIX/bin/mpiexec" $MPIEXEC_FLAGS \
        -n "$np" "./$name" $args
    # the ordinary files the tests leave behind go, so a 2 GiB one does not stay
    find "$root" -maxdepth 1 -type f ! -name "$name" -size +100M -delete
    # nothing may have been written locally: every byte goes through rfsd
    stray=$(find "$cwd" -type f ! -perm -u+x | head -3)
    if [ -n "$stray" ]; then
        FAILED=$((FAILED + 1))
        echo "  FAIL mpich-io.$name wrote local files: $stray"
        rm -f $stray
    fi
done < "$build/io/testlist"

# The collective tests again over rdma: (4 servers), with each rdma_coll:
# disk-directed for the blocking calls, two-phase for the comparison (the
# nonblocking collectives are ROMIO's two-phase in both).
start_rdma_servers 4 "$work" mpich-io-rdma || exit 1
for coll in disk_directed two_phase; do
    hints=$work/rdma-$coll.hints
    printf 'rdma_coll %s\nstriping_unit 4096\n' "$coll" > "$hints"
    echo "MPICH test/mpi/io collective tests over rdma: (4 servers, rdma_coll=$coll)"
    while read -r name np rest; do
        case "$name" in
            *coll*|*aggregation*|*darray*|i_hindexed|setviewcur|i_setviewcur|rdwrord|i_rdwrord) ;;
            *) continue ;;
        esac
        # the skip list's reasons hold for any remote file system
        why=$(skip_reason "$name")
        if [ -n "$why" ]; then
            SKIPPED=$((SKIPPED + 1))
            echo "  SKIP mpich-io.rdma-$coll.$name: $why"
            continue
        fi
        args=""
        for kv in $rest; do
            case $kv in arg=*) args="$args ${kv#arg=}" ;; esac
        done
        cp "$build/io/$name" "$cwd/$name"
        # shellcheck disable=SC2086
        run_case "mpich-io.rdma-$coll.$name" 300 env -C "$cwd" ROMIO_FSTYPE_FORCE=rdma: \
            ROMIO_RDMA_SERVERS="$RDMA_SERVERS" ROMIO_HINTS="$hints" "$PREFIX/bin/mpiexec" \
            $MPIEXEC_FLAGS -n "$np" "./$name" $args
        for r in $RDMA_ROOTS; do find "$r" -maxdepth 1 -type f -delete; done
    done < "$build/io/testlist"
done

stop_all_rfsd
write_results "$results"
