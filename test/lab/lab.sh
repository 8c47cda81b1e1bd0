#!/usr/bin/env bash
# The lab: a virtual cluster on one machine (issue 16). C client hosts and
# S server hosts, each a network namespace with one veth link into a bridge
# that lives in a namespace of its own (the "head", where mpiexec runs);
# each link shaped both ways by tbf to RATE (or unshaped). Addresses are
# 10.77.0.0/16 and exist only inside these namespaces: every lab has its
# own bridge, so parallel labs never see each other; namespace names carry
# a per-run unique prefix. Nothing in the root namespace (interfaces,
# routes, /etc) changes. Facts about this kernel: /work/shared/docs/lab.md.
#
# Sourced by runners (like test/lib.sh):
#   lab_up C S RATE      RATE: e.g. 500mbit, 1gbit, or "none" (unshaped).
#                        Returns 1 with LAB_WHY set when it cannot (not root,
#                        no namespaces, no tbf): the runner skips with that
#                        reason. Sets LAB_DIR, LAB_HEAD (the head's
#                        namespace), LAB_CLIENTS / LAB_SERVERS (addresses),
#                        LAB_HOSTS (clients, comma separated, for -hosts).
#   lab_trap             teardown (servers, namespaces, LAB_DIR) on EXIT,
#                        INT and TERM (INT/TERM exit 130/143).
#   lab_ns ADDR          the namespace of a host
#   lab_exec ADDR CMD... run CMD on a host
#   $LAB_MPIEXEC ARGS... (a program: timeout and run_case take it; MPIEXEC, or
#   lab_mpiexec ARGS...  $PREFIX/bin/mpiexec when lab_up ran) the lab's mpiexec (in the head, ranks on the client
#                        hosts through the launcher; ARGS as for mpiexec,
#                        -hosts "$LAB_HOSTS" -ppn K chooses the hosts)
#   lab_start_rfsd I DIR NAME [rfsd options]: rfsd on server host I
#                        (0-based), bound to its address, root DIR/NAME-root,
#                        by start_rfsd of test/lib.sh (stopped by PID);
#                        sets RFSD_PORT, RFSD_PID, LAB_RFSD_ADDR
#   lab_link I up|down   server host I's link (both ends)
#   lab_host_link ADDR up|down   any host's link (both ends)
#   lab_rate ADDR RATE   a host's link shaped anew to RATE (both ends)
#   lab_link_end ADDR    the head's end of a host's link (its counters)
#   lab_drops ADDR...    packets the head's ends of those hosts' links dropped
#                        so far (tbf: traffic toward the hosts that found the
#                        queue full, e.g. incast)
#   lab_drops_out ADDR...  packets those hosts' own ends of their links dropped
#                        so far (traffic from the hosts: a sender's own queue full)
#   lab_link_bytes ADDR... bytes that crossed those hosts' links so far, both ways
#   lab_stage_dir ADDR   a client host's own TMPDIR, so abt:'s stage directory
#                        (ranks get it, and LAB_HOST, from the launcher)
#   lab_bg PID           a helper process of the runner, killed at teardown
#   LAB_REMOVE=DIR       a directory removed at teardown (the runner's work)
#   lab_down             tear everything down (idempotent)
# CLI, to try a deployment by hand:
#   lab.sh up C S RATE   prints the lab's env file (source it, then use
#                        lab_mpiexec / lab_exec ...); the lab stays up
#   lab.sh down [DIR]    tears down that lab (or every lab `lab.sh up` started:
#                        $LAB_STATE_ROOT lists them; a runner's labs are not there)
#   lab.sh down --stale  the namespaces of labs whose runner died without teardown
#                        (SIGKILL): the runner's PID is in the names (and its
#                        directories: lab-rl<PID>-work.* is a runner's work)

LAB_NET=10.77
LAB_STATE_ROOT=${LAB_STATE_ROOT:-/run/romio-lab}
LAB_DIR="" LAB_MPIEXEC="" LAB_PREFIX="" LAB_HEAD="" LAB_CLIENTS="" LAB_SERVERS="" LAB_HOSTS="" LAB_WHY=""
LAB_NSLIST=""

