#!/usr/bin/env bash
# MPI integration tests of the rfs: driver against live rfsd servers.
#   run.sh PREFIX WORKDIR RESULTS
set -u
here=$(cd "$(dirname "$0")" && pwd)
PREFIX=$1
work=$2
results=$3
. "$here/../lib.sh"
LOGDIR=$work/logs
mkdir -p "$work/bin" "$LOGDIR"
trap stop_all_rfsd EXIT

mpicc="$PREFIX/bin/mpicc"
mpiexec="$PREFIX/bin/mpiexec $MPIEXEC_FLAGS"
for t in rfs_contig rfs_errors rfs_hints rfs_large; do
    "$mpicc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -o "$work/bin/$t" "$here/$t.c" \
        || { echo "cannot build $t"; FAILED=$((FAILED + 1)); }
done

echo "integration tests (rfs:)"
root=$work/root
start_rfsd "$root" "$work" main || exit 1
main_port=$RFSD_PORT
for np in 1 2 3 4; do
    run_case "rfs_contig.np$np" 120 $mpiexec -n $np "$work/bin/rfs_contig" \
        "rfs:127.0.0.1:$main_port:/contig.$np" "$root"
done
run_case "rfs_hints.np3" 120 $mpiexec -n 3 "$work/bin/rfs_hints" "rfs:127.0.0.1:$main_port:/"

ln -s /etc "$root/escape"
echo existing > "$root/existing"
start_rfsd "$work/dead-root" "$work" dead || exit 1
dead_port=$RFSD_PORT
stop_rfsd "$RFSD_PID"
start_rfsd "$work/kill-root" "$work" kill || exit 1
kill_port=$RFSD_PORT kill_pid=$RFSD_PID
start_rfsd "$work/stop-root" "$work" stop || exit 1
run_case "rfs_errors" 120 $mpiexec -n 1 "$work/bin/rfs_errors" 127.0.0.1 "$main_port" \
    "$dead_port" "$kill_port" "$kill_pid" "$RFSD_PORT" "$RFSD_PID"

run_case "rfs_large.2GiB" 600 $mpiexec -n 1 "$work/bin/rfs_large" \
    "rfs:127.0.0.1:$main_port:/large"

stop_all_rfsd
write_results "$results"
