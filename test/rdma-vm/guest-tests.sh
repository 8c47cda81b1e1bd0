#!/bin/sh
# Run inside the check-rdma guest (guest-init.sh): the verbs transport's
# tests (plain, ASan+UBSan, TSan), rfsd --rdma with a plain C client (plain,
# ASan+UBSan), a file striped over three rfsd --rdma, ib_write_bw (ib_send_bw
# for eager-sized messages) against our transport's throughput (medians of
# BENCH_RUNS runs), and last the link taken down mid-transfer. Writes
# "passed failed skipped" to RESULTS/summary.
#   guest-tests.sh RESULTS      (rfs_repo: the repository, from the kernel command line)
results=$1
bin=$rfs_repo/build/obj/plain
mpiexec=$rfs_repo/build/install/bin/mpiexec
# the guest has no host name: MPICH's TCP channel needs one it can resolve
hostname localhost
export MPIR_CVAR_CH3_INTERFACE_HOSTNAME=127.0.0.1
addr=10.0.2.15
runs=${BENCH_RUNS:-3}
passed=0 failed=0 skipped=0
ok()   { passed=$((passed + 1)); echo "PASS: $1"; }
bad()  { failed=$((failed + 1)); echo "FAIL: $1"; }

echo "== device"
if ibv_devices | grep -q rxe0; then ok "rxe0 on eth0"; else bad "no rxe0"; fi
ibv_devinfo -d rxe0 -v | grep -E "max_sge|max_qp_rd_atom|active_mtu" | sed 's/^[ \t]*/   /'

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
sanitizer_report() {
    grep -qE "ERROR: (Address|Thread|Undefined)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$@"
}

# test_verbs of one build flavour (plain, asan, tsan): its cmocka counts
transport_tests() {
    flavour=$1
    echo "== transport tests (test_verbs, $flavour)"
    log=/tmp/test_verbs.$flavour.log
    VERBS_ADDR=$addr timeout -s KILL 400 "$rfs_repo/build/obj/$flavour/test_verbs" > $log 2>&1
    grep -vE '^\[ RUN' $log
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' $log)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' $log)
    passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0}))
    [ -n "$p$f" ] || bad "test_verbs ($flavour) did not finish"
    if sanitizer_report $log; then bad "sanitizer report in test_verbs ($flavour)"; fi
}

# rfsd --rdma of one flavour and the client of the same flavour
rfs_over_verbs() {
    flavour=$1
    echo "== rfsd --rdma and a plain C client over verbs ($flavour)"
    root=/tmp/export.$flavour
    mkdir -p $root
    rm -f /tmp/rfsd.port
    "$rfs_repo/build/obj/$flavour/rfsd" --root $root --bind $addr --port 0 \
        --port-file /tmp/rfsd.port --rdma --log-level warn > /tmp/rfsd.$flavour.log 2>&1 &
    rfsd=$!
    for i in $(seq 100); do [ -s /tmp/rfsd.port ] && break; sleep 0.1; done
    port=$(cat /tmp/rfsd.port 2>/dev/null)
    if [ -n "$port" ] && timeout -s KILL 300 "$rfs_repo/build/obj/$flavour/rfs_verbs_client" \
            $addr "$port" $root; then
        ok "rfs client over verbs ($flavour)"
    else
        bad "rfs client over verbs ($flavour)"
    fi
    kill $rfsd
    wait $rfsd
    cat /tmp/rfsd.$flavour.log
    if sanitizer_report /tmp/rfsd.$flavour.log; then bad "sanitizer report in rfsd ($flavour)"; fi
}

# adio/stripe (the rdma: driver's data path) over three rfsd --rdma
striped_over_verbs() {
    echo "== a file striped over three rfsd --rdma (naive, list, datatype I/O)"
    list="" pids=""
    for i in 1 2 3; do
        mkdir -p /tmp/obj$i
        rm -f /tmp/obj$i.port
        "$bin/rfsd" --root /tmp/obj$i --bind $addr --port 0 --port-file /tmp/obj$i.port --rdma \
            --log-level warn > /tmp/obj$i.log 2>&1 &
        pids="$pids $!"
    done
    for i in 1 2 3; do
        for k in $(seq 100); do [ -s /tmp/obj$i.port ] && break; sleep 0.1; done
        list="$list${list:+,}$addr:$(cat /tmp/obj$i.port 2>/dev/null)"
    done
    if timeout -s KILL 300 "$bin/stripe_verbs_client" "$list"; then
        ok "striped file over verbs"
    else
        bad "striped file over verbs"
    fi
    kill $pids
    wait $pids
    cat /tmp/obj1.log /tmp/obj2.log /tmp/obj3.log
}

