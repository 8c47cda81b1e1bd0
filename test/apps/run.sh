#!/usr/bin/env bash
# make check-apps / check-apps-full: the applications' own parallel test
# suites over every prefix (test/apps/modes.sh), ufs: the same run's
# baseline, and MPICH's test/mpi/io in full over rdma:, abt:rfs: and
# abt:ufs: (make check runs it over rfs:). Prints a table of suite x prefix
# and one line "N passed, N failed, N skipped".
#   run.sh REPO MPICH_DIR PNETCDF_DIR HDF5_DIR quick|full
# quick (CI): every suite over every prefix with the smallest process count
# of each list and without HDF5's three longest programs (t_bigio, t_cache,
# t_shapesame: minutes each on 2 cores, over ufs: too); full: everything.
set -u
repo=$1
mpich_dir=$2
pnetcdf_dir=$3
hdf5_dir=$4
profile=$5
here=$repo/test/apps
prefix=$repo/build/install
work=$(mktemp -d "${TMPDIR:-/tmp}/rfs-apps.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "$here/modes.sh"

case $profile in
    quick)
        hdf5_programs="t_mpi:2 testphdf5:2 t_cache_image:2 t_pread:3 t_pshutdown:2 t_prestart:2
            t_init_term:2 t_filters_parallel:2 t_pflush:2"
        ptest_nprocs=lowest ;;
    full)
        hdf5_programs=""
        ptest_nprocs="" ;;
    *) echo "run.sh: profile quick or full" >&2; exit 2 ;;
esac

# suite MODE COMMAND...: one runner over one prefix, its counts kept as
# $work/SUITE.MODE.res
suite() {
    local name=$1 mode=$2
    shift 2
    "$@"
    [ -s "$work/$name.$mode/res" ] || echo "0 1 0" > "$work/$name.$mode/res"
}

for mode in $APP_MODES_ALL; do
    mkdir -p "$work/hdf5.$mode" "$work/pnetcdf.$mode"
    # shellcheck disable=SC2086
    suite hdf5 "$mode" bash "$here/hdf5.sh" "$prefix" "$hdf5_dir" "$work/hdf5.$mode" \
        "$work/hdf5.$mode/res" "$mode" ${hdf5_programs:+-- $hdf5_programs}
    suite pnetcdf "$mode" env PNETCDF_NPROCS="$ptest_nprocs" bash "$here/pnetcdf-ptest.sh" \
        "$prefix" "$pnetcdf_dir" "$work/pnetcdf.$mode" "$work/pnetcdf.$mode/res" "$mode"
done
# The programs that read fill values or old data over abt: before the
# servers' leases (issue 37), ten runs each over abt:rfs: and abt:rdma:
# with read-write files buffered (their statistics checked, as in every
# abt-rfs and abt-rdma case).
for mode in abt-rfs abt-rdma; do
    mkdir -p "$work/hdf5x10.$mode" "$work/pnetcdfx10.$mode"
    suite hdf5x10 "$mode" env APPS_REPEAT=10 bash "$here/hdf5.sh" "$prefix" "$hdf5_dir" \
        "$work/hdf5x10.$mode" "$work/hdf5x10.$mode/res" "$mode" \
        -- testphdf5:2:-o,ccontw t_filters_parallel:2
    suite pnetcdfx10 "$mode" env APPS_REPEAT=10 PNETCDF_NPROCS=2 bash "$here/pnetcdf-ptest.sh" \
        "$prefix" "$pnetcdf_dir" "$work/pnetcdfx10.$mode" "$work/pnetcdfx10.$mode/res" "$mode" \
        -- nonblocking/i_varn_int64 nonblocking/bput_varn
done
for pass in rdma abt-rfs abt-ufs; do
    mkdir -p "$work/mpich-io.$pass"
    suite mpich-io "$pass" bash "$repo/test/mpich-io/run.sh" "$prefix" "$mpich_dir" \
        "$work/mpich-io.$pass" "$work/mpich-io.$pass/res" "$pass"
done

total_p=0 total_f=0 total_s=0
echo
echo "summary ($profile): passed/failed/skipped"
printf '  %-10s' suite
for mode in $APP_MODES_ALL; do printf ' %10s' "$mode"; done
echo
for name in hdf5 pnetcdf hdf5x10 pnetcdfx10 mpich-io; do
    printf '  %-10s' "$name"
    for mode in $APP_MODES_ALL; do
        if [ ! -d "$work/$name.$mode" ]; then
            printf ' %10s' -
            continue
        fi
        read -r p f s < "$work/$name.$mode/res"
        printf ' %10s' "$p/$f/$s"
        total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
    done
    echo
done
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
