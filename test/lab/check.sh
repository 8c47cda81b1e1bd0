#!/usr/bin/env bash
# make check-lab: the drivers on a virtual cluster (test/lab/lab.sh): 4
# server hosts running rfsd, 2 client hosts with 2 MPI ranks each, every
# link shaped to LAB_RATE (default 1gbit) both ways. Cases:
#   - ranks on their hosts (their own addresses), MPI's traffic on the links;
#   - rfs_noncontig (rfs:, one server host) and rdma_basic (rdma:, four),
#     every byte's place checked in the servers' roots; abt_basic over
#     abt:rfs:, staging into each client host's own directory;
#   - ROMIO's test suite over rfs: and over rdma: (disk-directed and
#     two-phase), ranks on both client hosts;
#   - abt_basic over abt:rfs: to a server host behind a 50 Mbit/s link;
#   - TLS with keys: rfs_security over rfs: and rdma:, the certificate
#     naming the server hosts' addresses;
#   - faults: a server host's link down in the middle of a rdma: write; a
#     server host's rfsd killed and restarted (rfs_restart); a client
#     host's link cut while it holds a lock (rfs:) and while its ranks are
#     in a disk-directed collective (rdma:);
#   - replicas (rdma_replicas=2, lab_replica.c): a server host lost (link
#     cut, rfsd killed) in the middle of independent writes, of reads, of
#     a disk-directed and of a two-phase write_at_all: no error, every
#     byte right, in the same open and a new one (and a lost server not
#     tried again and again); an overwrite during a server's outage, the
#     server back with its stale copies (never served), rdma-resync, then
#     another server lost whose objects depend on the resynced copies.
# Not root, or no namespaces: everything is skipped, with the reason.
# Ends with "N passed, N failed, N skipped".
#   check.sh REPO MPICH_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$1
mpich_dir=$2
PREFIX=$repo/build/install
. "$here/../lib.sh"
. "$here/lab.sh"
# (the name: `lab.sh down --stale` finds it when this runner was killed)
work=$(mktemp -d "${TMPDIR:-/tmp}/lab-rl$$-work.XXXXXX")
LOGDIR=$work/logs
mkdir -p "$LOGDIR" "$work/bin"
LAB_REMOVE=$work            # lab_down removes it too
lab_trap
rate=${LAB_RATE:-1gbit}

summary() {
    write_results "$work/lab.res"
    echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
}

if ! lab_up 2 4 "$rate"; then
    SKIPPED=$((SKIPPED + 1))
    echo "  SKIP lab: $LAB_WHY"
    summary
    exit 0
fi
echo "lab: clients $LAB_CLIENTS (2 ranks each), servers $LAB_SERVERS, links $rate"
ranks() {       # -n N with the ranks spread over both client hosts
    echo "-hosts $LAB_HOSTS -ppn $((($1 + 1) / 2)) -n $1"
}

mpicc="$PREFIX/bin/mpicc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2"
for t in lab_where lab_linkfault lab_clientcut lab_replica; do
    $mpicc -o "$work/bin/$t" "$here/$t.c" || { echo "  FAIL cannot build $t"; FAILED=$((FAILED + 1)); }
done
for t in rfs_noncontig abt_basic rfs_restart rfs_security; do
    $mpicc -o "$work/bin/$t" "$here/../integration/$t.c" \
        || { echo "  FAIL cannot build $t"; FAILED=$((FAILED + 1)); }
done
$mpicc -I"$repo/adio" -o "$work/bin/rdma_basic" "$here/../integration/rdma_basic.c" \
    "$repo/adio/stripe/stripe.c" || { echo "  FAIL cannot build rdma_basic"; FAILED=$((FAILED + 1)); }

# bytes sent by the head's end of a host's link toward the host (default:
# client host 0)
link_bytes() {
    ip -n "$LAB_HEAD" -s -j link show "$(lab_link_end "${1:-${LAB_CLIENTS%% *}}")" | python3 -c \
        'import json, sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"])'
}

