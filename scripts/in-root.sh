#!/usr/bin/env bash
# Run a command inside a Debian root made by trixie-root.sh (or any root):
#
#   in-root.sh DIR [--bind HOSTPATH[:ROOTPATH]]... -- CMD...
#
# CMD runs chrooted in DIR, from /, with /proc, /sys, the host's /dev and
# /dev/pts, a fresh tmpfs on /dev/shm, /tmp and /run, the host's resolv.conf
# and hosts, read only (apt inside reaches the same mirror by the same name;
# debootstrap leaves /etc/hosts empty, and without it neither localhost nor
# this host's name resolves), and each --bind (ROOTPATH defaults to HOSTPATH).
# The environment is a clean one (PATH, HOME, TERM, LANG): host variables
# such as MAKEFLAGS or LD_LIBRARY_PATH mean nothing in there; set any other
# with `env VAR=VALUE CMD`. The exit status is CMD's.
#
# Nothing needs unmounting: the mounts are made in a private mount namespace,
# which the host never sees, and CMD runs in a new PID namespace. When CMD
# ends, the kernel kills whatever it left running (servers started in the
# background) and the mounts go with the last process. A signal that ends
# this script (SIGKILL too) kills the whole namespace at once: CMD gets no
# chance to clean up what it wrote on a bound host path.
set -euo pipefail

usage() { echo "usage: in-root.sh DIR [--bind HOSTPATH[:ROOTPATH]]... -- CMD..." >&2; exit 2; }
die() { echo "in-root: $*" >&2; exit 2; }

# namespaced ARGS...: this script again, in new mount and PID namespaces.
# unshare blocks SIGTERM and SIGINT while it waits for its child, so it runs
# in the background (stdin kept) and is SIGKILLed, which --kill-child passes
# on to the namespace's init: the namespace dies with it. A trap here does
# that on SIGTERM, SIGINT and SIGHUP; setpriv's parent-death signal when this
# script is SIGKILLed.
namespaced() {
    local ns sig status=0
    IN_ROOT_NAMESPACE=1 setpriv --pdeathsig KILL \
        unshare --mount --propagation private --pid --fork --kill-child \
        -- bash "$0" "$@" 0<&0 &
    ns=$!
    for sig in TERM INT HUP; do
        # shellcheck disable=SC2064 # ns and the status are meant to expand now
        trap "kill -KILL $ns 2>/dev/null; wait $ns 2>/dev/null || :
              exit $((128 + $(kill -l "$sig")))" "$sig"
    done
    wait "$ns" || status=$?
    exit "$status"
}

# The first run re-executes itself in the new namespaces; the second, already
# there, mounts and chroots.
if [ "${IN_ROOT_NAMESPACE:-}" != 1 ]; then
    [ $# -ge 1 ] || usage
    namespaced "$@"
fi
unset IN_ROOT_NAMESPACE

[ -n "${1:-}" ] || usage
root=$(realpath -e -- "$1" 2>/dev/null) || die "no root at $1"
shift
[ "$root" != / ] || die "DIR must not be /"
[ -x "$root/bin/sh" ] || die "$root has no /bin/sh: not a root"

# inside PATH: the path PATH names in the root, refused if a symlink in the
# root leads outside it (an absolute link resolved here points into the host)
inside() {
    local p
    p=$(realpath -m -- "$root/$1")
    case $p in "$root"/*) echo "$p" ;; *) die "$1 leads outside $root" ;; esac
}

binds=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
        --bind) [ $# -ge 2 ] || usage; binds+=("$2"); shift 2 ;;
        --bind=*) binds+=("${1#--bind=}"); shift ;;
        *) usage ;;
    esac
done
if [ "${1:-}" != -- ] || [ $# -lt 2 ]; then usage; fi
shift

# mount_new TYPE TARGET OPTIONS: a new file system on TARGET
mount_new() { mount -t "$1" -o "$3" "$1" "$(inside "$2")"; }

# bind_path HOSTPATH ROOTPATH: HOSTPATH seen at ROOTPATH (made if missing,
# as a file when HOSTPATH is one)
bind_path() {
    local from target
    from=$(realpath -e -- "$1") || die "--bind: no $1"
    target=$(inside "$2")
    if [ -d "$from" ]; then
        mkdir -p "$target"
    else
        mkdir -p "$(dirname "$target")"
        [ -e "$target" ] || touch "$target"
    fi
    mount --bind "$from" "$target"
}

# bind_ro FILE: the host's FILE over the root's, read only
bind_ro() {
    [ -f "$1" ] || return 0
    bind_path "$1" "$1"
    mount -o remount,bind,ro "$(inside "$1")"
}

# The root a mount point of its own: what mounts / inside (ip netns add's
# "mount --make-rslave /") needs one.
mount --bind "$root" "$root"
mount_new proc /proc nosuid,nodev,noexec
mount_new sysfs /sys nosuid,nodev,noexec
# The host's /dev for its devices (null, urandom, kvm, infiniband...) and its
# /dev/pts, where the terminal CMD may run on has its name (a new devpts
# instance would leave it nameless: `tty` says "not a tty"); a /dev/shm of
# our own, so that what MPI leaves there goes with the namespace.
mount --bind /dev "$(inside /dev)"
mount --bind /dev/pts "$(inside /dev/pts)"
mount_new tmpfs /dev/shm nosuid,nodev,mode=1777
mount_new tmpfs /tmp nosuid,nodev,mode=1777
# /run too, as on a booted system: what a run leaves there (ip netns add's
# /run/netns/NAME, pid and lock files) goes with it.
mount_new tmpfs /run nosuid,nodev,mode=0755
mkdir -m 1777 "$(inside /run/lock)"
# Follow the host's name service (copies would go stale when it changes).
bind_ro /etc/resolv.conf
bind_ro /etc/hosts
for b in "${binds[@]}"; do
    case $b in
        *:*) bind_path "${b%%:*}" "${b#*:}" ;;
        *) bind_path "$b" "$b" ;;
    esac
done

# Not exec: this shell stays the namespace's init, which reaps the orphans
# CMD leaves (a CMD that is init would collect zombies and ignore SIGTERM).
# SIGINT and SIGQUIT back to their defaults: a background job (above) starts
# with them ignored, and CMD would inherit that.
status=0
env -i --default-signal=INT,QUIT \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 chroot "$root" "$@" || status=$?
exit "$status"
