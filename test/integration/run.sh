#!/usr/bin/env bash
# MPI integration tests of the rfs:, abt: and rdma: drivers against live rfsd servers.
#   run.sh PREFIX WORKDIR RESULTS
set -u
here=$(cd "$(dirname "$0")" && pwd)
PREFIX=$1
work=$2
results=$3
. "$here/../lib.sh"
runner_start "$work"

mpicc="$PREFIX/bin/mpicc"
mpiexec="$PREFIX/bin/mpiexec $MPIEXEC_FLAGS"
# The clients without MPI, with the client library; TEST_CFLAGS adds
# sanitizers (make check-sanitize).
for t in rfs_clients rfsd_hostile rfsd_scale ../bench/scale_load; do
    # shellcheck disable=SC2086
    cc -std=c11 -O2 -g -Wall -Wextra -Werror ${TEST_CFLAGS:-} -I"$here/../../adio" \
        -o "$work/bin/${t##*/}" "$here/$t.c" "$here/../../adio/proto/rfs_client.c" \
        "$here/../../adio/proto/rfs_proto.c" "$here/../../adio/proto/rfs_auth.c" \
        "$here/../../adio/net/net_tcp.c" "$here/../../adio/net/net_tls.c" \
        "$here/../../adio/net/net_endpoint.c" -lpthread -lssl -lcrypto \
        || { echo "cannot build $t"; FAILED=$((FAILED + 1)); }
done
for t in rfs_contig rfs_noncontig rfs_errors rfs_hints rfs_large rfs_nospace rfs_restart abt_basic \
    abt_order abt_coll_visible abt_wait abt_strided abt_faults abt_lease rdma_faults rfs_security \
    rdma_subarray big_view open_count rdma_replicas; do
    "$mpicc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -o "$work/bin/$t" "$here/$t.c" \
        || { echo "cannot build $t"; FAILED=$((FAILED + 1)); }
done
"$mpicc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -I"$here/../../adio" \
    -o "$work/bin/rdma_basic" "$here/rdma_basic.c" "$here/../../adio/stripe/stripe.c" \
    || { echo "cannot build rdma_basic"; FAILED=$((FAILED + 1)); }

run_case "man.romio-drivers" 60 bash -c '"$@" && echo "No Errors"' check-man bash "$here/../docs/check-man.sh" "$here/../.."
echo "integration tests (rfs:)"
root=$work/root
start_rfsd "$root" "$work" main || exit 1
main_port=$RFSD_PORT main_pid=$RFSD_PID
for np in 1 2 3 4; do
    run_case "rfs_contig.np$np" 120 $mpiexec -n $np "$work/bin/rfs_contig" \
        "rfs:127.0.0.1:$main_port:/contig.$np" "$root"
done
for np in 1 2 4; do
    mkdir -p "$root/noncontig.$np"
    run_case "rfs_noncontig.np$np" 120 $mpiexec -n $np "$work/bin/rfs_noncontig" \
        "rfs:127.0.0.1:$main_port:/noncontig.$np/" "$root/noncontig.$np"
done
run_case "rfs_hints.np3" 120 $mpiexec -n 3 "$work/bin/rfs_hints" "rfs:127.0.0.1:$main_port:/"
# a view over the protocol's limit (HDF5's point selections, issue 17)
run_case "big_view.rfs.np2" 120 $mpiexec -n 2 "$work/bin/big_view" "rfs:127.0.0.1:$main_port:/"

# A program built against Debian's MPICH packages needs libmpich.so.12 (their
# soname): build one that way (relabel the dependency with patchelf) and run
# it on this MPI through the libmpich.so.12 link.
if "$mpicc" -std=c11 -D_GNU_SOURCE -O2 -o "$work/bin/rfs_contig_libmpich" "$here/rfs_contig.c" \
    && patchelf --replace-needed "$(patchelf --print-needed "$work/bin/rfs_contig_libmpich" |
        grep '^libmpi\.so')" libmpich.so.12 "$work/bin/rfs_contig_libmpich" \
    && patchelf --remove-rpath "$work/bin/rfs_contig_libmpich" \
    && LD_LIBRARY_PATH="$PREFIX/lib" ldd "$work/bin/rfs_contig_libmpich" \
        | grep -q "libmpich.so.12 => $PREFIX/lib"; then
    run_case "rfs_contig.libmpich.np2" 120 env LD_LIBRARY_PATH="$PREFIX/lib" $mpiexec -n 2 \
        "$work/bin/rfs_contig_libmpich" "rfs:127.0.0.1:$main_port:/contig.libmpich" "$root"
