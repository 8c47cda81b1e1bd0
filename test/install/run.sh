#!/usr/bin/env bash
# make check-install: make install into a temporary prefix as a site would,
# then use it as a user would, in a clean environment: Debian's Lmod loads
# the installed module file, the installed mpicc builds a program, two rfsd
# started from installed-style config files serve it, and the program
# writes and reads back through rfs:, rdma: and abt:rfs: (bytes compared).
# Also: a second install over the first, a DESTDIR install, the man pages
# rendered, the systemd unit verified, and uninstall leaving no file.
#   run.sh REPO BUILD_PREFIX [OPENMPI_COMPONENTS]
set -u
repo=$1
build=$2
ompi=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/check-install.XXXXXX")
PASSED=0 FAILED=0 SKIPPED=0 FAILED_NAMES=""
runner_start "$work"
trap 'stop_all_rfsd; rm -rf "$work"' EXIT
prefix=$work/prefix
install=(bash "$repo/scripts/install.sh")

in_module=(bash "$here/in-module.sh" "$prefix")

# from_config NAME: rfsd from the installed bin with NAME.conf (root and
# port file in it); sets RFSD_PORT, and registers the PID for the cleanup
from_config() {
    mkdir -p "$work/$1-root"
    cat > "$work/$1.conf" <<EOF
# rfsd's settings, as in /etc/rfsd/NAME.conf (dist/rfsd.conf.example)
root = $work/$1-root
port-file = $work/$1.port
max-connections = 256
EOF
    "$prefix/bin/rfsd" --config "$work/$1.conf" 2> "$work/$1.log" &
    RFSD_PID=$!
    RFSD_PIDS="$RFSD_PIDS $RFSD_PID"
    RFSD_LOGS="$RFSD_LOGS $RFSD_PID=$work/$1.log"
    for _ in $(seq 1 100); do
        [ -s "$work/$1.port" ] && { RFSD_PORT=$(cat "$work/$1.port"); return 0; }
        sleep 0.05
    done
    cat "$work/$1.log"
    return 1
}

manifest_files() {
    wc -l < "$prefix/share/romio-drivers/manifest"
}

echo "make install into a temporary prefix, used through its module file"
check install.fresh "${install[@]}" install "$repo" "$build" "$prefix" "" "$ompi"
first=$(manifest_files)
check install.again "${install[@]}" install "$repo" "$build" "$prefix" "" "$ompi"
check install.same_files test "$first" = "$(manifest_files)"
check install.destdir bash -c '"$0" install "$1" "$2" /opt/romio-drivers "$3/stage" &&
    grep -q "^prefix=/opt/romio-drivers$" "$3/stage/opt/romio-drivers/bin/mpicc"' \
    "$repo/scripts/install.sh" "$repo" "$build" "$work"
check module.load "${in_module[@]}" bash -c '[ "$(command -v mpicc)" = "$0/bin/mpicc" ] &&
    [ "$(command -v rfsd)" = "$0/bin/rfsd" ] && man -w rfsd >/dev/null &&
    [ "$(command -v rfs-mount)" = "$0/bin/rfs-mount" ] && man -w rfs-mount >/dev/null' "$prefix"
check program.build "${in_module[@]}" mpicc -std=c11 -o "$work/installed_io" \
    "$repo/test/install/installed_io.c"
check program.links_prefix bash -c 'ldd "$0" | grep -qE "libmpi\.so\.[0-9]+ => $1/lib/"' \
    "$work/installed_io" "$prefix"
if from_config a && a=$RFSD_PORT && from_config b && b=$RFSD_PORT; then
    export ROMIO_RDMA_SERVERS="127.0.0.1:$a,127.0.0.1:$b"
    run_case installed.rfs_rdma_abt.np2 120 "${in_module[@]}" mpiexec -launcher fork -n 2 \
        "$work/installed_io" "rfs:127.0.0.1:$a:/a.dat" "rdma:/b.dat" \
        "abt:rfs:127.0.0.1:$a:/c.dat"
else
    FAILED=$((FAILED + 1))
    echo "  FAIL installed.rfs_rdma_abt (rfsd did not start from its config file)"
fi
for page in "$prefix"/share/man/man*/*; do
    case $page in */rfsd.8|*/romio-drivers.7|*/rfs-mount.1|*/rdma-resync.1) ;; *) continue ;; esac
    check "man.$(basename "$page")" bash -c 'w=$(MANWIDTH=80 man -l --warnings "$0" 2>&1 \
        >/dev/null); [ -z "$w" ] || { echo "$w"; false; }' "$page"
done
for unit in "$prefix"/lib/systemd/system/*.service; do
    [ -e "$unit" ] || continue
    check "systemd.$(basename "$unit")" bash "$repo/test/install/verify-unit.sh" "$unit" \
        "$prefix"
done
check uninstall bash -c '"$0" uninstall "$1" && [ -z "$(find "$1" -type f)" ]' \
    "$repo/scripts/install.sh" "$prefix"
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" -eq 0 ]
