#!/usr/bin/env bash
# make bench-lab: the drivers on the lab's virtual cluster (test/lab/lab.sh)
# against iperf3 on the very links they use, all in this run, every link
# shaped to RATE both ways:
#   - rfs: contiguous write and read, 1 rank on client host 0, rfsd on
#     server host 0 (root on tmpfs), against iperf3 from client host 0 to
#     server host 0 (write) and back (-R, read); at RATE and with those two
#     links at 2 Gbit/s (where the CPU starts to matter);
#   - TLS: the same rfs: transfer over TLS with a key against plain rfs:,
#     those two links at 1 and at 5 Gbit/s, one pass of each in turn, REPS
#     times (the machine's load in between changes both alike);
#   - rdma: aggregate write and read of 4 ranks on 2 and on 4 client hosts
#     over N = 1, 2, 4, 8 server hosts (stripe unit 1 MiB and 64 KiB), against
#     the expected min(N, client hosts) x the link's iperf3, with the
#     packets the tbf queues dropped out of and into the client hosts and
#     into the server hosts;
#   - coll: seed 003's collective patterns (coll_bench.c: block3d, CYCLIC(k))
#     by disk-directed against ROMIO's two-phase, 4 ranks on 2 and on 4
#     client hosts, rdma: over 4 server hosts, runs of the two alternated;
#     the bytes that crossed the client hosts' links (two-phase's exchange
#     crosses them too);
#   - abt: bench-abt's periodic writer (abt_bench.c), 4 ranks on 2 client
#     hosts (their links unshaped), rfsd on server host 0 behind a link at
#     LAB_ABT_RATE (160mbit): PEAK (ufs: on tmpfs: no server link), rfs:
#     alone and abt:rfs:, runs alternated; then abt:rfs: against rfs: with
#     the server's link unshaped too.
#   - abtlib: the same writer and setting with each snapshot written through
#     HDF5 and through PnetCDF (lib_bench.c), which open their files
#     read-write: PEAK (abt_bench's, the same bytes), the library over rfs:
#     alone and over abt:rfs: (abt_buffer_rdwr's default), runs alternated.
# LAB_PARTS (default "rfs tls rdma coll abt abtlib interleave replicas mount")
# selects the parts; rdma and replicas measure their link baseline themselves
# when rfs is not among them.
# HDF5_DIR and PNETCDF_DIR (make bench-lab passes them): the HDF5 and PnetCDF
# that make hdf5 and make pnetcdf built with this MPICH, for abtlib.
# LAB_RDMA_ROWS (default all) selects rdma's rows as CLIENTS:N:UNIT words
# (e.g. "4:4:1048576 2:8:65536"); LAB_RDMA_HINTS (default: the driver's
# own) gives NAME=VALUE hints whose runs follow each other in each row, a
# row apiece (e.g. "rdma_inflight=0 rdma_inflight=2097152"); LAB_RDMA_RANKS
# (default 4) the ranks of each row, spread evenly over the client hosts,
# several numbers a row apiece, run one after the other (e.g. "4 8").
# CPU: the CPU time of the ranks and servers over the run's time and all
# cores (100%: the CPUs bind, not the links); on a machine shared with
# other work the links may get less than this.
# Figures are medians of REPS runs (iperf3: REPS runs of 3 s; rfs_bench:
# the median of its REPS passes). Writes OUT/bench-lab.md (the tables),
# OUT/rdma-CLIENTS-UNIT.dat (N, expected, write, read, CPU) and
# OUT/bench-lab.png (gnuplot).
#   - interleave: issue 21's interleaved segments (interleave_bench.c), 2
#     ranks on 2 client hosts, rdma: over 4 server hosts (unit 64 KiB) by
#     disk-directed, two-phase and independent datatype I/O, against rfs:
#     on server host 0; every link RATE, the modes alternated run by run.
#   - replicas: issue 34's replicated stripes: 4 ranks on client host 0,
#     rdma: over 4 server hosts (unit 1 MiB), the same 128 MiB written and
#     read with rdma_replicas=1 and 2, runs of the two alternated; write(2)
#     against half the client link's iperf3 (the client sends both copies),
#     read(2) against read(1).
#   - mount: issue 36's rfs-mount: one process on client host 0 moving 128
#     MiB in 4 MiB calls to and from rdma: over 4 server hosts (unit 1 MiB):
#     rfs_bench through the driver against dd through rfs-mount (mounted in
#     client host 0's network), runs of the two alternated.
#   lab.sh REPO [RATE] [REPS] [OUT]
set -u
repo=$1
parts=" ${LAB_PARTS:-rfs tls rdma coll abt abtlib interleave replicas mount} "
rdma_ranks=${LAB_RDMA_RANKS:-4}
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
part() { [[ $parts == *" $1 "* ]]; }
# abtlib's libraries, built by make hdf5 and make pnetcdf (where the archive
# gives no PnetCDF source, .unavailable says so: leave abtlib out)
for dir in ${HDF5_DIR:-none} ${PNETCDF_DIR:-none}; do
    part abtlib || break
    [ -f "$dir/.built" ] || { echo "bench-lab: abtlib needs HDF5_DIR and PNETCDF_DIR as make bench-lab gives them ($dir: $(cat "$dir/.unavailable" 2> /dev/null || echo not built))" >&2; exit 1; }
done
nserv=4
! part rdma || nserv=8
# the lab's directory, so each client host's stage directory, on tmpfs too
TMPDIR=$base lab_up 4 "$nserv" "$rate" || { echo "bench-lab: $LAB_WHY" >&2; exit 1; }
for prog in rfs_bench coll_bench abt_bench interleave_bench; do
    "$PREFIX/bin/mpicc" -O2 -D_GNU_SOURCE -std=c11 -o "$work/$prog" "$repo/test/bench/$prog.c" \
        || exit 1
