/*
 * SetLock: the inner driver's lock. Taking one drains first, and writes
 * go through until it is released: whoever takes the lock next (the
 * shared file pointer's hidden file, data sieving) must find the data in
 * the file, not in this process's buffers.
 */
#include "ad_abt.h"

int ADIOI_ABT_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                      ADIO_Offset len)
{
    static char myname[] = "ADIOI_ABT_SETLOCK";
    ADIOI_ABT_File *a = fd->fs_ptr;
    int unlock = type == F_UNLCK;
    if (!unlock) {
        int err = ADIOI_ABT_Drain(fd, myname);
        if (err != MPI_SUCCESS)
            return err;
    }
    ADIOI_ABT_Sync_shadow(fd);
    int err = ADIOI_COMPAT_SetLock(a->inner, cmd, type, offset, whence, len);
    if (err == MPI_SUCCESS) {
        if (!unlock)
            a->locks_held++;
        else if (a->locks_held > 0)
            a->locks_held--;
    }
    return err;
}
