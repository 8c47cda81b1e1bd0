#!/usr/bin/env bash
# rfsd's configuration file, its key reload (SIGHUP), its journal logs, and
# what ships with it (man page, systemd unit); no MPI:
#   rfsd_config.sh PREFIX WORK [RESULTS]
# rfsd is $RFSD (default PREFIX/bin/rfsd). run.sh calls it and adds its
# counts; alone it prints a PASS, FAIL or SKIP line per case and the counts,
# and exits 1 if a case failed. Each case runs as its own process,
#   rfsd_config.sh case NAME DIR
# which stops the servers it started (by PID, judged by stop_rfsd: exit
# status 0, no sanitizer report) however it ends.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/../lib.sh"

fail() {
    echo "FAIL: $*"
    return 1
}

# make_key DIR NAME: a client's key file DIR/NAME.key (mode 600); prints
# the server's line for it.
make_key() {
    local secret
    secret=$(openssl rand -hex 32) || return 1
    (umask 077; echo "$2 $secret" > "$1/$2.key")
    echo "$2 $secret"
}

# start_cfg NAME PORTFILE RFSD-ARGS...: rfsd with exactly those arguments
# (start_rfsd adds --root and --port-file), its log $d/NAME.log; sets
# RFSD_PID and RFSD_PORT once PORTFILE holds the port.
start_cfg() {
    local name=$1 portfile=$2
    shift 2
    rm -f "$portfile"
    "$RFSD" "$@" 2>> "$d/$name.log" &
    RFSD_PID=$!
    RFSD_PIDS="$RFSD_PIDS $RFSD_PID"
    RFSD_LOGS="$RFSD_LOGS $RFSD_PID=$d/$name.log"
    for _ in $(seq 1 200); do
        [ -s "$portfile" ] && { RFSD_PORT=$(cat "$portfile"); return 0; }
        kill -0 "$RFSD_PID" 2>/dev/null || break
        sleep 0.05
    done
    cat "$d/$name.log"
    fail "rfsd $name did not start"
}

# wait_log FILE PATTERN N: FILE holds N lines matching PATTERN (ERE), 10 s at most.
wait_log() {
    for _ in $(seq 1 200); do
        [ "$(grep -cE "$2" "$1")" -ge "$3" ] && return 0
        sleep 0.05
    done
    fail "no $3 lines '$2' in $1"
}

# expect_try PORT KEY WANT: rfsd_reload try's exit status is WANT (0 served, 3 refused).
expect_try() {
    local rc
    "$BIN/rfsd_reload" try "$1" "$2"
    rc=$?
    [ "$rc" -eq "$3" ] || fail "$2: exit $rc, expected $3"
}

# Settings from the file (root, port-file, keys, max-connections); a flag
# overrides one of them.
case_file() {
    mkdir -p "$d/root"
    make_key "$d" alice > "$d/keys" && chmod 600 "$d/keys" && make_key "$d" bob > /dev/null ||
        return 1
    cat > "$d/a.conf" <<CONF
# every setting from here
root = $d/root
  port-file   =   $d/a.port

keys = $d/keys
max-connections = 2
CONF
    start_cfg a "$d/a.port" --config "$d/a.conf" || return 1
    grep -q "serving $d/root on 127.0.0.1 .*at most 2 connections" "$d/a.log" ||
        fail "root or max-connections not from the file" || return 1
    grep -q "clients must authenticate: 1 keys" "$d/a.log" || fail "keys not from the file" ||
        return 1
    expect_try "$RFSD_PORT" "$d/alice.key" 0 && expect_try "$RFSD_PORT" "$d/bob.key" 3 ||
        return 1
    [ -s "$d/root/try.dat" ] || fail "the file was not written under the root of the file" ||
        return 1
    stop_rfsd "$RFSD_PID" || return 1
    start_cfg b "$d/a.port" --config "$d/a.conf" --max-connections 3 || return 1
    grep -q "at most 3 connections" "$d/b.log" || fail "--max-connections 3 did not override"
}

# The example that ships is a valid config (its paths replaced by flags).
case_example() {
    mkdir -p "$d/root"
    start_cfg ex "$d/ex.port" --config "$repo/dist/rfsd.conf.example" --root "$d/root" \
        --bind 127.0.0.1 --port 0 --port-file "$d/ex.port" || return 1
    # every option it names, commented out or not, is one of rfsd's
    local name known
    known=$("$RFSD" --help)
    for name in $(sed -nE 's/^#?([a-z-]+) = .*/\1/p' "$repo/dist/rfsd.conf.example"); do
        grep -q -- "--$name " <<< "$known" || grep -q -- "--$name\$" <<< "$known" ||
            fail "the example names '$name', which rfsd does not know" || return 1
    done
}