# The "over verbs" lines of rdma: statistics (ROMIO_RDMA_STATS) on stdin,
# summed over processes and servers: "eager-messages rendezvous
# work-requests multi-SGE-work-requests registrations refused".
verbs_sums() {
    grep "over verbs" | awk '
        { for (i = 1; i <= NF; i++) {
              if ($i == "eager" && $(i + 1) == "messages,") e += $(i - 1)
              if ($i == "rendezvous,") v += $(i - 1)
              if ($i == "RDMA" && $(i + 1) == "work") w += $(i - 1)
              if ($i == "with" && $(i + 1) == "more") m += substr($(i - 1), 2)
              if ($i == "registrations") r += $(i - 1)
              if ($i == "refused,") f += $(i - 1) } }
        END { print e + 0, v + 0, w + 0, m + 0, r + 0, f + 0 }'
}

verbs_traffic() {
    set -- $(verbs_sums)
    echo "   rdma: over verbs, all processes and servers: $1 eager messages, $2 rendezvous," \
         "$3 RDMA work requests, $4 of them with more than one SGE"
}

# Whether the MPI program PROG of a pass was built (with the patched
# MPICH); if not, the pass WHAT is skipped.
mpi_ready() {
    [ -x "$mpiexec" ] && [ -x "$bin/$1" ] && return 0
    skipped=$((skipped + 1))
    echo "SKIP: $2 (no MPICH build)"
    return 1
}

# The rdma: driver through MPI over verbs: rdma_basic (every method,
# collective calls disk-directed) on two rfsd --rdma with
# rdma_transport=verbs, and what its statistics say went how.
mpi_over_verbs() {
    echo "== rdma: through MPI over verbs (rdma_basic, 4 processes, 2 servers)"
    mpi_ready rdma_basic_mpi "rdma: through MPI" || return
    start_servers 2 mpi
    printf 'rdma_transport verbs\n' > /tmp/verbs.hints
    # shellcheck disable=SC2086
    ROMIO_HINTS=/tmp/verbs.hints ROMIO_RDMA_SERVERS=$list ROMIO_RDMA_STATS=1 \
        timeout -s KILL 900 "$mpiexec" -launcher fork -n 4 "$bin/rdma_basic_mpi" "rdma:/d/" \
        65536 2 $roots > /tmp/mpi.log 2>&1
    # These requests are small (most go eager): say what went how.
    verbs_traffic < /tmp/mpi.log
    if grep -q " No Errors" /tmp/mpi.log; then ok "rdma_basic over verbs"; else
        tail -20 /tmp/mpi.log
        bad "rdma_basic over verbs"
    fi
    kill $pids
    wait $pids
}

# N rfsd --rdma for an MPI pass, roots /tmp/NAME1.. with a directory d:
# sets list (HOST:PORT,...), pids and roots.
start_servers() {
    list="" pids="" roots=""
    for i in $(seq "$1"); do
        mkdir -p /tmp/$2$i/d
        rm -f /tmp/$2$i.port
        "$bin/rfsd" --root /tmp/$2$i --bind $addr --port 0 --port-file /tmp/$2$i.port --rdma \
            --log-level warn > /tmp/$2$i.log 2>&1 &
        pids="$pids $!" roots="$roots /tmp/$2$i"
    done
    for i in $(seq "$1"); do
        for k in $(seq 100); do [ -s /tmp/$2$i.port ] && break; sleep 0.1; done
        list="$list${list:+,}$addr:$(cat /tmp/$2$i.port 2>/dev/null)"
    done
}

