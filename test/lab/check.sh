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
#     in a disk-directed collective (rdma:).
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
for t in lab_where lab_linkfault lab_clientcut; do
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
stop_all_rfsd
summary
[ "$FAILED" -eq 0 ]
