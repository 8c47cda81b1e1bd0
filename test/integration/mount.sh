#!/usr/bin/env bash
# rfs-mount (docs/mount.md) against live servers: POSIX tools on striped
# rdma: files and on an rfs: export, checked in the servers' roots too; MPI-IO
# and POSIX on the same plain paths (mount_io.c); the symlink rule; a server
# that stops answering or dies under the mount (errors, no hang); an unmount
# with a file open; a server without the namespace extension.
#   mount.sh PREFIX WORKDIR RESULTS
set -u
here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")

# --case NAME ARGS...: one check, its steps traced to the case's log.
if [ "${1:-}" = --case ]; then
    # a step that must fail (set -e does not see through "!")
    fails() { if "$@"; then echo "succeeded, but must fail: $*"; exit 1; fi; }
    set -ex
    name=$2
    shift 2
    case $name in
    striped-files)
        # mount roots...: cp, ls, mv, rm of a striped file and its objects
        mnt=$1 src=$2
        shift 2
        mkdir -p "$mnt/a/b"
        cp "$src" "$mnt/a/b/f"
        [ "$(stat -c %s "$mnt/a/b/f")" = "$(stat -c %s "$src")" ]
        cmp "$src" "$mnt/a/b/f"
        [ "$(ls "$mnt/a/b")" = f ]
        for r in "$@"; do [ -f "$r/a/b/f" ]; done         # an object on every server
        head -c 300001 /dev/urandom > "$mnt/a/g"              # replaced by the mv below
        mv "$mnt/a/b/f" "$mnt/a/g"
        cmp "$src" "$mnt/a/g"
        [ ! -e "$mnt/a/b/f" ]
        for r in "$@"; do
            [ -f "$r/a/g" ]
            [ ! -e "$r/a/b/f" ]
        done
        # mv -n: rename(2) with RENAME_NOREPLACE, EEXIST, nothing moved
        head -c 1000 /dev/urandom > "$mnt/a/h"
        mv -n "$mnt/a/h" "$mnt/a/g"
        cmp "$src" "$mnt/a/g"
        [ "$(stat -c %s "$mnt/a/h")" = 1000 ]
        rm "$mnt/a/h"
        truncate -s 100 "$mnt/a/g"
        [ "$(stat -c %s "$mnt/a/g")" = 100 ]
        cmp -n 100 "$src" "$mnt/a/g"
        truncate -s 300000 "$mnt/a/g"                    # the new bytes read as zeros
        [ "$(stat -c %s "$mnt/a/g")" = 300000 ]
        [ "$(tail -c +101 "$mnt/a/g" | tr -d '\0' | wc -c)" = 0 ]
        chmod 600 "$mnt/a/g"
        [ "$(stat -c %a "$mnt/a/g")" = 600 ]
        touch -d 2001-02-03 "$mnt/a/g"
        [ "$(stat -c %Y "$mnt/a/g")" = "$(date -d 2001-02-03 +%s)" ]
        rm "$mnt/a/g"
        for r in "$@"; do [ ! -e "$r/a/g" ]; done
        fails rmdir "$mnt/a"                             # not empty: b is in it
        rmdir "$mnt/a/b" "$mnt/a"
        for r in "$@"; do [ ! -e "$r/a" ]; done
        ;;
    replicas)
        # two copies through one mount, read through another; copies hidden
        # (copy 1 of the last object is on the first server)
        mnt2=$1 mnt=$2 src=$3 root0=$4
        cp "$src" "$mnt2/r"
        [ -f "$root0/.r.copy1" ]
        [ "$(ls -A "$mnt" | grep -c 'copy')" = 0 ]
        cmp "$src" "$mnt/r"
        # a file of one copy moved over it: the old copies go
        head -c 70000 "$src" > "$mnt/one"
        mv "$mnt/one" "$mnt/r"
        [ ! -e "$root0/.r.copy1" ]
        cmp -n 70000 "$src" "$mnt/r"
        [ "$(stat -c %s "$mnt/r")" = 70000 ]
        cp "$src" "$mnt2/r2"
        rm "$mnt/r" "$mnt/r2"
        [ ! -e "$root0/.r2.copy1" ]
        [ -z "$(ls -A "$root0")" ]
        ;;
    rfs-files)
        mnt=$1 src=$2 root=$3
        mkdir "$mnt/d"
        cp "$src" "$mnt/d/f"
        cmp "$src" "$root/d/f"
        echo appended >> "$mnt/d/f"
        [ "$(tail -c 9 "$root/d/f")" = appended ]
        mv "$mnt/d/f" "$mnt/g"
        [ -f "$root/g" ]
        [ ! -e "$root/d/f" ]
        [ "$(ls "$mnt")" = "$(printf 'd\ng')" ]
        rm "$mnt/g"
        rmdir "$mnt/d"
        [ -z "$(ls -A "$root")" ]
        ;;
    symlinks)
        mnt=$1 root=$2
        mkdir -p "$root/data"
        echo inside > "$root/data/x"
        ln -s /etc "$root/to-etc"
        ln -s "$(realpath "$root")/data" "$root/to-data"
        [ "$(cat "$mnt/to-data/x")" = inside ]          # absolute, beneath the root
        fails cat "$mnt/to-etc/hostname"
        out=$(cat "$mnt/to-etc/hostname" 2>&1 || true)
        echo "$out" | grep -q "Invalid cross-device link"
        rm "$root/to-etc" "$root/to-data"
        rm -r "$root/data"
        ;;
    server-stops)
        # a silent server fails calls after the mount's timeout (3 s); a dead
        # one at once
        mnt=$1 pid=$2
        echo x > "$mnt/f"
        kill -STOP "$pid"
        start=$SECONDS
        rc=0
        timeout 30 stat "$mnt/f" > /dev/null 2>&1 || rc=$?
        kill -CONT "$pid"
        [ $rc -ne 0 ]
        [ $rc -ne 124 ]
        [ $((SECONDS - start)) -lt 20 ]
        kill -KILL "$pid"
        rc=0
        out=$(timeout 30 ls "$mnt" 2>&1) || rc=$?
        [ $rc -ne 0 ]
        [ $rc -ne 124 ]
        echo "$out" | grep -q "Transport endpoint is not connected"
        ;;
    unmount-open)
        # a lazy unmount with a file open: the name goes, the open file
        # stays readable, and rfs-mount ends once it is closed
        mnt=$1 pid=$2 src=$3
        cp "$src" "$mnt/held"
        exec 4< "$mnt/held"
        fails fusermount3 -u "$mnt"
        fusermount3 -uz "$mnt"
        fails grep -q " $(realpath "$mnt") " /proc/self/mounts
        cmp "$src" - <&4
        exec 4<&-
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fails kill -0 "$pid" 2>/dev/null
        ;;
    old-server)
        # a server that answers every request "protocol error" and closes, as
        # an rfsd without the namespace extension answers its first request
        mnt=$1 dir=$2
        mkdir -p "$mnt"
        python3 - "$dir/old.port" <<'PY' &
