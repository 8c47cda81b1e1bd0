#!/usr/bin/env bash
# make bench (second part): the 2-D tile and 3-D block patterns through
# rfs: natively (the view shipped once, the server applies it), through
# rfs: with ROMIO's data sieving (rfs_noncontig=romio), and through ufs: on
# the server's own file system, all in this run. Seconds are medians of
# REPS passes; requests and bytes are what crossed the rfs connections
# (ROMIO_RFS_STATS), per pass, all processes together.
#   noncontig.sh REPO [NP] [REPS]
set -eu
repo=$1
np=${2:-4}
reps=${3:-5}
PREFIX=$repo/build/install
. "$repo/test/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/rfs-ncbench.XXXXXX")
rootbase=/dev/shm
[ -d "$rootbase" ] && [ -w "$rootbase" ] || rootbase=$work
root=$(mktemp -d "$rootbase/rfs-ncbench-root.XXXXXX")
trap 'stop_all_rfsd; rm -rf "$work" "$root"' EXIT

"$PREFIX/bin/mpicc" -O2 -D_GNU_SOURCE -std=c11 -I"$repo/adio" -I"$repo/common" -o "$work/nc_bench" \
    "$repo/test/bench/nc_bench.c" "$repo"/adio/dtype/dtype{,_iter,_wire}.c "$repo/common/dtype_mpi.c" \
    "$repo/adio/stripe/stripe.c"
start_rfsd "$root" "$work" ncbench
mpiexec="$PREFIX/bin/mpiexec $MPIEXEC_FLAGS -n $np"
sieve="rfs_noncontig=romio romio_ds_read=enable romio_ds_write=enable"

# run NAME PATTERN N HINTS...: prints "write read requests bytes"
run() {
    local name=$1 pattern=$2 n=$3
    shift 3
    ROMIO_RFS_STATS=1 $mpiexec "$work/nc_bench" "$name" "$pattern" "$n" "$reps" "$@" \
        > "$work/out" 2> "$work/err" || { cat "$work/out" "$work/err" >&2; exit 1; }
    awk -v reps="$reps" '
        FNR == NR && $1 == "write" { w = $2 } FNR == NR && $1 == "read" { r = $2 }
        FNR != NR && /^rfs stats:/ { q += $5; b += $7 }
        END { printf "%s %s %.0f %.0f\n", w, r, q / reps, b / reps }' "$work/out" "$work/err"
}

echo "noncontiguous patterns, $np processes, independent I/O, median of $reps passes"
printf '%-22s %-14s %9s %9s %10s %14s %9s\n' pattern method "write s" "read s" \
    requests "bytes on wire" "vs native"
for spec in "tile2d 2048" "block3d 128"; do
    set -- $spec
    label="$1 ($2^$([ "$1" = tile2d ] && echo 2 || echo 3))"
    native=$(run "rfs:127.0.0.1:$RFSD_PORT:/nc-$1" "$1" "$2")
    sieving=$(run "rfs:127.0.0.1:$RFSD_PORT:/nc-$1-ds" "$1" "$2" $sieve)
    ufs=$(run "ufs:$root/nc-$1-ufs" "$1" "$2" romio_ds_read=enable romio_ds_write=enable)
    nw=$(echo "$native" | cut -d' ' -f1) nr=$(echo "$native" | cut -d' ' -f2)
    for m in "rfs native:$native" "rfs sieving:$sieving" "ufs (local):$ufs"; do
        read -r w r q b <<< "${m#*:}"
        case $m in ufs*) q=- b=- ;; esac
        printf '%-22s %-14s %9.4f %9.4f %10s %14s %4.2fx/%4.2fx\n' "$label" "${m%%:*}" \
            "$w" "$r" "$q" "$b" "$(awk -v a="$w" -v b="$nw" 'BEGIN { print a / b }')" \
            "$(awk -v a="$r" -v b="$nr" 'BEGIN { print a / b }')"
    done
done
echo "vs native = this method's seconds / native's (write/read): above 1 is slower than native"
