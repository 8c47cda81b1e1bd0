/* Delete: the inner driver deletes; deferred closes of the file end first. */
#include "ad_abt.h"

void ADIOI_ABT_Delete(const char *filename, int *error_code)
{
    int type;
    ADIOI_Fns *ops;
    const char *name;
    *error_code = ADIOI_ABT_Resolve_inner(filename, &type, &ops, &name);
    if (*error_code != MPI_SUCCESS)
        return;
    ADIOI_ABT_Finish_deferred(filename);
    ops->ADIOI_xxx_Delete(name, error_code);
}
