#!/usr/bin/env bash
# make bench-coll: seed 003's collective patterns on rdma: striped over
# SERVERS rfsd servers on loopback (stripe unit 64 KiB), NP processes:
# the 3-D block pattern (coll_perf's shape, N^3 ints) and a 2-D
# CYCLIC(k) x CYCLIC(k) pattern (N^2 ints, k = 8 ... 256), each by
# disk-directed collective I/O (dd), ROMIO's two-phase (2p) and
# independent datatype I/O (indep); and the 3-D read repeated with hot
# collective buffers (hot: the second read is timed). Seconds are medians
# of REPS passes of the slowest process; MB/s is the aggregate; server MB
# is what crossed the connections to the servers per pass (ROMIO_RDMA_STATS,
# headers included, all processes): two-phase moves the data between
# processes as well (over MPI), disk-directed and independent I/O do not.
#   coll.sh REPO [NP] [REPS] [SERVERS] [N3] [N2]
set -eu
repo=$1
np=${2:-4}
reps=${3:-3}
nserv=${4:-4}
n3=${5:-192}
n2=${6:-2048}
PREFIX=$repo/build/install
. "$repo/test/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/coll-bench.XXXXXX")
rootbase=/dev/shm
[ -d "$rootbase" ] && [ -w "$rootbase" ] || rootbase=$work
roots=$(mktemp -d "$rootbase/coll-bench.XXXXXX")
trap 'stop_all_rfsd; rm -rf "$work" "$roots"' EXIT

"$PREFIX/bin/mpicc" -O2 -std=c11 -o "$work/coll_bench" "$repo/test/bench/coll_bench.c"
start_rdma_servers "$nserv" "$roots" srv --coll-cache 1024
export ROMIO_RDMA_SERVERS=$RDMA_SERVERS
mpiexec="$PREFIX/bin/mpiexec $MPIEXEC_FLAGS -n $np"

# run MB ARGS...: "write-s read-s write-MB/s read-MB/s server-MB"
run() {
    local mb=$1
    shift
    ROMIO_RDMA_STATS=1 $mpiexec "$work/coll_bench" rdma:/bench "$@" > "$work/out" \
        2> "$work/err" || { cat "$work/out" "$work/err" >&2; exit 1; }
    awk -v reps="$reps" -v mb="$mb" '
        FNR == NR && $1 == "write" { w = $2 } FNR == NR && $1 == "read" { r = $2 }
        FNR != NR && match($0, /requests, [0-9]+ bytes sent, [0-9]+ received/) {
            split(substr($0, RSTART, RLENGTH), f, " "); b += f[2] + f[5] }
        END { printf "%s %s %.0f %.0f %.1f\n", w, r, mb / w, mb / r, b / reps / 1e6 }' \
        "$work/out" "$work/err"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "rdma: collective I/O, $np processes, $nserv servers, unit 64 KiB, median of $reps passes"
printf '%-18s %-6s %9s %9s %9s %9s %10s %8s %8s\n' pattern mode "write s" "read s" \
    "write MB/s" "read MB/s" "server MB" "w 2p/x" "r 2p/x"
row() {
    local name=$1 mb=$2
    shift 2
    local two out w r wm rm smb w2 r2
    two=$(run "$mb" "$@" 2p "$reps")
    for mode in dd 2p indep; do
        if [ "$mode" = 2p ]; then out=$two; else out=$(run "$mb" "$@" "$mode" "$reps"); fi
        read -r w r wm rm smb <<< "$out"
        read -r w2 r2 _ <<< "$two"
        printf '%-18s %-6s %9s %9s %9s %9s %10s %8s %8s\n' "$name" "$mode" "$w" "$r" "$wm" \
            "$rm" "$smb" "$(ratio "$w2" "$w")" "$(ratio "$r2" "$r")"
    done
}
mb3=$(awk -v n="$n3" 'BEGIN { printf "%.1f", n * n * n * 4 / 1e6 }')
row "block3d $n3^3" "$mb3" block3d "$n3"
mb2=$(awk -v n="$n2" 'BEGIN { printf "%.1f", n * n * 4 / 1e6 }')
for k in 8 16 32 64 128 256; do
    row "cyclic2d k=$k" "$mb2" cyclic2d "$n2" "$k"
done
echo "w 2p/x, r 2p/x: two-phase seconds over this mode's (above 1: faster than two-phase)"

echo
echo "hot collective buffers: the 3-D read again (rdma_coll_cache=enable, rfsd --coll-cache)"
cold=$(run "$mb3" block3d "$n3" dd "$reps")
hot=$(run "$mb3" block3d "$n3" hot "$reps")
read -r _ rc _ <<< "$cold"
read -r _ rh _ <<< "$hot"
printf 'read: cold %s s, hot %s s, cold/hot %s\n' "$rc" "$rh" "$(ratio "$rc" "$rh")"