else
    FAILED=$((FAILED + 1))
    echo "  FAIL rfs_contig.libmpich (cannot build a libmpich.so.12 program)"
fi

echo "integration tests (abt: over rfs:, ufs: and an unprefixed name)"
mkdir -p "$root/abt" "$root/abt-contig" "$root/abt-noncontig" "$work/stage" "$work/ufs-abt" "$work/plain-abt"
run_case "abt_basic.rfs.np4" 300 $mpiexec -n 4 "$work/bin/abt_basic" \
    "abt:rfs:127.0.0.1:$main_port:/abt/" "$work/stage"
run_case "abt_basic.ufs.np3" 300 $mpiexec -n 3 "$work/bin/abt_basic" "abt:ufs:$work/ufs-abt/" \
    "$work/stage"
run_case "abt_basic.unprefixed.np2" 300 $mpiexec -n 2 "$work/bin/abt_basic" \
    "abt:$work/plain-abt/" "$work/stage"
# the rfs: tests, stacked under abt:
run_case "abt_rfs_contig.np4" 120 $mpiexec -n 4 "$work/bin/rfs_contig" \
    "abt:rfs:127.0.0.1:$main_port:/abt-contig/f" "$root"
run_case "abt_rfs_noncontig.np4" 120 $mpiexec -n 4 "$work/bin/rfs_noncontig" \
    "abt:rfs:127.0.0.1:$main_port:/abt-noncontig/" "$root/abt-noncontig"
# PnetCDF's access sequence (issue 20): two handles per process, a fill and
# the data over it from other processes, reads without a sync
mkdir -p "$root/abt-order" "$work/ufs-order" "$work/force-order"
for np in 2 4; do
    run_case "abt_order.rfs.np$np" 120 $mpiexec -n $np "$work/bin/abt_order" \
        "abt:rfs:127.0.0.1:$main_port:/abt-order/"
    run_case "abt_order.ufs.np$np" 120 $mpiexec -n $np "$work/bin/abt_order" \
        "abt:ufs:$work/ufs-order/"
done
# the collective writes' other paths than each process's own runs (16 KiB)
for path in exchange through; do
    printf 'abt_coll_write %s\n' "$path" > "$work/coll-$path.hints"
    run_case "abt_order.rfs.$path.np4" 120 env ROMIO_HINTS="$work/coll-$path.hints" \
        $mpiexec -n 4 "$work/bin/abt_order" "abt:rfs:127.0.0.1:$main_port:/abt-order/"
done
# HDF5's filtered parallel writes (issue 17): a collective write, then
# another process's independent read of it, no sync
mkdir -p "$root/abt-visible" "$work/ufs-visible"
run_case "abt_coll_visible.rfs.np2" 120 $mpiexec -n 2 "$work/bin/abt_coll_visible" \
    "abt:rfs:127.0.0.1:$main_port:/abt-visible/"
run_case "abt_coll_visible.ufs.np2" 120 $mpiexec -n 2 "$work/bin/abt_coll_visible" \
    "abt:ufs:$work/ufs-visible/"
# Processes that wait in abt:'s agreements leave the cores to the late one
mkdir -p "$root/abt-wait" "$work/ufs-wait"
run_case "abt_wait.rfs.np3" 60 $mpiexec -n 3 "$work/bin/abt_wait" \
    "abt:rfs:127.0.0.1:$main_port:/abt-wait/"
run_case "abt_wait.ufs.np3" 60 $mpiexec -n 3 "$work/bin/abt_wait" "abt:ufs:$work/ufs-wait/"
# Independent noncontiguous writes (issue 17): a resized filetype's
# placement, a file run over 2 GiB
mkdir -p "$root/abt-strided" "$work/ufs-strided"
# a view over the protocol's limit, read through the inner rfs: (issue 17)
run_case "big_view.abt_rfs.np2" 120 $mpiexec -n 2 "$work/bin/big_view" \
    "abt:rfs:127.0.0.1:$main_port:/abt-strided/"
run_case "abt_strided.resized.rfs" 120 $mpiexec -n 1 "$work/bin/abt_strided" \
    "abt:rfs:127.0.0.1:$main_port:/abt-strided/" resized
