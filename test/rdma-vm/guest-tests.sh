#!/usr/bin/env bash
# Run inside the check-rdma guest (guest-init.sh): the verbs transport's
# tests (plain, ASan+UBSan, TSan), rfsd --rdma with a plain C client (plain,
# ASan+UBSan), a file striped over three rfsd --rdma, ib_write_bw (ib_send_bw
# for eager-sized messages) against our transport's throughput (medians of
# BENCH_RUNS runs), and last the link taken down mid-transfer. Writes
# "passed failed skipped" to RESULTS/summary.
# What counts (docs/testing.md): a test of our code passes or fails; the
# environment (the rxe0 device, the perftest baseline) is a precondition
# whose failure is a failure and whose success counts nothing. Every rfsd is
# stopped by test/lib.sh's stop_rfsd (exit 0 on SIGTERM, no sanitizer
# report in its log, or a failure); the cmocka programs go through
# test/run-unit.sh (its counts, skips, exit status, sanitizer reports); an
# MPI program passes with exit 0 and "No Errors" (run_case).
#   guest-tests.sh RESULTS      (rfs_repo: the repository, from the kernel command line)
set -u
results=$1
bin=$rfs_repo/build/obj/plain
mpiexec=$rfs_repo/build/install/bin/mpiexec
. "$rfs_repo/test/lib.sh"
LOGDIR=/tmp/guest-logs
mkdir -p "$LOGDIR"
# the guest has no host name: MPICH's TCP channel needs one it can resolve
hostname localhost
export MPIR_CVAR_CH3_INTERFACE_HOSTNAME=127.0.0.1
addr=10.0.2.15
runs=${BENCH_RUNS:-3}
ok()   { PASSED=$((PASSED + 1)); echo "PASS: $1"; }
bad()  { FAILED=$((FAILED + 1)); echo "FAIL: $1"; }
# The servers of start_rfsd and start_rdma_servers: rfsd --rdma on the
# guest's address.
RFSD=$bin/rfsd
RDMA_HOST=$addr
RDMA_SERVER_ARGS="--bind $addr --rdma --log-level warn"

echo "== device (precondition)"
if ! ibv_devices | grep -q rxe0; then
    bad "setup: no rxe0 on eth0 (soft-RoCE did not come up): nothing can run"
    write_results "$results/summary"
    exit 1
fi
ibv_devinfo -d rxe0 -v | grep -E "max_sge|max_qp_rd_atom|active_mtu" | sed 's/^[ \t]*/   /'

# run_unit FLAVOUR [VAR=VALUE...]: test_verbs of one build flavour (plain,
# asan, tsan) through run-unit.sh, its counts added to ours; it fails when
# no test ran at all (a filter that matches nothing).
run_unit() {
    local flavour=$1 p f s
    shift
    rm -f /tmp/unit.res
    env VERBS_ADDR=$addr "$@" bash "$rfs_repo/test/run-unit.sh" \
        "$rfs_repo/build/obj/$flavour" /tmp/unit.res test_verbs
    if [ -s /tmp/unit.res ]; then
        read -r p f s < /tmp/unit.res
        PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) SKIPPED=$((SKIPPED + s))
        [ $((p + f + s)) -gt 0 ] || bad "test_verbs ($flavour $*) ran no test"
    else
        bad "test_verbs ($flavour $*) did not finish"
    fi
}

transport_tests() {
    echo "== transport tests (test_verbs, $1)"
    run_unit "$1"
}

# rfsd --rdma of one flavour and the client of the same flavour
rfs_over_verbs() {
    local flavour=$1
    echo "== rfsd --rdma and a plain C client over verbs ($flavour)"
    # shellcheck disable=SC2086
    if ! RFSD=$rfs_repo/build/obj/$flavour/rfsd start_rfsd /tmp/export.$flavour /tmp \
            rfsd.$flavour $RDMA_SERVER_ARGS; then
        bad "setup: rfsd --rdma ($flavour) did not start"
        return
    fi
    if timeout -s KILL 300 "$rfs_repo/build/obj/$flavour/rfs_verbs_client" $addr "$RFSD_PORT" \
            /tmp/export.$flavour; then
        ok "rfs client over verbs ($flavour)"
    else
        bad "rfs client over verbs ($flavour)"
    fi
    stop_rfsd "$RFSD_PID"
    cat /tmp/rfsd.$flavour.log
}

# start_servers N NAME: N rfsd --rdma (roots /tmp/NAME-root0.. with a
# directory d, for the MPI passes); sets RDMA_SERVERS, RDMA_ROOTS. False,
# and a failure counted, when one does not start.
start_servers() {
    local r
    if ! start_rdma_servers "$1" /tmp "$2"; then
        bad "setup: $1 rfsd --rdma ($2) did not start"
        return 1
    fi
    for r in $RDMA_ROOTS; do mkdir -p "$r/d"; done
}

# adio/stripe (the rdma: driver's data path) over three rfsd --rdma
striped_over_verbs() {
    echo "== a file striped over three rfsd --rdma (naive, list, datatype I/O)"
    start_servers 3 obj || return
    if timeout -s KILL 300 "$bin/stripe_verbs_client" "$RDMA_SERVERS"; then
        ok "striped file over verbs"
    else
        bad "striped file over verbs"
    fi
    stop_all_rfsd
    cat /tmp/obj-*.log
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
    SKIPPED=$((SKIPPED + 1))
    echo "SKIP: $2 (no MPICH build)"
    return 1
}

