#!/usr/bin/env bash
# make bench-scale, last part: what one collective open costs (open_cost.c)
# for P = 2 to 32 processes, on loopback and, where the lab can be made
# (root, namespaces), over its 2 client hosts with its 4 server hosts
# (test/lab/lab.sh, links LAB_RATE, default 1gbit): rdma: striped over 4
# rfsd servers, rfs: on one, and ufs: (a local file) as the baseline in the
# same job, the three opened in turn round by round. Per row: the median
# over the opens of the slowest process's time, that against ufs:'s, one
# MPI_Barrier among the same processes (with more processes than cores
# every collective waits for the scheduler: this machine has 2), and from
# the drivers' counters (ROMIO_RDMA_STATS, ROMIO_RFS_STATS, every
# process's, summed here) the requests each server received per open and
# the headers read per open. OPENS per job is 64/P, at least 3, so the
# whole part stays within about 2 minutes on 2 cores.
#   open_cost.sh REPO [NPS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$1
nps=${2:-2 4 8 16 32}
PREFIX=$repo/build/install
prog=$repo/build/obj/plain/open_cost
. "$here/../lib.sh"
. "$here/../lab/lab.sh"
# (the name: `lab.sh down --stale` finds it when this runner was killed)
work=$(mktemp -d "${TMPDIR:-/tmp}/lab-rl$$-work.XXXXXX")
# shellcheck disable=SC2034  # lab.sh's
LAB_REMOVE=$work            # lab_down removes it, lab or not
lab_trap                    # on exit: every rfsd stopped, the lab torn down
failed=0

# rows WHERE MPIEXEC HOSTS_OPT SERVERS RFS: one job per P (a row per
# prefix); HOSTS_OPT "lab" spreads the ranks over the lab's client hosts
rows() {
    local where=$1 mpiexec=$2 hosts=$3 servers=$4 rfs=$5 np opens out err hostargs job rc
    mkdir -p "$work/ufs-$where"
    for np in $nps; do
        opens=$((64 / np))
        [ "$opens" -ge 3 ] || opens=3
        hostargs=""
        [ "$hosts" != lab ] || hostargs="-hosts $LAB_HOSTS -ppn $(((np + 1) / 2))"
        out=$work/$where-$np.out err=$work/$where-$np.err
        # in the background, waited for: an INT or TERM of this runner tears
        # down at once (not when the job is over), and stops the job (lab_bg)
        # shellcheck disable=SC2086
        ROMIO_RDMA_SERVERS=$servers ROMIO_RDMA_STATS=1 ROMIO_RFS_STATS=1 \
            timeout --kill-after=10 300 $mpiexec $hostargs -n "$np" "$prog" "$opens" \
            "ufs:$work/ufs-$where/oc.dat" "rfs:$rfs:/oc.dat" rdma:/oc.dat > "$out" 2> "$err" &
        job=$!
        lab_bg "$job"
        wait "$job"
        rc=$?
        # over: its PID is no longer ours to signal
        LAB_BG_PIDS=${LAB_BG_PIDS// $job/}
        if [ "$rc" -ne 0 ]; then
            echo "  FAIL $where np=$np:"
            tail -15 "$out" "$err" | sed 's/^/       | /'
            failed=$((failed + 1))
            continue
        fi
        table "$where" "$np" "$opens" "$out" "$err" || failed=$((failed + 1))
    done
}

# table WHERE NP OPENS OUT ERR: the job's rows. Counters: every close of
# every process prints them; rdma: one "header reads" line a close and a
# "server I (...): R requests" line a server (printed before its CLOSE
# requests are sent: they are not counted), rfs: one "R requests" line a
# close (its CLOSE counted), and one more per open from ROMIO's generic
# create step on one process. A job whose rdma: closes did not all report
# (NP x OPENS) fails the row: its sums would be wrong.
table() {
    awk -v where="$1" -v np="$2" -v opens="$3" '
        FNR == NR && $1 == "RESULT" {
            split($2, f, "="); file = f[2]; sub(/:.*/, "", file)
            ms[file] = substr($5, 9)
            next
        }
        FNR != NR && /^rdma stats: .*: server [0-9]+ \(.*\): [0-9]+ requests/ {
            match($0, /server [0-9]+ /); s = substr($0, RSTART + 7, RLENGTH - 8)
            match($0, /\): [0-9]+ requests/); rq[s] += substr($0, RSTART + 3, RLENGTH - 12)
            next
        }
        FNR != NR && /^rdma stats: .*; header reads [0-9]+/ {
            match($0, /header reads [0-9]+/); hr += substr($0, RSTART + 13, RLENGTH - 13)
            closes++
            if (match($0, /connections of the process [0-9]+/) &&
                substr($0, RSTART + 27, RLENGTH - 27) + 0 > conns["rdma"])
                conns["rdma"] = substr($0, RSTART + 27, RLENGTH - 27) + 0
            next
        }
        FNR != NR && /^rfs stats: .*: [0-9]+ requests/ {
            match($0, /: [0-9]+ requests/); rfsrq += substr($0, RSTART + 2, RLENGTH - 11)
            if (match($0, /connections of the process [0-9]+/) &&
                substr($0, RSTART + 27, RLENGTH - 27) + 0 > conns["rfs"])
                conns["rfs"] = substr($0, RSTART + 27, RLENGTH - 27) + 0
        }
        END {
            lo = -1; hi = 0
            for (s in rq) { if (lo < 0 || rq[s] < lo) lo = rq[s]; if (rq[s] > hi) hi = rq[s] }
            per = lo == hi ? sprintf("%.1f", lo / opens) : sprintf("%.1f-%.1f", lo / opens, hi / opens)
            fmt = "%-9s %5d %-5s %5d %10.3f %7s %10.3f %10s %7s %6s\n"
            printf fmt, where, np, "ufs", opens, ms["ufs"], "1.00", ms["barrier"], "-", "-", "-"
            printf fmt, where, np, "rfs", opens, ms["rfs"], sprintf("%.2f", ms["rfs"] / ms["ufs"]),
                ms["barrier"], sprintf("%.1f", rfsrq / opens), "-", conns["rfs"] + 0
            printf fmt, where, np, "rdma", opens, ms["rdma"], sprintf("%.2f", ms["rdma"] / ms["ufs"]),
                ms["barrier"], per, sprintf("%.1f", hr / opens), conns["rdma"] + 0
            if (closes != np * opens) {
                printf "  FAIL %s np=%d: %d rdma: closes reported, expected %d\n", where, np,
                    closes, np * opens
                exit 1
            }
        }' "$4" "$5"
}