_lab_log() { [ -z "${LAB_VERBOSE:-}" ] || echo "lab: $*" >&2; }

# RATE in bit/s, or nothing for "none"
_lab_bits() {
    local r=${1,,} n unit
    [ "$r" = none ] || [ "$r" = 0 ] && return 0
    n=${r%%[a-z]*} unit=${r#"$n"}
    case $unit in
        kbit) echo $((n * 1000)) ;; mbit) echo $((n * 1000000)) ;;
        gbit) echo $((n * 1000000000)) ;; bit|"") echo "$n" ;;
        *) return 1 ;;
    esac
}

# tbf on DEV in namespace NS: burst at least 256 KiB, or 10 ms of the rate
_lab_shape() {
    local ns=$1 dev=$2 rate=$3 bits burst
    bits=$(_lab_bits "$rate") || return 1
    [ -n "$bits" ] || return 0
    burst=$((bits / 8 / 100))
    [ "$burst" -ge 262144 ] || burst=262144
    ip netns exec "$ns" tc qdisc add dev "$dev" root tbf rate "$bits" burst "$burst" latency 20ms
}

# lab_up C S RATE
lab_up() {
    local nc=$1 ns=$2 rate=$3 i name addr n=0
    LAB_WHY=""
    if [ "$(id -u)" -ne 0 ]; then
        LAB_WHY="the lab needs root (network namespaces, veth, tc)"
        return 1
    fi
    if ! command -v ip > /dev/null || ! command -v tc > /dev/null; then
        LAB_WHY="the lab needs ip and tc (iproute2)"
        return 1
    fi
    if ! _lab_bits "$rate" > /dev/null; then
        LAB_WHY="rate $rate: give e.g. 500mbit, 1gbit or none"
        return 1
    fi
    LAB_PREFIX="rl$$$(printf '%04x' $((RANDOM)))"
    LAB_DIR=$(mktemp -d "${TMPDIR:-/tmp}/lab-$LAB_PREFIX.XXXXXX")
    LAB_HEAD=$LAB_PREFIX-head
    if ! ip netns add "$LAB_HEAD" 2> "$LAB_DIR/why"; then
        LAB_WHY="cannot make a network namespace: $(head -1 "$LAB_DIR/why")"
        rm -rf "$LAB_DIR"
        LAB_DIR=""
        return 1
    fi
    LAB_NSLIST=$LAB_HEAD
    # the record for lab_down (also `lab.sh down DIR` from another shell)
    echo "$LAB_HEAD" > "$LAB_DIR/namespaces"
    {
        ip -n "$LAB_HEAD" link set lo up &&
        ip -n "$LAB_HEAD" link add br0 type bridge forward_delay 0 stp_state 0 &&
        ip -n "$LAB_HEAD" addr add "$LAB_NET.0.1/16" dev br0 &&
        ip -n "$LAB_HEAD" link set br0 up
    } 2> "$LAB_DIR/why" || { LAB_WHY="cannot make the bridge: $(head -1 "$LAB_DIR/why")"; lab_down; return 1; }
    # clients 10.77.1.1.., servers 10.77.2.1..
    for i in $(seq 1 $((nc + ns))); do
        if [ "$i" -le "$nc" ]; then
            name=c$((i - 1)) addr=$LAB_NET.1.$i
            LAB_CLIENTS="$LAB_CLIENTS${LAB_CLIENTS:+ }$addr"
        else
            name=s$((i - nc - 1)) addr=$LAB_NET.2.$((i - nc))
            LAB_SERVERS="$LAB_SERVERS${LAB_SERVERS:+ }$addr"
        fi
        n=$((n + 1))
        local hns=$LAB_PREFIX-$name
        {
            ip netns add "$hns" &&
            echo "$hns" >> "$LAB_DIR/namespaces" &&
            LAB_NSLIST="$LAB_NSLIST $hns" &&
            echo "$addr $hns" >> "$LAB_DIR/hosts" &&
            # both ends made in their namespaces: no name in the root namespace
            ip -n "$LAB_HEAD" link add "v$name" type veth peer name eth0 netns "$hns" &&
            ip -n "$LAB_HEAD" link set "v$name" master br0 &&
            ip -n "$LAB_HEAD" link set "v$name" up &&
            ip -n "$hns" link set lo up &&
            ip -n "$hns" addr add "$addr/16" dev eth0 &&
            ip -n "$hns" link set eth0 up &&
            _lab_shape "$LAB_HEAD" "v$name" "$rate" &&
            _lab_shape "$hns" eth0 "$rate"
        } 2> "$LAB_DIR/why" || {
            LAB_WHY="cannot make host $name: $(head -1 "$LAB_DIR/why")"
            lab_down
            return 1
        }
    done
    LAB_HOSTS=${LAB_CLIENTS// /,}
    _lab_launcher
    {
        echo ". $(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../lib.sh"
        echo ". $(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lab.sh"
        echo "PREFIX=${PREFIX:-}"
        declare -p LAB_MPIEXEC LAB_DIR LAB_PREFIX LAB_HEAD LAB_CLIENTS LAB_SERVERS LAB_HOSTS LAB_NSLIST
    } > "$LAB_DIR/lab.env"
    # shellcheck disable=SC2086
    _lab_log "up: $nc clients ($LAB_CLIENTS), $ns servers ($LAB_SERVERS), rate $rate, dir $LAB_DIR"
}

# The launcher Hydra calls like ssh: `enter-host [-x ...] HOST COMMAND...`.
# It runs COMMAND (the proxy) with sh -c in HOST's namespace; the proxy's
# ch3:nemesis then picks HOST's address (MPIR_CVAR_CH3_INTERFACE_HOSTNAME).
_lab_launcher() {
    cat > "$LAB_DIR/enter-host" << EOF
#!/bin/sh
# Hydra's launcher into the lab $LAB_PREFIX's hosts (made by lab.sh)
while [ \$# -gt 0 ]; do
    case \$1 in -*) shift ;; *) break ;; esac
done
host=\$1
shift
ns=\$(awk -v h="\$host" '\$1 == h { print \$2 }' "$LAB_DIR/hosts")
[ -n "\$ns" ] || { echo "enter-host: \$host is not a host of lab $LAB_PREFIX" >&2; exit 255; }
# the host's own temporary directory: abt:'s stage directory (abt_stage_dir's default)
mkdir -p "$LAB_DIR/tmp-\$ns"
MPIR_CVAR_CH3_INTERFACE_HOSTNAME=\$host LAB_HOST=\$host TMPDIR=$LAB_DIR/tmp-\$ns \\
    exec ip netns exec "\$ns" sh -c "\$*"
EOF
    chmod +x "$LAB_DIR/enter-host"
    cat > "$LAB_DIR/mpiexec" << EOF
#!/bin/sh
# mpiexec in the lab $LAB_PREFIX's head, ranks on its hosts (made by lab.sh)
# TMPDIR: each host's own (enter-host), not the caller's
exec env -u TMPDIR ip netns exec "$LAB_HEAD" "\${MPIEXEC:-${MPIEXEC:-$PREFIX/bin/mpiexec}}" -localhost "$LAB_NET.0.1" \\
    -launcher ssh -launcher-exec "$LAB_DIR/enter-host" "\$@"
EOF
    chmod +x "$LAB_DIR/mpiexec"
    LAB_MPIEXEC=$LAB_DIR/mpiexec
}