echo "lab: MPI ranks on the client hosts"
b0=$(link_bytes)
# shellcheck disable=SC2046
if run_case "lab.ranks_on_hosts.np4" 60 "$LAB_MPIEXEC" $(ranks 4) "$work/bin/lab_where" 2 16; then
    moved=$(($(link_bytes) - b0))
    if [ "$moved" -ge $((8 * 1048576)) ]; then
        PASSED=$((PASSED + 1))
        echo "  PASS lab.mpi_on_the_links ($((moved / 1048576)) MiB into client host 0)"
    else
        FAILED=$((FAILED + 1))
        echo "  FAIL lab.mpi_on_the_links (only $moved bytes into client host 0)"
    fi
fi

# rfsd on every server host
servers="" roots=""
for i in 0 1 2 3; do
    lab_start_rfsd "$i" "$work" "srv$i" || { echo "  FAIL rfsd on server host $i"; FAILED=$((FAILED + 1)); summary; exit 1; }
    servers="$servers${servers:+,}$LAB_RFSD_ADDR:$RFSD_PORT"
    roots="$roots${roots:+ }$work/srv$i-root"
done
rfs0=${servers%%,*}

echo "lab: integration tests across the hosts"
mkdir -p "$work/srv0-root/noncontig"
# shellcheck disable=SC2046
run_case "lab.rfs_noncontig.np4" 180 "$LAB_MPIEXEC" $(ranks 4) "$work/bin/rfs_noncontig" \
    "rfs:$rfs0:/noncontig/" "$work/srv0-root/noncontig"
# abt:rfs: (abt_basic): its small-memory case stages an 8 MiB write into
# the stage directory "-", $TMPDIR: each client host's own (lab_stage_dir);
# something must be staged, and nothing left there after
mkdir -p "$work/srv0-root/abt"
# shellcheck disable=SC2046
if ROMIO_ABT_STATS=1 run_case "lab.abt_basic.rfs.np4" 300 "$LAB_MPIEXEC" $(ranks 4) \
    "$work/bin/abt_basic" "abt:rfs:$rfs0:/abt/" -; then
    left=$(for c in $LAB_CLIENTS; do find "$(lab_stage_dir "$c")" -type f; done)
    staged=$(grep -cE '/abt/staged: .* [0-9.]*[1-9][0-9.]* MB staged in foreground' \
        "$LOGDIR/lab.abt_basic.rfs.np4.out")
    if [ -z "$left" ] && [ "$staged" -gt 0 ]; then
        PASSED=$((PASSED + 1))
        echo "  PASS lab.abt_staged_per_host ($staged ranks staged, nothing left)"
    else
        FAILED=$((FAILED + 1))
        echo "  FAIL lab.abt_staged_per_host ($staged ranks staged; left: ${left:-nothing})"
    fi
fi
for r in $roots; do mkdir -p "$r/d"; done
# shellcheck disable=SC2046,SC2086
ROMIO_RDMA_SERVERS=$servers run_case "lab.rdma_basic.s4.u4096.np4" 300 "$LAB_MPIEXEC" \
    $(ranks 4) "$work/bin/rdma_basic" "rdma:/d/" 4096 4 $roots

echo "lab: ROMIO's test suite, ranks on both client hosts"
ROMIO_PHASE=build ROMIO_BIN=$work/romio-bin bash "$here/../romio/run.sh" "$PREFIX" "$mpich_dir" \
    "$work/romio-build" /dev/null &
lab_bg $!
wait $!
# the suite's list and skips, from its runner
eval "$(sed -n '/^TESTS="/,/^"$/p; /^SKIPS="/,/^"$/p' "$here/../romio/run.sh")"
for coll in disk_directed two_phase; do
    printf 'striping_unit 65536\nrdma_io_method list\nrdma_coll %s\n' $coll > "$work/rdma-$coll.hints"