run_case "abt_strided.resized.ufs" 120 $mpiexec -n 1 "$work/bin/abt_strided" \
    "abt:ufs:$work/ufs-strided/" resized
run_case "abt_strided.large.ufs" 300 $mpiexec -n 1 "$work/bin/abt_strided" \
    "abt:ufs:$work/ufs-strided/" large
run_case "abt_strided.segments.rfs" 120 $mpiexec -n 1 "$work/bin/abt_strided" \
    "abt:rfs:127.0.0.1:$main_port:/abt-strided/" segments
run_case "abt_order.forced.np2" 120 env ROMIO_FSTYPE_FORCE=abt: $mpiexec -n 2 \
    "$work/bin/abt_order" "$work/force-order/"
# The stage directory full: a 256 KiB tmpfs in a private mount namespace.
full=$work/full-stage
mkdir -p "$full" "$work/ufs-full"
if unshare -m sh -c "mount -t tmpfs -o size=256k tmpfs '$full'" 2>/dev/null; then
    run_case "abt_basic.stage_full.np2" 300 unshare -m sh -c \
        'mount -t tmpfs -o size=256k tmpfs "$0" && exec "$@"' "$full" \
        $mpiexec -n 2 "$work/bin/abt_basic" "abt:ufs:$work/ufs-full/" "$full"
else
    SKIPPED=$((SKIPPED + 1))
    echo "  SKIP abt_basic.stage_full (cannot mount a small tmpfs here)"
fi
# Read-write files buffered under the servers' leases (default hints): a
# server at 2 MB/s, so that a buffered MiB's write returns long before the
# server could answer for it, and other processes' reads must wait for it.
start_rfsd "$work/lease-root" "$work" lease --rate-limit 2 || exit 1
run_case "abt_lease.rfs.np3" 120 $mpiexec -n 3 "$work/bin/abt_lease" \
    "abt:rfs:127.0.0.1:$RFSD_PORT:/" 2
# The inner server killed while the drain runs (a 4 MB/s link: seconds of work).
start_rfsd "$work/slow-root" "$work" slow --rate-limit 4 || exit 1
rfsd_killed "$RFSD_PID"
run_case "abt_faults.server_killed" 120 $mpiexec -n 1 "$work/bin/abt_faults" \
    "abt:rfs:127.0.0.1:$RFSD_PORT:/f" "$RFSD_PID"

# check NAME COND DETAIL: one counted result
check_that() {
    if eval "$2"; then
        PASSED=$((PASSED + 1))
        echo "  PASS $1"
    else
        FAILED=$((FAILED + 1))
        echo "  FAIL $1 ($3)"
    fi
}

# rdma_replicas=2 over 4 servers (docs/rdma.md "Replicas"): server 1
# killed while every method writes; back with its old bytes, never read;
# rdma-resync makes its copies equal to the current ones; then server 2
# killed, and objects 1 and 2 read from the resynced server 1 and from 3.
replicas_case() {
    local hs=$work/replicas roots pids port1 port2 resync status
    mkdir -p "$hs"
    start_rdma_servers 4 "$work" "repl" || return
    read -r -a roots <<< "$RDMA_ROOTS"
    read -r -a pids <<< "$RDMA_PIDS"
    port1=$(echo "$RDMA_SERVERS" | cut -d, -f2 | cut -d: -f2)
    port2=$(echo "$RDMA_SERVERS" | cut -d, -f3 | cut -d: -f2)
    (
        for _ in $(seq 1 1200); do [ -e "$hs/synced" ] && break; sleep 0.05; done
        [ -e "$hs/synced" ] || exit 0   # the program failed before: run_case counts it
        sleep 0.3
        kill -KILL "${pids[1]}" && touch "$hs/killed"
    ) &
    local killer=$!
    rfsd_killed "${pids[1]}"
    ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "rdma_replicas.server_killed.np4" 240 \
        $mpiexec -n 4 "$work/bin/rdma_replicas" write "rdma:/" "$hs"
    wait "$killer"
    resync="$PREFIX/bin/rdma-resync -s $RDMA_SERVERS -t 5"
    start_rfsd "${roots[1]}" "$work" "repl-1-back" --port "$port1" || return
    status=$($resync --status /replicated 2>&1)
    check_that "rdma_replicas.marked_stale" '[[ $status == *"stale: 1,"* ]]' "$status"
    ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "rdma_replicas.stale_back_not_read.np4" 120 \
        $mpiexec -n 4 "$work/bin/rdma_replicas" read "rdma:/"
    status=$($resync /replicated 2>&1)
    check_that "rdma_replicas.resync" '[[ $status == *"resynced server 1 ("* ]]' "$status"
    status=$($resync --status /replicated 2>&1)
    check_that "rdma_replicas.resync_current" '[[ $status == *"stale: none,"* ]]' "$status"
    # server 1's copies (object 1's copy 0, object 0's copy 1) now equal
    # the other copies of their objects, byte for byte after the header
    check_that "rdma_replicas.resync_copies_equal" \
        'cmp -s <(tail -c +4097 "${roots[1]}/replicated") <(tail -c +4097 "${roots[2]}/.replicated.copy1") &&
         cmp -s <(tail -c +4097 "${roots[1]}/.replicated.copy1") <(tail -c +4097 "${roots[0]}/replicated")' \
        "a copy on server 1 differs from its object's other copy"
    kill -KILL "${pids[2]}"
    rfsd_killed "${pids[2]}"
    ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "rdma_replicas.after_resync_other_lost.np4" 120 \
        $mpiexec -n 4 "$work/bin/rdma_replicas" read "rdma:/"
    start_rfsd "${roots[2]}" "$work" "repl-2-back" --port "$port2" || return
}

