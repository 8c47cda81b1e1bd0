# Shell helpers of the test runners, demo and benchmarks (sourced).
# Servers are started on free loopback ports (--port 0 --port-file) and
# stopped by PID; every runner cleans up on exit.

RFSD_PIDS=""
RFSD_LOGS=""    # PID=LOG of every server started, for stop_rfsd

# median: the median of the numbers on standard input, one a line (the
# lower middle one of an even count); nothing for no input.
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# medians FILE: the median of each column of FILE's rows
medians() {
    local c cols=""
    for c in $(seq 1 "$(awk '{ print NF; exit }' "$1")"); do
        cols="$cols${cols:+ }$(cut -d' ' -f"$c" "$1" | median)"
    done
    echo "$cols"
}

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
    RFSD_LOGS="$RFSD_LOGS $RFSD_PID=$dir/$name.log"
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
    # the caller's failure: not one of the servers stop_rfsd judges
    kill -KILL "$RFSD_PID" 2>/dev/null
    { wait "$RFSD_PID"; } 2>/dev/null
    forget_rfsd "$RFSD_PID"
    return 1
}

# forget_rfsd PID: the server is no longer ours to stop.
forget_rfsd() {
    RFSD_PIDS=$(echo " $RFSD_PIDS " | sed "s/ $1 / /; s/^ *//; s/ *\$//")
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

# start_mount SPEC DIR NAME MOUNTPOINT [rfs-mount options...]: rfs-mount of
# SPEC at MOUNTPOINT (in the foreground, as a background job; its log
# DIR/NAME.log), waited for until mounted; sets MOUNT_PID. stop_all_rfsd
# unmounts every such mount before it stops the servers.
start_mount() {
    local spec=$1 dir=$2 name=$3 mp=$4 i
    shift 4
    mkdir -p "$mp"
    "${RFS_MOUNT:-$PREFIX/bin/rfs-mount}" -f "$@" "$spec" "$mp" 2> "$dir/$name.log" &
    MOUNT_PID=$!
    MOUNTS="$MOUNTS $mp|$MOUNT_PID|$dir/$name.log"
    for i in $(seq 1 200); do
        grep -q " $(realpath "$mp") fuse.rfs-mount " /proc/self/mounts && return 0
        kill -0 "$MOUNT_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "rfs-mount $name did not mount:" >&2
    cat "$dir/$name.log" >&2
    stop_mounts
    return 1
}

# stop_mounts: unmounts what start_mount mounted (lazily when a file on it
# is still open: then rfs-mount is stopped after 10 s) and waits for each
# rfs-mount to end. One that ends with another status than 0 after a plain
# unmount, or with a sanitizer's report in its log, is a failure (FAILED,
# and the log's tail); returns 1 then.
stop_mounts() {
    local m mp pid log i rc status=0 lazy
    for m in $MOUNTS; do
        IFS='|' read -r mp pid log <<< "$m"
        lazy=0
        fusermount3 -u "$mp" 2>/dev/null || { lazy=1; fusermount3 -uz "$mp" 2>/dev/null; }
        for i in $(seq 1 200); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        kill -0 "$pid" 2>/dev/null && kill -TERM "$pid" 2>/dev/null
        { wait "$pid"; } 2>/dev/null
        rc=$?
        if { [ $lazy = 0 ] && [ $rc -ne 0 ]; } || sanitizer_report "$log"; then
            FAILED=$((FAILED + 1))
            echo "  FAIL rfs-mount at $mp (exit $rc, or a sanitizer's report in $log):"
            tail -20 "$log" | sed 's/^/       | /'
            status=1
        fi
    done
    MOUNTS=""
    return $status
}

# make_security_files DIR [ADDR...]: what rfs_security and bench-tls use. The
# server's key file DIR/keys (alice, and reader read-only), the clients'
# good.key, wrong.key (alice with another secret) and ro.key, all mode 600;
# a self-signed certificate for the ADDRs (default 127.0.0.1: ca.crt,
# server.key) and another one (other.crt).
make_security_files() {
    local d=$1 alice reader wrong san="" a
    shift
    for a in "${@:-127.0.0.1}"; do san="$san${san:+,}IP:$a"; done
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
            -subj "/CN=rfsd-test-$name" -addext "subjectAltName=$san" \
            -keyout "$d/$name.key" -out "$d/$name.crt" 2> /dev/null || return 1
    done
    mv "$d/ca.key" "$d/server.key"
}

# How a sanitizer or valgrind reports what it found, for every script that
# scans logs (an exit status alone can miss a report: a server's log is
# written by a process the test does not wait for, and a report with
# recovery enabled does not change the status). ASan, LSan, MSan, TSan
# (data races are WARNINGs), UBSan ("runtime error:"), and memcheck's error
# kinds (-q prints no error summary).
SANITIZER_REPORT='(ERROR|WARNING|FATAL): (Address|Leak|Memory|Thread|UndefinedBehavior)Sanitizer'
SANITIZER_REPORT="$SANITIZER_REPORT"'|runtime error:|==[0-9]+== (Invalid (read|write|free)'
SANITIZER_REPORT="$SANITIZER_REPORT"'|Conditional jump|Use of uninitialised|Syscall param'
SANITIZER_REPORT="$SANITIZER_REPORT"'|Mismatched free|Source and destination overlap'
SANITIZER_REPORT="$SANITIZER_REPORT"'|[0-9,]+ bytes in [0-9,]+ blocks are definitely lost)'

# sanitizer_report FILE...: whether any FILE holds a report.
sanitizer_report() {
    grep -qE "$SANITIZER_REPORT" "$@" 2>/dev/null
}

# The options every sanitized program runs with: leaks checked, the first
# report ends the program with a non-zero status.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
# MPICH's hwloc loads hwloc's optional plugins (libhwloc-plugins, which Open
# MPI's packages pull in) at MPI_Init and unloads them at exit; the OpenCL
# and GL libraries they bring leave allocations that LeakSanitizer reports
# from unloaded, unknown modules (test_dtype_mpi under ASan). No test here
# needs them: hwloc finds none in a directory that does not exist.
export HWLOC_PLUGINS_PATH=/nonexistent

# rfsd_killed PID: the test kills this server with SIGKILL on purpose, so
# that exit (status 137) is not its failure.
RFSD_KILLED=""
rfsd_killed() {
    RFSD_KILLED="$RFSD_KILLED $1"
}

# stop_rfsd PID: SIGTERM, then the exit status counts: rfsd exits 0 on
# SIGTERM, with every byte freed (a sanitizer build reports a leak by a
# non-zero status), so any other status, or a report in its log, is a
# failure of the run (FAILED, and the log's tail), and so is a server still
# running 60 s after SIGTERM (then killed). Returns 1 on such a failure.
# SIGCONT first (a test may have stopped the server), then SIGTERM: a
# SIGCONT after the SIGTERM could reach an exiting ASan rfsd while its leak
# checker stops it with SIGSTOP, discard that stop, and leave the checker
# waiting forever.
stop_rfsd() {
    local pid=$1 rc i log="" entry why=""
    kill -CONT "$pid" 2>/dev/null
    kill -TERM "$pid" 2>/dev/null
    # bash reaps an exited background job at once: kill -0 then fails
    for i in $(seq 1 1200); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null
        why="still running 60 s after SIGTERM"
    fi
    { wait "$pid"; } 2>/dev/null
    rc=$?
    forget_rfsd "$pid"
    for entry in $RFSD_LOGS; do
        [ "${entry%%=*}" = "$pid" ] && log=${entry#*=}
    done
    case " $RFSD_KILLED " in *" $pid "*) [ "$rc" -eq 137 ] && rc=0 ;; esac
    if [ -z "$why" ] && [ "$rc" -ne 0 ]; then
        why="exit status $rc after SIGTERM"
    fi
    if [ -z "$why" ] && [ -n "$log" ] && sanitizer_report "$log"; then
        why="a sanitizer report in its log"
    fi
    [ -n "$why" ] || return 0
    FAILED=$((FAILED + 1))
    FAILED_NAMES="$FAILED_NAMES rfsd:$pid"
    echo "  FAIL rfsd $pid${log:+ ($log)}: $why"
    [ -z "$log" ] || grep -vE 'rfsd\[[0-9]+\] (info|debug)' "$log" | tail -30 | sed 's/^/       | /'
    return 1
}

# rfsd_restarter HS START...: kills rfsd $RFSD_PID (SIGKILL) once HS/synced
# exists, starts it again with START... (a start_rfsd command on the same
# port and root: the old process may hold the port an instant longer, so it
# is retried), makes HS/restarted; stops the new server once HS/over exists,
# with stop_rfsd's verdict as its status. Run in the background: the new
# server is its child.
rfsd_restarter() {
    local hs=$1 i
    shift
    for i in $(seq 1 1200); do [ -e "$hs/synced" ] && break; sleep 0.05; done
    [ -e "$hs/synced" ] || return 0     # the test failed before: run_case counts it
    kill -KILL "$RFSD_PID"
    RFSD_PIDS=""
    for i in $(seq 1 100); do
        "$@" 2>/dev/null && break
        sleep 0.1
    done
    touch "$hs/restarted"
    while [ ! -e "$hs/over" ]; do sleep 0.05; done
    stop_all_rfsd
}

# Every server still running, each with stop_rfsd; 1 if any failed.
stop_all_rfsd() {
    local pid rc=0
    stop_mounts
    for pid in $RFSD_PIDS; do
        stop_rfsd "$pid" || rc=1
    done
    RFSD_PIDS=""
    return $rc
}

PASSED=0
MOUNTS=""
FAILED=0
SKIPPED=0
FAILED_NAMES=""

# run_case NAME TIMEOUT COMMAND...: passes when the command exits 0 and
# prints " No Errors" (the ROMIO convention). Output goes to $LOGDIR/NAME.out.
# Returns 1 when it failed.
run_case() {
    local name=$1 limit=$2
    shift 2
    local out="$LOGDIR/$name.out" t0 t1 rc
    t0=$(date +%s.%N)
    # in the background, waited for: a runner's INT/TERM trap runs at once
    # (not when the case is over)
    timeout --kill-after=10 "$limit" "$@" < /dev/null > "$out" 2>&1 &
    wait $!
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
        return 1
    fi
}

# runner_start WORK: what every test runner does first: case logs in
# WORK/logs (LOGDIR, for run_case), its programs in WORK/bin, and every rfsd
# it starts stopped, and judged, when it exits.
# check NAME COMMAND...: a case of a command that is not an MPI program:
# passes when it exits 0 (within 5 minutes).
check() {
    local name=$1
    shift
    run_case "$name" 300 bash -c '"$@" && echo " No Errors"' check "$@"
}

runner_start() {
    LOGDIR=$1/logs
    mkdir -p "$LOGDIR" "$1/bin"
    trap stop_all_rfsd EXIT
}

# romio_test_args BIN NAME ARGS: the arguments of ROMIO's test NAME as its
# build phase wrote them (BIN/NAME.args: they differ between ROMIO
# versions), else ARGS, the list's.
romio_test_args() {
    if [ -f "$1/$2.args" ]; then cat "$1/$2.args"; else echo "$3"; fi
}

# skip_reason TABLE MODE NAME: the reason TABLE (lines "MODE_PATTERN NAME
# why", MODE_PATTERN a glob) gives for skipping NAME in MODE, or nothing.
# repeat_suffix R: a repeated case's name suffix (".rR"), none for a case
# run once (APPS_REPEAT unset or 1).
repeat_suffix() {
    [ "${APPS_REPEAT:-1}" -gt 1 ] && echo ".r$1"
    return 0
}

skip_reason() {
    local pat name why
    while read -r pat name why; do
        [ -n "$pat" ] || continue
        # shellcheck disable=SC2053
        [[ $2 == $pat && $3 == "$name" ]] && { echo "$why"; return; }
    done <<< "$1"
}

# add_results FILE NAME: a sub-runner's counts (FILE, "P F S") added to
# ours; one failure when it wrote none (NAME did not finish).
add_results() {
    local p f s
    if read -r p f s < "$1"; then
        PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) SKIPPED=$((SKIPPED + s))
    else
        FAILED=$((FAILED + 1))
        echo "  FAIL $2 (did not finish)"
    fi
}