# Seed 000's registration case through MPI over verbs (rdma_subarray: a
# 2048 x 2048 int array block-block over 4 processes, every process's
# block written from and read into the whole array, each of its 1024 rows
# a memory segment), once per rdma_registration mode. With the rows handed
# down as segments (rdma_memory_segments=auto) RDMA work requests must
# gather and scatter several of them, and OGR through the cache (the
# default) must register them O(1) times: once per call and connection
# (net_pin), where individual registration takes one per row and
# transfer. OGR without the cache groups each request's share by the
# cost model measured on this (emulated) device: reported.
mpi_subarray_over_verbs() {
    echo "== seed 000's 2-D subarray through MPI over verbs (rdma_subarray, 4 processes, 2 servers)"
    mpi_ready rdma_subarray_mpi "rdma_subarray over verbs" || return
    start_servers 2 sub
    for mode in cached ogr individual; do
        printf 'rdma_transport verbs\nrdma_registration %s\n' $mode > /tmp/sub.hints
        ROMIO_HINTS=/tmp/sub.hints ROMIO_RDMA_SERVERS=$list ROMIO_RDMA_STATS=1 \
            timeout -s KILL 600 "$mpiexec" -launcher fork -n 4 "$bin/rdma_subarray_mpi" \
            "rdma:/d/" 2048 > /tmp/sub.$mode.log 2>&1
        if ! grep -q " No Errors" /tmp/sub.$mode.log; then
            tail -20 /tmp/sub.$mode.log
            bad "rdma_subarray over verbs ($mode)"
            continue
        fi
        # the statistics of one file: rows as segments (auto), then packed
        set -- $(grep "rdma stats: /d/subarray.auto:" /tmp/sub.$mode.log | verbs_sums) \
               $(grep "rdma stats: /d/subarray.disable:" /tmp/sub.$mode.log | verbs_sums)
        echo "   rdma_registration=$mode: rows as segments: $5 registrations ($6 refused)," \
             "$3 RDMA work requests ($4 with more than one SGE); packed: ${11} registrations," \
             "$9 work requests (${10})"
        grep "^subarray" /tmp/sub.$mode.log | sed 's/^/      /'
        eval "reg_$mode=$5 multi_$mode=$4"
    done
    kill $pids
    wait $pids
    # 4 processes write and read back 1024 rows each
    echo "   registrations of the rows: cached ${reg_cached:-?}, ogr ${reg_ogr:-?}," \
         "individual ${reg_individual:-?} (4096 rows written, 4096 read)"
    # 4 processes x 2 connections x 3 calls (write, read, contiguous read):
    # at most 2 registrations each
    if [ "${multi_cached:-0}" -gt 0 ] && [ "${reg_individual:-0}" -ge 4096 ] &&
       [ "${reg_cached:-99999}" -le 48 ]; then
        ok "rdma_subarray over verbs: multi-SGE work requests, O(1) registrations"
    else
        bad "rdma_subarray over verbs: multi-SGE work requests, O(1) registrations"
    fi
}

# ROMIO's own test suite (test/romio/run.sh, compiled on the host by run.sh)
# over rdma: with rdma_transport=verbs on rfsd --rdma: each test counts.
romio_over_verbs() {
    # romio_verbs_modes: run.sh's ROMIO_VERBS_MODES, through the kernel command line
    modes=$(echo "${romio_verbs_modes:-rdma-2-65536-list,rdma-4-65536-list-auto-enable}" | tr , ' ')
    echo "== ROMIO's test suite over rdma: with rdma_transport=verbs ($modes)"
    romio_bin=$rfs_repo/build/obj/plain/romio/bin
    if [ ! -x "$mpiexec" ] || [ ! -d "$romio_bin" ]; then
        skipped=$((skipped + 1))
        echo "SKIP: ROMIO's test suite over verbs (no MPICH build)"
        return
    fi
    t0=$(date +%s)
    rm -f /tmp/romio.res
    # shellcheck disable=SC2086
    ROMIO_PHASE=run ROMIO_BIN=$romio_bin RFSD=$bin/rfsd RDMA_HOST=$addr ROMIO_RDMA_STATS=1 \
        RDMA_SERVER_ARGS="--bind $addr --rdma --log-level warn" RDMA_TRANSPORT=verbs \
        ROMIO_TIMEOUT=${ROMIO_VERBS_TIMEOUT:-120} \
        bash "$rfs_repo/test/romio/run.sh" "$rfs_repo/build/install" /nonexistent /tmp/romio \
        /tmp/romio.res $modes
    echo "   ROMIO's test suite over verbs took $(( $(date +%s) - t0 ))s"
    # every file of a passing test went over verbs (rdma_transport=verbs has
    # no fallback): say how, and which tests opened no rdma: file at all
    cat /tmp/romio/logs/romio.*.out 2>/dev/null | verbs_traffic
    none=$(cd /tmp/romio/logs 2>/dev/null && grep -L "over verbs" romio.*.out |
        sed 's/^romio\.//; s/\.out$//' | tr '\n' ' ')
    echo "   with no rdma: statistics: ${none:-none}"
    if [ -s /tmp/romio.res ]; then
        read -r p f s < /tmp/romio.res
        passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    else
        bad "ROMIO's test suite over verbs did not finish"
    fi
}

transport_tests plain
rfs_over_verbs plain
striped_over_verbs
mpi_over_verbs
mpi_subarray_over_verbs
romio_over_verbs
transport_tests asan
rfs_over_verbs asan
transport_tests tsan

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