echo "integration tests (rdma: striped over 1, 2 and 4 servers)"
for layout in "1 65536" "2 4096" "4 1000"; do
    read -r n unit <<< "$layout"
    start_rdma_servers "$n" "$work" "rdma$n" || exit 1
    for r in $RDMA_ROOTS; do mkdir -p "$r/d"; done
    # shellcheck disable=SC2086
    ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "rdma_basic.s$n.u$unit.np4" 300 \
        $mpiexec -n 4 "$work/bin/rdma_basic" "rdma:/d/" "$unit" "$n" $RDMA_ROOTS
done
# seed 000's 2-D subarray case: memory segments down to the transport
ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "rdma_subarray.np4" 300 $mpiexec -n 4 \
    "$work/bin/rdma_subarray" "rdma:/d/" 2048
ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "big_view.rdma.np2" 120 $mpiexec -n 2 \
    "$work/bin/big_view" "rdma:/d/"
# leases on striped objects: 4 servers at 1 MB/s each
start_rdma_servers 4 "$work" "lease-rdma" --rate-limit 1 || exit 1
ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "abt_lease.rdma.np3" 120 $mpiexec -n 3 \
    "$work/bin/abt_lease" "abt:rdma:/" 4
replicas_case
# MPICH 5 configured with the MPI standard ABI: programs built with
# mpicc_abi link libmpi_abi, whose ROMIO (and the drivers) is compiled a
# second time, against ROMIO's romio_abi_internal.h (common/romio_compat.h).
if [ -x "$PREFIX/bin/mpicc_abi" ]; then
    mkdir -p "$root/abi" "$root/abi-abt"
    if "$PREFIX/bin/mpicc_abi" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 \
           -o "$work/bin/rfs_contig_abi" "$here/rfs_contig.c" &&
       "$PREFIX/bin/mpicc_abi" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 \
           -I"$here/../../adio" -o "$work/bin/rdma_basic_abi" "$here/rdma_basic.c" \
           "$here/../../adio/stripe/stripe.c"; then
        run_case "abi.rfs_contig.np2" 120 $mpiexec -n 2 "$work/bin/rfs_contig_abi" \
            "rfs:127.0.0.1:$main_port:/abi/f" "$root"
        run_case "abi.abt_rfs_contig.np2" 120 $mpiexec -n 2 "$work/bin/rfs_contig_abi" \
            "abt:rfs:127.0.0.1:$main_port:/abi-abt/f" "$root"
        # shellcheck disable=SC2086
        ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "abi.rdma_basic.s$n.u$unit.np4" 300 \
            $mpiexec -n 4 "$work/bin/rdma_basic_abi" "rdma:/d/" "$unit" "$n" $RDMA_ROOTS
    else
        FAILED=$((FAILED + 1))
        echo "  FAIL abi (cannot build the tests with mpicc_abi)"
    fi
