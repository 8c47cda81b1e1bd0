#!/usr/bin/env bash
# make bench: contiguous rfs: throughput against a raw TCP stream between
# the same loopback endpoints, and against ufs: on the server's own file
# system, all in this run; then the cost of TLS: rfs: over TLS 1.3 with a
# key against plain rfs:, also in this run. Medians of REPS repetitions.
#   run.sh REPO [BYTES] [REPS]
set -eu
repo=$1
bytes=${2:-1073741824}
reps=${3:-5}
PREFIX=$repo/build/install
. "$repo/test/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/rfs-bench.XXXXXX")
# The server's root on tmpfs where there is one, so that the disk does
# not hide the network path.
rootbase=/dev/shm
[ -d "$rootbase" ] && [ -w "$rootbase" ] || rootbase=$work
root=$(mktemp -d "$rootbase/rfs-bench-root.XXXXXX")
trap 'stop_all_rfsd; rm -rf "$work" "$root"' EXIT

cc -O2 -std=c11 -I"$repo/adio" -o "$work/tcp_stream" "$repo/test/bench/tcp_stream.c" \
    "$repo/adio/net/net_tcp.c" -lpthread
"$PREFIX/bin/mpicc" -O2 -D_GNU_SOURCE -std=c11 -o "$work/rfs_bench" "$repo/test/bench/rfs_bench.c"
start_rfsd "$root" "$work" bench
plain_port=$RFSD_PORT
sec=$work/sec
make_security_files "$sec"
start_rfsd "$root" "$work" bench-tls --keys "$sec/keys" --tls-cert "$sec/ca.crt" \
    --tls-key "$sec/server.key"
tls_port=$RFSD_PORT
mpiexec="$PREFIX/bin/mpiexec $MPIEXEC_FLAGS -n 1"

value() { sed -n "s/^$1 //p"; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / b }'; }

echo "contiguous throughput, $((bytes >> 20)) MiB per pass, median of $reps, MB/s"
printf '%-8s | %10s %10s %6s %10s | %10s %10s %6s %10s\n' request "tcp write" "rfs write" \
    ratio "ufs write" "tcp read" "rfs read" ratio "ufs read"
for mib in 1 4 16; do
    chunk=$((mib << 20))
    tcp=$("$work/tcp_stream" "$bytes" "$chunk" "$reps")
    rfs=$($mpiexec "$work/rfs_bench" "rfs:127.0.0.1:$plain_port:/bench" "$bytes" "$chunk" "$reps")
    ufs=$($mpiexec "$work/rfs_bench" "ufs:$root/ufs-bench" "$bytes" "$chunk" "$reps")
    tw=$(echo "$tcp" | value write) tr=$(echo "$tcp" | value read)
    rw=$(echo "$rfs" | value write) rr=$(echo "$rfs" | value read)
    uw=$(echo "$ufs" | value write) ur=$(echo "$ufs" | value read)
    printf '%5d MiB | %10.0f %10.0f %5.0f%% %10.0f | %10.0f %10.0f %5.0f%% %10.0f\n' "$mib" \
        "$tw" "$rw" "$(pct "$rw" "$tw")" "$uw" "$tr" "$rr" "$(pct "$rr" "$tr")" "$ur"
done
echo "ratio = rfs / tcp (the RFS paper: 86-90% of the network)"

echo
echo "TLS cost: rfs: over TLS 1.3 with a key (ROMIO_RFS_TRANSPORT=tls) against plain rfs:, MB/s"
printf '%-8s | %10s %10s %6s | %10s %10s %6s\n' request "rfs write" "tls write" ratio \
    "rfs read" "tls read" ratio
for mib in 1 4 16; do
    chunk=$((mib << 20))
    rfs=$($mpiexec "$work/rfs_bench" "rfs:127.0.0.1:$plain_port:/bench" "$bytes" "$chunk" "$reps")
    tls=$(ROMIO_RFS_TRANSPORT=tls ROMIO_RFS_KEY_FILE=$sec/good.key ROMIO_RFS_TLS_CA=$sec/ca.crt \
        $mpiexec "$work/rfs_bench" "rfs:127.0.0.1:$tls_port:/bench-tls" "$bytes" "$chunk" "$reps")
    rw=$(echo "$rfs" | value write) rr=$(echo "$rfs" | value read)
    sw=$(echo "$tls" | value write) sr=$(echo "$tls" | value read)
    printf '%5d MiB | %10.0f %10.0f %5.0f%% | %10.0f %10.0f %5.0f%%\n' "$mib" \
        "$rw" "$sw" "$(pct "$sw" "$rw")" "$rr" "$sr" "$(pct "$sr" "$rr")"
done
echo "ratio = tls / plain rfs: (both ends encrypt and decrypt on this machine's 2 cores)"
