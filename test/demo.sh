#!/usr/bin/env bash
# make demo: rfsd on 127.0.0.1 with a temporary root, 4 MPI processes
# writing and reading one file through rfs:, checked byte for byte.
set -eu
repo=$1
PREFIX=$repo/build/install
. "$repo/test/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/rfs-demo.XXXXXX")
trap 'stop_all_rfsd; rm -rf "$work"' EXIT

"$PREFIX/bin/mpicc" -O2 -std=c11 -D_GNU_SOURCE -o "$work/demo" "$repo/test/demo.c"
start_rfsd "$work/root" "$work" demo
echo "rfsd (pid $RFSD_PID) serves $work/root on 127.0.0.1:$RFSD_PORT"
echo "mpiexec -n 4 demo rfs:127.0.0.1:$RFSD_PORT:/demo.dat"
"$PREFIX/bin/mpiexec" $MPIEXEC_FLAGS -n 4 "$work/demo" "rfs:127.0.0.1:$RFSD_PORT:/demo.dat" \
    "$work/root/demo.dat" 64
stop_rfsd "$RFSD_PID"
echo "rfsd stopped"