lab_ns() {
    awk -v h="$1" '$1 == h { print $2 }' "$LAB_DIR/hosts"
}

lab_exec() {
    local ns
    ns=$(lab_ns "$1")
    shift
    ip netns exec "$ns" "$@"
}

lab_mpiexec() {
    "$LAB_MPIEXEC" "$@"
}

lab_server_addr() {
    echo "$LAB_SERVERS" | awk -v i="$1" '{ print $(i + 1) }'
}

lab_start_rfsd() {
    local i=$1 dir=$2 name=$3 addr
    shift 3
    addr=$(lab_server_addr "$i")
    [ -n "$addr" ] || { echo "lab: no server host $i" >&2; return 1; }
    # shellcheck disable=SC2034  # the caller's
    LAB_RFSD_ADDR=$addr
    RFSD_WRAP="ip netns exec $(lab_ns "$addr")" \
        start_rfsd "$dir/$name-root" "$dir" "$name" --bind "$addr" "$@"
}

# The head's end of a host's link: v<host name> (vc0, vs1, ...)
lab_link_end() {
    local ns
    ns=$(lab_ns "$1")
    echo "v${ns#"$LAB_PREFIX"-}"
}

# _lab_qdisc_drops NS DEV: packets DEV's qdisc in namespace NS dropped so far
_lab_qdisc_drops() {
    ip netns exec "$1" tc -s qdisc show dev "$2" | awk '/dropped/ { sub(",", "", $7); n += $7 } END { print n + 0 }'
}