done
# abtlib's writer, against the static libraries those builds left
! part abtlib || "$PREFIX/bin/mpicc" -O2 -D_GNU_SOURCE -std=c11 -I"$HDF5_DIR/src/src" \
    -I"$PNETCDF_DIR/src/src/include" -o "$work/lib_bench" "$repo/test/bench/lib_bench.c" \
    "$HDF5_DIR/src/src/.libs/libhdf5.a" "$PNETCDF_DIR/src/src/libs/.libs/libpnetcdf.a" \
    -lz -lm -ldl || exit 1
read -ra clients <<< "$LAB_CLIENTS"
read -ra servs <<< "$LAB_SERVERS"

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

# iperf3_all_mbs "FROMS" "TOS" [-R]: MB/s of iperf3 from every host of
# FROMS to every host of TOS at once, a stream each (with -R: from every
# TO to every FROM, a read's direction), summed; median of REPS runs. The
# baseline where both sides' links bind: every link carries several
# streams that finish in their own time, as the ranks' requests do.
iperf3_all_mbs() {
    local froms=$1 tos=$2 i f t port
    shift 2
    for i in $(seq 1 "$reps"); do
        port=5300
        for t in $tos; do
            for f in $froms; do
                lab_exec "$t" iperf3 -s -1 -B "$t" -p $port > /dev/null 2>&1 &
                port=$((port + 1))
            done
        done
        for t in $tos; do
            for _ in $(seq 1 50); do
                [ "$(lab_exec "$t" ss -ltn | grep -c ':5[3-9][0-9][0-9] ')" -ge $(echo $froms | wc -w) ] \
                    && break
                sleep 0.1
            done
        done
        port=5300
        for t in $tos; do
            for f in $froms; do
                lab_exec "$f" iperf3 -c "$t" -p $port -t 5 -J "$@" > "$work/a2a-$port.json" &
                port=$((port + 1))
            done
        done
        wait
        python3 -c 'import json, sys
print(sum(json.load(open(f))["end"]["sum_received"]["bits_per_second"] for f in sys.argv[1:]) / 8e6)' \
            "$work"/a2a-*.json
        rm -f "$work"/a2a-*.json
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
# rfs_bench (passes: REPS, or $passes); the ranks' CPU time is mpiexec's
# children's (bash's time)
bench() {
    local name=$1 hosts=$2 ppn=$3 np=$4 bytes=$5 chunk=$6 r0 t0 TIMEFORMAT='%3U %3S'
    shift 6
    r0=$(rfsd_ticks) t0=$(date +%s.%N)
    { time env "$@" "$LAB_MPIEXEC" -hosts "$hosts" -ppn "$ppn" -n "$np" "$work/rfs_bench" \
        "$name" "$bytes" "$chunk" "${passes:-$reps}" > "$work/res" 2> "$work/err"; } 2> "$work/time" \
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
for i in $(seq 0 $((nserv - 1))); do
    lab_start_rfsd "$i" "$work" "srv$i" || exit 1
    srv="$srv${srv:+,}$LAB_RFSD_ADDR:$RFSD_PORT"
done
# row LINE: a row of the tables, as it comes
row() {
    echo "$1" | tee -a "$out/bench-lab.md"
}

: > "$out/bench-lab.md"
if part rfs; then
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
        res=$(bench "rfs:${srv%%,*}:/rfs-bench" "${clients[0]}" 1 1 $((256 << 20)) $((4 << 20))) \
            || exit 1
        read -r rw rr rc <<< "$res"
        row "$(printf '| %s | write | %.1f | %.1f | %s | %s%% | >= 0.98 |' "$r" "$lw" "$rw" "$(ratio "$rw" "$lw")" "$rc")"
        row "$(printf '| %s | read | %.1f | %.1f | %s | %s%% | >= 0.98 |' "$r" "$lr" "$rr" "$(ratio "$rr" "$lr")" "$rc")"
    done
fi

# rates RATE ADDR...: those hosts' links shaped to RATE (a part sets what it needs)
rates() {
    local r=$1 a
    shift
    for a in "$@"; do
        lab_rate "$a" "$r" || exit 1
    done
}

# heading TITLE: a table's title and the machine's load when its part starts
# (the machine is shared; each run's load is in OUT/runs.log)
heading() {
    row ""
    row "### $1"
    row ""
    row "Load average $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%H:%M) UTC when this part started."
    row ""
}

# logged LABEL CMD...: CMD's output, also in OUT/runs.log with the time and load
logged() {
    local label=$1 res
    shift
    res=$("$@") || return 1
    echo "$(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg) $label $res" >> "$out/runs.log"
    echo "$res"
}

# alternated LABEL STEM "MODES" CMD...: REPS passes of `CMD... MODE` for
# each of MODES, the order rotated by one each pass, so that the machine's
# load swings hit every mode alike; MODE's result lines go to STEM-MODE
alternated() {
    local label=$1 stem=$2 order=$3 r mode
    shift 3
    for mode in $order; do : > "$stem-$mode"; done
    for r in $(seq 1 "$reps"); do
        for mode in $order; do
            logged "$label $mode" "$@" "$mode" >> "$stem-$mode" || return 1
        done
        order="${order#* } ${order%% *}"
    done
}

# TLS with a key against plain rfs:, client host 0 to server host 0, their
# links at 1 and at 5 Gbit/s: one pass of each in turn, REPS times
bench_tls() {
    local sec=$work/sec tls r i p t pw pr pc tw tr tc
    make_security_files "$sec" "${servs[0]}" || exit 1
    lab_start_rfsd 0 "$work" tls --keys "$sec/keys" --tls-cert "$sec/ca.crt" \
        --tls-key "$sec/server.key" || exit 1
    tls="rfs:$LAB_RFSD_ADDR:$RFSD_PORT:/tls-bench"
    heading "TLS (AES-GCM, a key) against plain rfs: (the same transfer), medians of $reps alternated passes"
    row "| link | plain write | TLS write | ratio | plain read | TLS read | ratio | CPU plain / TLS | goal |"
    row "|---|---|---|---|---|---|---|---|---|"
    for r in 1gbit 5gbit; do
        rates "$r" "${clients[0]}" "${servs[0]}"
        : > "$work/tls-$r"
        for i in $(seq 1 "$reps"); do
            p=$(passes=1 logged "tls $r plain" bench "rfs:${srv%%,*}:/rfs-bench" "${clients[0]}" 1 1 \
                $((256 << 20)) $((4 << 20))) || exit 1
            t=$(passes=1 logged "tls $r tls" bench "$tls" "${clients[0]}" 1 1 $((256 << 20)) \
                $((4 << 20)) ROMIO_RFS_TRANSPORT=tls ROMIO_RFS_KEY_FILE="$sec/good.key" \
                ROMIO_RFS_TLS_CA="$sec/ca.crt") || exit 1
            read -r pw pr pc <<< "$p"
            read -r tw tr tc <<< "$t"
            echo "$pw $tw $pr $tr $pc $tc" >> "$work/tls-$r"
        done
        read -r pw tw pr tr pc tc <<< "$(medians "$work/tls-$r")"
        row "$(printf '| %s | %.1f | %.1f | %s | %.1f | %.1f | %s | %s%% / %s%% | >= 0.9 |' "$r" "$pw" \
            "$tw" "$(ratio "$tw" "$pw")" "$pr" "$tr" "$(ratio "$tr" "$pr")" "$pc" "$tc")"
    done
}

# rdma_row CLIENTS RANKS N UNIT HINT: one row of rdma's table (HINT
# NAME=VALUE, "default": none), the first RANKS and HINT's also in its .dat
rdma_row() {
    local nc=$1 ranks=$2 n=$3 unit=$4 hint=$5 hosts servers res aw ar ac k exp bound dc dout ds
    hosts=$(echo "${clients[@]:0:$nc}" | tr ' ' ,)
    servers=$(echo "$srv" | cut -d, -f1-"$n")
    printf 'striping_unit %s\nstriping_factor %s\n' "$unit" "$n" > "$work/hints"
    [ "$hint" = default ] || echo "${hint%%=*} ${hint#*=}" >> "$work/hints"
    dout=$(lab_drops_out "${clients[@]:0:$nc}") dc=$(lab_drops "${clients[@]:0:$nc}")
    ds=$(lab_drops "${servs[@]:0:$n}")
    res=$(logged "rdma $nc $ranks $n $unit $hint" bench "rdma:/agg-$nc-$n-$unit" "$hosts" \
        $((ranks / nc)) "$ranks" \
        $((64 << 20)) $((4 << 20)) ROMIO_RDMA_SERVERS="$servers" ROMIO_HINTS="$work/hints") \
        || exit 1
    read -r aw ar ac <<< "$res"
    dout=$(($(lab_drops_out "${clients[@]:0:$nc}") - dout))
    dc=$(($(lab_drops "${clients[@]:0:$nc}") - dc)) ds=$(($(lab_drops "${servs[@]:0:$n}") - ds))
    k=$(( n < nc ? n : nc ))
    exp=$(awk -v k="$k" -v l="$link_w" 'BEGIN { printf "%.1f", k * l }')
    if [ "$n" -lt "$nc" ]; then bound="servers' links"
    elif [ "$n" -gt "$nc" ]; then bound="clients' links"
    else bound="both"; fi
    row "$(printf '| %d | %d | %d | %d KiB | %s | %s | %.1f | %s | %.1f | %s | %s%% | %s / %s, %s | %s |' \
        "$nc" "$ranks" "$n" $((unit / 1024)) "$hint" "$exp" "$aw" "$(ratio "$aw" "$exp")" "$ar" \
        "$(ratio "$ar" "$exp")" "$ac" "$dout" "$dc" "$ds" "$bound")"
    [ -e "$out/rdma-$nc-$unit.dat" ] && [ "$(tail -n1 "$out/rdma-$nc-$unit.dat" | cut -d' ' -f1)" = "$n" ] \
        || echo "$n $exp $aw $ar $ac" >> "$out/rdma-$nc-$unit.dat"
}

# Where both sides' links bind (as many server hosts as client hosts),
# iperf3 all-to-all on those links, both ways, against the expected
rdma_all_to_all() {
    local nc w r exp
    for nc in 2 4; do
        [ -z "${LAB_RDMA_ROWS:-}" ] || [[ " $LAB_RDMA_ROWS " == *" $nc:$nc:"* ]] || continue
        w=$(iperf3_all_mbs "${clients[*]:0:$nc}" "${servs[*]:0:$nc}")
        r=$(iperf3_all_mbs "${clients[*]:0:$nc}" "${servs[*]:0:$nc}" -R)
        exp=$(awk -v k="$nc" -v l="$link_w" 'BEGIN { printf "%.1f", k * l }')
        row ""
        row "$(printf 'iperf3 all-to-all, %d client hosts to %d server hosts, a stream per pair at once: write %.1f MB/s (%s of the expected %s), read (-R) %.1f MB/s (%s)' \
            "$nc" "$nc" "$w" "$(ratio "$w" "$exp")" "$exp" "$r" "$(ratio "$r" "$exp")")"
    done
}

bench_rdma() {
    local nc n unit hint ranks
    rates "$rate" "${clients[@]}" "${servs[@]}"
    [ -n "${link_w:-}" ] || link_w=$(iperf3_mbs "${clients[0]}" "${servs[0]}")
    [ -n "$link_w" ] || { echo "bench-lab: iperf3 gave no result" >&2; exit 1; }
    link_w=$(printf '%.1f' "$link_w")
    heading "rdma: aggregate, ranks spread over the client hosts (64 MiB each in 4 MiB calls), against min(N, client hosts) x the link's iperf3 write ($link_w MB/s at $rate)"
    row "| client hosts | ranks | servers N | unit | hint | expected MB/s | write MB/s | ratio | read MB/s | ratio | CPU | drops out of / into clients, into servers | bound (expected) |"
    row "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    rm -f "$out"/rdma-*.dat
    for nc in 2 4; do
        for n in 1 2 4 8; do
            for unit in 1048576 65536; do
                [ -z "${LAB_RDMA_ROWS:-}" ] || [[ " $LAB_RDMA_ROWS " == *" $nc:$n:$unit "* ]] \
                    || continue
                for ranks in $rdma_ranks; do
                    for hint in ${LAB_RDMA_HINTS:-default}; do
                        rdma_row "$nc" "$ranks" "$n" "$unit" "$hint"
                    done
                done
            done
        done
    done
    row ""
    row "drops: packets the links' tbf queues dropped during the row's $reps passes of writes and reads:"
    row "the client hosts' own ends (their sends, the writes' data), the head's ends toward the client"
    row "hosts (the reads' data, incast) and toward the server hosts."
    rdma_all_to_all

    gnuplot << EOF || { echo "bench-lab: gnuplot failed" >&2; exit 1; }
set terminal pngcairo size 900,560 noenhanced
set output "$out/bench-lab.png"
set title "rdma: aggregate over N server hosts, ${rdma_ranks%% *} ranks, links $rate (iperf3 $link_w MB/s per link)"
set xlabel "server hosts N"
set ylabel "MB/s"
set logscale x 2
set xrange [0.9:9]
set xtics (1, 2, 4, 8)
set key top left
set grid
plot for [c in "2 4"] sprintf("$out/rdma-%s-1048576.dat", c) using 1:2 with linespoints \
         dt 2 pt 1 lc int(c) title sprintf("expected, %s client hosts", c), \
     for [c in "2 4"] sprintf("$out/rdma-%s-1048576.dat", c) using 1:3 with linespoints \
         pt 7 lc int(c) title sprintf("write, %s client hosts, 1 MiB unit", c), \
     for [c in "2 4"] sprintf("$out/rdma-%s-1048576.dat", c) using 1:4 with linespoints \
         dt 3 pt 6 lc int(c) title sprintf("read, %s client hosts, 1 MiB unit", c), \
     for [c in "2 4"] sprintf("$out/rdma-%s-65536.dat", c) using 1:3 with linespoints \
         dt 4 pt 5 lc int(c) title sprintf("write, %s client hosts, 64 KiB unit", c)
EOF
}

# coll_once HOSTS PPN PATTERN... MODE: "write-s read-s client-links-MB" of
# one pass of coll_bench (rdma: over the first 4 server hosts)
coll_once() {
    local hosts=$1 ppn=$2 mode=${!#} b0
    set -- "${@:3:$#-3}"
    b0=$(lab_link_bytes "${clients[@]}")
    env ROMIO_RDMA_SERVERS="$(echo "$srv" | cut -d, -f1-4)" ROMIO_HINTS="$work/coll-hints" \
        "$LAB_MPIEXEC" -hosts "$hosts" -ppn "$ppn" -n 4 "$work/coll_bench" rdma:/coll "$@" "$mode" 1 \
        > "$work/res" 2> "$work/err" || { cat "$work/res" "$work/err" >&2; return 1; }
    awk -v mb="$(( $(lab_link_bytes "${clients[@]}") - b0 ))" '$1 == "write" { w = $2 }
        $1 == "read" { r = $2 } END { printf "%s %s %.1f\n", w, r, mb / 1e6 }' "$work/res"
}

bench_coll() {
    local nc hosts pat mb dw dr dm tw tr tm
    rates "$rate" "${clients[@]}" "${servs[@]:0:4}"
    printf 'striping_unit 65536\nstriping_factor 4\n' > "$work/coll-hints"
    heading "collective: seed 003's patterns (coll_bench.c), rdma: over 4 server hosts (unit 64 KiB), 4 ranks, links $rate, disk-directed (dd) against two-phase (2p), medians of $reps alternated runs"
    row "| client hosts | pattern | MB | write s dd / 2p | write MB/s dd / 2p | write 2p/dd | read s dd / 2p | read MB/s dd / 2p | read 2p/dd | client links MB dd / 2p |"
    row "|---|---|---|---|---|---|---|---|---|---|"
    for nc in 2 4; do
        hosts=$(echo "${clients[@]:0:$nc}" | tr ' ' ,)
        for pat in "block3d 192" "cyclic2d 2048 8" "cyclic2d 2048 64" "cyclic2d 2048 256"; do
            # shellcheck disable=SC2086  # the pattern's words are coll_bench's arguments
            set -- $pat
            if [ "$1" = block3d ]; then mb=$(awk -v n="$2" 'BEGIN { printf "%.1f", n * n * n * 4 / 1e6 }')
            else mb=$(awk -v n="$2" 'BEGIN { printf "%.1f", n * n * 4 / 1e6 }'); fi
            alternated "coll $nc $pat" "$work/coll" "dd 2p" coll_once "$hosts" $((4 / nc)) "$@" \
                || exit 1
            read -r dw dr dm <<< "$(medians "$work/coll-dd")"
            read -r tw tr tm <<< "$(medians "$work/coll-2p")"
            row "$(awk -v nc="$nc" -v p="$pat" -v mb="$mb" -v dw="$dw" -v dr="$dr" -v dm="$dm" \
                -v tw="$tw" -v tr="$tr" -v tm="$tm" 'BEGIN {
                printf "| %d | %s | %s | %.3f / %.3f | %.1f / %.1f | %.2f | %.3f / %.3f | %.1f / %.1f | %.2f | %.1f / %.1f |",
                    nc, p, mb, dw, tw, mb / dw, mb / tw, tw / dw, dr, tr, mb / dr, mb / tr, tr / dr, dm, tm }')"
        done
    done
    row ""
    row "s: the slowest rank's time of the collective call; 2p/dd: two-phase's time over disk-directed's"
    row "(above 1: disk-directed faster); client links MB: bytes that crossed the client hosts' links in"
    row "one run (write and read, both ways: the data, and for two-phase also its exchange between hosts)."
}

# abt_once FILE COMPUTE_S SNAPSHOTS N [-c] HINTS...: "visible-MB/s compute-s
# close-s closed-MB/s sweeps drain-cpu-s buffered-MB through-MB leases" of
# abt_bench (with ABT_LIB set, lib_bench -l $ABT_LIB: the same writer
# through HDF5 or PnetCDF), 4 ranks on client hosts 0 and 1; the last
# four, all ranks' CPU time of abt's drain threads, the bytes abt
# buffered and wrote through and the leases it took, only with ABT_STATS
# set (the statistics are printed inside the close, which some tables
# count)
abt_once() {
    local file=$1 compute=$2 snaps=$3 n=$4 prog=("$work/abt_bench")
    shift 4
    [ -z "${ABT_LIB:-}" ] || prog=("$work/lib_bench" -l "$ABT_LIB")
    [ "${1:-}" != -c ] || { prog+=(-c); shift; }
    env ${ABT_STATS:+ROMIO_ABT_STATS=1} "$LAB_MPIEXEC" -hosts "${clients[0]},${clients[1]}" \
        -ppn 2 -n 4 "${prog[@]}" "$file" "$compute" "$snaps" "$n" \
        cb_config_list='*:*' cb_nodes=4 "$@" > "$work/res" 2> "$work/err" \
        || { cat "$work/res" "$work/err" >&2; return 1; }
    awk '$1 == "visible_MBps" { r = $2 " " $10 " " $6 " " $14 " " $16 }
         /^abt stats:/ { for (i = 4; i <= NF; i++) {
                             if ($(i - 3) == "thread" && $(i - 2) == "CPU") cpu += $(i - 1)
                             if ($i ~ /^buffered,?$/ && $(i - 1) == "MB") buf += $(i - 2)
                             if ($i == "through),") through += substr($(i - 3), 2)
                             if ($i == "leases,") leases += $(i - 1) } }
         END { printf "%s %.3f %.1f %.1f %d\n", r, cpu, buf, through, leases }' \
        "$work/res" "$work/err"
}

# slowdown RUNS BASE: the median over the passes of the computation time of
# RUNS's run against BASE's in the same pass (files of abt_once's lines, a
# pass a line), as a ratio
slowdown() {
    paste -d' ' <(cut -d' ' -f2 "$1") <(cut -d' ' -f2 "$2") | awk '{ print $1 / $2 }' | median
}

# abt_row CELLS STEM C BASE GOAL: a row of the abt tables, CELLS its first
# cells, from the runs of STEM-C against PEAK's in STEM-peak: visible MB/s,
# its share of PEAK's, compute s, slowdown against STEM-BASE ("-" for BASE
# itself), drain thread CPU (its share of the cores' time in the
# computation phases), final close s
abt_row() {
    local cells=$1 stem=$2 c=$3 base=$4 goal=$5 v k cl dc slow=""
    read -r v k cl _ _ dc _ <<< "$(medians "$stem-$c")"
    [ "$c" = "$base" ] || slow=$(slowdown "$stem-$c" "$stem-$base")
    row "$(awk -v cells="$cells" -v v="$v" -v k="$k" -v cl="$cl" -v dc="$dc" -v slow="$slow" \
        -v pv="$(medians "$stem-peak" | cut -d' ' -f1)" -v cores="$(nproc)" -v snaps="$abt_snaps" \
        -v goal="$goal" 'BEGIN {
        printf "| %s | %.1f | %.0f%% | %.3f | %s | %s | %.3f | %s |", cells, v, 100 * v / pv, k,
            (slow == "" ? "-" : sprintf("%+.1f%%", 100 * (slow - 1))),
            (dc > 0 ? sprintf("%.3f s, %.2f%%", dc, 100 * dc / (snaps * k * cores)) : "-"), cl, goal }')"
}

# bench-abt's writer in the lab (parts abt and abtlib): 4 ranks, 5
# snapshots of their 64^3 blocks of doubles (8 MB), abt's buffers twice a
# rank's share; rfsd on server host 0 behind a link at abt_rate
abt_rate=${LAB_ABT_RATE:-160mbit}
abt_snaps=5
abt_share=$((8 * 64 * 64 * 64))
abt_large="abt_max_memory=$((2 * abt_share)) abt_buffer_size=$((abt_share / 4))"
abt_srv="rfs:${srv%%,*}:"

# abt_setup: the paper's setting, for abt and abtlib: the client hosts'
# interconnect fast (two-phase's exchange, PEAK's only traffic), the link
# to the file server slow. Measured once for both parts: the link's iperf3
# MB/s (abt_lw) and the sweeps of 1.0 s of computation (abt_sweeps), which
# every run of either part computes.
abt_setup() {
    rates none "${clients[0]}" "${clients[1]}"
    rates "$abt_rate" "${servs[0]}"
    mkdir -p "$work/peak"
    [ -z "${abt_sweeps:-}" ] || return 0
    abt_lw=$(printf '%.1f' "$(iperf3_mbs "${clients[0]}" "${servs[0]}")")
    # unrecorded: the calibration also writes into memory the VM has not
    # used lately (bench_abt's warm-up below)
    abt_sweeps=$(logged "abt calibration" abt_once "ufs:$work/peak/cal" 1.0 1 64) || exit 1
    abt_sweeps=$(echo "$abt_sweeps" | cut -d' ' -f5)
    rm -f "$work"/peak/*
}

bench_abt() {
    local r c cfg file pat args col
    abt_setup
    heading "abt:rfs: periodic output (bench-abt's writer: 4 ranks on client hosts 0 and 1, $abt_snaps snapshots of 8 MB, 1.0 s computation: $abt_sweeps sweeps in every run), rfsd on server host 0 behind a $abt_rate link (iperf3 $abt_lw MB/s), client hosts' links unshaped, medians of $reps alternated runs"
    row "| config | visible MB/s | of PEAK | compute s | slowdown | drain thread CPU | final close s | goal |"
    row "|---|---|---|---|---|---|---|---|"
    for c in peak rfs abt; do : > "$work/abt-$c"; done
    for r in $(seq 1 "$reps"); do
        for c in peak rfs abt; do
            case $c in
                peak) file="ufs:$work/peak/p$r" cfg="" ;;
                rfs) file="$abt_srv/abt-rfs$r" cfg="" ;;
                abt) file="abt:$abt_srv/abt-abt$r" cfg=$abt_large ;;
            esac
            # shellcheck disable=SC2086
            ABT_STATS=1 logged "abt $abt_rate $c" abt_once "$file" "@$abt_sweeps" "$abt_snaps" 64 \
                $cfg >> "$work/abt-$c" || exit 1
            rm -f "$work"/peak/* "$work"/srv0-root/abt-*
        done
    done
    for c in peak rfs abt; do
        case $c in
            peak) cfg="PEAK (ufs: on the client hosts' tmpfs)" ;;
            rfs) cfg="rfs: alone" ;;
            abt) cfg="abt:rfs:, buffers 4 MiB per rank (twice its share)" ;;
        esac
        abt_row "$cfg" "$work/abt" $c peak "$([ $c = abt ] && echo '>= 95%, <= 3%' || echo -)"
    done
    row ""
    row "visible MB/s: snapshot bytes over the time inside MPI_File_write_all (slowest rank per call);"
    row "compute s: the mean computation phase; slowdown: against PEAK's in the same pass, the median"
    row "over the passes; drain thread CPU: abt's drain threads' CPU time in a run (all ranks, from"
    row "ROMIO_ABT_STATS) and its share of the cores' time in the computation phases, what abt can take"
    row "from them; final close: the drain of what abt still holds."

    rates none "${servs[0]}"
    heading "abt:rfs: against rfs: over unshaped links (4 ranks on client hosts 0 and 1, rfsd on server host 0, default abt hints), medians of $reps alternated runs"
    row "| pattern | rfs: MB/s | abt:rfs: MB/s | ratio | goal |"
    row "|---|---|---|---|---|"
    for pat in periodic contig; do
        : > "$work/abt-x"
        : > "$work/abt-ax"
        # periodic: visible MB/s after 0.2 s computations; contig: IOR's
        # contiguous pattern (1.5 GB: runs of a second or two), MB/s with the final close
        if [ $pat = periodic ]; then args="0.2 5 64" col=1; else args="0 24 128 -c" col=4; fi
        # Each run's file goes before the next run, and one run unrecorded
        # comes first: on this VM a write into memory the guest has not used
        # lately runs at 0.4-0.5 GB/s (dd into tmpfs: 2.9 GB/s into memory
        # just freed, 0.4 beside a file of 1.5 GB), so the second run of a
        # pair whose first file was kept, and the first run of a set, wrote
        # at that pace: 0.18-0.36 for abt:rfs: second, 0.15-0.35 for rfs:
        # second when the order was swapped.
        # shellcheck disable=SC2086
        logged "abt none $pat warm-up" abt_once "$abt_srv/warm" $args > /dev/null || exit 1
        rm -f "$work"/srv0-root/warm
        for r in $(seq 1 "$reps"); do
            # shellcheck disable=SC2086
            logged "abt none $pat rfs" abt_once "$abt_srv/x$r" $args >> "$work/abt-x" || exit 1
            rm -f "$work"/srv0-root/x$r
            # shellcheck disable=SC2086
            logged "abt none $pat abt" abt_once "abt:$abt_srv/ax$r" $args >> "$work/abt-ax" || exit 1
            rm -f "$work"/srv0-root/ax$r
        done
        row "$(awk -v p="$pat" -v x="$(cut -d' ' -f"$col" "$work/abt-x" | median)" \
            -v a="$(cut -d' ' -f"$col" "$work/abt-ax" | median)" 'BEGIN {
            printf "| %s | %.1f | %.1f | %.2f | >= 0.9 |", p, x, a, a / x }')"
    done
    row ""
    row "periodic: visible MB/s of 5 snapshots of 8 MB after 0.2 s computations; contig: IOR's contiguous"
    row "pattern (each rank its 16 MiB block of each of 24 snapshots in 1 MiB independent writes), MB/s"
    row "with the final close counted."
    rates "$rate" "${clients[0]}" "${clients[1]}" "${servs[0]}"
}

# abtlib_once LIB MODE: abt_once's line of one run: PEAK (abt_bench into
# ufs: on tmpfs, bench_abt's PEAK: the bytes LIB writes), LIB over rfs:
# alone, or LIB over abt:rfs: with bench_abt's abt hints and no more: the
# file is opened read-write, abt_buffer_rdwr's default decides
abtlib_once() {
    local file lib=$1 hints=""
    case $2 in
        peak) file="ufs:$work/peak/p" lib="" ;;
        rfs) file="$abt_srv/lib-rfs" ;;
        abt) file="abt:$abt_srv/lib-abt" hints=$abt_large ;;
    esac
    # shellcheck disable=SC2086  # the hints are words of their own
    ABT_STATS=1 ABT_LIB=$lib abt_once "$file" "@$abt_sweeps" "$abt_snaps" 64 $hints || return 1
    rm -f "$work"/peak/* "$work"/srv0-root/lib-*
}

# HDF5 and PnetCDF writing bench-abt's periodic output in bench_abt's setting
bench_abtlib() {
    local lib c cfg line through=()
    abt_setup
    heading "HDF5 and PnetCDF periodic output over abt:rfs: (bench-abt's writer, lib_bench.c: 4 ranks on client hosts 0 and 1, $abt_snaps snapshots of 8 MB written through the library into a file it opens read-write, $abt_sweeps sweeps of computation in every run), rfsd on server host 0 behind a $abt_rate link (iperf3 $abt_lw MB/s), client hosts' links unshaped, medians of $reps alternated runs"
    row "| library | path | visible MB/s | of PEAK | compute s | slowdown | drain thread CPU | close s | goal |"
    row "|---|---|---|---|---|---|---|---|---|"
    for lib in hdf5 pnetcdf; do
        alternated "abtlib $abt_rate $lib" "$work/abtlib-$lib" "peak rfs abt" abtlib_once "$lib" \
            || exit 1
        for c in peak rfs abt; do
            case $c in
                peak) cfg="PEAK (abt_bench, ufs: on the client hosts' tmpfs)" ;;
                rfs) cfg="rfs: alone" ;;
                abt) cfg="abt:rfs:, buffers 4 MiB per rank" ;;
            esac
            abt_row "$lib | $cfg" "$work/abtlib-$lib" $c rfs \
                "$([ $c = abt ] && echo '>= 90%, <= 5%' || echo -)"
        done
        through+=("$lib $(medians "$work/abtlib-$lib-abt" | cut -d' ' -f7-9)")
    done
    row ""
    for line in "${through[@]}"; do
        # shellcheck disable=SC2086  # library, buffered MB, through MB, leases
        row "$(printf 'abt:rfs: under %s: abt buffered %s MB and wrote %s MB through in a run, taking %s leases (all ranks, medians, from ROMIO_ABT_STATS; a file abt does not buffer counts in neither).' $line)"
    done
    row ""
    row "visible MB/s: snapshot bytes over the time inside the library's calls for a snapshot (HDF5:"
    row "its dataset's H5Dcreate, collective H5Dwrite and H5Dclose; PnetCDF: ncmpi_put_vara_all of"
    row "its record), the slowest rank per snapshot; PEAK: bench_abt's, abt_bench's MPI_File_write_all"
    row "of the same 8 MB per snapshot with no server link; compute s: the mean computation phase;"
    row "slowdown: against rfs: alone's in the same pass, the median over the passes; drain thread CPU"
    row "as in the abt table; close s: H5Fclose or ncmpi_close, with the drain of what abt still holds."
}

# interleave_once SEG LAYOUT MODE: "write-MiB/s read-MiB/s" of 64 segments
# of SEG bytes per rank, 2 ranks on client hosts 0 and 1
interleave_once() {
    local seg=$1 layout=$2 mode=$3 name=rdma:/interleaved access=coll hints
    case $mode in
    dd) hints="rdma_coll=disk_directed rdma_io_method=datatype" ;;
    2p) hints="rdma_coll=two_phase rdma_io_method=datatype" ;;
    indep) access=indep hints="rdma_io_method=datatype" ;;
    rfs) name=rfs:$rfs_at:/interleaved hints="" ;;
    esac
    # shellcheck disable=SC2086  # the hints are words of their own
    env ROMIO_RDMA_SERVERS="$(echo "$srv" | cut -d, -f1-4)" ROMIO_HINTS="$work/il-hints" \
        "$LAB_MPIEXEC" -hosts "${clients[0]},${clients[1]}" -ppn 1 -n 2 "$work/interleave_bench" \
        "$name" "$seg" 64 "$layout" "$access" 1 $hints > "$work/res" 2> "$work/err" \
        || { cat "$work/res" "$work/err" >&2; return 1; }
    awk -v mib="$((seg * 64 * 2))" '$1 == "write" { w = $2 } $1 == "read" { r = $2 }
        END { printf "%.1f %.1f\n", mib / w / 1048576, mib / r / 1048576 }' "$work/res"
}

bench_interleave() {
    local seg layout mode rfs_at
    declare -A w rd
    rates "$rate" "${clients[0]}" "${clients[1]}" "${servs[@]:0:4}"
    printf 'striping_unit 65536\nstriping_factor 4\n' > "$work/il-hints"
    lab_start_rfsd 0 "$work" il-rfs || exit 1
    rfs_at=$LAB_RFSD_ADDR:$RFSD_PORT
    heading "interleaved segments (issue 21): 2 ranks on 2 client hosts, 64 segments of SEG bytes each, segment i of rank r at (2i + r) SEG, written collectively and read back by the neighbour; a call per segment (seg) or one through a vector view (view); rdma: over 4 server hosts (unit 64 KiB) against rfs: on server host 0, links $rate, medians of $reps alternated runs"
    row "| SEG | layout | read MiB/s dd / 2p / indep / rfs: | write MiB/s dd / 2p / indep / rfs: | read dd/rfs: | read dd/2p | read dd/indep |"
    row "|---|---|---|---|---|---|---|"
    for seg in 4096 65536 1048576; do
        for layout in seg view; do
            alternated "interleave $seg $layout" "$work/il" "dd 2p indep rfs" interleave_once \
                "$seg" "$layout" || exit 1
            for mode in dd 2p indep rfs; do
                read -r "w[$mode]" "rd[$mode]" <<< "$(medians "$work/il-$mode")"
            done
            row "$(printf '| %s | %s | %s / %s / %s / %s | %s / %s / %s / %s | %s | %s | %s |' \
                "$((seg / 1024)) KiB" "$layout" "${rd[dd]}" "${rd[2p]}" "${rd[indep]}" "${rd[rfs]}" \
                "${w[dd]}" "${w[2p]}" "${w[indep]}" "${w[rfs]}" "$(ratio "${rd[dd]}" "${rd[rfs]}")" \
                "$(ratio "${rd[dd]}" "${rd[2p]}")" "$(ratio "${rd[dd]}" "${rd[indep]}")")"
        done
    done
    row ""
    row "Goal (issue 21): disk-directed reads >= 0.8 x rfs:, >= two-phase, >= 0.5 x independent."
}

# replicas_once N: "write read cpu client-link-MB" of one pass of rfs_bench,
# 4 ranks on client host 0 (32 MiB each in 4 MiB calls), rdma: over the
# first 4 server hosts with rdma_replicas=N (a file of its own: the count is
# the file's); client-link-MB: what crossed client host 0's link, both ways
replicas_once() {
    local b0 res
    printf 'striping_unit 1048576\nstriping_factor 4\nrdma_replicas %s\n' "$1" \
        > "$work/rep-hints-$1"
    b0=$(lab_link_bytes "${clients[0]}")
    res=$(passes=1 bench "rdma:/rep-$1" "${clients[0]}" 4 4 $((32 << 20)) $((4 << 20)) \
        ROMIO_RDMA_SERVERS="$(echo "$srv" | cut -d, -f1-4)" ROMIO_HINTS="$work/rep-hints-$1") \
        || return 1
    echo "$res $(( ($(lab_link_bytes "${clients[0]}") - b0) / 1000000 ))"
}

bench_replicas() {
    local w1 r1 c1 m1 w2 r2 c2 m2 left
    rates "$rate" "${clients[0]}" "${servs[@]:0:4}"
    [ -n "${link_w:-}" ] || link_w=$(iperf3_mbs "${clients[0]}" "${servs[0]}")
    [ -n "$link_w" ] || { echo "bench-lab: iperf3 gave no result" >&2; exit 1; }
    link_w=$(printf '%.1f' "$link_w")
    heading "replicas (issue 34): 4 ranks on client host 0, rdma: over 4 server hosts (unit 1 MiB), 128 MiB written then read with rdma_replicas=1 and 2, links $rate (iperf3 $link_w MB/s from client host 0), medians of $reps alternated runs"
    alternated "replicas" "$work/rep" "1 2" replicas_once || exit 1
    read -r w1 r1 c1 m1 <<< "$(medians "$work/rep-1")"
    read -r w2 r2 c2 m2 <<< "$(medians "$work/rep-2")"
    row "| iperf3 / 2 MB/s | write MB/s 1 / 2 replicas | write(2) / (iperf3 / 2) | read MB/s 1 / 2 replicas | read(2) / read(1) | client link MB 1 / 2 | CPU 1 / 2 | goal |"
    row "|---|---|---|---|---|---|---|---|"
    row "$(awk -v l="$link_w" -v w1="$w1" -v w2="$w2" -v r1="$r1" -v r2="$r2" -v c1="$c1" -v c2="$c2" \
        -v m1="$m1" -v m2="$m2" 'BEGIN {
        printf "| %.1f | %.1f / %.1f | %.2f | %.1f / %.1f | %.2f | %s / %s | %s%% / %s%% | >= 0.9, >= 1 |",
            l / 2, w1, w2, w2 / (l / 2), r1, r2, r2 / r1, m1, m2, c1, c2 }')"
    row ""
    row "With 2 replicas the client sends both copies: its link carries twice the bytes of a write,"
    row "which binds at half its iperf3 rate; a read fetches one copy, so the client link binds both"
    row "counts alike. Client link MB: what crossed client host 0's link in a run (128 MiB written"
    row "and read: about 268 MB with 1 replica, 402 with 2)."
    # rfs_bench deletes its file: every object and copy must go with it
    left=$(find "$work"/srv[0-3]-root -name '*rep-[12]*' | wc -l)
    if [ "$left" -gt 0 ]; then
        row ""
        row "Left on the servers after MPI_File_delete: $left files named after rep-1 or rep-2."
        find "$work"/srv[0-3]-root -name '*rep-[12]*' -delete
    fi
}

# mount_once MODE: "write read" MB/s of one process on client host 0
# moving 128 MiB in 4 MiB calls, rdma: over the first 4 server hosts (unit
# 1 MiB): by the driver (rfs_bench, 1 rank) or by dd through rfs-mount (the
# read back is a new open: no page of the file is cached)
mount_once() {
    if [ "$1" = driver ]; then
        passes=1 bench "rdma:/mnt-driver" "${clients[0]}" 1 1 $((128 << 20)) $((4 << 20)) \
            ROMIO_RDMA_SERVERS="$(echo "$srv" | cut -d, -f1-4)" \
            ROMIO_HINTS="$work/mnt-hints" | cut -d' ' -f1,2
        return
    fi
    local dd_mbs='/ copied, / { printf "%.1f", $1 / $(NF - 3) / 1e6 }' w r
    w=$(LC_ALL=C dd if=/dev/zero of="$work/mnt/f" bs=4M count=32 2>&1 | awk "$dd_mbs") &&
        r=$(LC_ALL=C dd if="$work/mnt/f" of=/dev/null bs=4M 2>&1 | awk "$dd_mbs") &&
        rm "$work/mnt/f" || return 1
    echo "$w $r"
}

bench_mount() {
    local wd rd wm rm_
    rates "$rate" "${clients[0]}" "${servs[@]:0:4}"
    [ -n "${link_w:-}" ] || link_w=$(iperf3_mbs "${clients[0]}" "${servs[0]}")
    link_w=$(printf '%.1f' "$link_w")
    printf 'striping_unit 1048576\nstriping_factor 4\n' > "$work/mnt-hints"
    # rfs-mount in client host 0's network only: its mount is this host's
    printf '#!/bin/sh\nexec nsenter --net=/run/netns/%s "%s" "$@"\n' "$(lab_ns "${clients[0]}")" \
        "$PREFIX/bin/rfs-mount" > "$work/rfs-mount-client0"
    chmod +x "$work/rfs-mount-client0"
    RFS_MOUNT=$work/rfs-mount-client0 start_mount rdma:/ "$work" mnt "$work/mnt" \
        --servers="$(echo "$srv" | cut -d, -f1-4)" -o striping_unit=1048576,striping_factor=4 \
        || exit 1
    heading "rfs-mount (issue 36): one process on client host 0, 128 MiB in 4 MiB calls, rdma: over 4 server hosts (unit 1 MiB): the driver (rfs_bench) against dd through rfs-mount, links $rate (iperf3 $link_w MB/s), medians of $reps alternated runs"
    alternated "mount" "$work/mnt-run" "driver mount" mount_once || exit 1
    read -r wd rd <<< "$(medians "$work/mnt-run-driver")"
    read -r wm rm_ <<< "$(medians "$work/mnt-run-mount")"
    row "| iperf3 MB/s | write MB/s driver / mount | mount / driver | read MB/s driver / mount | mount / driver | goal |"
    row "|---|---|---|---|---|---|"
    row "$(printf '| %s | %s / %s | %s | %s / %s | %s | >= 0.8 |' "$link_w" "$wd" "$wm" \
        "$(ratio "$wm" "$wd")" "$rd" "$rm_" "$(ratio "$rm_" "$rd")")"
    stop_mounts
}

: > "$out/runs.log"
! part tls || bench_tls
! part rdma || bench_rdma
! part coll || bench_coll
! part abt || bench_abt
! part abtlib || bench_abtlib
! part interleave || bench_interleave
! part replicas || bench_replicas
! part mount || bench_mount
stop_all_rfsd
echo "bench-lab: $out/bench-lab.md${LAB_PARTS:+ (parts: $LAB_PARTS)}, $out/bench-lab.png, $out/runs.log"
