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
# Then issue 21's interleaved segments (interleave_bench.c), with 2 and NP
# processes: 64 segments of 4 KiB, 64 KiB and 1 MiB per process, written
# collectively and read back by the neighbour, one call per segment (seg)
# or one call through a vector filetype (view); dd, 2p, indep on rdma:,
# and dd over one server, against rfs: (one rfsd) and ufs: (tmpfs)
# collective calls in the same run, and beside each the time of one
# MPI_Barrier among the same processes; each job does its pattern once,
# in IPASSES passes (default 5) with the modes alternated within each.
#   coll.sh REPO [NP] [REPS] [SERVERS] [N3] [N2] [IPASSES]
set -eu
repo=$1
np=${2:-4}
reps=${3:-3}
nserv=${4:-4}
n3=${5:-192}
n2=${6:-2048}
ipasses=${7:-5}
[ "$ipasses" -ge 1 ] || { echo "coll.sh: IPASSES must be at least 1" >&2; exit 2; }
PREFIX=$repo/build/install
. "$repo/test/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/coll-bench.XXXXXX")
rootbase=/dev/shm
[ -d "$rootbase" ] && [ -w "$rootbase" ] || rootbase=$work
roots=$(mktemp -d "$rootbase/coll-bench.XXXXXX")
trap 'stop_all_rfsd; rm -rf "$work" "$roots"' EXIT

"$PREFIX/bin/mpicc" -O2 -std=c11 -o "$work/coll_bench" "$repo/test/bench/coll_bench.c"
"$PREFIX/bin/mpicc" -O2 -std=c11 -o "$work/interleave_bench" "$repo/test/bench/interleave_bench.c"
start_rdma_servers "$nserv" "$roots" srv --coll-cache 1024
start_rfsd "$roots/rfs-root" "$roots" rfs
rfs_port=$RFSD_PORT
mkdir -p "$roots/ufs"
export ROMIO_RDMA_SERVERS=$RDMA_SERVERS
mpiexec="$PREFIX/bin/mpiexec $MPIEXEC_FLAGS"

# run MB ARGS...: "write-s read-s write-MB/s read-MB/s server-MB"
run() {
    local mb=$1
    shift
    ROMIO_RDMA_STATS=1 $mpiexec -n "$np" "$work/coll_bench" rdma:/bench "$@" > "$work/out" \
        2> "$work/err" || { cat "$work/out" "$work/err" >&2; exit 1; }
    awk -v reps="$reps" -v mb="$mb" '
        FNR == NR && $1 == "write" { w = $2 } FNR == NR && $1 == "read" { r = $2 }
        FNR != NR && match($0, /requests, [0-9]+ bytes sent, [0-9]+ received/) {
            split(substr($0, RSTART, RLENGTH), f, " "); b += f[2] + f[5] }
        END { printf "%s %s %.0f %.0f %.1f\n", w, r, mb / w, mb / r, b / reps / 1e6 }' \
        "$work/out" "$work/err"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; }

# interleaved NP SEG LAYOUT MODE: "write-s read-s barrier-s": 64 segments
# of SEG bytes per process over NP processes, written and read once (the
# slowest process), and one MPI_Barrier among them in the same job.
# MODE: dd, dd1 (one server, as many as rfs: has), 2p, indep (rdma:), rfs,
# ufs.
interleaved() {
    local n=$1 seg=$2 layout=$3 mode=$4 name=rdma:/interleaved access=coll hints=
    case $mode in
    dd) hints="rdma_coll=disk_directed rdma_io_method=datatype" ;;
    dd1) name=rdma:/interleaved1
        hints="rdma_coll=disk_directed rdma_io_method=datatype striping_factor=1" ;;
    2p) hints="rdma_coll=two_phase rdma_io_method=datatype" ;;
    indep) access=indep hints="rdma_io_method=datatype" ;;
    rfs) name=rfs:127.0.0.1:$rfs_port:/interleaved ;;
    ufs) name=ufs:$roots/ufs/interleaved ;;
    esac
    # shellcheck disable=SC2086
    $mpiexec -n "$n" "$work/interleave_bench" "$name" "$seg" 64 "$layout" "$access" 1 $hints \
        > "$work/out" 2> "$work/err" || { cat "$work/out" "$work/err" >&2; exit 1; }
    awk '$1 == "write" { w = $2 } $1 == "read" { r = $2 } $1 == "barrier" { b = $2 }
        END { print w, r, b }' "$work/out"
}