import socket, struct, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
c, _ = s.accept()
hdr = c.recv(24, socket.MSG_WAITALL)
magic, version, op, tag, status, length = struct.unpack("<IHHIiQ", hdr)
c.recv(length, socket.MSG_WAITALL)
c.sendall(struct.pack("<IHHIiQ", magic, version, op | 0x8000, tag, 13, 16) + bytes(16))
c.close()
PY
        fake=$!
        for _ in $(seq 100); do [ -s "$dir/old.port" ] && break; sleep 0.05; done
        rc=0
        out=$(timeout 30 "$RFS_MOUNT_BIN" -f "rfs:127.0.0.1:$(cat "$dir/old.port"):" "$mnt" 2>&1) \
            || rc=$?
        wait $fake || true
        [ $rc -ne 0 ]
        [ $rc -ne 124 ]
        echo "$out" | grep -q "namespace extension"
        fails grep -q " $(realpath "$mnt") " /proc/self/mounts
        ;;
    *) echo "unknown case $name"; exit 1 ;;
    esac
    set +x
    echo " No Errors"
    exit 0
fi

PREFIX=$1
work=$2
results=$3
. "$here/../lib.sh"
runner_start "$work"
export RFS_MOUNT_BIN=${RFS_MOUNT:-$PREFIX/bin/rfs-mount}
mpiexec="$PREFIX/bin/mpiexec $MPIEXEC_FLAGS"
"$PREFIX/bin/mpicc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -o "$work/bin/mount_io" \
    "$here/mount_io.c" || { echo "0 1 0" > "$results"; exit 1; }
head -c 5000001 /dev/urandom > "$work/src"
case_of() { run_case "$1" "$2" bash "$self" --case "${1#mount.}" "${@:3}"; }

echo "integration tests (rfs-mount)"
start_rdma_servers 4 "$work" mnt || { write_results "$results"; exit 1; }
# shellcheck disable=SC2086
roots=$RDMA_ROOTS
if start_mount rdma:/ "$work" rdma-mount "$work/rdma" --servers="$RDMA_SERVERS" -o timeout=10 &&
    start_mount rdma:/ "$work" rdma-mount2 "$work/rdma2" --servers="$RDMA_SERVERS" \
        -o replicas=2,striping_unit=4099; then
    # shellcheck disable=SC2086
    case_of mount.striped-files 120 "$work/rdma" "$work/src" $roots
    case_of mount.replicas 120 "$work/rdma2" "$work/rdma" "$work/src" "${roots%% *}"
    run_case mount.rdma.mount_io.np4 300 $mpiexec -n 4 "$work/bin/mount_io" "$work/rdma" rdma
    # a mount path with the driver forced, as a program that cannot be told
    # about the mount would be run
    mkdir -p "$work/rdma/forced"
    run_case mount.rdma.mount_io_forced.np2 300 env ROMIO_FSTYPE_FORCE=rdma: $mpiexec -n 2 \
        "$work/bin/mount_io" "$work/rdma/forced" rdma
else
    FAILED=$((FAILED + 1))
    echo "  FAIL mount.rdma (rfs-mount did not mount)"
fi
stop_all_rfsd

start_rfsd "$work/rfs-root" "$work" rfs-server || { write_results "$results"; exit 1; }
if start_mount "rfs:127.0.0.1:$RFSD_PORT:" "$work" rfs-mount "$work/rfs" -o timeout=3; then
    case_of mount.rfs-files 120 "$work/rfs" "$work/src" "$work/rfs-root"
    case_of mount.symlinks 60 "$work/rfs" "$work/rfs-root"
    run_case mount.rfs.mount_io.np4 300 $mpiexec -n 4 "$work/bin/mount_io" "$work/rfs" rfs
    case_of mount.unmount-open 60 "$work/rfs" "$MOUNT_PID" "$work/src"
    MOUNTS=""
else
    FAILED=$((FAILED + 1))
    echo "  FAIL mount.rfs (rfs-mount did not mount)"
fi
if start_mount "rfs:127.0.0.1:$RFSD_PORT:" "$work" rfs-mount-stops "$work/rfs" -o timeout=3; then
    case_of mount.server-stops 120 "$work/rfs" "$RFSD_PID"
    forget_rfsd "$RFSD_PID"
else
    FAILED=$((FAILED + 1))
fi
stop_all_rfsd
case_of mount.old-server 60 "$work/old" "$work"
write_results "$results"
