/*
 * rdma: when a server host's link goes down in the middle of a write (the
 * lab: the runner sets the link down, the server keeps running). A file
 * striped over four servers, written and synced; then writes go on until
 * the runner cuts server 1's link: the write in flight, and every later
 * call touching server 1, fails with MPI_ERR_IO naming it within
 * rdma_timeout (TIMEOUT seconds, plus a margin), never hanging; stripes on
 * the other servers still read back. When the runner has brought the link
 * back, a new open works, and the data synced before the cut is intact.
 * Handshake through files in DIR: the program makes DIR/synced and
 * DIR/checked, the runner DIR/down (link down) and DIR/up (link back).
 *   lab_linkfault PREFIX DIR TIMEOUT
 */
#include "lab_handshake.h"

#define UNIT 65536
#define SIZE (64 * UNIT)        /* 4 MiB: 16 units per server */

static const char *dir;

static double limit;

/* The call failed with MPI_ERR_IO naming server 1, in time. */
static void expect_cut(int rc, double t0, const char *what)
{
    double took = lab_now() - t0;
    int class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_IO, "%s: class %d, expected MPI_ERR_IO", what, class);
    CHECK(strstr(err_string(rc), "rdma server 1") != NULL, "%s: the message does not name "
          "rdma server 1: %s", what, err_string(rc));
    CHECK(took <= limit, "%s: failed after %.1f s, more than rdma_timeout + margin (%.0f s)",
          what, took, limit);
    printf("%s: MPI_ERR_IO after %.1f s\n", what, took);
}

static MPI_File open_file(const char *prefix, const char *name, const char *timeout)
{
    char full[4096];
    MPI_File fh;
    MPI_Info info;
    snprintf(full, sizeof full, "%s%s", prefix, name);
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", "65536");
    MPI_Info_set(info, "striping_factor", "4");
    MPI_Info_set(info, "rdma_timeout", timeout);
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, full, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    return fh;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 4, "usage: lab_linkfault PREFIX DIR TIMEOUT");
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    dir = argv[2];
    limit = atof(argv[3]) + 5;
    alarm(180);                 /* a hang fails the test */
    static unsigned char data[SIZE], back[SIZE];
    MPI_Status st;
    MPI_Offset size;

    MPI_File fh = open_file(argv[1], "cut", argv[3]);
    pattern_fill(data, SIZE, 0, 7);
    CHECK_MPI(MPI_File_write_at(fh, 0, data, SIZE, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_sync(fh));
    lab_mark(dir, "synced");

    /* the same bytes again and again until the link goes down */
    double t0;
    int rc, writes = 0;
    for (;;) {
        int cut = lab_exists(dir, "down");
        t0 = lab_now();
        rc = MPI_File_write_at(fh, 0, data, SIZE, MPI_BYTE, &st);
        if (rc != MPI_SUCCESS || cut)
            break;
        writes++;
        CHECK(writes < 100000, "the link never went down");
    }
    printf("%d writes before the cut\n", writes);
    expect_cut(rc, t0, "the write when the link went down");
    t0 = lab_now();
    expect_cut(MPI_File_read_at(fh, UNIT, back, UNIT, MPI_BYTE, &st), t0,
               "read of server 1's stripe");
    /* stripes 0, 2, 3 live on the other servers */
    for (int s = 0; s < 4; s += s == 0 ? 2 : 1) {
        CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) s * UNIT, back, UNIT, MPI_BYTE, &st));
        CHECK(pattern_check(back, UNIT, (uint64_t) s * UNIT, 7) < 0,
              "stripe %d differs after server 1's link went down", s);
    }
    t0 = lab_now();
    expect_cut(MPI_File_write_at(fh, 0, data, SIZE, MPI_BYTE, &st), t0, "write across all");
    t0 = lab_now();
    expect_cut(MPI_File_get_size(fh, &size), t0, "get_size");
    t0 = lab_now();
    expect_cut(MPI_File_sync(fh), t0, "sync");
    t0 = lab_now();
    expect_cut(MPI_File_close(&fh), t0, "close");
    lab_mark(dir, "checked");

    lab_await(dir, "up");
    fh = open_file(argv[1], "after", argv[3]);
    CHECK_MPI(MPI_File_write_at(fh, 0, data, SIZE, MPI_BYTE, &st));
    memset(back, 0, SIZE);
    CHECK_MPI(MPI_File_read_at(fh, 0, back, SIZE, MPI_BYTE, &st));
    CHECK(pattern_check(back, SIZE, 0, 7) < 0, "a new file after the link came back differs");
    CHECK_MPI(MPI_File_close(&fh));
    /* what was synced before the cut (the later writes wrote the same bytes) */
    fh = open_file(argv[1], "cut", argv[3]);
    memset(back, 0, SIZE);
    CHECK_MPI(MPI_File_read_at(fh, 0, back, SIZE, MPI_BYTE, &st));
    CHECK(pattern_check(back, SIZE, 0, 7) < 0, "the synced data differs after the link came back");
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == SIZE, "size %lld after the link came back", (long long) size);
    CHECK_MPI(MPI_File_close(&fh));
    printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
