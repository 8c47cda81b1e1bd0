/*
 * rdma: with rdma_replicas=2 over 4 servers, a server killed while the
 * file is written (test/integration/run.sh kills and restarts it):
 *
 *   rdma_replicas write PREFIX DIR   pattern A written and synced, DIR/synced
 *       made; then pattern B written again and again, by every method in
 *       turn (naive, list, datatype, a disk-directed write_all), until the
 *       runner has killed server 1 (DIR/killed) and two rounds more: no
 *       call may fail. Every byte reads back as B by every method, in this
 *       open and in a new one; get_info says rdma_replicas 2.
 *   rdma_replicas read PREFIX        every byte reads back as B by every
 *       method (after the runner brought the killed server back with its
 *       old bytes, or killed another one after a resync).
 */
#include "itest.h"

#include <unistd.h>

#define UNIT 65536
#define PER_RANK (24 * UNIT + 777)      /* not a whole number of stripes */
#define SEED_A 11
#define SEED_B 12

static const char *const methods[] = { "naive", "list", "datatype" };

static MPI_File open_file(const char *prefix, int amode)
{
    char name[4096];
    MPI_File fh;
    MPI_Info info;
    snprintf(name, sizeof name, "%sreplicated", prefix);
    MPI_Info_create(&info);
    MPI_Info_set(info, "rdma_replicas", "2");
    MPI_Info_set(info, "striping_factor", "4");
    MPI_Info_set(info, "striping_unit", "65536");
    MPI_Info_set(info, "rdma_timeout", "3");
    MPI_Info_set(info, "rdma_coll", "disk_directed");
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, amode, info, &fh));
    MPI_Info_free(&info);
    return fh;
}

static void set_method(MPI_File fh, const char *method)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "rdma_io_method", method);
    CHECK_MPI(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
}

/* This rank's block as a strided view: rank r has every 4th piece of
 * 1000 bytes, so every call touches every server and is noncontiguous. */
static void set_view(MPI_File fh, int rank)
{
    MPI_Datatype piece, strided;
    MPI_Type_contiguous(1000, MPI_BYTE, &piece);
    MPI_Type_create_resized(piece, 0, 4000, &strided);
    MPI_Type_commit(&strided);
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset) rank * 1000, MPI_BYTE, strided, "native",
                                MPI_INFO_NULL));
    MPI_Type_free(&strided);
    MPI_Type_free(&piece);
}

static void read_back(MPI_File fh, int rank, unsigned char *buf, unsigned seed)
{
    MPI_Status st;
    int count;
    for (int m = 0; m < 3; m++) {
        set_method(fh, methods[m]);
        memset(buf, 0, PER_RANK);
        CHECK_MPI(MPI_File_read_at(fh, 0, buf, PER_RANK, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == PER_RANK, "read %d of %d bytes (%s)", count, PER_RANK, methods[m]);
        int64_t bad = pattern_check(buf, PER_RANK, (uint64_t) rank * PER_RANK, seed);
        CHECK(bad < 0, "byte %lld of rank %d's data wrong after a %s read", (long long) bad,
              rank, methods[m]);
    }
    memset(buf, 0, PER_RANK);
    CHECK_MPI(MPI_File_read_at_all(fh, 0, buf, PER_RANK, MPI_BYTE, &st));
    int64_t bad = pattern_check(buf, PER_RANK, (uint64_t) rank * PER_RANK, seed);
    CHECK(bad < 0, "byte %lld of rank %d's data wrong after read_at_all", (long long) bad, rank);
}

static void write_phase(const char *prefix, const char *dir, int rank, unsigned char *buf)
{
    MPI_Status st;
    char path[4096];
    MPI_File fh = open_file(prefix, MPI_MODE_CREATE | MPI_MODE_RDWR);
    info_expect(fh, "rdma_replicas", "2");
    set_view(fh, rank);
    pattern_fill(buf, PER_RANK, (uint64_t) rank * PER_RANK, SEED_A);
    CHECK_MPI(MPI_File_write_at_all(fh, 0, buf, PER_RANK, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/synced", dir);
    if (rank == 0)
        fclose(fopen(path, "w"));
    pattern_fill(buf, PER_RANK, (uint64_t) rank * PER_RANK, SEED_B);
    snprintf(path, sizeof path, "%s/killed", dir);
    int rounds = 0, after = -1;
    for (int round = 0; after < 2 && round < 100000; round++) {
        int killed = rank == 0 && access(path, F_OK) == 0;
        MPI_Bcast(&killed, 1, MPI_INT, 0, MPI_COMM_WORLD);
        after += killed || after >= 0;
        if (round % 4 == 3) {
            CHECK_MPI(MPI_File_write_at_all(fh, 0, buf, PER_RANK, MPI_BYTE, &st));
        } else {
            set_method(fh, methods[round % 4]);
            CHECK_MPI(MPI_File_write_at(fh, 0, buf, PER_RANK, MPI_BYTE, &st));
        }
        rounds++;
    }
    CHECK(after >= 2, "server 1 was not killed within %d rounds", rounds);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    read_back(fh, rank, buf, SEED_B);
    info_expect(fh, "rdma_replicas", "2");
    CHECK_MPI(MPI_File_close(&fh));
    if (rank == 0)
        printf("%d write rounds, the server killed during them\n", rounds);
    fh = open_file(prefix, MPI_MODE_RDONLY);
    set_view(fh, rank);
    read_back(fh, rank, buf, SEED_B);
    CHECK_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    alarm(240);
    CHECK(argc >= 3 && (strcmp(argv[1], "read") == 0 || argc == 4),
          "usage: rdma_replicas write PREFIX DIR | read PREFIX");
    unsigned char *buf = malloc(PER_RANK);
    if (strcmp(argv[1], "write") == 0) {
        write_phase(argv[2], argv[3], rank, buf);
    } else {
        MPI_File fh = open_file(argv[2], MPI_MODE_RDONLY);
        set_view(fh, rank);
        read_back(fh, rank, buf, SEED_B);
        info_expect(fh, "rdma_replicas", "2");
        CHECK_MPI(MPI_File_close(&fh));
    }
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return 0;
}
