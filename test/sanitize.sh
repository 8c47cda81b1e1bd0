#!/usr/bin/env bash
# make check-sanitize: the unit tests under ASan+UBSan, TSan and valgrind,
# and the integration tests against an rfsd built with ASan+UBSan and one
# built with TSan. (The MPI client side lives in libmpi, built without
# sanitizers; its protocol and transport code is what the unit tests run.)
set -u
repo=$1
prefix=$repo/build/install
work=$(mktemp -d "${TMPDIR:-/tmp}/rfs-sanitize.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$repo"
. test/lib.sh

asan="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
make -s FLAVOUR=asan EXTRA_CFLAGS="$asan" unit build/obj/asan/rfsd build/obj/asan/rfs-mount || exit 1
make -s FLAVOUR=tsan EXTRA_CFLAGS="-fsanitize=thread" unit build/obj/tsan/rfsd build/obj/tsan/rfs-mount \
    || exit 1
make -s FLAVOUR=plain unit || exit 1
# The Makefile's lists (the sanitizer options: test/lib.sh)
tests=$(make -s --no-print-directory print-UNIT_TESTS)
mpi_tests=$(make -s --no-print-directory print-MPI_TESTS)
tsan_tests=$(make -s --no-print-directory print-TSAN_TESTS)
echo "== ASan+UBSan"
bash test/run-unit.sh build/obj/asan "$work/asan.res" $tests $mpi_tests
echo "== TSan (the threaded tests)"
bash test/run-unit.sh build/obj/tsan "$work/tsan.res" $tsan_tests
# (the MPI tests would check MPICH under valgrind, not our code)
echo "== valgrind"
UNIT_UNDER_VALGRIND=1 \
UNIT_WRAPPER="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite" \
    bash test/run-unit.sh build/obj/plain "$work/valgrind.res" $tests
# The clients without MPI (rfs_clients, rfsd_hostile) are built with the
# same sanitizer as the server (TEST_CFLAGS).
echo "== integration, rfsd, rfs-mount and the plain C clients with ASan+UBSan"
RFSD=$repo/build/obj/asan/rfsd RFS_MOUNT=$repo/build/obj/asan/rfs-mount TEST_CFLAGS="$asan" \
    bash test/integration/run.sh "$prefix" "$work/it-asan" "$work/it-asan.res"
echo "== integration, rfsd, rfs-mount and the plain C clients with TSan"
RFSD=$repo/build/obj/tsan/rfsd RFS_MOUNT=$repo/build/obj/tsan/rfs-mount TEST_CFLAGS="-fsanitize=thread" \
    bash test/integration/run.sh "$prefix" "$work/it-tsan" "$work/it-tsan.res"

# A sanitizer report in any rfsd log is a failure even if the client passed
# (stop_rfsd checks each server's log too; this also sees a server that
# was never stopped by it).
if grep -lE "$SANITIZER_REPORT" "$work"/it-*/*.log "$work"/it-*/*/*.log 2>/dev/null; then
    echo "sanitizer reports in the rfsd and rfs-mount logs above"
    echo "0 1 0" > "$work/logs.res"
fi

# A suite that did not finish (no results file) counts as a failure.
total_p=0 total_f=0 total_s=0
for r in asan tsan valgrind it-asan it-tsan logs; do
    if [ -s "$work/$r.res" ]; then
        read -r p f s < "$work/$r.res"
    elif [ "$r" = logs ]; then
        p=0 f=0 s=0
    else
        echo "$r: did not finish"
        p=0 f=1 s=0
    fi
    total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
done
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