lab_drops() {
    local a n=0
    for a in "$@"; do
        n=$((n + $(_lab_qdisc_drops "$LAB_HEAD" "$(lab_link_end "$a")")))
    done
    echo $n
}

lab_drops_out() {
    local a n=0
    for a in "$@"; do
        n=$((n + $(_lab_qdisc_drops "$(lab_ns "$a")" eth0)))
    done
    echo $n
}

lab_link_bytes() {
    local a end tx rx n=0
    for a in "$@"; do
        end=$(lab_link_end "$a")
        { read -r tx; read -r rx; } < <(ip netns exec "$LAB_HEAD" cat \
            "/sys/class/net/$end/statistics/tx_bytes" "/sys/class/net/$end/statistics/rx_bytes")
        n=$((n + tx + rx))
    done
    echo $n
}

# lab_host_link ADDR up|down: a host's link, both ends
lab_host_link() {
    ip -n "$(lab_ns "$1")" link set eth0 "$2" &&
        ip -n "$LAB_HEAD" link set "$(lab_link_end "$1")" "$2"
}

# lab_link I up|down: server host I's link, both ends
lab_link() {
    lab_host_link "$(lab_server_addr "$1")" "$2"
}

# lab_rate ADDR RATE: a host's link shaped anew, both ends (RATE as for lab_up)
lab_rate() {
    local ns end
    ns=$(lab_ns "$1") end=$(lab_link_end "$1")
    ip netns exec "$ns" tc qdisc del dev eth0 root 2>/dev/null
    ip netns exec "$LAB_HEAD" tc qdisc del dev "$end" root 2>/dev/null
    _lab_shape "$ns" eth0 "$2" && _lab_shape "$LAB_HEAD" "$end" "$2"
}

# lab_bg PID: a background helper of the runner (not in a namespace), killed by lab_down
lab_bg() {
    LAB_BG_PIDS="${LAB_BG_PIDS:-} $1"
}

lab_stage_dir() {
    echo "$LAB_DIR/tmp-$(lab_ns "$1")"
}

# Tear down: processes left in our namespaces (ours: proxies, ranks,
# servers), by PID; the namespaces (their veths and the bridge go with
# them); LAB_DIR. Idempotent; also from `lab.sh down` in another shell.
lab_down() {
    local nsn pids pass
    local pid
    for pid in ${LAB_BG_PIDS:-}; do
        kill -TERM "$pid" 2>/dev/null
    done
    LAB_BG_PIDS=""
    [ -z "${LAB_REMOVE:-}" ] || rm -rf "$LAB_REMOVE"
    [ -n "$LAB_DIR" ] || return 0
    [ -f "$LAB_DIR/namespaces" ] && LAB_NSLIST=$(cat "$LAB_DIR/namespaces")
    for pass in TERM KILL; do
        for nsn in $LAB_NSLIST; do
            pids=$(ip netns pids "$nsn" 2>/dev/null)
            # shellcheck disable=SC2086
            [ -z "$pids" ] || kill -$pass $pids 2>/dev/null
        done
        [ $pass = TERM ] && { pids=""; for nsn in $LAB_NSLIST; do pids="$pids$(ip netns pids "$nsn" 2>/dev/null)"; done
                              [ -z "$pids" ] && break; sleep 0.5; }
    done
    for nsn in $LAB_NSLIST; do
        ip netns del "$nsn" 2>/dev/null
    done
    rm -f "$LAB_STATE_ROOT/$LAB_PREFIX"
    rm -rf "$LAB_DIR"
    LAB_DIR="" LAB_NSLIST=""
}

