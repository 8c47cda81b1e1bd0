/*
 * Close: the buffers drain and any error of a buffered write is reported
 * here; then the inner driver closes. With abt_defer_close (and a drain
 * thread) close returns at once: the engine keeps draining and is finished
 * by the next open or delete of the same name, or at MPI_Finalize at the
 * latest (an MPI_COMM_SELF attribute, deleted at the start of Finalize),
 * where an error is printed and returned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad_abt.h"

struct deferred {
    char *name;
    struct abt_engine *engine;
    int print_stats;
    struct deferred *next;
};

/* Only the application thread touches the list (ROMIO's lock serialises
 * MPI-IO calls under MPI_THREAD_MULTIPLE). */
static struct deferred *deferred_list;
static int finalize_keyval = MPI_KEYVAL_INVALID;

static int finish(struct deferred *d)
{
    int rc = abt_flush(d->engine);
    if (d->print_stats)
        ADIOI_ABT_Print_stats(d->name, d->engine);
    if (rc != 0)
        fprintf(stderr, "abt: %s: a deferred write failed after close: %s\n", d->name,
                strerror(-rc));
    abt_engine_destroy(d->engine);
    free(d->name);
    free(d);
    return rc;
}

/* Finishes the deferred closes of `name` (all of them when name is NULL);
 * the first error, negative errno, or 0. */
static int finish_matching(const char *name)
{
    struct deferred **p = &deferred_list;
    int first = 0;
    while (*p) {
        struct deferred *d = *p;
        if (name == NULL || strcmp(d->name, name) == 0) {
            *p = d->next;
            int rc = finish(d);
            first = first ? first : rc;
        } else {
            p = &d->next;
        }
    }
    return first;
}

void ADIOI_ABT_Finish_deferred(const char *name)
{
    finish_matching(name);
}

static int at_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void) comm; (void) keyval; (void) attr; (void) extra;
    return finish_matching(NULL) ? MPI_ERR_IO : MPI_SUCCESS;
}

static int defer(ADIO_File fd, ADIOI_ABT_File *a)
{
    if (finalize_keyval == MPI_KEYVAL_INVALID) {
        if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &finalize_keyval,
                                   NULL) != MPI_SUCCESS ||
            MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL) != MPI_SUCCESS)
            return 0;
    }
    struct deferred *d = malloc(sizeof *d);
    if (d == NULL || (d->name = strdup(fd->filename)) == NULL) {
        free(d);
        return 0;
    }
    d->engine = a->engine;
    d->print_stats = a->print_stats;
    d->next = deferred_list;
    deferred_list = d;
    return 1;
}

/* The engine's last word: 0 or an MPI error code. Not deferred where
 * leases hold the buffered bytes: they end with the inner file's close. */
static int close_engine(ADIO_File fd, ADIOI_ABT_File *a, const char *myname)
{
    int deferrable = a->defer_close && a->background && !(fd->access_mode & ADIO_DELETE_ON_CLOSE) &&
                     !ADIOI_ABT_Leasing(fd) && abt_error(a->engine) == 0;
    if (deferrable && defer(fd, a))
        return MPI_SUCCESS;
    int rc = abt_flush(a->engine);
    if (a->print_stats)
        ADIOI_ABT_Print_stats(fd->filename, a->engine);
    abt_engine_destroy(a->engine);
    return rc ? ADIOI_ABT_Error(rc, myname, fd->filename) : MPI_SUCCESS;
}

/* Collective (MPI_File_close; ROMIO's create step closes alone over
 * MPI_COMM_SELF): no process leaves before every process's buffered
 * writes are in the file, so that whatever any of them does next with it
 * (a reopen, POSIX calls on the path, a truncation) finds them there. */
void ADIOI_ABT_Close(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_ABT_CLOSE";
    ADIOI_ABT_File *a = fd->fs_ptr;
    int inner_error;

    *error_code = MPI_SUCCESS;
    if (a == NULL)
        return;
    ADIOI_ABT_Unregister(fd);
    int drained = a->engine ? close_engine(fd, a, myname) : MPI_SUCCESS;
    *error_code = ADIOI_ABT_Agree(a->open_comm, drained, myname);
    ADIOI_ABT_Sync_shadow(fd);
    a->inner->fns->ADIOI_xxx_Close(a->inner, &inner_error);
    if (*error_code == MPI_SUCCESS)
        *error_code = inner_error;
    ADIOI_Free(a->inner->filename);
    ADIOI_Free(a->inner);
    free(a->stage_dir);
    ADIOI_Free(a);
    fd->fs_ptr = NULL;
}
