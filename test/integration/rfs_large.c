/*
 * More than 2 GiB in one call, at an offset past 4 GiB: 64-bit sizes and
 * offsets end to end (MPI count and type, driver, protocol, server).
 *
 *   rfs_large rfs:HOST:PORT:/PATH
 */
#include "itest.h"

#define MIB (1u << 20)
#define NMIB 2300u                     /* 2.25 GiB */
#define OFFSET (4ull << 30) + 12345    /* past 4 GiB, unaligned */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 2, "usage: rfs_large rfs:HOST:PORT:/PATH");
    uint64_t len = (uint64_t) NMIB * MIB;
    unsigned char *buf = malloc(len);
    CHECK(buf != NULL, "cannot allocate %llu bytes", (unsigned long long) len);
    MPI_Datatype mib;
    MPI_Type_contiguous(MIB, MPI_BYTE, &mib);
    MPI_Type_commit(&mib);

    MPI_File fh;
    MPI_Status st;
    MPI_Count count;
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    pattern_fill(buf, len, OFFSET, 11);
    CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset) (OFFSET), buf, NMIB, mib, &st));
    MPI_Get_elements_x(&st, MPI_BYTE, &count);
    CHECK((uint64_t) count == len, "wrote %lld bytes", (long long) count);
    MPI_Offset size;
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK((uint64_t) size == OFFSET + len, "size %lld", (long long) size);

    memset(buf, 0, len);
    CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) (OFFSET), buf, NMIB, mib, &st));
    MPI_Get_elements_x(&st, MPI_BYTE, &count);
    CHECK((uint64_t) count == len, "read %lld bytes", (long long) count);
    int64_t bad = pattern_check(buf, len, OFFSET, 11);
    CHECK(bad < 0, "data differs at byte %lld", (long long) bad);
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_File_delete(argv[1], MPI_INFO_NULL));

    MPI_Type_free(&mib);
    free(buf);
    MPI_Finalize();
    printf(" No Errors\n");
    return 0;
}
