/*
 * abt_strided PREFIX resized|large|segments: independent noncontiguous
 * writes over abt:, checked byte by byte through a plain view after close. The driver
 * before the fix sent them through ROMIO's ADIOI_GEN_WriteStrided_naive
 * (wrong over ufs: too, with romio_ds_write=disable):
 *   resized  a file view of MPI_INT resized to lb 4, extent 12 (MPICH's
 *            test/mpi/io/resized): naive took the type's lb marker for a
 *            block and put each int one block behind, the second over the
 *            first. Written through the individual pointer from contiguous
 *            memory, then at an explicit offset from a strided memory type.
 *   large    one file run of the view over 2 GiB: naive asserted
 *            (req_len == (int) req_len).
 *   segments memory in runs of 400 bytes, the view in runs of 300: long
 *            enough that abt copies them where they lie instead of packing
 *            them first, each piece cut where a file run and a memory run
 *            meet.
 */
#include "itest.h"

#define MIB (1 << 20)

/* The file after close, compared in pieces of 64 MiB with `expect`, or
 * where that is NULL with the test pattern `seed` of its offsets. */
static void check_file(const char *name, const unsigned char *expect, unsigned seed,
                       MPI_Offset len)
{
    MPI_File fh;
    MPI_Offset size;
    const MPI_Offset piece = 64 * MIB;
    unsigned char *got = malloc(piece);
    CHECK(got, "out of memory");
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == len, "file size %lld, expected %lld", (long long) size, (long long) len);
    for (MPI_Offset at = 0; at < len; at += piece) {
        int n = (int) (len - at < piece ? len - at : piece);
        CHECK_MPI(MPI_File_read_at(fh, at, got, n, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) {
            unsigned char e = expect ? expect[at + i] : pattern_byte(at + i, seed);
            CHECK(got[i] == e, "byte %lld is %d, expected %d", (long long) (at + i), got[i], e);
        }
    }
    CHECK_MPI(MPI_File_close(&fh));
    free(got);
}

static MPI_File create(const char *name, const unsigned char *fill, int len)
{
    MPI_File fh;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "abt_buffer_rdwr", "enable");     /* abt's own strided writes */
    MPI_File_delete(name, MPI_INFO_NULL);
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    if (len > 0)
        CHECK_MPI(MPI_File_write_at(fh, 0, fill, len, MPI_BYTE, MPI_STATUS_IGNORE));
    return fh;
}

enum { DISP = 100, NINTS = 1000, EXTENT = 12, AT = 1500 };