done
for mode in rfs rdma-dd rdma-tp; do
    case $mode in
        rfs) base="rfs:$rfs0:/romio-rfs" dirs=$work/srv0-root/romio-rfs hints=/dev/null ;;
        rdma-dd|rdma-tp)
            base="rdma:/romio-$mode" dirs="" hints=$work/rdma-disk_directed.hints
            [ $mode = rdma-dd ] || hints=$work/rdma-two_phase.hints
            for r in $roots; do dirs="$dirs $r/romio-$mode"; done ;;
    esac
    while read -r name np args; do
        [ -n "$name" ] || continue
        if [ ! -x "$work/romio-bin/$name" ]; then
            FAILED=$((FAILED + 1))
            echo "  FAIL lab.romio.$mode.$name (does not build)"
            continue
        fi
        why=""
        while read -r pat sname swhy; do
            # shellcheck disable=SC2053
            [ -n "$pat" ] && [[ $mode == $pat && $name == "$sname" ]] && why=$swhy
        done <<< "$SKIPS"
        if [ -n "$why" ]; then
            SKIPPED=$((SKIPPED + 1))
            echo "  SKIP lab.romio.$mode.$name: $why"
            continue
        fi
        for d in $dirs; do mkdir -p "$d/$name"; done
        args=$(romio_test_args "$work/romio-bin" "$name" "$args")
        # shellcheck disable=SC2046,SC2086
        ROMIO_RDMA_SERVERS=$servers ROMIO_HINTS=$hints run_case "lab.romio.$mode.$name" 120 \
            "$LAB_MPIEXEC" $(ranks "$np") "$work/romio-bin/$name" ${args//F/$base/$name/testfile}
    done <<< "$TESTS"
done

echo "lab: abt:rfs: over a 50 Mbit/s link (server host 3)"
# abt_basic's data checks with its writes in flight for seconds; the link's
# counters, sampled each second, say it carried the data at its 50 Mbit/s
# and no faster
slow=$(lab_server_addr 3)
lab_rate "$slow" 50mbit
mkdir -p "$work/srv3-root/abt-slow"
while :; do echo "$(date +%s.%N) $(link_bytes "$slow")"; sleep 1; done > "$work/slow.samples" &
sampler=$!
lab_bg "$sampler"
# shellcheck disable=SC2046
if run_case "lab.abt_basic.rfs.50mbit.np2" 300 "$LAB_MPIEXEC" $(ranks 2) "$work/bin/abt_basic" \
    "abt:rfs:${servers##*,}:/abt-slow/" -; then
    kill "$sampler"
    # MiB carried, the fastest second (Mbit/s)
    read -r mb peak < <(awk 'NR == 1 { b0 = $2 }
        NR > 1 { r = ($2 - b) * 8 / ($1 - t) / 1e6; if (r > max) max = r }
        { t = $1; b = $2 } END { printf "%d %.0f\n", (b - b0) / 1048576, max }' "$work/slow.samples")
    if [ "$mb" -ge 16 ] && [ "$peak" -le 55 ] && [ "$peak" -ge 30 ]; then
        PASSED=$((PASSED + 1))
        echo "  PASS lab.abt_slow_link ($mb MiB to server host 3, at most $peak Mbit/s)"
    else
        FAILED=$((FAILED + 1))
        echo "  FAIL lab.abt_slow_link ($mb MiB to server host 3, at most $peak Mbit/s: not the 50 Mbit/s link's bound)"
    fi
fi
kill "$sampler" 2>/dev/null
lab_rate "$slow" "$rate"

echo "lab: TLS with keys, the certificate naming the server hosts"
sec=$work/sec
# shellcheck disable=SC2086
if make_security_files "$sec" $LAB_SERVERS; then
    tls_servers=""
    for i in 0 1 2 3; do
        mkdir -p "$work/tls$i-root"
        lab_start_rfsd "$i" "$work" "tls$i" --keys "$sec/keys" --tls-cert "$sec/ca.crt" \
            --tls-key "$sec/server.key" || { FAILED=$((FAILED + 1)); echo "  FAIL TLS rfsd on server host $i"; }
        tls_servers="$tls_servers${tls_servers:+,}$LAB_RFSD_ADDR:$RFSD_PORT"
    done
    # shellcheck disable=SC2046
    run_case "lab.rfs_security.tls.np4" 120 "$LAB_MPIEXEC" $(ranks 4) "$work/bin/rfs_security" \
        "rfs:${tls_servers%%,*}:/" "$sec" tls
    # shellcheck disable=SC2046
    ROMIO_RDMA_SERVERS=$tls_servers run_case "lab.rfs_security.rdma.tls.np4" 120 "$LAB_MPIEXEC" \
        $(ranks 4) "$work/bin/rfs_security" "rdma:/" "$sec" tls
else
    FAILED=$((FAILED + 1))
    echo "  FAIL lab.rfs_security (cannot make keys and certificates with openssl)"
fi

echo "lab: faults"
# server host 1's link down while a rdma: write runs; back when the
# program has checked the errors
hs=$work/linkfault
mkdir -p "$hs"
(
    for _ in $(seq 1 1200); do [ -e "$hs/synced" ] && break; sleep 0.05; done
    [ -e "$hs/synced" ] || exit 0       # the program failed before: run_case counts it
    sleep 0.5
    lab_link 1 down && touch "$hs/down"
    for _ in $(seq 1 1800); do [ -e "$hs/checked" ] && break; sleep 0.05; done
    lab_link 1 up
    touch "$hs/up"
) &
cutter=$!
lab_bg "$cutter"
ROMIO_RDMA_SERVERS=$servers run_case "lab.rdma_link_down.np1" 180 "$LAB_MPIEXEC" \
    -hosts "${LAB_HOSTS%%,*}" -n 1 "$work/bin/lab_linkfault" "rdma:/" "$hs" 3
touch "$hs/checked"
wait "$cutter"
lab_link 1 up 2>/dev/null

grep MPI_ERR_IO "$LOGDIR/lab.rdma_link_down.np1.out" | sed "s/^/       | /"

# rfsd on server host 2 killed (SIGKILL) and restarted on the same port
# and root while the file is open (rfs_restart: MPI_ERR_IO, then a new open
# finds every synced byte)
hs=$work/restart
mkdir -p "$hs"
lab_start_rfsd 2 "$work" restart || { FAILED=$((FAILED + 1)); echo "  FAIL rfsd restart on server host 2"; }
rfsd_killed "$RFSD_PID"
rfsd_restarter "$hs" lab_start_rfsd 2 "$work" restart --port "$RFSD_PORT" &
restarter=$!
lab_bg "$restarter"
# shellcheck disable=SC2046
run_case "lab.rfs_restart.np4" 120 "$LAB_MPIEXEC" $(ranks 4) "$work/bin/rfs_restart" \
    "$LAB_RFSD_ADDR" "$RFSD_PORT" "$work/restart-root" "$hs"
touch "$hs/over"
wait "$restarter" || FAILED=$((FAILED + 1))

# client host 1's link cut while its ranks hold a lock (rfs:, server host
# 0) and while they are in a disk-directed write_all (rdma:, servers whose
# collective calls wait TIMEOUT for a participant); its link slowed to
# 16 Mbit/s until it is back, so that its data is still on the way at the cut
cut_host=${LAB_HOSTS#*,} cut_timeout=6
cut_servers=""
for i in 0 1 2 3; do
    lab_start_rfsd "$i" "$work" "cut$i" --coll-timeout "$cut_timeout" \
        || { FAILED=$((FAILED + 1)); echo "  FAIL rfsd cut$i on server host $i"; }
    cut_servers="$cut_servers${cut_servers:+,}$LAB_RFSD_ADDR:$RFSD_PORT"
done
for m in lock coll; do
    hs=$work/clientcut-$m
    mkdir -p "$hs"
    lab_rate "$cut_host" 16mbit
    (
        for _ in $(seq 1 2400); do [ -e "$hs/entered" ] && break; sleep 0.05; done
        [ -e "$hs/entered" ] || exit 0      # the program failed before: run_case counts it
        sleep 1.5
        lab_host_link "$cut_host" down && touch "$hs/down"
        for _ in $(seq 1 2400); do [ -e "$hs/checked" ] && break; sleep 0.05; done
        lab_host_link "$cut_host" up
        lab_rate "$cut_host" "$rate"
    ) &
    cutter=$!
    lab_bg "$cutter"
    case $m in lock) prefix="rfs:$rfs0:/" ;; coll) prefix="rdma:/" ;; esac
    # shellcheck disable=SC2046
    ROMIO_RDMA_SERVERS=$cut_servers run_case "lab.client_link_cut.$m.np4" 180 "$LAB_MPIEXEC" \
        $(ranks 4) "$work/bin/lab_clientcut" "$m" "$prefix" "$hs" "$cut_host" "$cut_timeout"
    touch "$hs/checked"
    wait "$cutter"
    lab_host_link "$cut_host" up 2>/dev/null
    grep -E "after [0-9.]+ s" "$LOGDIR/lab.client_link_cut.$m.np4.out" | sed "s/^/       | /"
done
lab_rate "$cut_host" "$rate"

echo "lab: replicas (rdma_replicas=2, 4 server hosts, rdma_timeout 3 s)"
# A server host lost (its link cut, then its rfsd killed with SIGKILL) in
# the middle of a phase of 4 ranks (lab_replica.c): independent writes,
# independent reads, disk-directed and two-phase write_at_all; each case's
# server back after it (rfsd on the same port and root, the link up).
# Then the stale server back after an overwrite made during its outage,
# rdma-resync, and another server lost whose objects then depend on the
# resynced copies.
# Their own rfsd on every server host (--log-level info: each merged
# collective call is logged)
rep_timeout=3
rep_opts=(--log-level info --coll-timeout 15)
rep_servers=""
rep_pid=() rep_port=()
for i in 0 1 2 3; do
    lab_start_rfsd "$i" "$work" "rep$i" "${rep_opts[@]}" \
        || { FAILED=$((FAILED + 1)); echo "  FAIL rfsd rep$i on server host $i"; }
    rep_pid[i]=$RFSD_PID rep_port[i]=$RFSD_PORT
    rep_servers="$rep_servers${rep_servers:+,}$LAB_RFSD_ADDR:$RFSD_PORT"
    mkdir -p "$work/rep$i-root/rep"
done
rep_client=${LAB_CLIENTS%% *}
# what rdma-resync --status appends (rdma-resync(1)): every server reachable
rep_reach="(, unreachable: none)?"

# rep_lose I: server host I lost: its link cut, then its rfsd killed
# (SIGKILL: the connections' resets never leave the host, the clients must
# time out)
rep_lose() {
    rfsd_killed "${rep_pid[$1]}"
    lab_link "$1" down && kill -KILL "${rep_pid[$1]}"
}

# rep_lose_now I: rep_lose here, the killed rfsd reaped at once (no notice
# from bash), its status SIGKILL's
rep_lose_now() {
    local rc
    rep_lose "$1" || { FAILED=$((FAILED + 1)); echo "  FAIL server host $1 not taken down"; return 1; }
    { wait "${rep_pid[$1]}"; } 2>/dev/null
    rc=$?
    forget_rfsd "${rep_pid[$1]}"
    [ $rc -eq 137 ] || { FAILED=$((FAILED + 1)); echo "  FAIL rfsd rep$1: exit status $rc, not SIGKILL's"; }
}

# rep_restore I: server host I as before: its rfsd, if it was killed, again
# on the same port and root (the killed one's log kept as repI.log.N), its
# link up
rep_restore() {
    local i=$1 n
    if ! kill -0 "${rep_pid[i]}" 2>/dev/null; then
        # reaped (unless rep_lose_now did): SIGKILL's status is no failure
        case " $RFSD_PIDS " in *" ${rep_pid[i]} "*) stop_rfsd "${rep_pid[i]}" ;; esac
        n=1
        while [ -e "$work/rep$i.log.$n" ]; do n=$((n + 1)); done
        mv "$work/rep$i.log" "$work/rep$i.log.$n"
        # the old process's sockets may hold the port an instant longer
        for n in $(seq 1 100); do
            if lab_start_rfsd "$i" "$work" "rep$i" --port "${rep_port[i]}" "${rep_opts[@]}" \
                2>/dev/null; then
                rep_pid[i]=$RFSD_PID
                break
            fi
            sleep 0.1
        done
        if ! kill -0 "${rep_pid[i]}" 2>/dev/null; then
            FAILED=$((FAILED + 1))
            echo "  FAIL rfsd rep$i restarted on server host $i, port ${rep_port[i]}"
        fi
    fi
    lab_link "$i" up
}

