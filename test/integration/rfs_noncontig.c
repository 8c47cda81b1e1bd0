/*
 * Noncontiguous I/O through rfs: file views and noncontiguous memory,
 * checked byte for byte in the file as it sits in the server's root and
 * after reading back:
 *   - a 2-D block-block decomposition (subarray views, memory with ghost
 *     cells) by write_all/read_all, natively, with ROMIO's two-phase
 *     (romio_cb_write/read=enable) and with ROMIO's data sieving
 *     (rfs_noncontig=romio): the same file every time;
 *   - the individual file pointer through a vector view (get_position);
 *   - a read through the view past the end of the file (short count);
 *   - atomic mode.
 *   rfs_noncontig NAME_PREFIX SERVER_ROOT      (any number of processes)
 */
#include "itest.h"

#define N 96                    /* global array N x N ints */
#define GHOST 2

static int rank, nprocs, pr, pc, myr, myc, rows, cols;

/* The value of global element (i, j). */
static int value(int i, int j, int seed)
{
    return (i * N + j) * 7 + seed;
}

static MPI_Datatype tile_view(void)
{
    MPI_Datatype t;
    int sizes[2] = { N, N }, subs[2] = { rows, cols }, starts[2] = { myr * rows, myc * cols };
    CHECK_MPI(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
    MPI_Type_commit(&t);
    return t;
}

/* The local tile inside a buffer with GHOST cells on every side. */
static MPI_Datatype tile_memory(void)
{
    MPI_Datatype t;
    int sizes[2] = { rows + 2 * GHOST, cols + 2 * GHOST }, subs[2] = { rows, cols };
    int starts[2] = { GHOST, GHOST };
    CHECK_MPI(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
    MPI_Type_commit(&t);
    return t;
}

static int *ghosted(int seed)
{
    int w = cols + 2 * GHOST, h = rows + 2 * GHOST;
    int *a = malloc(sizeof(int) * (size_t) (w * h));
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            int inside = i >= GHOST && i < GHOST + rows && j >= GHOST && j < GHOST + cols;
            a[i * w + j] = inside ? value(myr * rows + i - GHOST, myc * cols + j - GHOST, seed)
                                  : -1;
        }
    return a;
}

/* The whole file, read from the server's root by rank 0. */
static void check_file_on_server(const char *root, const char *rel, int seed)
{
    if (rank == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", root, rel);
        FILE *fp = fopen(path, "rb");
        CHECK(fp != NULL, "%s", path);
        int *all = malloc(sizeof(int) * N * N);
        CHECK(fread(all, sizeof(int), N * N, fp) == N * N, "short file %s", path);
        CHECK(fgetc(fp) == EOF, "file %s longer than the array", path);
        fclose(fp);
        for (int i = 0; i < N * N; i++)
            CHECK(all[i] == value(i / N, i % N, seed), "%s: element %d is %d", rel, i, all[i]);
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void tile_case(const char *prefix, const char *root, const char *rel, MPI_Info info,
                      int seed, int atomic)
{
    char name[4096];
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype view = tile_view(), mem = tile_memory();
    int *out = ghosted(seed), *in = malloc(sizeof(int) * (size_t) ((rows + 2 * GHOST) *
                                                                    (cols + 2 * GHOST)));
    int count;
    snprintf(name, sizeof name, "%s%s", prefix, rel);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_MPI(MPI_File_set_atomicity(fh, atomic));
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, view, "native", info));
    CHECK_MPI(MPI_File_write_all(fh, out, 1, mem, &st));
    MPI_Get_count(&st, mem, &count);
    CHECK(count == 1, "write_all count %d", count);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_file_on_server(root, rel, seed);

    for (size_t i = 0; i < (size_t) ((rows + 2 * GHOST) * (cols + 2 * GHOST)); i++)
        in[i] = -1;
    CHECK_MPI(MPI_File_read_at_all(fh, 0, in, 1, mem, &st));
    CHECK(memcmp(in, out, sizeof(int) * (size_t) ((rows + 2 * GHOST) * (cols + 2 * GHOST)))
          == 0, "%s: read back differs (or ghost cells touched)", rel);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&view);
    MPI_Type_free(&mem);
    free(out);
    free(in);
}

/* Individual file pointer through a vector view: 2 ints of every 5. */
static void pointer_case(const char *prefix, const char *root)
{
    char name[4096], path[4096];
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype vec;
    MPI_Offset pos;
    int data[12], back[20], count;
    if (rank != 0)
        return;
    snprintf(name, sizeof name, "%sviewptr", prefix);
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_set_size(fh, 0));
    MPI_Type_vector(2, 2, 5, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    CHECK_MPI(MPI_File_set_view(fh, 8, MPI_INT, vec, "native", MPI_INFO_NULL));
    for (int i = 0; i < 12; i++)
        data[i] = 100 + i;
    CHECK_MPI(MPI_File_write(fh, data, 5, MPI_INT, &st));
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK(pos == 5, "position %lld after 5 ints", (long long) pos);
    CHECK_MPI(MPI_File_write(fh, data + 5, 7, MPI_INT, &st));
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK(pos == 12, "position %lld after 12 ints", (long long) pos);

    /* the file: 8 bytes of displacement, then per 7-int extent 2+2 ints at 0,1,5,6 */
    CHECK_MPI(MPI_File_sync(fh));
    snprintf(path, sizeof path, "%s/viewptr", root);
    FILE *fp = fopen(path, "rb");
    CHECK(fp != NULL, "%s", path);
    int raw[40] = { 0 };
    size_t n = fread(raw, 1, sizeof raw, fp);
    fclose(fp);
    int k = 0;
    for (int inst = 0; k < 12; inst++)
        for (int b = 0; b < 4 && k < 12; b++, k++) {
            int at = 2 + inst * 7 + (b < 2 ? b : 5 + b - 2);
            CHECK(raw[at] == 100 + k, "int %d at %d is %d", k, at, raw[at]);
        }
    CHECK(n == sizeof(int) * 23, "file is %zu bytes, expected up to int 22", n);

    /* reading 20 ints through the view finds 12 */
    CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_read(fh, back, 20, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 12, "read %d ints through the view, expected 12", count);
    CHECK(memcmp(back, data, sizeof data) == 0, "read back differs");
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 3, "usage: rfs_noncontig NAME_PREFIX SERVER_ROOT");
    int dims[2] = { 0, 0 };
    MPI_Dims_create(nprocs, 2, dims);
    pr = dims[0];
    pc = dims[1];
    CHECK(N % pr == 0 && N % pc == 0, "%d processes do not divide %d", nprocs, N);
    myr = rank / pc;
    myc = rank % pc;
    rows = N / pr;
    cols = N / pc;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    MPI_Info info;
    MPI_Info_create(&info);
    tile_case(argv[1], argv[2], "tile.native", info, 1, 0);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    tile_case(argv[1], argv[2], "tile.twophase", info, 2, 0);
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, "rfs_noncontig", "romio");
    MPI_Info_set(info, "romio_ds_write", "enable");
    tile_case(argv[1], argv[2], "tile.sieving", info, 3, 0);
    MPI_Info_free(&info);

    /* atomic mode (server locks around each access), and a view that rides
     * on a deferred open */
    tile_case(argv[1], argv[2], "tile.atomic", MPI_INFO_NULL, 4, 1);
    MPI_Info_create(&info);
    MPI_Info_set(info, "rfs_defer_open", "enable");
    tile_case(argv[1], argv[2], "tile.deferred", info, 5, 0);
    MPI_Info_free(&info);

    pointer_case(argv[1], argv[2]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