# The rdma: driver through MPI over verbs: rdma_basic (every method,
# collective calls disk-directed) on two rfsd --rdma with
# rdma_transport=verbs, and what its statistics say went how.
mpi_over_verbs() {
    echo "== rdma: through MPI over verbs (rdma_basic, 4 processes, 2 servers)"
    mpi_ready rdma_basic_mpi "rdma: through MPI" || return
    start_servers 2 mpi || return
    printf 'rdma_transport verbs\n' > /tmp/verbs.hints
    # shellcheck disable=SC2086
    ROMIO_HINTS=/tmp/verbs.hints ROMIO_RDMA_SERVERS=$RDMA_SERVERS ROMIO_RDMA_STATS=1 \
        run_case rdma_basic_over_verbs 900 "$mpiexec" -launcher fork -n 4 "$bin/rdma_basic_mpi" \
        "rdma:/d/" 65536 2 $RDMA_ROOTS
    # These requests are small (most go eager): say what went how.
    verbs_traffic < "$LOGDIR/rdma_basic_over_verbs.out"
    stop_all_rfsd
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
    start_servers 2 sub || return
    for mode in cached ogr individual; do
        printf 'rdma_transport verbs\nrdma_registration %s\n' $mode > /tmp/sub.hints
        out=$LOGDIR/rdma_subarray_over_verbs.$mode.out
        ROMIO_HINTS=/tmp/sub.hints ROMIO_RDMA_SERVERS=$RDMA_SERVERS ROMIO_RDMA_STATS=1 \
            run_case "rdma_subarray_over_verbs.$mode" 600 "$mpiexec" -launcher fork -n 4 \
            "$bin/rdma_subarray_mpi" "rdma:/d/" 2048 || continue  # no statistics to judge
        # the statistics of one file: rows as segments (auto), then packed
        set -- $(grep "rdma stats: /d/subarray.auto:" "$out" | verbs_sums) \
               $(grep "rdma stats: /d/subarray.disable:" "$out" | verbs_sums)
        echo "   rdma_registration=$mode: rows as segments: $5 registrations ($6 refused)," \
             "$3 RDMA work requests ($4 with more than one SGE); packed: ${11} registrations," \
             "$9 work requests (${10})"
        grep "^subarray" "$out" | sed 's/^/      /'
        eval "reg_$mode=$5 multi_$mode=$4"
    done
    stop_all_rfsd
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
    modes=${romio_verbs_modes:-rdma-2-65536-list-auto-auto-2,rdma-4-65536-list-auto-enable}
    modes=$(echo "$modes" | tr , ' ')
    echo "== ROMIO's test suite over rdma: with rdma_transport=verbs ($modes)"
    romio_bin=$rfs_repo/build/obj/plain/romio/bin
    if [ ! -x "$mpiexec" ] || [ ! -d "$romio_bin" ]; then
        SKIPPED=$((SKIPPED + 1))
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
        PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) SKIPPED=$((SKIPPED + s))
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
# verbs_bench ARGS...: one run of our transport's benchmark, its MB/s
# appended to /tmp/ours; a run that fails is a failure of our code.
verbs_bench() {
    local rc
    timeout -s KILL 120 "$bin/verbs_bench" "$@" > /tmp/vb.out
    rc=$?
    if [ $rc -eq 0 ]; then
        awk '{ print $2 }' /tmp/vb.out >> /tmp/ours
    else
        bad "verbs_bench $* (exit $rc)"
    fi
}

for mode in read gather eager; do
    : > /tmp/ours
    mib=200
    [ $mode = eager ] && mib=50
    for r in $(seq "$runs"); do
        verbs_bench $addr $mode $mib
    done
    m=$(median < /tmp/ours)
    base=$ibw name=ib_write_bw
    [ $mode = eager ] && base=$isb name="ib_send_bw 8000 B"
    echo "verbs transport $mode runs (MB/s): $(tr '\n' ' ' < /tmp/ours) median $m" \
         "= $(awk -v a="$m" -v b="$base" 'BEGIN { if (b > 0) printf "%.2f", a / b }') of $name"
done
# the rdma: driver itself: contiguous MPI_File_write_at/read_at of 4 MiB
# over two rfsd --rdma (their roots on the guest's tmpfs)
if [ -x "$mpiexec" ] && [ -x "$bin/rfs_bench_mpi" ] && start_servers 2 bench; then
    printf 'rdma_transport verbs\n' > /tmp/verbs.hints
    out=$(ROMIO_HINTS=/tmp/verbs.hints ROMIO_RDMA_SERVERS=$RDMA_SERVERS timeout -s KILL 300 \
        "$mpiexec" -launcher fork -n 1 "$bin/rfs_bench_mpi" "rdma:/d/bench" 134217728 4194304 \
        "$runs")
    rc=$?
    [ $rc -eq 0 ] || bad "rfs_bench_mpi over rdma: and verbs (exit $rc)"
    stop_all_rfsd
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
            verbs_bench $addr $mode 16 $seg
        done
        line="$line $mode $(median < /tmp/ours)"
    done
    echo "$line"
done
# The baseline is the environment's (perftest on rxe0): a precondition of
# the comparison, not a test of ours.
[ -n "$ibw" ] || bad "setup: ib_write_bw gave no result (no baseline)"

# Last: it takes eth0 down for a moment (the transport's bounded retries).
echo "== the link lost mid-transfer (test_verbs, test_link_lost)"
run_unit plain VERBS_TESTS=test_link_lost

write_results "$results/summary"