# rep_quiet CMD...: CMD, without bash's notice that an rfsd it started (a
# child of this shell) was killed, which comes while CMD runs
rep_quiet() {
    "$@" 2> >(grep -vE '^.*: line [0-9]+: +[0-9]+ Killed ' >&2)
}

# rep_killer I HS: (in the background) server host I lost once HS/started
# exists; then HS/down
rep_killer() {
    for _ in $(seq 1 1200); do [ -e "$2/started" ] && break; sleep 0.05; done
    [ -e "$2/started" ] || exit 0       # the program failed before: run_case counts it
    rep_lose "$1" && touch "$2/down"
}

# rep_collective_calls: collective calls the servers have logged so far
rep_collective_calls() {
    cat "$work"/rep[0-3].log* | grep -cE 'collective (write|read) [0-9]+ of group'
}

# rep_phase MODE I: lab_replica MODE on 4 ranks, server host I lost in the
# middle of it, then restored
rep_phase() {
    local m=$1 i=$2 hs=$work/rep-$1-$2 killer
    rm -rf "$hs"
    mkdir -p "$hs"
    rfsd_killed "${rep_pid[i]}"         # here: the killer is a subshell
    rep_killer "$i" "$hs" &
    killer=$!
    lab_bg "$killer"
    # shellcheck disable=SC2046
    ROMIO_RDMA_SERVERS=$rep_servers rep_quiet run_case "lab.replica.$m.lose$i.np4" 240 \
        "$LAB_MPIEXEC" $(ranks 4) "$work/bin/lab_replica" "$m" "rdma:/rep/$m" "$hs" "$rep_timeout"
    kill "$killer" 2>/dev/null
    wait "$killer" 2>/dev/null
    grep -E "calls per rank|^checks:" "$LOGDIR/lab.replica.$m.lose$i.np4.out" | sed "s/^/       | /"
    rep_restore "$i"
}

