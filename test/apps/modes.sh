# The prefixes the applications' suites run over (sourced by test/apps/*.sh,
# after test/lib.sh). The applications keep their plain, relative file names,
# put on a driver by the rfs-mount they run in or by ROMIO_FSTYPE_FORCE; each
# case runs in the mode's directory:
#   ufs       a local directory, no prefix: the baseline of the same run
#   rfs       rfs: to one rfsd, the cases in an rfs-mount of its export (as
#             rdma: below, no ROMIO_FSTYPE_FORCE)
#   rdma      rdma: over 4 rfsd, stripe unit 64 KiB, disk-directed collectives,
#             the cases run in an rfs-mount of the servers: ROMIO finds the
#             mount's names are rdma: ones (no ROMIO_FSTYPE_FORCE), MPI-IO goes
#             to the driver and POSIX calls and serial tools through the mount
#   rdma-odd  the same with stripe unit 4099 (odd, dividing nothing)
#   abt-rfs   abt: over rfs: (ROMIO_ABT_INNER=rfs:, ROMIO_FSTYPE_FORCE=abt:) to
#             one rfsd whose export root is the directory, so a POSIX call or a
#             serial tool on the same name sees the server's file; read-write
#             files buffered under the server's leases (abt_buffer_rdwr=auto)
#   abt-rdma  abt: over rdma: (ROMIO_ABT_INNER=rdma:) as rdma above, in an
#             rfs-mount of the 4 servers, read-write files buffered so too
#   abt-ufs   abt: over ufs: in a local directory (read-write files written
#             through)
APP_MODES_ALL="ufs rfs rdma rdma-odd abt-rfs abt-rdma abt-ufs"

# mode_setup MODE DIR: starts the servers MODE needs and sets MODE_DIR,
# under DIR, where the mode's cases run, and MODE_ENV, the environment
# assignments that put plain names on the driver. Returns 1 when a server
# did not start.
mode_setup() {
    local mode=$1 dir=$2 unit
    MODE_ENV=""
    case $mode in
        ufs) MODE_DIR=$dir/ufs ;;
        abt-ufs) MODE_DIR=$dir/abt-ufs MODE_ENV="ROMIO_FSTYPE_FORCE=abt:" ;;
        rfs)
            # an rfs-mount of the server's export: ROMIO finds the mount's
            # names are rfs: ones, POSIX goes through the mount
            MODE_DIR=$dir/$mode
            start_rfsd "$dir/$mode-root" "$dir" "apps-$mode" || return 1
            start_mount "rfs:127.0.0.1:$RFSD_PORT:" "$dir" "apps-$mode-mount" "$MODE_DIR" \
                || return 1
            MODE_ENV="ROMIO_RFS_STATS=1 MODE_DRIVER_SAYS=rfs_stats:"
            ;;
        abt-rfs)
            # the server's root is the directory: a plain relative name is
            # the same file to the driver (relative to the root) and to POSIX
            MODE_DIR=$dir/$mode
            start_rfsd "$MODE_DIR" "$dir" "apps-$mode" || return 1
            MODE_ENV="ROMIO_RFS_SERVER=127.0.0.1:$RFSD_PORT ROMIO_ABT_INNER=rfs:"
            MODE_ENV="$MODE_ENV ROMIO_FSTYPE_FORCE=abt: ROMIO_ABT_STATS=1 MODE_ABT_BUFFERED=1"
            ;;
        rdma|rdma-odd|abt-rdma)
            unit=65536
            [ "$mode" != rdma-odd ] || unit=4099
            start_rdma_servers 4 "$dir" "apps-$mode" || return 1
            printf 'striping_unit %s\nrdma_coll disk_directed\n' "$unit" > "$dir/$mode.hints"
            MODE_DIR=$dir/$mode
            # the mount's own layout differs from the hints': a file the
            # driver made has the hints' unit in its header (mode_made_by_driver)
            start_mount rdma:/ "$dir" "apps-$mode-mount" "$MODE_DIR" \
                --servers="$RDMA_SERVERS" -o striping_unit=1048576 || return 1
            MODE_ENV="ROMIO_HINTS=$dir/$mode.hints MODE_OBJECT_ROOT=${RDMA_ROOTS%% *}"
            MODE_ENV="$MODE_ENV MODE_UNIT=$unit"
            [ "$mode" != abt-rdma ] ||
                MODE_ENV="$MODE_ENV ROMIO_FSTYPE_FORCE=abt: ROMIO_ABT_INNER=rdma: ROMIO_ABT_STATS=1 MODE_ABT_BUFFERED=1"
            ;;
        *) echo "unknown mode $mode (modes: $APP_MODES_ALL)" >&2; return 1 ;;
    esac
    mkdir -p "$MODE_DIR"
}

# mode_driver_ran OUTPUT: over rfs:, that a case's output (its processes'
# stderr) has the driver's statistics of a file it closed
# (MODE_DRIVER_SAYS, "_" for a blank): MPI-IO went to the driver, not
# through the mount; over abt:rfs: and abt:rdma: (MODE_ABT_BUFFERED), that
# abt's statistics count buffered bytes: the read-write files were not
# written through. Elsewhere true.
mode_driver_ran() {
    if [ -n "${MODE_ABT_BUFFERED:-}" ]; then
        awk '/^abt stats:/ { for (i = 2; i <= NF; i++) if ($i == "bytes),") n += substr($(i - 1), 2) }
             END { exit !(n > 0) }' "$1" ||
            { echo "abt's statistics count no buffered bytes: the files were written through"; return 1; }
    fi
    [ -n "${MODE_DRIVER_SAYS:-}" ] || return 0
    grep -q "^${MODE_DRIVER_SAYS//_/ }" "$1" ||
        { echo "no \"${MODE_DRIVER_SAYS//_/ }\" in the output: MPI-IO did not go to the driver"; false; }
}

# mode_made_by_driver FILE: over rdma:, that the driver made FILE (a name
# in the mode's directory): its object 0 on the first server has the
# hints' stripe unit (a file made through the mount has the mount's), so
# that MPI-IO went to the driver and not through the mount. Elsewhere true.
mode_made_by_driver() {
    [ -n "${MODE_OBJECT_ROOT:-}" ] || return 0
    python3 - "$MODE_OBJECT_ROOT/$1" "$MODE_UNIT" <<'PY'
import struct, sys
with open(sys.argv[1], "rb") as f:
    head = f.read(32)
# stripe.c's header: "ROMIOSTR", then the unit at byte 24
unit = struct.unpack_from("<Q", head, 24)[0] if head[:8] == b"ROMIOSTR" else 0
if unit != int(sys.argv[2]):
    sys.exit("%s: stripe unit %d, not the hints' %s: MPI-IO did not go to the rdma: driver"
             % (sys.argv[1], unit, sys.argv[2]))
PY
}

# mode_done: stops the servers of the mode.
mode_done() {
    stop_all_rfsd
}
