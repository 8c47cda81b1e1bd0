/*
 * Debian's parallel HDF5 (libhdf5-openmpi, unchanged) over a driver's name:
 * every process writes its rows of a 2-D dataset collectively through the
 * MPI-IO file driver, the file is closed, opened again and read back
 * collectively, each process reading another's rows, and every value is
 * checked; then one process reads the whole dataset independently.
 *   hdf5_dataset FILE (for example rfs:127.0.0.1:7070:/h5/data.h5)
 * Prints " No Errors" when everything matched.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { ROWS_PER_RANK = 64, COLS = 1000 };

#define CHECK(cond, what)                                                         \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, what);      \
            MPI_Abort(MPI_COMM_WORLD, 1);                                         \
        }                                                                         \
    } while (0)

static int value(hsize_t row, hsize_t col)
{
    return (int) (row * 7919 + col * 31 + 5);
}

static hid_t open_file(const char *name, int create)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    hid_t f;

    CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0, "H5Pset_fapl_mpio");
    f = create ? H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)
               : H5Fopen(name, H5F_ACC_RDONLY, fapl);
    CHECK(f >= 0, create ? "H5Fcreate" : "H5Fopen");
    H5Pclose(fapl);
    return f;
}

/* rows [first, first + ROWS_PER_RANK) through a collective transfer */
static void transfer_rows(hid_t dset, int *buf, hsize_t first, int write)
{
    hsize_t start[2] = {first, 0}, count[2] = {ROWS_PER_RANK, COLS};
    hid_t fspace = H5Dget_space(dset);
    hid_t mspace = H5Screate_simple(2, count, NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    herr_t rc;

    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    CHECK(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) >= 0, "H5Pset_dxpl_mpio");
    rc = write ? H5Dwrite(dset, H5T_NATIVE_INT, mspace, fspace, dxpl, buf)
               : H5Dread(dset, H5T_NATIVE_INT, mspace, fspace, dxpl, buf);
    CHECK(rc >= 0, write ? "H5Dwrite" : "H5Dread");
    H5Pclose(dxpl);
    H5Sclose(mspace);
    H5Sclose(fspace);
}

static void check_rows(const int *buf, hsize_t first, hsize_t rows)
{
    for (hsize_t r = 0; r < rows; r++)
        for (hsize_t c = 0; c < COLS; c++)
            if (buf[r * COLS + c] != value(first + r, c)) {
                fprintf(stderr, "row %llu col %llu: %d, expected %d\n",
                        (unsigned long long) (first + r), (unsigned long long) c,
                        buf[r * COLS + c], value(first + r, c));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
}

int main(int argc, char **argv)
{
    int rank, nprocs;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 2, "usage: hdf5_dataset FILE");

    hsize_t dims[2] = {(hsize_t) nprocs * ROWS_PER_RANK, COLS};
    int *buf = malloc(sizeof(int) * ROWS_PER_RANK * COLS);
    int *all = malloc(sizeof(int) * dims[0] * COLS);
    CHECK(buf && all, "malloc");

    hid_t f = open_file(argv[1], 1);
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dset = H5Dcreate2(f, "/values", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    CHECK(dset >= 0, "H5Dcreate2");
    hsize_t mine = (hsize_t) rank * ROWS_PER_RANK;
    for (hsize_t r = 0; r < ROWS_PER_RANK; r++)
        for (hsize_t c = 0; c < COLS; c++)
            buf[r * COLS + c] = value(mine + r, c);
    transfer_rows(dset, buf, mine, 1);
    H5Dclose(dset);
    H5Sclose(space);
    CHECK(H5Fclose(f) >= 0, "H5Fclose");

    f = open_file(argv[1], 0);
    dset = H5Dopen2(f, "/values", H5P_DEFAULT);
    CHECK(dset >= 0, "H5Dopen2");
    hsize_t other = (hsize_t) ((rank + 1) % nprocs) * ROWS_PER_RANK;
    transfer_rows(dset, buf, other, 0);
    check_rows(buf, other, ROWS_PER_RANK);
    if (rank == 0) {
        CHECK(H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0,
              "H5Dread (whole)");
        check_rows(all, 0, dims[0]);
    }
    H5Dclose(dset);
    CHECK(H5Fclose(f) >= 0, "H5Fclose");

    free(all);
    free(buf);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