# rep_tool NAME REGEX ARGS...: a case of rdma-resync ARGS on client host 0:
# passes when it exits 0 and prints a line matching REGEX
rep_tool() {
    local name=$1 re=$2 rc out=$LOGDIR/$1.out
    shift 2
    timeout --kill-after=10 120 ip netns exec "$(lab_ns "$rep_client")" "$PREFIX/bin/rdma-resync" \
        -s "$rep_servers" -t "$rep_timeout" "$@" > "$out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -qE "$re" "$out"; then
        PASSED=$((PASSED + 1))
        echo "  PASS $name ($(grep -E "$re" "$out" | head -1))"
    else
        FAILED=$((FAILED + 1))
        FAILED_NAMES="$FAILED_NAMES $name"
        echo "  FAIL $name (exit $rc; expected a line matching: $re)"
        sed 's/^/       | /' "$out" | tail -15
        return 1
    fi
}

# a, b: independent writes, then reads, server host 1 lost, then 2
rep_phase write 1
rep_phase read 2
# c: disk-directed write_at_all, server host 3 lost; the surviving servers
# must have merged collective calls (the file's writes, and the new open's
# read_at_all)
coll0=$(rep_collective_calls)
rep_phase coll 3
coll_calls=$(($(rep_collective_calls) - coll0))
if [ "$coll_calls" -gt 0 ]; then
    PASSED=$((PASSED + 1))
    echo "  PASS lab.replica.coll_merged ($coll_calls collective calls merged by the servers)"
