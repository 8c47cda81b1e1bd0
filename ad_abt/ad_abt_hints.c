/*
 * SetInfo: the inner driver's hints (and ROMIO's generic ones, through the
 * inner SetInfo), then the abt_* hints of docs/abt.md into fd->info, where
 * Open reads them and MPI_File_get_info reports them. A value that does
 * not parse keeps the one in effect, which get_info shows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad_abt.h"

static const char *default_stage_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
}

/* value holds MPI_MAX_INFO_VAL + 1 bytes; 0 when the key is not set */
static int info_value(ADIO_File fd, const char *key, char *value)
{
    int flag = 0;
    ADIOI_Info_get(fd->info, key, MPI_MAX_INFO_VAL, value, &flag);
    return flag;
}

static void install_default(ADIO_File fd, const char *key, const char *value)
{
    char old[MPI_MAX_INFO_VAL + 1];
    if (!info_value(fd, key, old))
        ADIOI_Info_set(fd->info, key, value);
}

static void install_defaults(ADIO_File fd)
{
    char value[32];
    snprintf(value, sizeof value, "%llu", ADIOI_ABT_DEFAULT_BUFFER);
    install_default(fd, "abt_buffer_size", value);
    snprintf(value, sizeof value, "%llu", ADIOI_ABT_DEFAULT_MEMORY);
    install_default(fd, "abt_max_memory", value);
    install_default(fd, "abt_stage_dir", default_stage_dir());
    install_default(fd, "abt_defer_close", "disable");
    install_default(fd, "abt_compute_interval", "0");
    install_default(fd, "abt_output_size", "0");
    snprintf(value, sizeof value, "%g", ADIOI_ABT_DEFAULT_GAP);
    install_default(fd, "abt_phase_gap", value);
    install_default(fd, "abt_stats", "disable");
}

static int parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-')
        return -1;
    *out = v;
    return 0;
}

static int parse_seconds(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0 && v < 1e9))
        return -1;
    *out = v;
    return 0;
}

static int valid(const char *key, const char *value)
{
    uint64_t n;
    double d;
    if (strcmp(key, "abt_buffer_size") == 0)
        return parse_bytes(value, &n) == 0 && n >= 4096 && n <= (1ull << 30);
    if (strcmp(key, "abt_max_memory") == 0 || strcmp(key, "abt_output_size") == 0)
        return parse_bytes(value, &n) == 0;
    if (strcmp(key, "abt_compute_interval") == 0 || strcmp(key, "abt_phase_gap") == 0)
        return parse_seconds(value, &d) == 0;
    if (strcmp(key, "abt_defer_close") == 0 || strcmp(key, "abt_stats") == 0)
        return strcmp(value, "enable") == 0 || strcmp(value, "disable") == 0;
    return strcmp(key, "abt_stage_dir") == 0 && value[0] != '\0';
}

static void install_users(ADIO_File fd, MPI_Info users_info)
{
    static const char *keys[] = {
        "abt_buffer_size", "abt_max_memory", "abt_stage_dir", "abt_defer_close",
        "abt_compute_interval", "abt_output_size", "abt_phase_gap", "abt_stats"
    };
    char value[MPI_MAX_INFO_VAL + 1];
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        int flag = 0;
        ADIOI_Info_get(users_info, keys[i], MPI_MAX_INFO_VAL, value, &flag);
        if (flag && valid(keys[i], value))
            ADIOI_Info_set(fd->info, keys[i], value);
    }
}

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
    inner_set_info(fd, users_info, error_code);
    if (*error_code != MPI_SUCCESS)
        return;
    /* every process opens the file: close waits for every process's drain,
     * and collective calls order every process's buffered writes */
    fd->hints->deferred_open = 0;
    install_defaults(fd);
    if (users_info != MPI_INFO_NULL)
        install_users(fd, users_info);
    /* buffered writes reach the file later (atomic mode writes through) */
    ADIOI_Info_set(fd->info, "romio_visibility_immediate", fd->atomicity ? "true" : "false");
}

static uint64_t info_bytes(ADIO_File fd, const char *key)
{
    char value[MPI_MAX_INFO_VAL + 1];
    uint64_t n = 0;
    return info_value(fd, key, value) && parse_bytes(value, &n) == 0 ? n : 0;
}

static double info_seconds(ADIO_File fd, const char *key)
{
    char value[MPI_MAX_INFO_VAL + 1];
    double d = 0;
    return info_value(fd, key, value) && parse_seconds(value, &d) == 0 ? d : 0;
}

static int info_enabled(ADIO_File fd, const char *key)
{
    char value[MPI_MAX_INFO_VAL + 1];
    return info_value(fd, key, value) && strcmp(value, "enable") == 0;
}

/* The engine's configuration from the hints SetInfo installed. */
void ADIOI_ABT_Get_config(ADIO_File fd, struct abt_config *cfg, ADIOI_ABT_File *a)
{
    char dir[MPI_MAX_INFO_VAL + 1];
    int flag = info_value(fd, "abt_stage_dir", dir);
    a->stage_dir = flag && strcmp(dir, "none") != 0 ? strdup(dir) : NULL;
    a->defer_close = info_enabled(fd, "abt_defer_close");
    a->print_stats = info_enabled(fd, "abt_stats") || getenv(ADIOI_ABT_STATS_ENV) != NULL;
    *cfg = (struct abt_config) {
        .buffer_size = info_bytes(fd, "abt_buffer_size"),
        .max_memory = info_bytes(fd, "abt_max_memory"),
        .stage_dir = a->stage_dir,
        .compute_interval = info_seconds(fd, "abt_compute_interval"),
        .output_size = info_bytes(fd, "abt_output_size"),
        .phase_gap = info_seconds(fd, "abt_phase_gap"),
    };
}
