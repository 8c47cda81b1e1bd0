/*
 * SetInfo: the abt_* hints of docs/abt.md, stated once in the table
 * below, land in fd->info, where Open reads them (ADIOI_ABT_Get_hints)
 * and MPI_File_get_info reports them; then the inner driver's hints (and
 * ROMIO's generic ones, through the inner SetInfo). All act at open. An
 * invalid value is MPI_ERR_INFO_VALUE: from set_info at once, from the
 * open through Open.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ad_abt.h"
#include "adio_hints.h"

#define AT_OPEN(member) .at_open = 1, .to = ADIO_HINT_TO(ADIOI_ABT_Hints, member)

/* abt_coll_write: in the order of enum ADIOI_ABT_Coll_path, then auto */
static const char *const coll_paths[] = { "own_runs", "exchange", "through", "auto", NULL };
/* abt_buffer_rdwr: in the order of enum ADIOI_ABT_Rdwr */
static const char *const rdwr_modes[] = { "disable", "enable", "auto", NULL };

static const struct adio_hint abt_hints[] = {
    { .name = "abt_buffer_size", .kind = ADIO_HINT_COUNT, .min = 4096, .max = 1ull << 30,
      .dflt = "4194304", AT_OPEN(cfg.buffer_size) },
    { .name = "abt_max_memory", .kind = ADIO_HINT_COUNT, .max = ULLONG_MAX,
      .dflt = "67108864", AT_OPEN(cfg.max_memory) },
    { .name = "abt_stage_dir", .kind = ADIO_HINT_TEXT, .accepted = "a directory, or none",
      .dflt = "/tmp", .env = "TMPDIR", AT_OPEN(stage_dir) },
    { .name = "abt_defer_close", .kind = ADIO_HINT_WORD, .words = adio_hint_switch,
      .dflt = "disable", AT_OPEN(defer_close) },
    { .name = "abt_compute_interval", .kind = ADIO_HINT_SECONDS, .max = 1000000000,
      .dflt = "0", AT_OPEN(cfg.compute_interval) },
    { .name = "abt_output_size", .kind = ADIO_HINT_COUNT, .max = ULLONG_MAX, .dflt = "0",
      AT_OPEN(cfg.output_size) },
    { .name = "abt_phase_gap", .kind = ADIO_HINT_SECONDS, .max = 1000000000, .dflt = "0.05",
      AT_OPEN(cfg.phase_gap) },
    { .name = "abt_stats", .kind = ADIO_HINT_WORD, .words = adio_hint_switch,
      .dflt = "disable", AT_OPEN(stats) },
    { .name = "abt_coll_write", .kind = ADIO_HINT_WORD, .words = coll_paths, .dflt = "auto",
      AT_OPEN(coll_write) },
    { .name = "abt_buffer_rdwr", .kind = ADIO_HINT_WORD, .words = rdwr_modes,
      .dflt = "auto", AT_OPEN(buffer_rdwr) },
};

#define ABT_HINTS (sizeof abt_hints / sizeof abt_hints[0])

/* Before Open (fs_ptr NULL) the inner driver's SetInfo runs on this file,
 * as it would without abt; afterwards on the shadow. */
static void inner_set_info(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    int type;
    ADIOI_Fns *ops;
    const char *name;
    if (a) {
        ADIOI_ABT_Sync_shadow(fd);
        a->inner->fns->ADIOI_xxx_SetInfo(a->inner, users_info, error_code);
    } else if (ADIOI_ABT_Resolve_inner(fd->filename, &type, &ops, &name) == MPI_SUCCESS) {
        ops->ADIOI_xxx_SetInfo(fd, users_info, error_code);
    } else {
        ADIOI_GEN_SetInfo(fd, users_info, error_code);   /* Open reports the name */
    }
}

void ADIOI_ABT_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    static char myname[] = "ADIOI_ABT_SETINFO";
    int err = adio_hints_install(fd, users_info, abt_hints, ABT_HINTS, myname);
    /* an open file keeps every hint when one of ours is invalid */
    if (err == MPI_SUCCESS || !fd->fs_ptr)
        inner_set_info(fd, users_info, error_code);
    if (err != MPI_SUCCESS)
        *error_code = err;
    if (*error_code != MPI_SUCCESS)
        return;
    /* every process opens the file: close waits for every process's drain,
     * and collective calls order every process's buffered writes */
    fd->hints->deferred_open = 0;
    ADIOI_ABT_Report_visibility(fd);
}

int ADIOI_ABT_Get_hints(ADIO_File fd, ADIOI_ABT_Hints *h, const char *myname)
{
    return adio_hints_decode(fd->info, abt_hints, ABT_HINTS, 0, h, myname);
}

/* The engine's configuration, and a's settings, from the hints. */
void ADIOI_ABT_Configure(const ADIOI_ABT_Hints *h, struct abt_config *cfg, ADIOI_ABT_File *a)
{
    a->buffer_rdwr = h->buffer_rdwr;
    a->stage_dir = strcmp(h->stage_dir, "none") != 0 ? strdup(h->stage_dir) : NULL;
    a->defer_close = h->defer_close;
    a->coll_write = h->coll_write;
    a->print_stats = h->stats || getenv(ADIOI_ABT_STATS_ENV) != NULL;
    *cfg = h->cfg;
    cfg->stage_dir = a->stage_dir;
}