# write_results FILE: the counts for test/check.sh
write_results() {
    echo "$PASSED $FAILED $SKIPPED" > "$1"
}

MPIEXEC_FLAGS="-launcher fork"

# Debian's Open MPI with the io component of make openmpi (docs/openmpi.md):
# openmpi_env COMPONENT_DIR puts that directory before Open MPI's own in its
# component path, lets mpirun run as root and sets OPENMPI_MPIEXEC: mpirun
# choosing that component for MPI-IO by the name its file has, mca_io_NAME.so
# (romio321 under Open MPI 4.1, romiodrivers under 5.0:
# openmpi-patch/layout.sh), several processes per core allowed.
openmpi_env() {
    local so=("$1"/mca_io_*.so) name
    if [ ${#so[@]} != 1 ] || [ ! -f "${so[0]}" ]; then
        echo "openmpi_env: $1 holds no io component (mca_io_NAME.so) or more than one" >&2
        return 1
    fi
    name=${so[0]##*/mca_io_}
    export OMPI_MCA_mca_base_component_path="$1:SYSTEM_DEFAULT"
    # Open MPI 5 copies that path to PMIx's unless PMIx has one of its own
    # (opal/mca/pmix/base/pmix_base_fns.c), and PMIx then warns in every
    # process about SYSTEM_DEFAULT and our component, neither of them its.
    # An empty one stops the copy and changes nothing for PMIx 5, which adds
    # it to its default directories.
    case $(bash "$(dirname "${BASH_SOURCE[0]}")/../scripts/openmpi-version.sh") in
        4.*) ;;
        *) export PMIX_MCA_mca_base_component_path=${PMIX_MCA_mca_base_component_path-} ;;
    esac
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OPENMPI_MPIEXEC="mpirun.openmpi --mca io ${name%.so} --oversubscribe --bind-to none"
}
