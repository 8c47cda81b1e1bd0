#!/usr/bin/env bash
# make bench-rdma: the datatype I/O paper's patterns on rdma: striped over
# 4 rfsd servers on loopback (stripe unit 64 KiB), by each noncontiguous
# method: naive (one request per contiguous piece), ROMIO's data sieving,
# list I/O and datatype I/O; the same patterns on ufs: in a local tmpfs
# file are the baseline of this run. Seconds are medians of REPS passes
# (write includes MPI_File_sync); requests are the data requests per MPI
# call of one client (ROMIO_RDMA_STATS), next to what Table I of the paper
# predicts for this layout (nc_bench's "predict" line); bytes are what
# crossed the connections per pass, headers included, all clients.
#   rdma.sh REPO [NP] [REPS] [SERVERS]
set -eu
repo=$1
np=${2:-4}
reps=${3:-5}
nserv=${4:-4}
PREFIX=$repo/build/install
. "$repo/test/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/rdma-bench.XXXXXX")
rootbase=/dev/shm
[ -d "$rootbase" ] && [ -w "$rootbase" ] || rootbase=$work
roots=$(mktemp -d "$rootbase/rdma-bench.XXXXXX")
trap 'stop_all_rfsd; rm -rf "$work" "$roots"' EXIT

"$PREFIX/bin/mpicc" -O2 -D_GNU_SOURCE -std=c11 -I"$repo/adio" -I"$repo/common" -o "$work/nc_bench" \
    "$repo/test/bench/nc_bench.c" "$repo"/adio/dtype/dtype{,_iter,_wire}.c "$repo/common/dtype_mpi.c" \
    "$repo/adio/stripe/stripe.c"
start_rdma_servers "$nserv" "$roots" srv
export ROMIO_RDMA_SERVERS=$RDMA_SERVERS
mpiexec="$PREFIX/bin/mpiexec $MPIEXEC_FLAGS -n $np"

# run NAME PATTERN N HINTS...: "write read requests/call bytes/pass predict..."
run() {
    local name=$1 pattern=$2 n=$3
    shift 3
    ROMIO_RDMA_STATS=1 $mpiexec "$work/nc_bench" "$name" "$pattern" "$n" "$reps" "$@" \
        > "$work/out" 2> "$work/err" || { cat "$work/out" "$work/err" >&2; exit 1; }
    awk -v reps="$reps" -v np="$np" '
        FNR == NR && $1 == "write" { w = $2 } FNR == NR && $1 == "read" { r = $2 }
        FNR == NR && $1 == "predict" { p = $3 " " $5 " " $7 " " $9 }
        FNR != NR && match($0, /data requests [0-9]+/) { q += substr($0, RSTART + 14, RLENGTH - 14) }
        FNR != NR && match($0, /requests, [0-9]+ bytes sent, [0-9]+ received/) {
            split(substr($0, RSTART, RLENGTH), f, " "); b += f[2] + f[5] }
        END { printf "%s %s %.1f %.0f %s\n", w, r, q / (2 * reps * np), b / reps, p }' \
        "$work/out" "$work/err"
}

echo "rdma: noncontiguous methods, $np processes, $nserv servers, unit 64 KiB," \
     "independent I/O, median of $reps passes"
printf '%-16s %-9s %9s %9s %11s %10s %13s %13s\n' pattern method "write s" "read s" \
    "req/call" predicted "MB on wire" "s vs dtype"
for spec in "tile2d 2048" "block3d 128" "flash 80"; do
    set -- $spec
    pattern=$1 n=$2
    declare -A res=()
    for m in naive sieve list datatype; do
        extra=""
        [ $m = sieve ] && extra="romio_ds_read=enable romio_ds_write=enable"
        # shellcheck disable=SC2086
        res[$m]=$(run "rdma:/nc-$pattern-$m" "$pattern" "$n" rdma_io_method=$m \
                      striping_unit=65536 $extra)
    done
    ufs=$(run "ufs:$roots/nc-$pattern-ufs" "$pattern" "$n")
    read -r dw dr _ <<< "${res[datatype]}"
    for m in naive sieve list datatype; do
        read -r w r q b pn pl pd ps <<< "${res[$m]}"
        case $m in naive) p=$pn ;; list) p=$pl ;; datatype) p=$pd ;; sieve) p=$ps ;; esac
        printf '%-16s %-9s %9.4f %9.4f %11s %10s %13.1f %6.2f/%5.2f\n' "$pattern $n" "$m" \
            "$w" "$r" "$q" "$p" "$(awk -v b="$b" 'BEGIN { print b / 1e6 }')" \
            "$(awk -v a="$w" -v b="$dw" 'BEGIN { print a / b }')" \
            "$(awk -v a="$r" -v b="$dr" 'BEGIN { print a / b }')"
    done
    read -r w r _ <<< "$ufs"
    printf '%-16s %-9s %9.4f %9.4f %11s %10s %13s %6.2f/%5.2f\n' "$pattern $n" "ufs tmpfs" \
        "$w" "$r" - - - "$(awk -v a="$w" -v b="$dw" 'BEGIN { print a / b }')" \
        "$(awk -v a="$r" -v b="$dr" 'BEGIN { print a / b }')"
    unset res
done
echo "req/call: data requests per MPI call of one client (sieve: the mean of the write and" \
     "the read call); predicted: Table I's count for this layout (sieve: ROMIO's 4 MiB read and" \
     "512 KiB read-modify-write buffers, each access one list access);" \
     "s vs dtype: seconds / datatype I/O's (write/read), above 1 is slower"