else
    FAILED=$((FAILED + 1))
    echo "  FAIL lab.replica.coll_merged (no collective call in the servers' logs: not disk-directed)"
fi

# the same by ROMIO's two-phase (rdma_coll=two_phase), server host 2 lost
rep_phase coll2p 2

# d: an overwrite while server host 1 is lost, which comes back while
# nobody has the file open: its stale copies must not be served
f=/rep/over hs=$work/rep-over
mkdir -p "$hs"
rep_over() {     # rep_over NAME MODE GEN: lab_replica MODE on 4 ranks
    # shellcheck disable=SC2046
    ROMIO_RDMA_SERVERS=$rep_servers rep_quiet run_case "lab.replica.$1" 240 "$LAB_MPIEXEC" \
        $(ranks 4) "$work/bin/lab_replica" "$2" "rdma:$f" "$hs" "$rep_timeout" "$3" || return 1
    grep -E "^(overwrite|checks):" "$LOGDIR/lab.replica.$1.out" | sed "s/^/       | /"
}
if rep_over over.create.np4 create 1; then
    rep_lose_now 1
    rep_over over.during_outage.np4 overwrite 2
    rep_restore 1
    # server 1's copies must still be the old ones (else nothing is tested):
    # object 1's data (past its 4096-byte header) differs from server 2's copy
    d1=$work/rep1-root/rep d2=$work/rep2-root/rep
    if ! cmp -s <(tail -c +4097 "$d1/over") <(tail -c +4097 "$d2/.over.copy1") &&
        [ -s "$d2/.over.copy1" ]; then
        PASSED=$((PASSED + 1))
        echo "  PASS lab.replica.stale_copy_old (server 1's copy of object 1 is the old data)"
    else
        FAILED=$((FAILED + 1))
        echo "  FAIL lab.replica.stale_copy_old (server 1's copy of object 1 is not the old data, or server 2 has none)"
    fi
    rep_over over.stale_back.np4 verify 2
    rep_tool lab.replica.status_stale "^$f: epoch [0-9]+, stale: 1$rep_reach\$" --status "$f"
    # server 1 holds object 1 (copy 0) and object 0 (copy 1): 2 x 4 MiB
    if rep_tool lab.replica.resync "^$f: resynced server 1 \([0-9]+ bytes\)\$" "$f"; then
        bytes=$(sed -nE "s|^$f: resynced server 1 \(([0-9]+) bytes\)\$|\1|p" \
            "$LOGDIR/lab.replica.resync.out")
        if [ "$bytes" -ge $((8 << 20)) ]; then
            PASSED=$((PASSED + 1))
            echo "  PASS lab.replica.resync_bytes ($bytes bytes: server 1's two copies of 4 MiB)"
        else
            FAILED=$((FAILED + 1))
            echo "  FAIL lab.replica.resync_bytes ($bytes bytes, less than server 1's two copies of 4 MiB)"
        fi
    fi
    rep_tool lab.replica.status_resynced "^$f: epoch [0-9]+, stale: none$rep_reach\$" --status "$f"
    rep_tool lab.replica.resync_current "^$f: current\$" "$f"
    # the resynced copies' data (past the 4096-byte header) as their live
    # twins': object 0 (server 0's f, server 1's .f.copy1), object 1
    # (server 1's f, server 2's .f.copy1)
    d0=$work/rep0-root/rep
    if cmp -s <(tail -c +4097 "$d0/over") <(tail -c +4097 "$d1/.over.copy1") &&
        cmp -s <(tail -c +4097 "$d1/over") <(tail -c +4097 "$d2/.over.copy1") &&
        [ "$(stat -c %s "$d1/over")" -ge $(((4 << 20) + 4096)) ]; then
        PASSED=$((PASSED + 1))
        echo "  PASS lab.replica.resynced_copies (server 1's objects equal their live copies)"
    else
        FAILED=$((FAILED + 1))
        echo "  FAIL lab.replica.resynced_copies (server 1's objects differ from their live copies)"
        find "$d0" "$d1" "$d2" -name '*over*' -printf '%p %s bytes\n' | sed 's/^/       | /'
    fi
    # server host 2 lost: object 1 has only server 1's resynced copy
    rep_lose_now 2
    if rep_over over.after_resync.lose2.np4 verify 2; then
        # a process that lost a server does not use it again for that open
        # (docs/rdma.md, Replicas): one read per rank may wait rdma_timeout
        slow=$(sed -nE 's/^checks: .* ([0-9]+) over 1 s .*/\1/p' \
            "$LOGDIR/lab.replica.over.after_resync.lose2.np4.out")
        if [ "${slow:-99}" -le 4 ]; then
            PASSED=$((PASSED + 1))
            echo "  PASS lab.replica.lost_server_left ($slow reads over 1 s, at most one per rank)"
        else
            FAILED=$((FAILED + 1))
            echo "  FAIL lab.replica.lost_server_left (${slow:-no count}: reads over 1 s, more than one per rank: the lost server tried again and again)"
        fi
    fi
    rep_restore 2
    rep_tool lab.replica.resync_final "^$f: (current|resynced server 2 \([0-9]+ bytes\))\$" "$f"
    rep_tool lab.replica.status_final "^$f: epoch [0-9]+, stale: none$rep_reach\$" --status "$f"
fi
stop_all_rfsd
summary
[ "$FAILED" -eq 0 ]
