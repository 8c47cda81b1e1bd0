/*
 * Collective reads. By default every process sends its own request
 * straight to the server (native noncontiguous I/O, no second network hop
 * through an aggregator); romio_cb_read=enable selects ROMIO's two-phase,
 * whose aggregators then read through our contiguous calls.
 */
#include "ad_rfs.h"

/* The native collective: this process's own request, nothing shared. */
static void read_native(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                        int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                        int *error_code)
{
    /* with romio_no_indep_rw only aggregators have opened the file */
    ADIOI_TEST_DEFERRED(fd, "ADIOI_RFS_READSTRIDEDCOLL", error_code);
    ADIO_ReadStrided(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
}

void ADIOI_RFS_ReadStridedColl(ADIO_File fd, void *buf, romio_count_t count,
                                MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                ADIO_Status *status, int *error_code)
{
    if (fd->hints->cb_read == ADIOI_HINT_ENABLE) {
        ADIOI_GEN_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code);
        return;
    }
    /* read_ordered comes here once its process has moved the shared
     * pointer (ADIOI_RFS_Coll_sync says why everyone must have) */
    if (ADIOI_RFS_Coll_sync(fd, error_code) != MPI_SUCCESS)
        return;
    read_native(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
}

/* No ordered call is nonblocking, and a nonblocking start must not wait
 * for the other processes: no synchronisation here. */
void ADIOI_RFS_IreadStridedColl(ADIO_File fd, void *buf, romio_count_t count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 MPI_Request *request, int *error_code)
{
    if (fd->hints->cb_read == ADIOI_HINT_ENABLE) {
        ADIOI_GEN_IreadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, request,
                                    error_code);
        return;
    }
    ADIO_Status status;
    read_native(fd, buf, count, datatype, file_ptr_type, offset, &status, error_code);
    MPIO_Completed_request_create(&fd, ADIOI_RFS_Status_bytes(&status, *error_code),
                                  error_code, request);
}
