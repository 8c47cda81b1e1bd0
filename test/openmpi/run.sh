#!/usr/bin/env bash
# The drivers under Debian's Open MPI (make openmpi's io component, no MPI of
# ours): programs built with mpicc.openmpi, run by mpirun.openmpi choosing
# that component (test/lib.sh: openmpi_env, OPENMPI_MPIEXEC). The integration
# tests that use MPI only (not MPICH's error messages or libmpich), Debian's
# parallel HDF5 over each prefix, MPI-IO on an rfs-mount's plain names, and
# ROMIO's suite (Open MPI's copy) over
# rfs:, abt:rfs: and rdma: (test/romio/run.sh with ROMIO_MPI=openmpi).
#   run.sh REPO OPENMPI_DIR WORKDIR RESULTS
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$1
dir=$2
work=$3
results=$4
. "$here/../lib.sh"
runner_start "$work"
export RFSD=$repo/build/obj/plain/rfsd RFS_MOUNT=$repo/build/obj/plain/rfs-mount
openmpi_env "$dir/components" || exit 1
mpiexec=$OPENMPI_MPIEXEC
itest=$repo/test/integration
skip() {
    SKIPPED=$((SKIPPED + 1))
    echo "  SKIP $1: $2"
}
# What the integration tests cannot check under this Open MPI (itest.h
# leaves it out by ITEST_MPI), counted here as skipped: the behaviour is
# the installed libmpi's, so its version decides.
version=$(bash "$repo/scripts/openmpi-version.sh")
export ITEST_MPI=openmpi-$version
why_messages="Open MPI's ROMIO glue drops ROMIO's error messages (mpio_err.c): MPI_Error_string gives the class's text"
info_tests=rfs_hints
case $version in
    4.*)
        why_info="Open MPI 4.1's MPI_File_get_info returns the info the application gave and MPI_File_set_info keeps it, neither asks the io component (ompi/mpi/c/file_get_info.c, file_set_info.c)"
        skip openmpi.hint_reports "rfs_contig, abt_basic, rdma_basic and rdma_subarray check no hint by get_info or set_info: $why_info; and no message: $why_messages"
        skip openmpi.rfs_hints "it checks the deferred open and close by what get_info reports: $why_info"
        info_tests="" ;;
    *)
        skip openmpi.messages "rfs_contig, abt_basic, rdma_basic, rdma_subarray and rfs_hints check no error message: $why_messages" ;;
esac

for t in rfs_contig rfs_noncontig abt_basic abt_order abt_wait abt_lease rdma_subarray mount_io \
    $info_tests; do
    mpicc.openmpi -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -o "$work/bin/$t" \
        "$itest/$t.c" || { echo "  FAIL build of $t"; FAILED=$((FAILED + 1)); }
done
mpicc.openmpi -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -I"$repo/adio" \
    -o "$work/bin/rdma_basic" "$itest/rdma_basic.c" "$repo/adio/stripe/stripe.c" \
    || { echo "  FAIL build of rdma_basic"; FAILED=$((FAILED + 1)); }
hdf5=/usr/lib/x86_64-linux-gnu/hdf5/openmpi
mpicc.openmpi -std=c11 -Wall -Wextra -Werror -O2 -I/usr/include/hdf5/openmpi \
    -o "$work/bin/hdf5_dataset" "$here/hdf5_dataset.c" -L"$hdf5/lib" -Wl,-rpath,"$hdf5/lib" \
    -lhdf5 || { echo "  FAIL build of hdf5_dataset"; FAILED=$((FAILED + 1)); }

echo "Open MPI: rfs:"
root=$work/root
start_rfsd "$root" "$work" main || exit 1
rfs="rfs:127.0.0.1:$RFSD_PORT:"
for np in 1 2 4; do
    run_case "openmpi.rfs_contig.np$np" 120 $mpiexec -n $np "$work/bin/rfs_contig" \
        "$rfs/contig.$np" "$root"
done
for np in 1 4; do
    mkdir -p "$root/noncontig.$np"
    run_case "openmpi.rfs_noncontig.np$np" 120 $mpiexec -n $np "$work/bin/rfs_noncontig" \
        "$rfs/noncontig.$np/" "$root/noncontig.$np"
done
[ -z "$info_tests" ] || run_case "openmpi.rfs_hints.np3" 120 $mpiexec -n 3 "$work/bin/rfs_hints" "$rfs/"

echo "Open MPI: abt: over rfs: and ufs:"
mkdir -p "$root/abt" "$root/abt-contig" "$root/abt-order" "$work/stage" "$work/ufs-abt"
run_case "openmpi.abt_basic.rfs.np4" 300 $mpiexec -n 4 "$work/bin/abt_basic" \
    "abt:$rfs/abt/" "$work/stage"
