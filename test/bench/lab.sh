#!/usr/bin/env bash
# make bench-lab: the drivers on the lab's virtual cluster (test/lab/lab.sh)
# against iperf3 on the very links they use, all in this run, every link
# shaped to RATE both ways:
#   - rfs: contiguous write and read, 1 rank on client host 0, rfsd on
#     server host 0 (root on tmpfs), against iperf3 from client host 0 to
#     server host 0 (write) and back (-R, read); at RATE and with those two
#     links at 2 Gbit/s (where the CPU starts to matter);
#   - TLS: the same rfs: transfer over TLS with a key against plain rfs:,
#     those two links at 1 and at 5 Gbit/s;
#   - rdma: aggregate write and read of 4 ranks on 2 and on 4 client hosts
#     over N = 1, 2, 4 server hosts (stripe unit 1 MiB and 64 KiB), against
#     the expected min(N, client hosts) x the link's iperf3.
# CPU: the CPU time of the ranks and servers over the run's time and all
# cores (100%: the CPUs bind, not the links); on a machine shared with
# other work the links may get less than this.
# Figures are medians of REPS runs (iperf3: REPS runs of 3 s; rfs_bench:
# the median of its REPS passes). Writes OUT/bench-lab.md (the tables),
# OUT/rdma-CLIENTS-UNIT.dat (N, expected, write, read, CPU) and
# OUT/bench-lab.png (gnuplot).
#   lab.sh REPO [RATE] [REPS] [OUT]
set -u
repo=$1
rate=${2:-500mbit}
reps=${3:-3}
out=${4:-$repo/build/bench-lab}
PREFIX=$repo/build/install
. "$repo/test/lib.sh"
. "$repo/test/lab/lab.sh"
# on tmpfs where there is one: the servers' disks must not be the bound
base=/dev/shm
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/lab-rl$$-work.XXXXXX")
LAB_REMOVE=$work
lab_trap
mkdir -p "$out"

for tool in iperf3 gnuplot; do
    command -v $tool > /dev/null || { echo "bench-lab: $tool is missing (make bench-lab installs it)" >&2; exit 1; }
done
lab_up 4 4 "$rate" || { echo "bench-lab: $LAB_WHY" >&2; exit 1; }
"$PREFIX/bin/mpicc" -O2 -D_GNU_SOURCE -std=c11 -o "$work/rfs_bench" "$repo/test/bench/rfs_bench.c" \
    || exit 1
read -ra clients <<< "$LAB_CLIENTS"
read -ra servs <<< "$LAB_SERVERS"

median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# iperf3_mbs FROM TO [-R]: median MB/s of REPS runs from host FROM to host
# TO (with -R: TO to FROM), iperf3's server on TO
iperf3_mbs() {
    local from=$1 to=$2 i pid
    shift 2
    for i in $(seq 1 "$reps"); do
        lab_exec "$to" iperf3 -s -1 -B "$to" > /dev/null 2>&1 &
        pid=$!
        for _ in $(seq 1 50); do
            lab_exec "$to" ss -ltn | grep -q ":5201 " && break
            sleep 0.1
        done
        lab_exec "$from" iperf3 -c "$to" -t 3 -J "$@" | python3 -c \
            'import json, sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e6)'
        wait "$pid"
    done | median
}

# CPU ticks (user + system) of the running servers
rfsd_ticks() {
    local p t=0
    for p in $RFSD_PIDS; do
        t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat")))
    done
    echo $t
}