# The floor under every collective call, from the cheapest job (ufs:, no
# server, one call): a failed job ends the bench (set -e sees the
# assignment's status, not read's).
floor=$(interleaved "$np" 4096 view ufs)
read -r _ _ barrier <<< "$floor"

echo "rdma: collective I/O, $np processes, $nserv servers, unit 64 KiB, median of $reps passes"
echo "(one MPI_Barrier among the $np processes here: $(awk -v b="$barrier" \
    'BEGIN { printf "%.1f", b * 1e6 }') us, the least a collective call waits)"
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

# summarise_passes NP SEG LAYOUT: a row per mode from $work/passes ("PASS
# MODE write-s read-s barrier-s" lines): the medians over the passes of its
# rates, of its read against rfs:'s, two-phase's and independent I/O's in
# the same pass (their seconds over its), and of the barrier.
summarise_passes() {
    local mode wm rm xr x2 xi bm
    for mode in $modes; do
        awk -v m="$mode" -v passes="$ipasses" -v bytes="$(($2 * 64 * $1))" '
            { w[$2, $1] = $3; r[$2, $1] = $4; b[$2, $1] = $5 }
            END {
                for (p = 1; p <= passes; p++)
                    print bytes / w[m, p] / 1048576, bytes / r[m, p] / 1048576,
                        r["rfs", p] / r[m, p], r["2p", p] / r[m, p], r["indep", p] / r[m, p],
                        b[m, p] * 1e6
            }' "$work/passes" > "$work/mode-passes"
        read -r wm rm xr x2 xi bm <<< "$(medians "$work/mode-passes")"
        printf '%-3s %-8s %-5s %-6s %11.1f %11.1f %8.2f %8.2f %8.2f %10.1f\n' "$1" "$2" "$3" \
            "$mode" "$wm" "$rm" "$xr" "$x2" "$xi" "$bm"
    done
}

echo
echo "interleaved segments (issue 21): 64 segments per process, segment i of rank r at"
echo "(i * NP + r) * SEG, read back by the neighbour; seg: a call per segment, view: one call;"
echo "dd1: disk-directed over one server, as many as rfs: has; barrier: one MPI_Barrier among"
echo "the NP processes in the same job, the least a collective call waits"
modes="dd dd1 2p indep rfs ufs"
printf '%-3s %-8s %-5s %-6s %11s %11s %8s %8s %8s %10s\n' NP SEG layout mode "write MiB/s" \
    "read MiB/s" "r x/rfs" "r x/2p" "r x/ind" "barrier us"
for n in $(printf '%s\n' 2 "$np" | sort -nu); do
    for seg in 4096 65536 1048576; do
        for layout in seg view; do
            order=$modes
            for pass in $(seq "$ipasses"); do
                for mode in $order; do
                    res=$(interleaved "$n" "$seg" "$layout" "$mode")
                    echo "$pass $mode $res"
                done
                order="${order#* } ${order%% *}"    # each mode first in turn
            done > "$work/passes"
            summarise_passes "$n" "$seg" "$layout"
        done
    done
done
echo "MiB/s and barrier: medians of $ipasses passes, the modes alternated in each; r x/rfs, r x/2p,"
echo "r x/ind: the median over the passes of this mode's read MiB/s over rfs:'s, two-phase's and"
echo "independent datatype I/O's (goal, issue 21: dd >= 0.8 x rfs, >= 1 x 2p, >= 0.5 x ind)"