run_case "openmpi.abt_basic.ufs.np2" 300 $mpiexec -n 2 "$work/bin/abt_basic" \
    "abt:ufs:$work/ufs-abt/" "$work/stage"
run_case "openmpi.abt_rfs_contig.np4" 120 $mpiexec -n 4 "$work/bin/rfs_contig" \
    "abt:$rfs/abt-contig/f" "$root"
run_case "openmpi.abt_order.rfs.np2" 120 $mpiexec -n 2 "$work/bin/abt_order" "abt:$rfs/abt-order/"
mkdir -p "$root/abt-wait"
run_case "openmpi.abt_wait.rfs.np3" 60 $mpiexec -n 3 "$work/bin/abt_wait" "abt:$rfs/abt-wait/"
# read-write files under the server's leases: a server at 2 MB/s, so that a
# buffered MiB's write returns long before the server could answer for it
start_rfsd "$work/lease-root" "$work" lease --rate-limit 2 || exit 1
run_case "openmpi.abt_lease.rfs.np3" 120 $mpiexec -n 3 "$work/bin/abt_lease" \
    "abt:rfs:127.0.0.1:$RFSD_PORT:/" 2

echo "Open MPI: rdma: striped over 2 and 4 servers"
for layout in "2 4096" "4 1000"; do
    read -r n unit <<< "$layout"
    start_rdma_servers "$n" "$work" "rdma$n" || exit 1
    for r in $RDMA_ROOTS; do mkdir -p "$r/d" "$r/h5"; done
    # shellcheck disable=SC2086
    ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "openmpi.rdma_basic.s$n.u$unit.np4" 300 \
        $mpiexec -n 4 "$work/bin/rdma_basic" "rdma:/d/" "$unit" "$n" $RDMA_ROOTS
done
ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "openmpi.rdma_subarray.np4" 300 $mpiexec -n 4 \
    "$work/bin/rdma_subarray" "rdma:/d/" 2048
# plain names on an rfs-mount of those servers: Open MPI's ROMIO finds the
# mount (the patch's hook) and goes to the driver (its statistics at close
# say so, where get_info cannot), POSIX through the mount
if start_mount rdma:/ "$work" mount "$work/mnt" --servers="$RDMA_SERVERS"; then
    # shellcheck disable=SC2086
    run_case "openmpi.mount_io.np4" 300 bash -c 'out=$("$@" 2>&1); rc=$?
        echo "$out" | grep -v "^rdma stats"
        [ $rc = 0 ] && echo "$out" | grep -q "^rdma stats" ||
            { echo "failed, or the rdma: driver did not run (no rdma stats)"; exit 1; }' \
        mount_io env ROMIO_RDMA_STATS=1 $mpiexec -n 4 "$work/bin/mount_io" "$work/mnt" rdma
else
    FAILED=$((FAILED + 1)); echo "  FAIL openmpi.mount_io (rfs-mount did not mount)"
fi

echo "Open MPI: Debian's parallel HDF5 (libhdf5-openmpi) over each prefix"
mkdir -p "$root/h5" "$root/abt-h5"
run_case "openmpi.hdf5.rfs.np4" 120 $mpiexec -n 4 "$work/bin/hdf5_dataset" "$rfs/h5/d.h5"
run_case "openmpi.hdf5.abt_rfs.np4" 120 $mpiexec -n 4 "$work/bin/hdf5_dataset" \
    "abt:$rfs/abt-h5/d.h5"
ROMIO_RDMA_SERVERS=$RDMA_SERVERS run_case "openmpi.hdf5.rdma.np4" 120 $mpiexec -n 4 \
    "$work/bin/hdf5_dataset" "rdma:/h5/d.h5"
# The file HDF5 wrote through rfs: is an HDF5 file in the server's root.
if [ "$(head -c 8 "$root/h5/d.h5" 2>/dev/null | od -An -tx1 | tr -d ' ')" = 894844460d0a1a0a ]; then
    PASSED=$((PASSED + 1)); echo "  PASS openmpi.hdf5.rfs.in_server_root"
else
    FAILED=$((FAILED + 1)); echo "  FAIL openmpi.hdf5.rfs.in_server_root (no HDF5 signature in $root/h5/d.h5)"
fi

stop_all_rfsd
write_results "$work/itest.res"

echo "Open MPI: ROMIO's test suite (Open MPI's copy)"
ROMIO_MPI=openmpi bash "$repo/test/romio/run.sh" - "$dir" "$work/romio" "$work/romio.res" \
    rfs abt-rfs rdma-2-4096-datatype
[ -s "$work/romio.res" ] || { echo "  FAIL ROMIO's suite wrote no results"; echo "0 1 0" > "$work/romio.res"; }
read -r p f s < "$work/itest.res"
read -r rp rf rs < "$work/romio.res"
echo "$((p + rp)) $((f + rf)) $((s + rs))" > "$results"
