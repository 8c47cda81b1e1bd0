/*
 * abt_bench's periodic-output program (periodic.h: the same computation and
 * report) writing its snapshots through HDF5 or PnetCDF, which open their
 * files read-write: the case abt: buffers only with abt_buffer_rdwr.
 *
 *   lib_bench -l hdf5|pnetcdf FILE COMPUTE_S|@SWEEPS SNAPSHOTS N [HINT=VALUE...]
 *
 * hdf5: one file through HDF5's MPI-IO driver (H5Pset_fapl_mpio, the hints
 * in its info); snapshot k is a dataset of its own, "snapshot_k", of the
 * global grid (doubles), created, written collectively
 * (H5FD_MPIO_COLLECTIVE) from the block's interior and closed: a dataset
 * per time step, as h5bench's VPIC-IO kernel and H5hut write a time series
 * (the number of steps need not be known when the file is made).
 * pnetcdf: one CDF-5 file (ncmpi_create with the hints), a record variable
 * of the global grid (time, z, y, x; time unlimited, as a climate model's
 * history file), snapshot k its record k, written by ncmpi_put_vara_all:
 * the flexible API takes the block's interior from the ghosted grid as
 * HDF5's memory space does, where put_vara_double_all would need it packed.
 *
 * The visible write is each snapshot's library calls (for HDF5 the
 * dataset's create, write and close, where its metadata may go out too),
 * the slowest process per snapshot, as abt_bench times MPI_File_write_all;
 * the close (H5Fclose, ncmpi_close) is timed apart. Prints periodic.h's
 * report, abt_bench's line.
 */
#include "periodic.h"

#include <hdf5.h>
#include <pnetcdf.h>

/* What both libraries' files start from. */
struct target {
    const char *name;
    MPI_Info info;
    struct block *b;
};

static void fail(const char *what, const char *why)
{
    fprintf(stderr, "lib_bench: %s: %s\n", what, why);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* HDF5's calls return a negative value on failure (its error stack is
 * printed by then). */
static hid_t h5(hid_t rc, const char *what)
{
    if (rc < 0)
        fail(what, "failed");
    return rc;
}

struct h5_file {
    struct target t;
    hid_t file, filespace, memspace, dxpl;
};

/* A dataspace of DIMS with the hyperslab START, COUNT selected. */
static hid_t h5_space(const int dims[3], const int start[3], int count)
{
    hsize_t d[3], s[3], c[3] = { (hsize_t) count, (hsize_t) count, (hsize_t) count };
    for (int i = 0; i < 3; i++) {
        d[i] = (hsize_t) dims[i];
        s[i] = (hsize_t) start[i];
    }
    hid_t space = h5(H5Screate_simple(3, d, NULL), "H5Screate_simple");
    h5(H5Sselect_hyperslab(space, H5S_SELECT_SET, s, NULL, c, NULL), "H5Sselect_hyperslab");
    return space;
}

static void h5_open(void *ctx)
{
    struct h5_file *f = ctx;
    const struct block *b = f->t.b;
    int mem[3] = { b->n + 2, b->n + 2, b->n + 2 }, interior[3] = { 1, 1, 1 };
    hid_t fapl = h5(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
    h5(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, f->t.info), "H5Pset_fapl_mpio");
    f->file = h5(H5Fcreate(f->t.name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl), f->t.name);
    H5Pclose(fapl);
    f->filespace = h5_space(b->gsizes, b->starts, b->n);
    f->memspace = h5_space(mem, interior, b->n);
    f->dxpl = h5(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
    h5(H5Pset_dxpl_mpio(f->dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
}

static void h5_write(void *ctx, int s)
{
    struct h5_file *f = ctx;
    char name[32];
    snprintf(name, sizeof name, "snapshot_%d", s);
    hid_t set = h5(H5Dcreate2(f->file, name, H5T_NATIVE_DOUBLE, f->filespace, H5P_DEFAULT,
                              H5P_DEFAULT, H5P_DEFAULT), "H5Dcreate2");
    h5(H5Dwrite(set, H5T_NATIVE_DOUBLE, f->memspace, f->filespace, f->dxpl, f->t.b->grid),
       "H5Dwrite");
    h5(H5Dclose(set), "H5Dclose");
}

static void h5_close(void *ctx)
{
    struct h5_file *f = ctx;
    H5Pclose(f->dxpl);
    H5Sclose(f->memspace);
    H5Sclose(f->filespace);
    h5(H5Fclose(f->file), "H5Fclose");
}

static const struct output h5_output = { h5_open, NULL, h5_write, h5_close };

static void nc(int rc, const char *what)
{
    if (rc != NC_NOERR)
        fail(what, ncmpi_strerror(rc));
}

struct nc_file {
    struct target t;
    int ncid, varid;
    MPI_Datatype memtype;
};

static void nc_open(void *ctx)
{
    struct nc_file *f = ctx;
    static const char *names[4] = { "time", "z", "y", "x" };
    int dims[4];
    nc(ncmpi_create(MPI_COMM_WORLD, f->t.name, NC_CLOBBER | NC_64BIT_DATA, f->t.info, &f->ncid),
       f->t.name);
    for (int d = 0; d < 4; d++)
        nc(ncmpi_def_dim(f->ncid, names[d], d ? f->t.b->gsizes[d - 1] : NC_UNLIMITED, &dims[d]),
           "ncmpi_def_dim");
    nc(ncmpi_def_var(f->ncid, "grid", NC_DOUBLE, 4, dims, &f->varid), "ncmpi_def_var");
    nc(ncmpi_enddef(f->ncid), "ncmpi_enddef");
}

static void nc_write(void *ctx, int s)
{
    struct nc_file *f = ctx;
    const struct block *b = f->t.b;
    MPI_Offset start[4] = { s, b->starts[0], b->starts[1], b->starts[2] };
    MPI_Offset count[4] = { 1, b->n, b->n, b->n };
    nc(ncmpi_put_vara_all(f->ncid, f->varid, start, count, b->grid, 1, f->memtype),
       "ncmpi_put_vara_all");
}

static void nc_close(void *ctx)
{
    nc(ncmpi_close(((struct nc_file *) ctx)->ncid), "ncmpi_close");
}

static const struct output nc_output = { nc_open, NULL, nc_write, nc_close };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int hdf5 = argc > 2 && strcmp(argv[2], "hdf5") == 0;
    int pnetcdf = argc > 2 && strcmp(argv[2], "pnetcdf") == 0;
    if (argc < 7 || strcmp(argv[1], "-l") != 0 || !(hdf5 || pnetcdf)) {
        if (rank == 0)
            fprintf(stderr, "usage: lib_bench -l hdf5|pnetcdf FILE COMPUTE_S|@SWEEPS SNAPSHOTS N "
                            "[HINT=VALUE...]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct block b;
    block_init(&b, atoi(argv[6]));
    struct target t = { argv[3], info_from_args(argc - 7, argv + 7), &b };
    int snapshots = atoi(argv[5]), sweeps = phase_sweeps(&b, argv[4]);
    if (hdf5) {
        struct h5_file f = { .t = t };
        periodic_run(&b, snapshots, sweeps, &h5_output, &f);
    } else {
        struct nc_file f = { .t = t, .memtype = block_memtype(&b) };
        periodic_run(&b, snapshots, sweeps, &nc_output, &f);
        MPI_Type_free(&f.memtype);
    }
    MPI_Info_free(&t.info);
    block_free(&b);
    MPI_Finalize();
    return 0;
}
