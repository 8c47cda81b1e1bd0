/*
 * The rfs_* hints: their defaults and the values given reported by
 * get_info; an invalid value of each kind (a word, a number out of range,
 * not a number) refused with MPI_ERR_INFO_VALUE by the open and by
 * set_info; rfs_defer_open / rfs_defer_close with the data still right,
 * and a deferred open's failure reported by the first operation that
 * reaches the server.
 *
 *   rfs_hints rfs:HOST:PORT:/DIR
 */
#include "itest.h"

static void check_values(const char *dir, int rank)
{
    char name[1024];
    unsigned char buf[1000], in[1000];
    MPI_File fh;
    MPI_Status st;
    static const struct hint_pair invalid[] = {
        { "rfs_defer_open", "maybe" }, { "rfs_noncontig", "fast" }, { "rfs_timeout", "0" },
        { "rfs_timeout", "86401" }, { "rfs_timeout", "soon" }, { "rfs_transport", "tsl" },
    };
    static const struct hint_pair defaults[] = {
        { "rfs_defer_open", "disable" }, { "rfs_defer_close", "disable" },
        { "rfs_timeout", "120" }, { "rfs_noncontig", "native" }, { "rfs_transport", "tcp" },
    };
    snprintf(name, sizeof name, "%s/values", dir);
    fh = open_checking_hints(name, HINT_PAIRS(invalid), HINT_PAIRS(defaults));
    set_info_refused(fh, "rfs_noncontig", "fast", "native");
    set_info_refused(fh, "rfs_timeout", "soon", "120");
    set_info_expect(fh, "rfs_noncontig", "romio", "romio");
    set_info_expect(fh, "rfs_defer_close", "enable", "enable");
    set_info_expect(fh, "rfs_timeout", "30", "120");    /* read at open: the file keeps its own */

    pattern_fill(buf, sizeof buf, (uint64_t) rank * sizeof buf, 5);
    CHECK_MPI(MPI_File_write_at(fh, rank * (MPI_Offset) sizeof buf, buf, sizeof buf, MPI_BYTE,
                                &st));
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    CHECK_MPI(MPI_File_read_at(fh, rank * (MPI_Offset) sizeof in, in, sizeof in, MPI_BYTE, &st));
    int64_t bad = pattern_check(in, sizeof in, (uint64_t) rank * sizeof in, 5);
    CHECK(bad < 0, "data after set_info differs at %lld", (long long) bad);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 2, "usage: rfs_hints rfs:HOST:PORT:/DIR");
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    char name[1024], missing[1024];
    snprintf(name, sizeof name, "%s/deferred", argv[1]);
    snprintf(missing, sizeof missing, "%s/missing", argv[1]);
    check_values(argv[1], rank);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "rfs_defer_open", "enable");
    MPI_Info_set(info, "rfs_defer_close", "enable");
    MPI_Info_set(info, "rfs_timeout", "30");

    MPI_File fh;
    MPI_Status st;
    unsigned char buf[1000], in[1000];
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info got;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;
    CHECK_MPI(MPI_File_get_info(fh, &got));
    MPI_Info_get(got, "rfs_defer_open", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "enable") == 0, "rfs_defer_open reported as %s", value);
    MPI_Info_get(got, "rfs_defer_close", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "enable") == 0, "rfs_defer_close reported as %s", value);
    MPI_Info_get(got, "rfs_timeout", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "30") == 0, "rfs_timeout reported as %s", value);
    MPI_Info_free(&got);

    pattern_fill(buf, sizeof buf, (uint64_t) rank * sizeof buf, 3);
    CHECK_MPI(MPI_File_write_at(fh, rank * (MPI_Offset) sizeof buf, buf, sizeof buf, MPI_BYTE,
                                &st));
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);

    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, info, &fh));
    int peer = (rank + 1) % nprocs;
    CHECK_MPI(MPI_File_read_at(fh, peer * (MPI_Offset) sizeof in, in, sizeof in, MPI_BYTE, &st));
    int64_t bad = pattern_check(in, sizeof in, (uint64_t) peer * sizeof in, 3);
    CHECK(bad < 0, "deferred-open data differs at %lld", (long long) bad);
    CHECK_MPI(MPI_File_close(&fh));

    /* the open of a missing file succeeds; the first read reports it */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, info, &fh));
    CHECK_CLASS(MPI_File_read_at(fh, 0, in, sizeof in, MPI_BYTE, &st), MPI_ERR_NO_SUCH_FILE);
    CHECK_CLASS(MPI_File_read_at(fh, 0, in, sizeof in, MPI_BYTE, &st), MPI_ERR_NO_SUCH_FILE);
    MPI_File_close(&fh);

    MPI_Info_free(&info);

    /* ROMIO's own deferred open: only the aggregator opens; everyone may
     * still sync, read and close. */
    char coll[1024];
    snprintf(coll, sizeof coll, "%s/romio-deferred", argv[1]);
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_no_indep_rw", "true");
    MPI_Info_set(info, "cb_nodes", "1");
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, coll, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    pattern_fill(buf, sizeof buf, (uint64_t) rank * sizeof buf, 4);
    CHECK_MPI(MPI_File_write_at_all(fh, rank * (MPI_Offset) sizeof buf, buf, sizeof buf,
                                    MPI_BYTE, &st));
    CHECK_MPI(MPI_File_sync(fh));
    CHECK_MPI(MPI_File_read_at_all(fh, peer * (MPI_Offset) sizeof in, in, sizeof in, MPI_BYTE,
                                   &st));
    bad = pattern_check(in, sizeof in, (uint64_t) peer * sizeof in, 4);
    CHECK(bad < 0, "collective data differs at %lld", (long long) bad);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
    MPI_Finalize();
    if (rank == 0)
        printf(" No Errors\n");
    return 0;
}
