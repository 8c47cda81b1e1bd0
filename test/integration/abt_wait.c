/* abt_wait PREFIX: a process that waits in abt:'s agreements leaves its
 * core to the others: where processes outnumber cores, one that polls
 * keeps the one it waits for from running (IOR's writer over abt:ufs:,
 * 4 processes on 2 cores, lost 8-20 ms at every close). The last process
 * comes 1 s late to a collective write; the others wait for it in abt's
 * ordering allreduce and must use at most a quarter of that time on their
 * own core. It comes late to the close too, where the others must wait
 * (no process leaves before every queue has drained); there ROMIO's own
 * MPI_Barrier, which polls, comes before abt's agreement, so only the
 * wait is checked. Then every byte is read back. */
#include <time.h>
#include <unistd.h>

#include "itest.h"

enum { BLOCK = 1 << 20, LATE_US = 1000000 };
#define MIN_WAIT_S 0.9
#define MAX_CPU_SHARE 0.25

static unsigned char byte_of(int part, int r, MPI_Offset i)
{
    return (unsigned char)(part * 61 + r * 7 + i % 253 + 1);
}

static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct waited {
    double wall, cpu;
};

static struct waited start(void)
{
    return (struct waited){ MPI_Wtime(), thread_cpu_s() };
}

/* The last process is late; the others check that they waited, and with
 * `idle`, how. */
static void check_waited(struct waited w, int rank, int nprocs, const char *where, int idle)
{
    double wall = MPI_Wtime() - w.wall, cpu = thread_cpu_s() - w.cpu;
    if (rank == nprocs - 1)
        return;
    printf("rank %d: %s waited %.3f s, %.3f s of it on the core\n", rank, where, wall, cpu);
    CHECK(wall >= MIN_WAIT_S, "%s returned after %.3f s, before the late process came", where,
          wall);
    CHECK(!idle || cpu <= MAX_CPU_SHARE * wall, "%s held the core %.3f s of the %.3f s it waited",
          where, cpu, wall);
}

static void be_late(int rank, int nprocs)
{
    if (rank == nprocs - 1)
        usleep(LATE_US);
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_File fh;
    char name[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 2 && nprocs > 1, "usage: mpiexec -n 2.. abt_wait PREFIX");
    snprintf(name, sizeof name, "%swait", argv[1]);
    unsigned char *buf = malloc(BLOCK);
    CHECK(buf, "out of memory");

    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            MPI_INFO_NULL, &fh));
    for (int part = 0; part < 2; part++) {
        MPI_Offset at = ((MPI_Offset)part * nprocs + rank) * BLOCK;
        for (MPI_Offset i = 0; i < BLOCK; i++)
            buf[i] = byte_of(part, rank, i);
        if (part == 0) {
            CHECK_MPI(MPI_File_write_at(fh, at, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
            continue;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        be_late(rank, nprocs);
        struct waited w = start();
        CHECK_MPI(MPI_File_write_at_all(fh, at, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
        check_waited(w, rank, nprocs, "MPI_File_write_at_all", 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    be_late(rank, nprocs);
    struct waited w = start();
    CHECK_MPI(MPI_File_close(&fh));
    check_waited(w, rank, nprocs, "MPI_File_close", 0);

    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (int part = 0; part < 2; part++)
        for (int r = 0; r < nprocs; r++) {
            MPI_Offset at = ((MPI_Offset)part * nprocs + r) * BLOCK;
            CHECK_MPI(MPI_File_read_at(fh, at, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
            for (MPI_Offset i = 0; i < BLOCK; i++)
                CHECK(buf[i] == byte_of(part, r, i), "part %d of rank %d: byte %lld is %d, "
                      "expected %d", part, r, (long long)i, buf[i], byte_of(part, r, i));
        }
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);
    free(buf);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