# perftest_median TOOL SIZE ITERS PORT: the median of $runs runs' average MB/s
perftest_median() {
    : > /tmp/perf.$1
    for r in $(seq "$runs"); do
        # a port of its own per run: a server still closing cannot refuse the next
        p=$(($4 + r))
        timeout -s KILL 150 "$1" -d rxe0 -x 1 -p $p -s "$2" -n "$3" -F > /tmp/perf.srv 2>&1 &
        srv=$!
        sleep 2
        timeout -s KILL 120 "$1" -d rxe0 -x 1 -p $p -s "$2" -n "$3" -F $addr > /tmp/perf.cli 2>&1
        wait $srv
        # the line after the header: bytes iterations peak avg(MB/s) msg-rate;
        # a run that failed (no line, or 0.00) does not count
        awk -v s="$2" '$1 == s && $4 > 0 { print $4 }' /tmp/perf.cli >> /tmp/perf.$1
    done
    echo "$1 $2 B runs (MB/s): $(tr '\n' ' ' < /tmp/perf.$1) median $(median < /tmp/perf.$1)" >&2
    median < /tmp/perf.$1
}

echo "== throughput: ib_write_bw (1 MiB messages) vs the verbs transport, medians of $runs"
ibw=$(perftest_median ib_write_bw 1048576 200 18515)
# the baseline of the eager mode: sends of the same size into posted receives
isb=$(perftest_median ib_send_bw 8000 5000 18600)
for mode in read gather eager; do
    : > /tmp/ours
    mib=200
    [ $mode = eager ] && mib=50
    for r in $(seq "$runs"); do
        timeout -s KILL 120 "$bin/verbs_bench" $addr $mode $mib | awk '{ print $2 }' >> /tmp/ours
    done
    m=$(median < /tmp/ours)
    base=$ibw name=ib_write_bw
    [ $mode = eager ] && base=$isb name="ib_send_bw 8000 B"
    echo "verbs transport $mode runs (MB/s): $(tr '\n' ' ' < /tmp/ours) median $m" \
         "= $(awk -v a="$m" -v b="$base" 'BEGIN { if (b > 0) printf "%.2f", a / b }') of $name"
done
# the rdma: driver itself: contiguous MPI_File_write_at/read_at of 4 MiB
# over two rfsd --rdma (their roots on the guest's tmpfs)
if [ -x "$mpiexec" ] && [ -x "$bin/rfs_bench_mpi" ]; then
    start_servers 2 bench
    printf 'rdma_transport verbs\n' > /tmp/verbs.hints
    out=$(ROMIO_HINTS=/tmp/verbs.hints ROMIO_RDMA_SERVERS=$list timeout -s KILL 300 \
        "$mpiexec" -launcher fork -n 1 "$bin/rfs_bench_mpi" "rdma:/d/bench" 134217728 4194304 \
        "$runs")
    kill $pids
    wait $pids
    for op in write read; do
        v=$(echo "$out" | awk -v op=$op '$1 == op { print $2 }')
        echo "rdma: through MPI, $op 4 MiB calls, 128 MiB, 2 servers (MB/s, median of $runs):" \
             "${v:-none} = $(awk -v a="${v:-0}" -v b="$ibw" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
             "of ib_write_bw"
    done
fi
echo "== seed 000, Figure 4: list I/O of 128 segments of SEG bytes (MB/s, medians of $runs):"
echo "   one writev gathered by RDMA WRITE, one writev packed, one message per segment"
for seg in 128 1024 8192; do
    line="   $seg B:"
    for mode in seg-gather seg-pack seg-each; do
        : > /tmp/ours
        for r in $(seq "$runs"); do
            timeout -s KILL 120 "$bin/verbs_bench" $addr $mode 16 $seg | awk '{ print $2 }' \
                >> /tmp/ours
        done
        line="$line $mode $(median < /tmp/ours)"
    done
    echo "$line"
done
if [ -n "$ibw" ]; then ok "benchmarks ran"; else bad "ib_write_bw gave no result"; fi

# Last: it takes eth0 down for a moment (the transport's bounded retries).
echo "== the link lost mid-transfer (test_verbs, test_link_lost)"
VERBS_ADDR=$addr VERBS_TESTS=test_link_lost timeout -s KILL 200 "$bin/test_verbs" \
    > /tmp/test_link.log 2>&1
grep -vE '^\[ RUN' /tmp/test_link.log
if grep -q '^\[  PASSED  \] 1 test' /tmp/test_link.log; then ok "link lost"; else bad "link lost"; fi

echo "$passed $failed $skipped" > "$results/summary"
