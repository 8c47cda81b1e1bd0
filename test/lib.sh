# Shell helpers of the test runners, demo and benchmarks (sourced).
# Servers are started on free loopback ports (--port 0 --port-file) and
# stopped by PID; every runner cleans up on exit.

RFSD_PIDS=""

# start_rfsd ROOT DIR NAME [rfsd options...]: starts rfsd serving ROOT with
# its port file and log in DIR; sets RFSD_PORT and RFSD_PID.
start_rfsd() {
    local root=$1 dir=$2 name=$3
    shift 3
    mkdir -p "$root"
    rm -f "$dir/$name.port"
    # RFSD_WRAP: a command prefix that ends by exec'ing rfsd (same PID)
    # (exec: the background job is rfsd itself, so $! is its PID)
    eval exec "${RFSD_WRAP:-}" \
        '"${RFSD:-$PREFIX/bin/rfsd}" --root "$root" --port-file "$dir/$name.port" "$@"' \
        2> "$dir/$name.log" &
    RFSD_PID=$!
    RFSD_PIDS="$RFSD_PIDS $RFSD_PID"
    local i
    for i in $(seq 1 200); do
        if [ -s "$dir/$name.port" ]; then
            RFSD_PORT=$(cat "$dir/$name.port")
            return 0
        fi
        kill -0 "$RFSD_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "rfsd $name did not start:" >&2
    cat "$dir/$name.log" >&2
    return 1
}

# start_rdma_servers N DIR NAME [RFSD ARGS]: N rfsd servers with roots
# DIR/NAME-root0.., for rdma:, with $RDMA_SERVER_ARGS and the ARGS; sets
# RDMA_SERVERS (HOST:PORT,... with HOST $RDMA_HOST, default 127.0.0.1),
# RDMA_ROOTS (space separated) and RDMA_PIDS.
start_rdma_servers() {
    local n=$1 dir=$2 name=$3 i host=${RDMA_HOST:-127.0.0.1}
    shift 3
    RDMA_SERVERS="" RDMA_ROOTS="" RDMA_PIDS=""
    for i in $(seq 0 $((n - 1))); do
        # shellcheck disable=SC2086
        start_rfsd "$dir/$name-root$i" "$dir" "$name-$i" ${RDMA_SERVER_ARGS:-} "$@" || return 1
        RDMA_SERVERS="$RDMA_SERVERS${RDMA_SERVERS:+,}$host:$RFSD_PORT"
        RDMA_ROOTS="$RDMA_ROOTS${RDMA_ROOTS:+ }$dir/$name-root$i"
        RDMA_PIDS="$RDMA_PIDS${RDMA_PIDS:+ }$RFSD_PID"
    done
}

# make_security_files DIR: what rfs_security and bench-tls use. The server's
# key file DIR/keys (alice, and reader read-only), the clients' good.key,
# wrong.key (alice with another secret) and ro.key, all mode 600; a
# self-signed certificate for 127.0.0.1 (ca.crt, server.key) and another
# one (other.crt).
make_security_files() {
    local d=$1 alice reader wrong
    mkdir -p "$d"
    alice=$(openssl rand -hex 32) reader=$(openssl rand -hex 16) wrong=$(openssl rand -hex 32)
    (
        umask 077
        printf '# rfsd --keys\nalice %s\nreader %s ro\n' "$alice" "$reader" > "$d/keys"
        echo "alice $alice" > "$d/good.key"
        echo "alice $wrong" > "$d/wrong.key"
        echo "reader $reader" > "$d/ro.key"
    )
    local name
    for name in ca other; do
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj "/CN=rfsd-test-$name" -addext subjectAltName=IP:127.0.0.1 \
            -keyout "$d/$name.key" -out "$d/$name.crt" 2> /dev/null || return 1
    done
    mv "$d/ca.key" "$d/server.key"
}

# SIGCONT first (a test may have stopped the server), then SIGTERM: a
# SIGCONT after the SIGTERM could reach an exiting ASan rfsd while its leak
# checker stops it with SIGSTOP, discard that stop, and leave the checker
# waiting forever.
stop_rfsd() {
    kill -CONT "$1" 2>/dev/null || true
    kill -TERM "$1" 2>/dev/null || true
    { wait "$1"; } 2>/dev/null || true
}

stop_all_rfsd() {
    local pid
    for pid in $RFSD_PIDS; do
        stop_rfsd "$pid"
    done
    RFSD_PIDS=""
}

PASSED=0
FAILED=0
SKIPPED=0
FAILED_NAMES=""

# run_case NAME TIMEOUT COMMAND...: passes when the command exits 0 and
# prints " No Errors" (the ROMIO convention). Output goes to $LOGDIR/NAME.out.
run_case() {
    local name=$1 limit=$2
    shift 2
    local out="$LOGDIR/$name.out" t0 t1 rc
    t0=$(date +%s.%N)
    timeout --kill-after=10 "$limit" "$@" < /dev/null > "$out" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc -eq 0 ] && grep -q "No Errors" "$out"; then
        PASSED=$((PASSED + 1))
        printf '  PASS %-28s %6ss\n' "$name" "$secs"
    else
        FAILED=$((FAILED + 1))
        FAILED_NAMES="$FAILED_NAMES $name"
        printf '  FAIL %-28s %6ss (exit %d)\n' "$name" "$secs" "$rc"
        sed 's/^/       | /' "$out" | tail -15
    fi
}

# write_results FILE: the counts for test/check.sh
write_results() {
    echo "$PASSED $FAILED $SKIPPED" > "$1"
}

MPIEXEC_FLAGS="-launcher fork"
