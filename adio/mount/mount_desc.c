/*
 * rfs-mount's descriptor of a path (mount_desc.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mount/mount_desc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/xattr.h>

static const char *const known_hints[] = {
    "rdma_servers", "rfs_key_file", "rfs_transport", "rfs_tls_ca", NULL
};

int mount_desc_hint_known(const char *key)
{
    for (int i = 0; known_hints[i]; i++)
        if (strcmp(key, known_hints[i]) == 0)
            return 1;
    return 0;
}

int mount_desc_add_hint(struct mount_desc *d, const char *key, const char *value)
{
    if (!mount_desc_hint_known(key))
        return -EINVAL;
    if (d->nhints == MOUNT_DESC_HINTS || strlen(value) >= MOUNT_DESC_VALUE ||
        strchr(value, '\n'))
        return -ENOSPC;
    struct mount_hint *h = &d->hint[d->nhints++];
    snprintf(h->key, sizeof h->key, "%s", key);
    snprintf(h->value, sizeof h->value, "%s", value);
    return 0;
}

const char *mount_desc_hint(const struct mount_desc *d, const char *key)
{
    for (uint32_t i = 0; i < d->nhints; i++)
        if (strcmp(d->hint[i].key, key) == 0)
            return d->hint[i].value;
    return NULL;
}

int mount_desc_format(const struct mount_desc *d, char *out, size_t size)
{
    if (strchr(d->name, '\n'))
        return -EINVAL;             /* a line of its own: it would forge a hint */
    int n = snprintf(out, size, "name=%s\n", d->name);
    for (uint32_t i = 0; i < d->nhints && n >= 0 && (size_t) n < size; i++)
        n += snprintf(out + n, size - (size_t) n, "%s=%s\n", d->hint[i].key, d->hint[i].value);
    return n < 0 || (size_t) n >= size ? -ENOSPC : n;
}

/* One "key=value" line of in[0..len) from *at on; 0, 1 at the end, or
 * -EINVAL. */
static int next_line(const char *in, size_t len, size_t *at, char *key, size_t key_size,
                     char *value, size_t value_size)
{
    if (*at == len)
        return 1;
    const char *line = in + *at, *end = memchr(line, '\n', len - *at);
    if (!end)
        return -EINVAL;
    const char *eq = memchr(line, '=', (size_t) (end - line));
    if (!eq || eq == line || (size_t) (eq - line) >= key_size ||
        (size_t) (end - eq - 1) >= value_size || memchr(line, '\0', (size_t) (end - line)))
        return -EINVAL;
    memcpy(key, line, (size_t) (eq - line));
    key[eq - line] = '\0';
    memcpy(value, eq + 1, (size_t) (end - eq - 1));
    value[end - eq - 1] = '\0';
    *at = (size_t) (end - in) + 1;
    return 0;
}

int mount_desc_parse(const char *in, size_t len, struct mount_desc *d)
{
    char key[32], value[MOUNT_DESC_NAME];
    size_t at = 0;
    memset(d, 0, sizeof *d);
    if (len > MOUNT_DESC_MAX ||
        next_line(in, len, &at, key, sizeof key, d->name, sizeof d->name) != 0 ||
        strcmp(key, "name") != 0 ||
        (strncmp(d->name, "rdma:/", 6) != 0 && strncmp(d->name, "rfs:", 4) != 0))
        return -EINVAL;
    int rc;
    while ((rc = next_line(in, len, &at, key, sizeof key, value, MOUNT_DESC_VALUE)) == 0)
        if (mount_desc_add_hint(d, key, value) != 0 || strlen(value) == 0)
            return -EINVAL;
    return rc == 1 ? 0 : -EINVAL;
}

/* A mount point of /proc/self/mountinfo, its octal escapes undone, in
 * place; NULL for a line without one. */
static char *mount_point_of(char *line, char **fstype)
{
    char *save, *field = strtok_r(line, " ", &save), *point = NULL;
    for (int i = 1; field && i < 5; i++)
        point = field = strtok_r(NULL, " ", &save);
    while ((field = strtok_r(NULL, " ", &save)) && strcmp(field, "-") != 0)
        ;
    *fstype = field ? strtok_r(NULL, " ", &save) : NULL;
    if (!point || !*fstype)
        return NULL;
    char *out = point;
    for (const char *in = point; *in; out++) {
        unsigned v;
        if (in[0] == '\\' && sscanf(in + 1, "%3o", &v) == 1 && v < 256) {
            *out = (char) v;
            in += 4;
        } else
            *out = *in++;
    }
    *out = '\0';
    return point;
}

/* Whether PATH lies on an rfs-mount, not on another FUSE file system: the
 * mount whose point is the longest leading part of PATH's real path has
 * rfs-mount's type. Another FUSE file system's attribute of the same name
 * must not send MPI-IO to servers of its choosing. */
static int on_rfs_mount(const char *path)
{
    char real[PATH_MAX], best_type[64] = "", line[3 * PATH_MAX];
    size_t best = 0;
    if (!realpath(path, real))
        return 0;
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        char *type, *point = mount_point_of(line, &type);
        size_t n = point ? strlen(point) : 0;
        if (!point || n < best || strncmp(real, point, n) != 0 ||
            (real[n] != '/' && real[n] != '\0' && strcmp(point, "/") != 0))
            continue;
        best = n;
        snprintf(best_type, sizeof best_type, "%s", type);
    }
    fclose(f);
    return strcmp(best_type, "fuse.rfs-mount") == 0;
}

/* The descriptor held by PATH itself; 0, -ENOENT, -EINVAL. */
static int desc_at(const char *path, struct mount_desc *d)
{
    struct statfs fs;
    char text[MOUNT_DESC_MAX];
    if (statfs(path, &fs) < 0)
        return -errno;
    if ((uint32_t) fs.f_type != MOUNT_FUSE_MAGIC || !on_rfs_mount(path))
        return -ENOENT;
    ssize_t n = getxattr(path, MOUNT_DESC_XATTR, text, sizeof text);
    if (n < 0)
        return errno == ENOENT ? -ENOENT : errno == ENODATA || errno == ENOTSUP ? -ENOENT
                                                                                : -errno;
    return mount_desc_parse(text, (size_t) n, d);
}

int mount_desc_of_path(const char *path, struct mount_desc *d)
{
    int rc = desc_at(path, d);
    if (rc != -ENOENT)
        return rc;
    /* not there yet: its directory's name and this base name */
    char dir[MOUNT_DESC_NAME];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dlen = slash ? (size_t) (slash - path) : 0;
    if (!*base || dlen >= sizeof dir || strchr(base, '\n'))
        return -ENOENT;
    memcpy(dir, path, dlen);
    dir[dlen] = '\0';
    if ((rc = desc_at(slash ? (dlen ? dir : "/") : ".", d)) != 0)
        return rc;
    size_t n = strlen(d->name), blen = strlen(base);
    if (n > 0 && d->name[n - 1] != '/')
        d->name[n++] = '/';         /* n < sizeof d->name - 1: the parse ended the name */
    if (n + blen >= sizeof d->name)
        return -EINVAL;
    memcpy(d->name + n, base, blen + 1);
    return 0;
}
