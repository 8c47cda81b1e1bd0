#!/usr/bin/env bash
# make check-fuzz: build the libFuzzer harnesses (with ASan+UBSan) and run
# each for SECONDS from the seed corpus. A crash, leak, hang or sanitizer
# report fails; its input is kept in ARTIFACTS.
#   run.sh REPO SECONDS [ARTIFACTS]
set -u
repo=$1
seconds=$2
artifacts=${3:-$repo/build/fuzz-artifacts}
work=$(mktemp -d "${TMPDIR:-/tmp}/rfs-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$artifacts"
cd "$repo"

cc="clang-14 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=c11"
cc="$cc -D_GNU_SOURCE -Iadio -Itest/fuzz"
core="adio/proto/rfs_proto.c adio/proto/rfs_auth.c test/fuzz/mem_transport.c"
server="adio/server/rfs_server.c adio/server/rfs_frame.c adio/server/rfs_dispatch.c
        adio/server/rfs_fileops.c adio/server/rfs_view_io.c adio/server/rfs_server_auth.c
        adio/server/rfs_move.c adio/server/rfs_path.c adio/server/rfs_log.c adio/server/rfs_rate.c
        adio/server/rfs_coll.c
        adio/dtype/dtype.c adio/dtype/dtype_iter.c adio/dtype/dtype_wire.c"
$cc -o "$work/fuzz_server" test/fuzz/fuzz_server.c test/unit/unit_util.c $core $server \
    adio/net/net_tcp.c adio/net/net_tls.c -lpthread -lssl -lcrypto || exit 1
$cc -o "$work/fuzz_client" test/fuzz/fuzz_client.c adio/proto/rfs_client.c $core \
    adio/net/net_tcp.c adio/net/net_tls.c -lssl -lcrypto || exit 1
python3 test/fuzz/make_corpus.py "$work/corpus"

passed=0 failed=0
for h in server client; do
    echo "fuzz_$h: ${seconds}s"
    if "$work/fuzz_$h" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
            -print_final_stats=1 -artifact_prefix="$artifacts/$h-" "$work/corpus/$h" \
            > "$work/$h.log" 2>&1; then
        passed=$((passed + 1))
        grep -E "stat::number_of_executed_units|cov: " "$work/$h.log" | tail -2 | sed 's/^/  /'
    else
        failed=$((failed + 1))
        tail -40 "$work/$h.log" | sed 's/^/  | /'
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