_lab_on_exit() {
    local rc=$?
    trap - EXIT INT TERM
    declare -F stop_all_rfsd > /dev/null && stop_all_rfsd > /dev/null 2>&1
    lab_down
    exit "$rc"
}

lab_trap() {
    trap _lab_on_exit EXIT
    trap 'echo "lab: interrupted, tearing down" >&2; exit 130' INT
    trap 'echo "lab: terminated, tearing down" >&2; exit 143' TERM
}

# the CLI
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -u
    case ${1:-} in
        up)
            [ $# -eq 4 ] || { echo "usage: lab.sh up CLIENTS SERVERS RATE|none" >&2; exit 2; }
            LAB_VERBOSE=1
            PREFIX=${PREFIX:-$(cd "$(dirname "$0")/../.." && pwd)/build/install}
            lab_up "$2" "$3" "$4" || { echo "lab: $LAB_WHY" >&2; exit 1; }
            echo "lab $LAB_PREFIX up: clients $LAB_CLIENTS, servers $LAB_SERVERS, head $LAB_NET.0.1"
            echo "  . $LAB_DIR/lab.env   # then: lab_start_rfsd I DIR NAME (rfsd on server host I,"
            echo "     # address:port in \$LAB_RFSD_ADDR:\$RFSD_PORT), lab_exec ADDR CMD (a command on a host),"
            echo "     # lab_mpiexec -hosts \$LAB_HOSTS -ppn 2 -n 4 PROG ARGS (ranks on the client hosts)"
            echo "  $0 down $LAB_DIR"
            mkdir -p "$LAB_STATE_ROOT" && echo "$LAB_DIR" > "$LAB_STATE_ROOT/$LAB_PREFIX"
            ;;
        down)
            if [ "${2:-}" = --stale ]; then
                # namespaces of labs whose runner is gone (killed with SIGKILL):
                # rl<runner's PID><4 hex digits>-<host>
                for nsn in $(ip netns list | awk '{ print $1 }' | grep -E '^rl[0-9]+[0-9a-f]{4}-'); do
                    p=${nsn%%-*}; p=${p#rl}; p=${p%????}
                    kill -0 "$p" 2>/dev/null && continue
                    # a lab of `lab.sh up` (its command is gone, the lab is in use)
                    [ -e "$LAB_STATE_ROOT/${nsn%%-*}" ] && continue
                    pids=$(ip netns pids "$nsn")
                    # shellcheck disable=SC2086
                    [ -z "$pids" ] || kill -KILL $pids
                    echo "lab: removing $nsn (its runner $p is gone)"
                    ip netns del "$nsn"
                    rm -rf "${TMPDIR:-/tmp}/lab-rl$p"????.* "${TMPDIR:-/tmp}/lab-rl$p-work".*
                done
                exit 0
            fi
            if [ $# -ge 2 ]; then dirs=$2; else dirs=$(cat "$LAB_STATE_ROOT"/* 2>/dev/null); fi
            for LAB_DIR in $dirs; do
                [ -f "$LAB_DIR/namespaces" ] || { echo "lab: $LAB_DIR is not a lab" >&2; continue; }
                LAB_PREFIX=$(basename "$LAB_DIR"); LAB_PREFIX=${LAB_PREFIX#lab-}; LAB_PREFIX=${LAB_PREFIX%.*}
                echo "lab: tearing down $LAB_PREFIX"
                lab_down
            done
            ;;
        *) echo "usage: lab.sh up CLIENTS SERVERS RATE|none | lab.sh down [DIR]" >&2; exit 2 ;;
    esac
fi