# bench NAME HOSTS PPN NP BYTES CHUNK [VAR=VALUE...]: "write read cpu%" of
# rfs_bench; the ranks' CPU time is mpiexec's children's (bash's time)
bench() {
    local name=$1 hosts=$2 ppn=$3 np=$4 bytes=$5 chunk=$6 r0 t0 TIMEFORMAT='%3U %3S'
    shift 6
    r0=$(rfsd_ticks) t0=$(date +%s.%N)
    { time env "$@" "$LAB_MPIEXEC" -hosts "$hosts" -ppn "$ppn" -n "$np" "$work/rfs_bench" \
        "$name" "$bytes" "$chunk" "$reps" > "$work/res" 2> "$work/err"; } 2> "$work/time" \
        || { cat "$work/err" >&2; return 1; }
    awk -v r="$(($(rfsd_ticks) - r0))" -v hz="$(getconf CLK_TCK)" -v t0="$t0" \
        -v t1="$(date +%s.%N)" -v cores="$(nproc)" '
        FILENAME ~ /res$/ && $1 == "write" { w = $2 } FILENAME ~ /res$/ && $1 == "read" { rd = $2 }
        FILENAME ~ /time$/ { ranks = $1 + $2 }
        END { printf "%s %s %.0f\n", w, rd, 100 * (ranks + r / hz) / ((t1 - t0) * cores) }' \
        "$work/res" "$work/time"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "bench-lab: clients $LAB_CLIENTS, servers $LAB_SERVERS, every link $rate, medians of $reps"

srv=""
for i in 0 1 2 3; do
    lab_start_rfsd "$i" "$work" "srv$i" || exit 1
    srv="$srv${srv:+,}$LAB_RFSD_ADDR:$RFSD_PORT"
done
# row LINE: a row of the tables, as it comes
row() {
    echo "$1" | tee -a "$out/bench-lab.md"
}

: > "$out/bench-lab.md"
row "### rfs: against iperf3 (client host 0 to server host 0, 256 MiB in 4 MiB calls)"
row ""
row "| link | direction | iperf3 MB/s | rfs: MB/s | ratio | CPU | goal |"
row "|---|---|---|---|---|---|---|"
for r in "$rate" 2gbit; do
    lab_rate "${clients[0]}" "$r" && lab_rate "${servs[0]}" "$r" || exit 1
    lw=$(iperf3_mbs "${clients[0]}" "${servs[0]}")
    lr=$(iperf3_mbs "${clients[0]}" "${servs[0]}" -R)
    if [ -z "$lw" ] || [ -z "$lr" ]; then echo "bench-lab: iperf3 gave no result" >&2; exit 1; fi
    [ "$r" != "$rate" ] || link_w=$lw
    read -r rw rr rc <<< "$(bench "rfs:${srv%%,*}:/rfs-bench" "${clients[0]}" 1 1 $((256 << 20)) \
        $((4 << 20)))" || exit 1
    row "$(printf '| %s | write | %.1f | %.1f | %s | %s%% | >= 0.98 |' "$r" "$lw" "$rw" "$(ratio "$rw" "$lw")" "$rc")"
    row "$(printf '| %s | read | %.1f | %.1f | %s | %s%% | >= 0.98 |' "$r" "$lr" "$rr" "$(ratio "$rr" "$lr")" "$rc")"
done

sec=$work/sec
make_security_files "$sec" "${servs[0]}" || exit 1
lab_start_rfsd 0 "$work" tls --keys "$sec/keys" --tls-cert "$sec/ca.crt" \
    --tls-key "$sec/server.key" || exit 1
tls="rfs:$LAB_RFSD_ADDR:$RFSD_PORT:/tls-bench"
row ""
row "### TLS (AES-GCM, a key) against plain rfs: (the same transfer)"
row ""
row "| link | plain write | TLS write | ratio | plain read | TLS read | ratio | CPU plain / TLS | goal |"
row "|---|---|---|---|---|---|---|---|---|"
for r in 1gbit 5gbit; do
    lab_rate "${clients[0]}" "$r" && lab_rate "${servs[0]}" "$r" || exit 1
    read -r pw pr pc <<< "$(bench "rfs:${srv%%,*}:/rfs-bench" "${clients[0]}" 1 1 $((256 << 20)) \
        $((4 << 20)))" || exit 1
    read -r tw tr tc <<< "$(bench "$tls" "${clients[0]}" 1 1 $((256 << 20)) $((4 << 20)) \
        ROMIO_RFS_TRANSPORT=tls ROMIO_RFS_KEY_FILE="$sec/good.key" ROMIO_RFS_TLS_CA="$sec/ca.crt")" \
        || exit 1
    row "$(printf '| %s | %.1f | %.1f | %s | %.1f | %.1f | %s | %s%% / %s%% | >= 0.9 |' "$r" "$pw" "$tw" \
        "$(ratio "$tw" "$pw")" "$pr" "$tr" "$(ratio "$tr" "$pr")" "$pc" "$tc")"
done
lab_rate "${clients[0]}" "$rate" && lab_rate "${servs[0]}" "$rate" || exit 1
link_w=$(printf '%.1f' "$link_w")
row ""
row "### rdma: aggregate, 4 ranks (64 MiB each in 4 MiB calls), against min(N, client hosts) x the link's iperf3 write ($link_w MB/s at $rate)"
row ""
row "| client hosts | servers N | unit | expected MB/s | write MB/s | ratio | read MB/s | ratio | CPU | bound (expected) |"
row "|---|---|---|---|---|---|---|---|---|---|"
rm -f "$out"/rdma-*.dat
for nc in 2 4; do
    hosts=$(echo "${clients[@]:0:$nc}" | tr ' ' ,)
    for n in 1 2 4; do
        servers=$(echo "$srv" | cut -d, -f1-$n)
        for unit in 1048576 65536; do
            printf 'striping_unit %s\nstriping_factor %s\n' $unit $n > "$work/hints"
            read -r aw ar ac <<< "$(bench "rdma:/agg-$nc-$n-$unit" "$hosts" $((4 / nc)) 4 \
                $((64 << 20)) $((4 << 20)) ROMIO_RDMA_SERVERS="$servers" \
                ROMIO_HINTS="$work/hints")" || exit 1
            k=$(( n < nc ? n : nc ))
            exp=$(awk -v k="$k" -v l="$link_w" 'BEGIN { printf "%.1f", k * l }')
            if [ "$n" -lt "$nc" ]; then bound="servers' links"
            elif [ "$n" -gt "$nc" ]; then bound="clients' links"
            else bound="both"; fi
            row "$(printf '| %d | %d | %d KiB | %s | %.1f | %s | %.1f | %s | %s%% | %s |' "$nc" "$n" \
                $((unit / 1024)) "$exp" "$aw" "$(ratio "$aw" "$exp")" "$ar" "$(ratio "$ar" "$exp")" \
                "$ac" "$bound")"
            echo "$n $exp $aw $ar $ac" >> "$out/rdma-$nc-$unit.dat"
        done
    done
done
stop_all_rfsd

gnuplot << EOF || { echo "bench-lab: gnuplot failed" >&2; exit 1; }
set terminal pngcairo size 900,500 noenhanced
set output "$out/bench-lab.png"
set title "rdma: aggregate over N server hosts, 4 ranks, links $rate (iperf3 $link_w MB/s per link)"
set xlabel "server hosts N"
set ylabel "MB/s"
set xtics (1, 2, 4)
set key top left
set grid
plot for [c in "2 4"] sprintf("$out/rdma-%s-1048576.dat", c) using 1:2 with linespoints \
         dt 2 pt 1 lc int(c) title sprintf("expected, %s client hosts", c), \
     for [c in "2 4"] sprintf("$out/rdma-%s-1048576.dat", c) using 1:3 with linespoints \
         pt 7 lc int(c) title sprintf("write, %s client hosts, 1 MiB unit", c), \
     for [c in "2 4"] sprintf("$out/rdma-%s-1048576.dat", c) using 1:4 with linespoints \
         dt 3 pt 6 lc int(c) title sprintf("read, %s client hosts, 1 MiB unit", c)
EOF
echo "bench-lab: $out/bench-lab.md, $out/bench-lab.png"
