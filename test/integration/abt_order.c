/*
 * abt: keeps the order of writes and their visibility where applications
 * rely on it (issue 20, PnetCDF over abt:), with the access sequence of a
 * PnetCDF file:
 *
 *   abt_order NAME_PREFIX
 *
 * Each process opens the file twice, over MPI_COMM_WORLD and over
 * MPI_COMM_SELF (as PnetCDF's collective and independent handles). Rank 0
 * writes a header and sets the size; all fill a region collectively, each
 * its even share; then the data goes over the fill through an interleaved
 * view with one aggregator (so most of it is written by a process that
 * did not fill it), and is read back collectively without a sync;
 * independent writes through the COMM_SELF handle are read through the
 * collective one; the file is reopened and every byte checked. Buffers are
 * large and many so that a drain that lands late is likely to be caught.
 */
#include "itest.h"

#define HEADER 4096
#define PIECE (16 * 1024)
#define PIECES 128              /* per process */
#define FILL 0x81

static int rank, nprocs;
static const char *prefix;

static const char *fname(const char *base)
{
    static char name[1024];
    snprintf(name, sizeof name, "%s%s", prefix, base);
    return name;
}

static MPI_Offset region(void)
{
    return (MPI_Offset) PIECE * PIECES * nprocs;
}

/* The data's place: piece i of rank r at HEADER + (i * nprocs + r) * PIECE. */
static MPI_Offset piece_at(int i, int r)
{
    return HEADER + ((MPI_Offset) i * nprocs + r) * PIECE;
}

/* The fill, each process its even share of the region, collectively. */
static void fill_region(MPI_File fh)
{
    MPI_Offset share = region() / nprocs;
    unsigned char *buf = malloc((size_t) share);
    memset(buf, FILL, (size_t) share);
    CHECK_MPI(MPI_File_write_at_all(fh, HEADER + rank * share, buf, (int) share, MPI_BYTE,
                                    MPI_STATUS_IGNORE));
    free(buf);
}

/* This process's pieces as a file view (a vector over the region). */
static void set_piece_view(MPI_File fh)
{
    MPI_Datatype filetype;
    MPI_Type_vector(PIECES, PIECE, PIECE * nprocs, MPI_BYTE, &filetype);
    MPI_Type_commit(&filetype);
    CHECK_MPI(MPI_File_set_view(fh, piece_at(0, rank), MPI_BYTE, filetype, "native",
                                MPI_INFO_NULL));
    MPI_Type_free(&filetype);
}

static void check_pieces(const unsigned char *buf, int r, const char *what)
{
    for (int i = 0; i < PIECES; i++) {
        int64_t bad = pattern_check(buf + (size_t) i * PIECE, PIECE,
                                    (uint64_t) piece_at(i, r), 1);
        CHECK(bad < 0, "%s: piece %d of rank %d differs at byte %lld (0x%02x)", what, i, r,
              (long long) bad, bad < 0 ? 0 : buf[(size_t) i * PIECE + (size_t) bad]);
    }
}

static void write_and_read_pieces(MPI_File fh)
{
    size_t len = (size_t) PIECE * PIECES;
    unsigned char *buf = malloc(len);
    for (int i = 0; i < PIECES; i++)
        pattern_fill(buf + (size_t) i * PIECE, PIECE, (uint64_t) piece_at(i, rank), 1);
    set_piece_view(fh);
    CHECK_MPI(MPI_File_write_all(fh, buf, (int) len, MPI_BYTE, MPI_STATUS_IGNORE));
    memset(buf, 0, len);
    /* no sync: a collective call orders what came before it */
    CHECK_MPI(MPI_File_read_at_all(fh, 0, buf, (int) len, MPI_BYTE, MPI_STATUS_IGNORE));
    check_pieces(buf, rank, "collective read after collective write");
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    free(buf);
}

/* The tail after the region: each process writes its block through its
 * COMM_SELF handle, then reads the block through the collective one. */