# bad_line N LINE MESSAGE [FLAGS...]: a config whose line N is LINE is
# refused with exit status 2 and "rfsd: FILE:N: MESSAGE".
bad_line() {
    local n=$1 line=$2 msg=$3 f=$d/bad.conf rc
    shift 3
    { printf 'root = %s\n' "$d"; [ "$n" -gt 2 ] && echo "# a comment"; echo "$line"; } > "$f"
    timeout 10 "$RFSD" --config "$f" "$@" > /dev/null 2> "$d/bad.err"
    rc=$?
    [ "$rc" -eq 2 ] && grep -qF "rfsd: $f:$n: $msg" "$d/bad.err" ||
        fail "'$line': exit $rc, $(cat "$d/bad.err"), expected 2 and '$f:$n: $msg'"
}

case_bad_lines() {
    bad_line 3 "max-connections = 0" "max-connections must be 1..2147483647" &&
        bad_line 3 "max-connections = 0" "max-connections must be 1..2147483647" \
            --max-connections 5 &&
        bad_line 2 "colour = blue" "unknown option 'colour'" &&
        bad_line 3 "just words" "expected NAME = VALUE" &&
        bad_line 2 "config = /x" "'config' is an option of the command line only" &&
        bad_line 3 "root = /again" "root set before, on line 1" &&
        bad_line 2 "rdma = maybe" "rdma must be yes or no" &&
        bad_line 2 "threads =" "threads without a value" &&
        bad_line 2 "log-level = loud" "log-level must be error, warn, info or debug" &&
        bad_line 2 "rate-limit = 0" "rate-limit must be a positive number of MB/s" || return 1
    # the flag is refused with the same words
    timeout 10 "$RFSD" --root "$d" --max-connections 0 2> "$d/flag.err"
    local rc=$?
    [ "$rc" -eq 2 ] && grep -qx "rfsd: --max-connections must be 1..2147483647" "$d/flag.err" ||
        fail "--max-connections 0: exit $rc, $(cat "$d/flag.err")"
}

# A server with alice's key; bob's key file exists, bob not in the server's.
keyed_server() {
    mkdir -p "$d/root"
    make_key "$d" alice > "$d/keys" && chmod 600 "$d/keys" && make_key "$d" bob > "$d/bob.line" ||
        return 1
    printf 'root = %s\nport-file = %s\nkeys = %s\n' "$d/root" "$d/s.port" "$d/keys" > "$d/s.conf"
    start_cfg s "$d/s.port" --config "$d/s.conf"
}

# bob, added after start, is refused until SIGHUP and served after it,
# while alice's connection from before goes on being served.
case_sighup() {
    keyed_server || return 1
    local port=$RFSD_PORT
    mkdir -p "$d/hs"
    "$BIN/rfsd_reload" hold "$port" "$d/alice.key" "$d/hs" > "$d/hold.out" 2>&1 &
    HOLDER=$!
    for _ in $(seq 1 200); do [ -e "$d/hs/held" ] && break; sleep 0.05; done
    [ -e "$d/hs/held" ] || fail "the holder did not authenticate: $(cat "$d/hold.out")" ||
        return 1
    cat "$d/bob.line" >> "$d/keys"
    expect_try "$port" "$d/bob.key" 3 || return 1
    kill -HUP "$RFSD_PID"
    wait_log "$d/s.log" "SIGHUP: clients must authenticate: 2 keys" 1 || return 1
    expect_try "$port" "$d/bob.key" 0 && expect_try "$port" "$d/alice.key" 0 || return 1
    touch "$d/hs/go"
    wait "$HOLDER" || fail "the connection from before the reload: $(cat "$d/hold.out")"
}

# A key file that does not load at SIGHUP leaves the old keys.
case_sighup_broken() {
    keyed_server || return 1
    local port=$RFSD_PORT
    { cat "$d/bob.line"; echo "carol not-hex"; } >> "$d/keys"
    kill -HUP "$RFSD_PID"
    wait_log "$d/s.log" "error: SIGHUP: keys not read again.*line 3" 1 || return 1
    expect_try "$port" "$d/alice.key" 0 && expect_try "$port" "$d/bob.key" 3 || return 1
    # readable by others: refused before it is read
    sed -i '/^carol/d' "$d/keys"
    chmod 644 "$d/keys"
    kill -HUP "$RFSD_PID"
    wait_log "$d/s.log" "error: SIGHUP: keys not read again.*chmod 600" 1 || return 1
    expect_try "$port" "$d/alice.key" 0 && expect_try "$port" "$d/bob.key" 3 || return 1
    # and right again: read
    chmod 600 "$d/keys"
    kill -HUP "$RFSD_PID"
    wait_log "$d/s.log" "SIGHUP: clients must authenticate: 2 keys" 1 &&
        expect_try "$port" "$d/bob.key" 0
}

