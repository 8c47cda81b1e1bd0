/*
 * ROMIO 3.2.1 without nonblocking two-phase (romio_compat.h): its blocking
 * two-phase, the request completed at once. Empty under the ROMIO that has it.
 */
#include "adio.h"
#include "romio_compat.h"

#ifdef ROMIO_COMPAT_BLOCKING_ICOLL

/* The bytes a completed collective call moved: all of them, or none. */
static MPI_Offset collective_bytes(romio_count_t count, MPI_Datatype datatype, int error_code)
{
    MPI_Count size = 0;

    if (error_code != MPI_SUCCESS)
        return 0;
    MPI_Type_size_x(datatype, &size);
    return (MPI_Offset) size * count;
}

void ADIOI_COMPAT_IreadStridedColl(ADIO_File fd, void *buf, romio_count_t count,
                                   MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                   MPI_Request *request, int *error_code)
{
    ADIO_Status status;

    ADIOI_GEN_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                              error_code);
    MPIO_Completed_request_create(&fd, collective_bytes(count, datatype, *error_code),
                                  error_code, request);
}

void ADIOI_COMPAT_IwriteStridedColl(ADIO_File fd, const void *buf, romio_count_t count,
                                    MPI_Datatype datatype, int file_ptr_type,
                                    ADIO_Offset offset, MPI_Request *request, int *error_code)
{
    ADIO_Status status;

    ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                               error_code);
    MPIO_Completed_request_create(&fd, collective_bytes(count, datatype, *error_code),
                                  error_code, request);
}

#endif
