/*
 * ReadContig: a read that could see a write still in the buffers of any
 * handle of the file in this process drains them first (read-after-write
 * of one process, as MPI requires); any other read goes straight to the
 * inner driver while the drain goes on.
 */
#include "ad_abt.h"

void ADIOI_ABT_ReadContig(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                          int *error_code)
{
    static char myname[] = "ADIOI_ABT_READCONTIG";
    ADIOI_ABT_File *a = fd->fs_ptr;
    ADIO_Offset off;
    ADIO_Offset len = ADIOI_ABT_Extent(fd, count, datatype, file_ptr_type, offset, &off);

    *error_code = ADIOI_ABT_Drain_range(fd, ADIOI_ABT_ALL_HANDLES, (uint64_t) off,
                                        (uint64_t) len, myname);
    if (*error_code != MPI_SUCCESS)
        return;
    ADIOI_ABT_Sync_shadow(fd);
    ADIO_ReadContig(a->inner, buf, count, datatype, ADIO_EXPLICIT_OFFSET, off, status,
                    error_code);
    if (*error_code == MPI_SUCCESS && file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind = fd->fp_sys_posn = off + len;
}

/*
 * Strided and collective reads go to the inner driver itself (rfs: reads
 * through its shipped view, natively). Before an independent one this
 * process's buffered writes drain; before a collective one, every
 * process's that the call meets (ad_abt_order.c). The shadow's file
 * pointer comes back to the user's file.
 */
static void read_inner(ADIO_File fd, int collective, void *buf, romio_count_t count,
                       MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                       ADIO_Status *status, int *error_code, const char *myname)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    *error_code = collective ?
        ADIOI_ABT_Order_collective(fd, count, datatype, file_ptr_type, offset, NULL, myname) :
        ADIOI_ABT_Drain(fd, myname);
    if (*error_code != MPI_SUCCESS)
        return;
    ADIOI_ABT_Sync_shadow(fd);
    ADIOI_Fns *inner = a->inner->fns;
    (collective ? inner->ADIOI_xxx_ReadStridedColl : inner->ADIOI_xxx_ReadStrided)
        (a->inner, buf, count, datatype, file_ptr_type, offset, status, error_code);
    fd->fp_ind = a->inner->fp_ind;
    fd->fp_sys_posn = a->inner->fp_sys_posn;
}

void ADIOI_ABT_ReadStrided(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                           int *error_code)
{
    read_inner(fd, 0, buf, count, datatype, file_ptr_type, offset, status, error_code,
               "ADIOI_ABT_READSTRIDED");
}

void ADIOI_ABT_ReadStridedColl(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                               int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                               int *error_code)
{
    read_inner(fd, 1, buf, count, datatype, file_ptr_type, offset, status, error_code,
               "ADIOI_ABT_READSTRIDEDCOLL");
}
