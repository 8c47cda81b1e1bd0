#!/usr/bin/env bash
# make bench-scale: one rfsd on loopback holding C connections of which A
# are active (scale_load.c: open, write SIZE, read it back checked, a timed
# 4 KiB read, close, in a loop from one epoll thread), each row beside the
# same run's baseline, C = A = 64 (the 64 active alone). A fresh rfsd for
# every run (its memory measured from its start); rfsd on CPU 0 and the load
# on CPU 1 where there are two (otherwise the load's own time slices show as
# the server's latency). Rows are medians of PASSES runs (default 3), the
# configurations alternated within each pass; ratios are medians of each
# pass's own. Then the memory of idle TLS connections (with a key) against
# idle plain ones. Last, what one collective open costs for 2 to 32
# processes, on loopback and in the lab (open_cost.sh).
#   scale.sh REPO [PASSES] [SECONDS]
set -eu
repo=$1
passes=${2:-3}
secs=${3:-5}
PREFIX=$repo/build/install
. "$repo/test/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/scale-bench.XXXXXX")
trap 'stop_all_rfsd; rm -rf "$work"' EXIT

load=$repo/build/obj/plain/scale_load
pin_server="" pin_load=""
if [ "$(nproc)" -ge 2 ]; then
    pin_server="taskset -c 0" pin_load="taskset -c 1"
fi

# run NAME C A [scale_load options...]: one fresh rfsd, one load; appends the
# RESULT line to $work/NAME.res
run() {
    local name=$1 c=$2 a=$3
    shift 3
    rm -rf "$work/root"
    RFSD_WRAP="$pin_server" start_rfsd "$work/root" "$work" "rfsd-$name" ${RFSD_ARGS:-}
    # shellcheck disable=SC2086
    $pin_load "$load" 127.0.0.1 "$RFSD_PORT" --conns "$c" --active "$a" --seconds "$secs" \
        --rfsd-pid "$RFSD_PID" "$@" > "$work/$name.out"
    grep '^RESULT' "$work/$name.out" >> "$work/$name.res"
    stop_rfsd "$RFSD_PID"
}

# field NAME KEY: that key's values, one per pass
field() {
    sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$work/$1.res"
}

# median_ratio FORMAT A B: the median of the per-pass ratios of the values
# in A to those in B (one a line, pass by pass), printed with FORMAT
median_ratio() {
    paste -d' ' "$2" "$3" | awk -v f="$1" '{ printf f "\n", ($2 > 0 ? $1 / $2 : 0) }' | median
}

configs="base:64:64 c100:100:64 c1000:1000:64 c10000:10000:64 a1000:1000:1000 c10000a1000:10000:1000"
echo "bench-scale: $passes passes of $secs s per row, rfsd${pin_server:+ on CPU 0, the load on CPU 1}"
for p in $(seq 1 "$passes"); do
    for cfg in $configs; do
        IFS=: read -r name c a <<< "$cfg"
        run "$name" "$c" "$a"
    done
    echo "  pass $p done"
done

printf '\n%-22s %9s %8s %9s %9s %8s %9s %8s %9s %7s\n' connections active "ops/s" "x base" \
    "MB/s" "p50 us" "p99 us" "p99/p50" "KiB/idle" threads
for cfg in $configs; do
    IFS=: read -r name c a <<< "$cfg"
    printf '%-22s %9s %8s %9s %9s %8s %9s %8s %9s %7s\n' "$c" "$a" \
        "$(field "$name" ops_per_s | median)" \
        "$(median_ratio %.3f <(field "$name" ops_per_s) <(field base ops_per_s))" \
        "$(field "$name" mb_per_s | median)" "$(field "$name" p50_us | median)" \
        "$(field "$name" p99_us | median)" \
        "$(median_ratio %.1f <(field "$name" p99_us) <(field "$name" p50_us))" \
        "$(field "$name" idle_kib_per_conn | median)" "$(field "$name" threads_active | median)"
done
echo "(x base: ops/s against 64 active alone in the same pass; KiB/idle: rfsd's resident memory"
echo " per idle connection; threads: rfsd's threads at the end of the active phase)"

# Idle connections' memory: plain, and TLS 1.3 with a key, 1,000 each
sec=$work/sec
make_security_files "$sec" > /dev/null
for p in $(seq 1 "$passes"); do
    run idle-plain 1000 0
    RFSD_ARGS="--keys $sec/keys --tls-cert $sec/ca.crt --tls-key $sec/server.key" \
        run idle-tls 1000 0 --tls --key-file "$sec/good.key"
done
printf '\nidle connections (1000): plain %s KiB each, TLS with a key %s KiB each (rfsd resident)\n' \
    "$(field idle-plain idle_kib_per_conn | median)" "$(field idle-tls idle_kib_per_conn | median)"

# The collective open's cost: its own runner (the lab's teardown on exit)
bash "$repo/test/bench/open_cost.sh" "$repo"