fi
# The collective open (issue 32): the headers are read once per open, by one
# process, whatever the number of processes, and a process's files share
# one connection per server (ROMIO_RDMA_STATS at every close of every
# process: "header reads" add up to 7, 1 per creation and 4 at the reopen;
# "connections of the process" at most 4, with 3 files open).
for np in 2 4 8; do
    for r in $RDMA_ROOTS; do mkdir -p "$r/oc$np"; done
    ROMIO_RDMA_SERVERS=$RDMA_SERVERS ROMIO_RDMA_STATS=1 run_case "rdma_open_count.np$np" 120 \
        bash -c 'stats=$1; shift; "$@" 2> "$stats"; rc=$?
                 n=$(sed -n "s/.*header reads \([0-9]*\).*/\1/p" "$stats" |
                     awk "{ s += \$1 } END { print s + 0 }")
                 c=$(sed -n "s/.*connections of the process \([0-9]*\).*/\1/p" "$stats" |
                     sort -n | tail -1)
                 echo "header reads, all processes and opens: $n (expected 7)"
                 echo "connections of a process, at most: $c (expected 4)"
                 [ "$n" = 7 ] && [ "$c" = 4 ] && exit $rc; exit 1' open_count \
        "$LOGDIR/open_count.np$np.stats" $mpiexec -n $np "$work/bin/open_count" \
        "rdma:/oc$np/" 4
done
# rfs: files of a process share its connection to the server: one at most.
mkdir -p "$root/oc"
ROMIO_RFS_STATS=1 run_case "rfs_open_count.np2" 120 \
    bash -c 'stats=$1; shift; "$@" 2> "$stats"; rc=$?
             c=$(sed -n "s/.*connections of the process \([0-9]*\).*/\1/p" "$stats" |
                 sort -n | tail -1)
             echo "connections of a process, at most: $c (expected 1)"
             [ "$c" = 1 ] && exit $rc; exit 1' open_count "$LOGDIR/rfs_open_count.stats" \
    $mpiexec -n 2 "$work/bin/open_count" "rfs:127.0.0.1:$main_port:/oc/" 0
# reuse the 4 servers of the last layout: the rfs: tests' other programs
ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "rdma_large.2GiB" 600 $mpiexec -n 1 \
    "$work/bin/rfs_large" "rdma:/large"
start_rdma_servers 4 "$work" "rdmafault" || exit 1
read -r _ stop_pid kill_pid _ <<< "$RDMA_PIDS"
rfsd_killed "$kill_pid"
ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "rdma_faults" 180 $mpiexec -n 1 \
    "$work/bin/rdma_faults" "rdma:/" "$stop_pid" "$kill_pid"
# abt: stacked over rdma: (its sink: the striped file opened again, drained
# on abt's thread; read-write files under the servers' leases)
start_rdma_servers 2 "$work" "rdmaabt" || exit 1
for r in $RDMA_ROOTS; do mkdir -p "$r/abt"; done
ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "abt_basic.rdma.np2" 300 $mpiexec -n 2 \
    "$work/bin/abt_basic" "abt:rdma:/abt/" "$work/stage"

echo "integration tests (security: keys and TLS, over rfs:, abt:rfs: and rdma:)"
sec=$work/sec
if make_security_files "$sec"; then
    tls_args="--keys $sec/keys --tls-cert $sec/ca.crt --tls-key $sec/server.key"
    # shellcheck disable=SC2086
    start_rfsd "$work/sec-root" "$work" sec-tls $tls_args || exit 1
    tls_port=$RFSD_PORT
    start_rfsd "$work/sec-root" "$work" sec-tcp --keys "$sec/keys" || exit 1
    run_case "rfs_security.tcp.np2" 120 $mpiexec -n 2 "$work/bin/rfs_security" \
        "rfs:127.0.0.1:$RFSD_PORT:/" "$sec" tcp
    run_case "rfs_security.tls.np2" 120 $mpiexec -n 2 "$work/bin/rfs_security" \
        "rfs:127.0.0.1:$tls_port:/" "$sec" tls
    run_case "rfs_security.abt.np2" 120 $mpiexec -n 2 "$work/bin/rfs_security" \
        "abt:rfs:127.0.0.1:$tls_port:/abt-" "$sec" tls
    # shellcheck disable=SC2086
    start_rdma_servers 2 "$work" sec-rdma $tls_args || exit 1
    ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "rfs_security.rdma.np2" 120 $mpiexec -n 2 \
        "$work/bin/rfs_security" "rdma:/" "$sec" tls
    # the same with every file of two copies (ROMIO_HINTS: every open asks)
    # shellcheck disable=SC2086
    start_rdma_servers 3 "$work" sec-repl $tls_args || exit 1
    echo "rdma_replicas 2" > "$work/replicas.hints"
    ROMIO_HINTS=$work/replicas.hints ROMIO_RDMA_SERVERS=$RDMA_SERVERS \
        run_case "rfs_security.rdma_replicas.np2" 120 $mpiexec -n 2 \
        "$work/bin/rfs_security" "rdma:/" "$sec" tls