echo
echo "bench-scale: the cost of a collective open (MPI_MODE_CREATE | MPI_MODE_RDWR on an existing file)"
# what else this machine runs shows in every time here (busy-polling ranks)
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %5s %-5s %5s %10s %7s %10s %10s %7s %6s\n' where procs drv opens "ms/open" \
    "x ufs" "barrier ms" "req/server" "headers" "conns"

start_rdma_servers 4 "$work" lo-srv
start_rfsd "$work/lo-rfs-root" "$work" lo-rfs
rows loopback "$PREFIX/bin/mpiexec $MPIEXEC_FLAGS" "" "$RDMA_SERVERS" "127.0.0.1:$RFSD_PORT"
stop_all_rfsd || failed=$((failed + 1))

if lab_up 2 4 "${LAB_RATE:-1gbit}"; then
    servers=""
    for i in 0 1 2 3; do
        lab_start_rfsd "$i" "$work" "lab-srv$i" || exit 1
        servers="$servers${servers:+,}$LAB_RFSD_ADDR:$RFSD_PORT"
    done
    # rfs: on server host 0, a server of its own
    lab_start_rfsd 0 "$work" lab-rfs || exit 1
    rows lab "$LAB_MPIEXEC" lab "$servers" "$LAB_RFSD_ADDR:$RFSD_PORT"
    stop_all_rfsd || failed=$((failed + 1))
else
    echo "lab: skipped: $LAB_WHY"
fi
echo "(ms/open: median over the opens of the slowest process, MPI_Barrier first; x ufs: against"
echo " ufs: in the same job; barrier ms: one MPI_Barrier there; req/server: requests each server"
echo " received per open, all processes, from the drivers' counters (rdma: without its CLOSEs,"
echo " rfs: with them); headers: rdma: headers read per open; conns: the most connections"
echo " a process held (rdma: all servers, rfs: its one). lab: ranks over 2 client hosts,"
echo " servers on 4 server hosts, links ${LAB_RATE:-1gbit}; loopback: one host, $(nproc) cores)"
[ "$failed" -eq 0 ]
