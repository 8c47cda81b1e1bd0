/*
 * ROMIO's generic collective open with the creator's error made each
 * process's own (ADIOI_COMPAT_OpenColl); ROMIO 3.2.1 without nonblocking
 * two-phase (romio_compat.h): its blocking two-phase, the request completed
 * at once, empty under the ROMIO that has it.
 */
#include <string.h>

#include "adio.h"
#include "romio_compat.h"

void ADIOI_COMPAT_Error_share(int error_code, struct adioi_shared_error *e)
{
    int len = 0;

    MPI_Error_class(error_code, &e->error_class);
    MPI_Error_string(error_code, e->message, &len);
}

int ADIOI_COMPAT_Error_own(const struct adioi_shared_error *e, const char *myname, int line)
{
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, line, e->error_class,
                                "**io", "**io %s", e->message);
}

/*
 * ADIOI_GEN_OpenColl creates the file on one process and sends its error
 * code to the others by MPI_Bcast. An error code names an entry of its own
 * process's error ring, so on the others it is invalid: MPICH 5 reports
 * "invalid error code" and MPI_ERR_OTHER, MPICH 4 the class without the
 * message. Then the others make a code of their own with the creator's class
 * and message (one more broadcast, on that error only: every process has
 * seen it).
 */
void ADIOI_COMPAT_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code)
{
    static char myname[] = "ADIOI_COMPAT_OPENCOLL";
    int creator = fd->hints->ranklist[0];
    struct adioi_shared_error e;

    ADIOI_GEN_OpenColl(fd, rank, access_mode, error_code);
    if (!(access_mode & ADIO_CREATE) || *error_code == MPI_SUCCESS)
        return;
    memset(&e, 0, sizeof e);
    if (rank == creator)
        ADIOI_COMPAT_Error_share(*error_code, &e);
    MPI_Bcast(&e, (int) sizeof e, MPI_BYTE, creator, fd->comm);
    if (rank != creator)
        *error_code = ADIOI_COMPAT_Error_own(&e, myname, __LINE__);
}

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
