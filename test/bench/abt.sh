#!/usr/bin/env bash
# make bench-abt: the RFS paper's ABT experiment on loopback. A periodic-
# output program (abt_bench.c: 3-D Jacobi blocks, a computation phase, a
# collective write of the snapshot) against rfsd limited to a slow link
# (--rate-limit), for PEAK (testfs:, the data only crosses the local
# interconnect, as the paper's peak), rfs: alone, and abt:rfs: with large
# buffers and long computation, large buffers and short computation
# (background staging), small buffers (foreground staging). Then the
# other side (issue 16): abt:X against X alone where X drains as fast as
# abt can copy (rfs: on loopback without a rate limit, ufs:), the periodic
# writer and IOR's contiguous pattern (abt_bench -c), X and abt:X runs
# alternated, default abt hints; goal abt:X >= 0.9 of X. Figures are
# medians of REPS runs of each configuration, all in this run.
#   abt.sh REPO [NP] [REPS] [LINK_MB_S]
set -eu
repo=$1
np=${2:-4}
reps=${3:-3}
link=${4:-20}
PREFIX=$repo/build/install
. "$repo/test/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/abt-bench.XXXXXX")
trap 'stop_all_rfsd; rm -rf "$work"' EXIT
mkdir -p "$work/stage"

"$PREFIX/bin/mpicc" -O2 -std=c11 -o "$work/abt_bench" "$repo/test/bench/abt_bench.c"
start_rfsd "$work/root" "$work" slow --rate-limit "$link"
srv="rfs:127.0.0.1:$RFSD_PORT:"
n=64 snapshots=5 long=1.0 short=0.2
# every process aggregates its share of the collective write
coll="cb_config_list=*:* cb_nodes=$np"
share=$(( 8 * n * n * n ))     # bytes of one process's block
large="abt_max_memory=$(( 2 * share )) abt_buffer_size=$(( share / 4 )) abt_stage_dir=$work/stage"
small="abt_max_memory=$(( share / 2 )) abt_buffer_size=$(( share / 8 )) abt_stage_dir=$work/stage"

# one NAME FILE COMPUTE HINTS...: "visible_MBps total_s close_s compute_s staged_fg_MB
# staged_bg_MB closed_MBps"
# ($pattern: abt_bench's pattern flag, empty for the collective snapshot)
# ($stats: empty to leave out abt's statistics, printed to stderr at
# close: pair() below counts the close, and the print is not abt's work)
pattern="" stats=1
one() {
    local file=$2 compute=$3
    shift 3
    env ${stats:+ROMIO_ABT_STATS=1} $PREFIX/bin/mpiexec $MPIEXEC_FLAGS -n "$np" \
        "$work/abt_bench" $pattern "$file" "$compute" "$snapshots" "$n" $coll "$@" \
        > "$work/out" 2> "$work/err" \
        || { tail -n 5 "$work/out" "$work/err" >&2; exit 1; }
    awk 'FNR == NR && $1 == "visible_MBps" { v = $2; t = $8; c = $6; k = $10; w = $14 }
         FNR != NR && /^abt stats:/ {
             for (i = 1; i <= NF; i++) {
                 if ($(i) == "foreground,") fg += $(i - 4)
                 if ($(i) == "background,") bg += $(i - 3)
             }
         }
         END { printf "%s %s %s %s %.1f %.1f %s\n", v, t, c, k, fg, bg, w }' "$work/out" "$work/err"
}

# run LABEL FILE COMPUTE HINTS...: median of each column over REPS runs
run() {
    local label=$1
    shift
    : > "$work/runs"
    for r in $(seq 1 "$reps"); do
        one "$label" "$1.$r" "${@:2}" >> "$work/runs"
    done
    local cols=""
    for c in 1 2 3 4 5 6; do
        cols="$cols $(cut -d' ' -f$c "$work/runs" | median)"
    done
    echo "$label$cols"
}

# sweeps SECONDS: "@K", the Jacobi sweeps that take SECONDS here, measured
# once: every run then does the same work, and the runs' computation times
# differ by what ran beside them, not by their own calibration as well
sweeps() {
    $PREFIX/bin/mpiexec $MPIEXEC_FLAGS -n "$np" "$work/abt_bench" "testfs:$work/cal" "$1" 1 "$n" \
        | awk '$1 == "visible_MBps" { print "@" $16 }'
}
long_k=$(sweeps "$long") short_k=$(sweeps "$short")

