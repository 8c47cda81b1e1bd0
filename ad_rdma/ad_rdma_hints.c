/*
 * SetInfo: the rdma_* hints (docs/rdma.md) and striping_factor land in
 * fd->info and fd->hints, where Open reads them and MPI_File_get_info
 * reports them (Open replaces the striping values and the server list
 * by those the file really has); ROMIO's generic hints follow, among
 * them striping_unit. Called collectively, before Open (fs_ptr NULL) and
 * by MPI_File_set_info / set_view later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad_rdma.h"
#include "hint_fns.h"

static void install_defaults(ADIO_File fd)
{
    char value[16];
    MPI_Info_create(&fd->info);
    ADIOI_Info_set(fd->info, "rdma_io_method", "list");
    snprintf(value, sizeof value, "%d", STRIPE_DEFAULT_PAIRS);
    ADIOI_Info_set(fd->info, "rdma_list_pairs", value);
    snprintf(value, sizeof value, "%d", ADIOI_RDMA_DEFAULT_TIMEOUT);
    ADIOI_Info_set(fd->info, "rdma_timeout", value);
    ADIOI_Info_set(fd->info, "rdma_stats", "disable");
    ADIOI_Info_set(fd->info, "rdma_coll", "auto");
    ADIOI_Info_set(fd->info, "rdma_transport", "auto");
    ADIOI_Info_set(fd->info, "rdma_registration", "cached");
    ADIOI_Info_set(fd->info, "rdma_coll_cache", "disable");
    ADIOI_Info_set(fd->info, "rdma_memory_segments", "auto");
    snprintf(value, sizeof value, "%u", ADIOI_RDMA_PACK_DEFAULT);
    ADIOI_Info_set(fd->info, "rdma_pack_threshold", value);
}

/* A string hint taken only when `ok` accepts it. */
static void install_checked(ADIO_File fd, MPI_Info users_info, const char *key,
                            int (*ok)(const char *))
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    ADIOI_Info_get(users_info, key, MPI_MAX_INFO_VAL, value, &flag);
    if (flag && ok(value))
        ADIOI_Info_set(fd->info, key, value);
}

static int known_method(const char *v)
{
    return !strcmp(v, "naive") || !strcmp(v, "list") || !strcmp(v, "datatype") ||
           !strcmp(v, "sieve");
}

static int known_coll(const char *v)
{
    return !strcmp(v, "two_phase") || !strcmp(v, "disk_directed") || !strcmp(v, "auto");
}

static int known_transport(const char *v)
{
    return !strcmp(v, "tcp") || !strcmp(v, "verbs") || !strcmp(v, "auto");
}

static int known_registration(const char *v)
{
    return !strcmp(v, "individual") || !strcmp(v, "ogr") || !strcmp(v, "cached");
}

static int enable_or_disable(const char *v)
{
    return !strcmp(v, "enable") || !strcmp(v, "disable");
}

static int enable_disable_auto(const char *v)
{
    return enable_or_disable(v) || !strcmp(v, "auto");
}

/* rdma_pack_threshold: 1 byte up to the verbs staging buffer */
static int pack_threshold(const char *v)
{
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    return end != v && *end == '\0' && n >= 1 && n <= ADIOI_RDMA_PACK_MOST;
}

static int pair_count(const char *v)
{
    return atoi(v) > 0 && atoi(v) <= RFS_MAX_PAIRS;
}

/* Seconds, up to a day (milliseconds must fit an int). */
static int seconds(const char *v)
{
    return atoi(v) > 0 && atoi(v) <= 86400;
}

static int any(const char *v)
{
    (void) v;
    return 1;
}

void ADIOI_RDMA_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    static char myname[] = "ADIOI_RDMA_SETINFO";
    int stats;

    *error_code = MPI_SUCCESS;
    if (fd->info == MPI_INFO_NULL)
        install_defaults(fd);
    if (users_info != MPI_INFO_NULL) {
        if (ADIOI_Info_check_and_install_enabled(fd, users_info, "rdma_stats", &stats, myname,
                                                 error_code) < 0)
            return;
        /* the layout, the servers and the transport are fixed once the file is open */
        if (!fd->fs_ptr) {
            install_checked(fd, users_info, "rdma_transport", known_transport);
            install_checked(fd, users_info, "rdma_registration", known_registration);
            install_checked(fd, users_info, "rdma_pack_threshold", pack_threshold);
            if (ADIOI_Info_check_and_install_int(fd, users_info, "striping_factor",
                                                 &fd->hints->striping_factor, myname,
                                                 error_code) < 0)
                return;
            install_checked(fd, users_info, "rdma_servers", any);
        }
        install_checked(fd, users_info, "rdma_io_method", known_method);
        install_checked(fd, users_info, "rdma_list_pairs", pair_count);
        install_checked(fd, users_info, "rdma_timeout", seconds);
        install_checked(fd, users_info, "rdma_coll", known_coll);
        install_checked(fd, users_info, "rdma_coll_cache", enable_or_disable);
        install_checked(fd, users_info, "rdma_memory_segments", enable_disable_auto);
    }
    if (!fd->fs_ptr)
        rfs_adio_security_hints(fd, users_info);
    if (fd->fs_ptr) {
        ADIOI_RDMA_File *f = fd->fs_ptr;
        ADIOI_RDMA_Get_hints(fd, f);
        f->view_stale = 1;      /* set_view comes through here */
    }
    ADIOI_GEN_SetInfo(fd, users_info, error_code);
    /* ROMIO's generic code takes striping_unit from the user: the layout
     * of an open file is what it is */
    if (fd->fs_ptr)
        ADIOI_RDMA_Report_layout(fd, fd->fs_ptr);
}