# stderr the journal's stream: <N> priorities, no time or pid; another
# stream (the variable inherited, stderr elsewhere): lines as always.
case_journal() {
    : > "$d/s.log"
    JOURNAL_STREAM=$(stat -c %d:%i "$d/s.log") keyed_server || return 1
    expect_try "$RFSD_PORT" "$d/bob.key" 3 || return 1
    chmod 644 "$d/keys"
    kill -HUP "$RFSD_PID"
    wait_log "$d/s.log" '^<3>SIGHUP: keys not read again' 1 &&
        wait_log "$d/s.log" '^<4>.*authentication failed: unknown key' 1 || return 1
    grep -q '^<6>serving ' "$d/s.log" || fail "no <6>serving line" || return 1
    grep -vE '^<[3467]>' "$d/s.log" && fail "lines without a priority" && return 1
    grep -E 'rfsd\[[0-9]+\]|^<.>[0-9]{2}:' "$d/s.log" && fail "a time or pid" && return 1
    stop_rfsd "$RFSD_PID" || return 1
    chmod 600 "$d/keys"
    JOURNAL_STREAM=1:1 start_cfg t "$d/s.port" --config "$d/s.conf" || return 1
    grep -qE '^[0-9:.]+ rfsd\[[0-9]+\] info: serving ' "$d/t.log" ||
        fail "JOURNAL_STREAM not stderr's, yet: $(head -1 "$d/t.log")"
}

# man/rfsd.8's OPTIONS section is what rfsd --man-options prints.
case_man_options() {
    sed -n '/^\.\\" BEGIN rfsd --man-options/,/^\.\\" END rfsd --man-options/p' \
        "$repo/man/rfsd.8" | sed '1d;$d' > "$d/page.options"
    "$RFSD" --man-options > "$d/rfsd.options" || return 1
    [ -s "$d/page.options" ] || fail "no generated OPTIONS section in man/rfsd.8" || return 1
    diff "$d/page.options" "$d/rfsd.options" ||
        fail "man/rfsd.8 and rfsd's options differ: run man/update-options.sh"
}

# The page renders without a warning.
case_man_render() {
    local out
    out=$(MANWIDTH=80 man -l --warnings "$repo/man/rfsd.8" 2>&1 > /dev/null)
    [ -z "$out" ] || fail "man -l --warnings: $out"
}

# systemd-analyze verify, silent, on the unit as installed: from a copy
# whose ExecStart names an executable that exists here, and a MANPATH
# where Documentation=man:rfsd(8) is found.
case_unit_verify() {
    local t out rc
    t=$(mktemp -d) || return 1
    mkdir -p "$t/man/man8"
    cp "$repo/man/rfsd.8" "$t/man/man8/"
    printf '#!/bin/sh\n' > "$t/rfsd" && chmod 755 "$t/rfsd"
    sed "s|^ExecStart=/usr/local/bin/rfsd |ExecStart=$t/rfsd |" \
        "$repo/dist/systemd/rfsd@.service" > "$t/rfsd@.service"
    grep -q "^ExecStart=$t/rfsd " "$t/rfsd@.service" || { rm -rf "$t"; fail "no ExecStart"; } ||
        return 1
    out=$(cd "$t" && MANPATH=$t/man systemd-analyze verify "$t/rfsd@example.service" 2>&1)
    rc=$?
    rm -rf "$t"
    [ "$rc" -eq 0 ] && [ -z "$out" ] || fail "systemd-analyze verify (exit $rc): $out"
}

if [ "${1:-}" = case ]; then
    d=$3 BIN=$(dirname "$3")/bin HOLDER=""
    mkdir -p "$d"
    trap '[ -z "$HOLDER" ] || kill "$HOLDER" 2>/dev/null; stop_all_rfsd' EXIT
    trap 'exit 143' TERM INT
    "case_$2" || exit 1
    stop_all_rfsd || exit 1
    echo "No Errors"
    exit 0
fi

PREFIX=$1 work=$2 results=${3:-}
export RFSD=${RFSD:-$PREFIX/bin/rfsd}
runner_start "$work"
# shellcheck disable=SC2086
cc -std=c11 -O2 -g -Wall -Wextra -Werror ${TEST_CFLAGS:-} -I"$repo/adio" \
    -o "$work/bin/rfsd_reload" "$here/rfsd_reload.c" "$repo/adio/proto/rfs_client.c" \
    "$repo/adio/proto/rfs_proto.c" "$repo/adio/proto/rfs_auth.c" "$repo/adio/net/net_tcp.c" \
    "$repo/adio/net/net_tls.c" "$repo/adio/net/net_endpoint.c" -lpthread -lssl -lcrypto \
    || { echo "cannot build rfsd_reload"; FAILED=$((FAILED + 1)); }

echo "rfsd: config file, key reload, journal logs, man page, systemd unit"
for c in file example bad_lines sighup sighup_broken journal man_options; do
    run_case "rfsd_config.$c" 120 bash "$0" case "$c" "$work/$c"
done
# tools a machine may lack: skipped, and said so
for c in "man_render man" "unit_verify systemd-analyze"; do
    read -r name tool <<< "$c"
    if command -v "$tool" > /dev/null; then
        run_case "rfsd_config.$name" 60 bash "$0" case "$name" "$work/$name"
    else
        SKIPPED=$((SKIPPED + 1))
        echo "  SKIP rfsd_config.$name (no $tool here)"
    fi
done
[ -z "$results" ] || write_results "$results"
echo "rfsd_config: $PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" -eq 0 ]