else
    FAILED=$((FAILED + 1))
    echo "  FAIL rfs_security (cannot make keys and certificates with openssl)"
fi

ln -s /etc "$root/escape"
echo existing > "$root/existing"
start_rfsd "$work/dead-root" "$work" dead || exit 1
dead_port=$RFSD_PORT
stop_rfsd "$RFSD_PID"
start_rfsd "$work/kill-root" "$work" kill || exit 1
kill_port=$RFSD_PORT kill_pid=$RFSD_PID
rfsd_killed "$kill_pid"
start_rfsd "$work/stop-root" "$work" stop || exit 1
stop_port=$RFSD_PORT stop_pid=$RFSD_PID
mkdir -p "$work/busy-root"
echo existing > "$work/busy-root/existing"
start_rfsd "$work/busy-root" "$work" busy --max-connections 1 || exit 1
run_case "rfs_errors" 120 $mpiexec -n 1 "$work/bin/rfs_errors" 127.0.0.1 "$main_port" \
    "$dead_port" "$kill_port" "$kill_pid" "$stop_port" "$stop_pid" "$RFSD_PORT"

# rfsd killed (SIGKILL) and restarted on the same port and root while the
# file is open: the program says when its data is synced; we kill, restart
# (the old process may hold the port an instant longer: retry) and say so.
hs=$work/restart-handshake
rm -rf "$hs"     # a rerun in the same WORK: an old "synced" would kill rfsd at once
mkdir -p "$hs"
start_rfsd "$work/restart-root" "$work" restart || exit 1
restart_port=$RFSD_PORT
rfsd_killed "$RFSD_PID"
rfsd_restarter "$hs" start_rfsd "$work/restart-root" "$work" restarted --port "$restart_port" &
supervisor=$!
run_case "rfs_restart.np2" 120 $mpiexec -n 2 "$work/bin/rfs_restart" 127.0.0.1 "$restart_port" \
    "$work/restart-root" "$hs"
touch "$hs/over"
# its FAIL line printed, the count is ours
wait "$supervisor" || FAILED=$((FAILED + 1))

# Hostile clients (malformed, truncated, oversized, out-of-order, half-sent)
# against the main server while a good client checks its data; the
# connection and per-message limits against a server of its own.
mkdir -p "$root/hostile" "$work/limited-root/hostile"
start_rfsd "$work/limited-root" "$work" limited --max-connections 2 --max-data 1 || exit 1
run_case "rfsd_hostile" 120 "$work/bin/rfsd_hostile" "$main_port" "$RFSD_PORT"

# A full file system: rfsd in a private mount namespace over a 1 MiB tmpfs
# (root can do this here; elsewhere the test is skipped, and says so).
small=$work/small-root
mkdir -p "$small"
if unshare -m sh -c "mount -t tmpfs -o size=1m tmpfs '$small'" 2>/dev/null; then
    RFSD_WRAP="unshare -m sh -c 'mount -t tmpfs -o size=1m tmpfs \"\$0\" && exec \"\$@\"' $small" \
        start_rfsd "$small" "$work" small || exit 1
    run_case "rfs_nospace" 60 $mpiexec -n 1 "$work/bin/rfs_nospace" \
        "rfs:127.0.0.1:$RFSD_PORT:/full"
else
    SKIPPED=$((SKIPPED + 1))
    echo "  SKIP rfs_nospace (cannot mount a small tmpfs here)"
fi

