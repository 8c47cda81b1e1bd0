#!/usr/bin/env bash
# make check: unit tests, MPI integration tests, ROMIO's test suite over
# rfs:, abt:rfs:, abt:ufs:, abt: forced on plain names and rdma: (1, 2 and 4 servers), MPICH's
# test/mpi/io over rfs:, PnetCDF's tests over abt:. Ends with one line "N passed, N failed, N skipped".
set -u
repo=$1
mpich_dir=$2
pnetcdf_dir=$3
prefix=$repo/build/install
work=$(mktemp -d "${TMPDIR:-/tmp}/rfs-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

# the unit tests: the Makefile's lists
# shellcheck disable=SC2046
bash "$repo/test/run-unit.sh" "$repo/build/obj/plain" "$work/unit.res" \
    $(make -s --no-print-directory -C "$repo" print-UNIT_TESTS print-MPI_TESTS)
bash "$repo/test/integration/run.sh" "$prefix" "$work/integration" "$work/integration.res"
bash "$repo/test/romio/run.sh" "$prefix" "$mpich_dir" "$work/romio" "$work/romio.res" \
    rfs abt-rfs abt-ufs abt-force rdma-1-65536-list rdma-2-4096-datatype rdma-4-1000-list-auto-enable rdma-4-65536-datatype \
    rdma-4-65536-list-two_phase rdma-4-65536-list-two_phase-auto-2 rdma-4-65536-datatype-disk_directed-auto-2
bash "$repo/test/mpich-io/run.sh" "$prefix" "$mpich_dir" "$work/mpich-io" "$work/mpich-io.res"
bash "$repo/test/apps/pnetcdf.sh" "$prefix" "$pnetcdf_dir" "$work/apps" "$work/apps.res"

total_p=0 total_f=0 total_s=0
echo
echo "summary"
for suite in unit integration romio mpich-io apps; do
    if [ -s "$work/$suite.res" ]; then
        read -r p f s < "$work/$suite.res"
    else
        p=0 f=1 s=0     # the suite did not finish
    fi
    printf '  %-12s %3d passed, %d failed, %d skipped\n' "$suite" "$p" "$f" "$s"
    total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
done
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