static void resized(const char *name)
{
    int len = DISP + EXTENT * (AT + NINTS);
    unsigned char *expect = malloc(len);
    int *ints = malloc(2 * NINTS * sizeof(int));
    CHECK(expect && ints, "out of memory");
    pattern_fill(expect, len, 0, 3);
    MPI_File fh = create(name, expect, len);

    MPI_Datatype ftype, every_other;
    MPI_Type_create_resized(MPI_INT, sizeof(int), EXTENT, &ftype);
    MPI_Type_commit(&ftype);
    MPI_Type_vector(NINTS, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    CHECK_MPI(MPI_File_set_view(fh, DISP, MPI_INT, ftype, "native", MPI_INFO_NULL));
    for (int i = 0; i < 2 * NINTS; i++)
        ints[i] = 1000000 + i;

    /* contiguous memory, individual pointer (the second half goes where
     * the first left it): int i at DISP + 12 i. (MPI_File_get_position is
     * ROMIO's own and one short for this type, over any driver.) */
    CHECK_MPI(MPI_File_write(fh, ints, NINTS / 2, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_File_write(fh, ints + NINTS / 2, NINTS - NINTS / 2, MPI_INT,
                             MPI_STATUS_IGNORE));
    for (int i = 0; i < NINTS; i++)
        memcpy(expect + DISP + EXTENT * i, &ints[i], sizeof(int));
    /* every other int of memory, from etype AT on */
    CHECK_MPI(MPI_File_write_at(fh, AT, ints, 1, every_other, MPI_STATUS_IGNORE));
    for (int i = 0; i < NINTS; i++)
        memcpy(expect + DISP + EXTENT * (AT + i), &ints[2 * i], sizeof(int));
    CHECK_MPI(MPI_File_close(&fh));
    check_file(name, expect, 0, len);

    MPI_Type_free(&ftype);
    MPI_Type_free(&every_other);
    free(ints);
    free(expect);
}

enum { MEM_RUN = 100, MEM_STRIDE = 120, FILE_RUN = 75, FILE_STRIDE = 100, MEM_RUNS = 300 };

static void segments(const char *name)
{
    int nints = MEM_RUN * MEM_RUNS, file_runs = nints / FILE_RUN;
    int len = file_runs * FILE_STRIDE * (int) sizeof(int);
    unsigned char *expect = malloc(len);
    int *mem = malloc(MEM_RUNS * MEM_STRIDE * sizeof(int));
    CHECK(expect && mem, "out of memory");
    pattern_fill(expect, len, 0, 4);
    MPI_File fh = create(name, expect, len);

    MPI_Datatype mtype, ftype;
    MPI_Type_vector(MEM_RUNS, MEM_RUN, MEM_STRIDE, MPI_INT, &mtype);
    MPI_Type_vector(file_runs, FILE_RUN, FILE_STRIDE, MPI_INT, &ftype);
    MPI_Type_commit(&mtype);
    MPI_Type_commit(&ftype);
    for (int i = 0; i < MEM_RUNS * MEM_STRIDE; i++)
        mem[i] = 2000000 + i;
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, ftype, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_write_at(fh, 0, mem, 1, mtype, MPI_STATUS_IGNORE));
    /* the k-th int of the data: from memory int (k / MEM_RUN) MEM_STRIDE + k % MEM_RUN
     * to file int (k / FILE_RUN) FILE_STRIDE + k % FILE_RUN */
    for (int k = 0; k < nints; k++)
        memcpy(expect + sizeof(int) * (size_t) (k / FILE_RUN * FILE_STRIDE + k % FILE_RUN),
               &mem[k / MEM_RUN * MEM_STRIDE + k % MEM_RUN], sizeof(int));
    CHECK_MPI(MPI_File_close(&fh));
    check_file(name, expect, 0, len);

    MPI_Type_free(&mtype);
    MPI_Type_free(&ftype);
    free(mem);
    free(expect);
}

/* A view of two runs, the first 2 GiB + 1 MiB long, 1 MiB apart. */
enum { BIG_MIB = 2049, GAP_MIB = 1, SMALL_MIB = 1 };

static void large(const char *name)
{
    /* every byte of the file is pattern 5 of its offset */
    MPI_Offset len = (MPI_Offset) (BIG_MIB + GAP_MIB + SMALL_MIB) * MIB;
    MPI_Offset big = (MPI_Offset) BIG_MIB * MIB, gap = (MPI_Offset) GAP_MIB * MIB;
    unsigned char *data = malloc(big + (MPI_Offset) SMALL_MIB * MIB);
    CHECK(data, "cannot allocate %lld bytes", (long long) len);
    MPI_File fh = create(name, NULL, 0);
    /* the gap between the runs */
    pattern_fill(data, gap, big, 5);
    CHECK_MPI(MPI_File_write_at(fh, big, data, (int) gap, MPI_BYTE, MPI_STATUS_IGNORE));

    MPI_Datatype mib, ftype;
    int blocks[2] = { BIG_MIB, SMALL_MIB };
    MPI_Aint displs[2] = { 0, (MPI_Aint) (BIG_MIB + GAP_MIB) * MIB };
    MPI_Type_contiguous(MIB, MPI_BYTE, &mib);
    MPI_Type_create_hindexed(2, blocks, displs, mib, &ftype);
    MPI_Type_commit(&mib);
    MPI_Type_commit(&ftype);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, ftype, "native", MPI_INFO_NULL));

    /* the data: the runs' bytes, packed */
    pattern_fill(data, big, 0, 5);
    pattern_fill(data + big, (MPI_Offset) SMALL_MIB * MIB, big + gap, 5);
    MPI_Status st;
    MPI_Count count;
    CHECK_MPI(MPI_File_write_at(fh, 0, data, BIG_MIB + SMALL_MIB, mib, &st));
    MPI_Get_elements_x(&st, MPI_BYTE, &count);
    CHECK(count == (MPI_Count) (BIG_MIB + SMALL_MIB) * MIB, "wrote %lld bytes",
          (long long) count);
    free(data);
    CHECK_MPI(MPI_File_close(&fh));
    check_file(name, NULL, 5, len);
    CHECK_MPI(MPI_File_delete(name, MPI_INFO_NULL));

    MPI_Type_free(&mib);
    MPI_Type_free(&ftype);
}

int main(int argc, char **argv)
{
    char name[4096];
    MPI_Init(&argc, &argv);
    CHECK(argc == 3 && (!strcmp(argv[2], "resized") || !strcmp(argv[2], "large") ||
                        !strcmp(argv[2], "segments")),
          "usage: abt_strided PREFIX resized|large|segments");
    snprintf(name, sizeof name, "%sstrided.%s", argv[1], argv[2]);
    if (!strcmp(argv[2], "resized"))
        resized(name);
    else if (!strcmp(argv[2], "segments"))
        segments(name);
    else
        large(name);
    printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