# Many clients at once, then more clients than --max-connections (the rest
# are refused and try again), then a lock holder killed in the middle of a
# 64 MiB write.
mkdir -p "$root/clients"
run_case "rfsd.64_clients" 300 "$work/bin/rfs_clients" "$main_port" 64 1048583
start_rfsd "$work/few-root" "$work" few --max-connections 4 || exit 1
mkdir -p "$work/few-root/clients"
run_case "rfsd.32_clients_4_allowed" 300 "$work/bin/rfs_clients" "$RFSD_PORT" 32 262147
"$work/bin/rfs_clients" "$main_port" hold /held > "$LOGDIR/hold.out" 2>&1 &
holder=$!
for _ in $(seq 1 200); do grep -q locked "$LOGDIR/hold.out" && break; sleep 0.05; done
kill -KILL "$holder"
{ wait "$holder"; } 2>/dev/null
run_case "rfsd.lock_after_holder_killed" 60 "$work/bin/rfs_clients" "$main_port" lock /held 20

# Crowds (issue 32): 1,000 connections that send nothing do not lock out a
# client with a key and are closed after --auth-timeout; silent connections
# that fill --max-connections give way to it then; a request waiting for a
# lock does not keep the only worker from others.
if [ -s "$sec/keys" ]; then
    start_rfsd "$work/crowd-root" "$work" flood --keys "$sec/keys" --auth-timeout 2 || exit 1
    run_case "rfsd.silent_flood_1000" 60 "$work/bin/rfsd_scale" flood "$RFSD_PORT" \
        "$sec/good.key" 1000 2
    start_rfsd "$work/crowd-root" "$work" full --keys "$sec/keys" --auth-timeout 2 \
        --max-connections 64 || exit 1
    run_case "rfsd.silent_full_64" 60 "$work/bin/rfsd_scale" full "$RFSD_PORT" \
        "$sec/good.key" 64 2
    start_rfsd "$work/crowd-root" "$work" slow-tls --keys "$sec/keys" --tls-cert "$sec/ca.crt" \
        --tls-key "$sec/server.key" --auth-timeout 2 || exit 1
    run_case "rfsd.slow_tls_handshake" 60 "$work/bin/rfsd_scale" slowhello "$RFSD_PORT" 2
else
    FAILED=$((FAILED + 1))
    echo "  FAIL rfsd.silent_flood (no key files)"
fi
# One address flooding a server with --max-per-address leaves the others in.
start_rfsd "$work/crowd-root" "$work" peraddr --max-per-address 8 || exit 1
run_case "rfsd.max_per_address_8" 60 "$work/bin/rfsd_scale" peraddr "$RFSD_PORT" 8
start_rfsd "$work/crowd-root" "$work" one-worker --threads 1 --max-threads 4 || exit 1
run_case "rfsd.lock_wait_one_worker" 60 "$work/bin/rfsd_scale" lockwait "$RFSD_PORT"
# 2,000 connections with the defaults, 64 of them active (every byte read
# back checked), the rest idle: none refused, and no thread per connection.
start_rfsd "$work/crowd-root" "$work" crowd || exit 1
run_case "rfsd.2000_connections" 180 bash -c '"$@" && echo "No Errors"' scale_load \
    "$work/bin/scale_load" 127.0.0.1 "$RFSD_PORT" --conns 2000 --active 64 --seconds 3 \
    --rfsd-pid "$RFSD_PID" --max-idle-threads 64

# rfsd --config, SIGHUP's key reload, journal logs, rfsd(8) and the systemd
# unit: no MPI, a script of its own (also run alone); its counts are ours.
bash "$here/rfsd_config.sh" "$PREFIX" "$work/config" "$work/config.res"
add_results "$work/config.res" rfsd_config

# rfs-mount: a script of its own (also run alone); its counts are ours.
bash "$here/mount.sh" "$PREFIX" "$work/mount" "$work/mount.res"
add_results "$work/mount.res" mount

run_case "rfs_large.2GiB" 600 $mpiexec -n 1 "$work/bin/rfs_large" \
    "rfs:127.0.0.1:$main_port:/large"

# SIGTERM with a client connected: a clean exit, status 0 (a failed exit
# is counted by stop_rfsd), and the server says it stopped.
exec 3<>"/dev/tcp/127.0.0.1/$main_port"
if stop_rfsd "$main_pid"; then
    if grep -q "stopped" "$work/main.log"; then
        PASSED=$((PASSED + 1))
        echo "  PASS rfsd_sigterm"
    else
        FAILED=$((FAILED + 1))
        echo "  FAIL rfsd_sigterm (exit 0, but no \"stopped\" in its log)"
        tail -5 "$work/main.log"
    fi
fi
exec 3<&-

stop_all_rfsd
write_results "$results"