static MPI_Offset tail_at(int r)
{
    return HEADER + region() + (MPI_Offset) r * PIECE;
}

static void write_self_read_collective(MPI_File coll, MPI_File self)
{
    unsigned char *buf = malloc(PIECE);
    pattern_fill(buf, PIECE, (uint64_t) tail_at(rank), 1);
    CHECK_MPI(MPI_File_write_at(self, tail_at(rank), buf, PIECE, MPI_BYTE,
                                MPI_STATUS_IGNORE));
    memset(buf, 0, PIECE);
    CHECK_MPI(MPI_File_read_at_all(coll, tail_at(rank), buf, PIECE, MPI_BYTE,
                                   MPI_STATUS_IGNORE));
    CHECK(pattern_check(buf, PIECE, (uint64_t) tail_at(rank), 1) < 0,
          "a write through the COMM_SELF handle is not seen by the collective one");
    /* and the other way: the collective handle's buffered header rewrite */
    if (rank == 0) {
        unsigned char header[HEADER];
        pattern_fill(header, HEADER, 0, 1);
        CHECK_MPI(MPI_File_write_at(coll, 0, header, HEADER, MPI_BYTE, MPI_STATUS_IGNORE));
        memset(header, 0, HEADER);
        CHECK_MPI(MPI_File_read_at(self, 0, header, HEADER, MPI_BYTE, MPI_STATUS_IGNORE));
        CHECK(pattern_check(header, HEADER, 0, 1) < 0,
              "the header written through the collective handle is not seen by COMM_SELF's");
    }
    free(buf);
}

static void check_whole_file(void)
{
    MPI_File fh;
    MPI_Offset size, end = tail_at(nprocs);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, fname("order"), MPI_MODE_RDONLY, MPI_INFO_NULL,
                            &fh));
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == end, "size %lld, expected %lld", (long long) size, (long long) end);
    unsigned char *buf = malloc((size_t) end);
    CHECK_MPI(MPI_File_read_at(fh, 0, buf, (int) end, MPI_BYTE, MPI_STATUS_IGNORE));
    int64_t bad = pattern_check(buf, (uint64_t) end, 0, 1);
    CHECK(bad < 0, "after reopen: byte %lld is 0x%02x", (long long) bad,
          bad < 0 ? 0 : buf[bad]);
    free(buf);
    CHECK_MPI(MPI_File_close(&fh));
}

static void test_pnetcdf_sequence(void)
{
    MPI_Info info;
    MPI_Info_create(&info);
    /* ROMIO's automatic choice, as PnetCDF has it: the fill (not interleaved)
     * goes independently, each process its share; the data (interleaved) by
     * two-phase, through one aggregator */
    MPI_Info_set(info, "cb_nodes", "1");
    /* the order of buffered writes: read-write files buffer only with this */
    MPI_Info_set(info, "abt_buffer_rdwr", "enable");
    MPI_File coll, self;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, fname("order"), MPI_MODE_CREATE | MPI_MODE_RDWR,
                            info, &coll));
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, fname("order"), MPI_MODE_RDWR, info, &self));
    if (rank == 0) {
        unsigned char header[HEADER];
        memset(header, 0, HEADER);
        CHECK_MPI(MPI_File_write_at(coll, 0, header, HEADER, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    CHECK_MPI(MPI_File_set_size(coll, HEADER + region()));
    fill_region(coll);
    write_and_read_pieces(coll);
    write_self_read_collective(coll, self);
    /* PnetCDF's ncmpio_file_sync: both handles, then a barrier */
    CHECK_MPI(MPI_File_sync(self));
    CHECK_MPI(MPI_File_sync(coll));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_close(&self));
    CHECK_MPI(MPI_File_close(&coll));
    MPI_Info_free(&info);
    check_whole_file();
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(fname("order"), MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 2, "usage: abt_order NAME_PREFIX");
    prefix = argv[1];
    for (int round = 0; round < 5; round++)
        test_pnetcdf_sequence();
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