echo "ABT on loopback: $np processes, $snapshots snapshots of $(( np * share / 1000000 )) MB," \
     "rfsd link $link MB/s, median of $reps runs; computation $long s ($long_k sweeps) and" \
     "$short s ($short_k)"
{
    run PEAK "testfs:$work/peak" "$long_k"
    run PEAK-short "testfs:$work/peaks" "$short_k"
    run rfs "${srv}/rfs" "$long_k"
    run abt-large-long "abt:${srv}/all" "$long_k" $large
    run abt-large-short "abt:${srv}/als" "$short_k" $large
    run abt-small-long "abt:${srv}/asl" "$long_k" $small
} > "$work/table"
peak_v=$(awk '$1 == "PEAK" { print $2 }' "$work/table")
peak_c=$(awk '$1 == "PEAK" { print $5 }' "$work/table")
peak_sc=$(awk '$1 == "PEAK-short" { print $5 }' "$work/table")
printf '%-16s %12s %8s %9s %9s %10s %9s %11s %11s\n' config "visible MB/s" "of PEAK" "total s" \
    "close s" "compute s" slowdown "staged fg" "staged bg"
awk -v pv="$peak_v" -v pc="$peak_c" -v psc="$peak_sc" '{
    base = ($1 ~ /short/) ? psc : pc
    printf "%-16s %12.1f %7.1f%% %9.2f %9.3f %10.4f %8.1f%% %8.1f MB %8.1f MB\n",
           $1, $2, 100 * $2 / pv, $3, $4, $5, 100 * ($5 / base - 1), $6, $7 }' "$work/table"
echo "visible MB/s: snapshot bytes / time inside MPI_File_write_all (slowest process per call);"
echo "close s: the final MPI_File_close, which drains what abt still holds; slowdown: mean"
echo "computation phase against PEAK's with the same computation length (no I/O thread);"
echo "of PEAK: visible throughput / PEAK's (long computation); staged: MB put in the cache file by"
echo "the application (foreground) and by the drain thread (background), all processes."

# abt:X against X, each run of X followed by one of abt:X (the load of the
# machine drifts: neighbours share it). pair LABEL X COMPUTE COLUMN: medians
# of column COLUMN of one's output and their ratio
pair() {
    local label=$1 x=$2 compute=$3 col=$4
    : > "$work/x"
    : > "$work/ax"
    # unrecorded: the first run of a set writes into memory the VM has not
    # used lately, at a fraction of the pace (docs/performance.md)
    one x "$x/$label.warm" "$compute" > /dev/null
    rm -f "$work"/froot/* "$work"/ufs/*
    for r in $(seq 1 "$reps"); do
        one x "$x/$label.x" "$compute" | cut -d' ' -f"$col" >> "$work/x"
        rm -f "$work"/froot/* "$work"/ufs/*
        one ax "abt:$x/$label.ax" "$compute" | cut -d' ' -f"$col" >> "$work/ax"
        rm -f "$work"/froot/* "$work"/ufs/*
    done
    local vx vax
    vx=$(median < "$work/x")
    vax=$(median < "$work/ax")
    printf '%-22s %10.1f %10.1f %7.2f   %s | %s\n' "$label" "$vx" "$vax" \
        "$(awk -v a="$vax" -v b="$vx" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
        "$(tr '\n' ' ' < "$work/x")" "$(tr '\n' ' ' < "$work/ax")"
}

start_rfsd "$work/froot" "$work" fast
fsrv="rfs:127.0.0.1:$RFSD_PORT:"
mkdir -p "$work/ufs"
echo
echo "abt:X against X where X drains as fast as abt copies: $np processes, default abt hints," \
     "median of $reps alternated runs"
printf '%-22s %10s %10s %7s   %s\n' "pattern-X" "X MB/s" "abt:X MB/s" ratio "runs (X | abt:X)"
{
    snapshots=5 n=64 pattern="" stats=""
    pair periodic-rfs "$fsrv" "$short_k" 1
    pair periodic-ufs "ufs:$work/ufs" "$short_k" 1
    snapshots=20
    pair periodic20-rfs "$fsrv" "$short_k" 1
    snapshots=6 n=128 pattern=-c
    pair contig-rfs "$fsrv" 0 7
    pair contig-ufs "ufs:$work/ufs" 0 7
} | tee "$work/pairs"
awk '{ if ($4 < 0.9) missed = missed " " $1 } END {
    printf "goal abt:X >= 0.90 of X (ratio column): %s\n", missed == "" ? "met" : "missed by" missed }' \
    "$work/pairs"
echo "periodic: the snapshot collective as above, $short s computation, visible MB/s (5"
echo "snapshots; periodic20: 20, where abt's first collective write, buffered, weighs less); contig:"
echo "IOR's contiguous pattern (each process its block in 1 MiB independent writes, no"
echo "computation), MB/s with the close counted (IOR's open-to-close figure)."
