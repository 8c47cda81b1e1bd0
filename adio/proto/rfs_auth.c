/*
 * Key files and the HMAC-SHA256 challenge-response (rfs_auth.h). A key
 * file is hostile input like any other: every line is checked, and a
 * file others could read is refused before its contents are looked at.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "proto/rfs_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#define KEYFILE_MAX (1u << 20)

static int failf(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return rc;
}

/* The whole file, NUL-terminated, after the ownership and mode checks. */
static int read_private_file(const char *path, char **text, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return failf(err, errlen, -errno, "key file %s: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0)
        rc = failf(err, errlen, -errno, "key file %s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = failf(err, errlen, -EINVAL, "key file %s: not a regular file", path);
    else if (st.st_uid != geteuid() || (st.st_mode & 077))
        rc = failf(err, errlen, -EPERM,
                   "key file %s: must belong to this user and be readable by nobody else "
                   "(chmod 600)", path);
    else if (st.st_size > KEYFILE_MAX)
        rc = failf(err, errlen, -EFBIG, "key file %s: over %u bytes", path, KEYFILE_MAX);
    char *buf = rc == 0 ? malloc((size_t) st.st_size + 1) : NULL;
    if (rc == 0 && !buf)
        rc = failf(err, errlen, -ENOMEM, "key file %s: out of memory", path);
    if (rc == 0) {
        ssize_t n = read(fd, buf, (size_t) st.st_size);
        if (n < 0 || n != st.st_size)
            rc = failf(err, errlen, n < 0 ? -errno : -EIO, "key file %s: short read", path);
        else
            buf[n] = '\0';
    }
    close(fd);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *text = buf;
    return 0;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int parse_secret(const char *hex, struct rfs_key *k)
{
    size_t n = strlen(hex);
    if (n % 2 || n / 2 < RFS_AUTH_MIN_SECRET || n / 2 > RFS_AUTH_MAX_SECRET)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        k->secret[i] = (uint8_t) (hi << 4 | lo);
    }
    k->secret_len = n / 2;
    return 0;
}

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n <= RFS_AUTH_MAX_NAME &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@") == n;
}

/* NAME HEXSECRET [ro] [root=DIR]; the line is cut into words in place. */
static int parse_line(char *line, struct rfs_key *k, const char **why)
{
    char *save = NULL, *name = strtok_r(line, " \t\r", &save);
    char *hex = strtok_r(NULL, " \t\r", &save);
    *k = (struct rfs_key) { 0 };
    if (!name || !valid_name(name)) {
        *why = "a name of 1-64 letters, digits or ._-@";
        return -1;
    }
    strcpy(k->name, name);
    if (!hex || parse_secret(hex, k) < 0) {
        *why = "a secret of 32-128 hex digits (16-64 bytes)";
        return -1;
    }
    for (char *w; (w = strtok_r(NULL, " \t\r", &save));) {
        if (strcmp(w, "ro") == 0) {
            k->read_only = 1;
        } else if (strncmp(w, "root=", 5) == 0 && w[5] && !k->root) {
            if (!(k->root = strdup(w + 5))) {
                *why = "memory";
                return -1;
            }
        } else {
            free(k->root);
            k->root = NULL;
            *why = "options 'ro' or 'root=DIR' (once)";
            return -1;
        }
    }
    return 0;
}

static int add_key(struct rfs_keyring *ring, const struct rfs_key *k)
{
    if (ring->count == RFS_AUTH_MAX_KEYS || rfs_keyring_find(ring, k->name, strlen(k->name)))
        return -1;
    struct rfs_key *keys = realloc(ring->keys, (ring->count + 1) * sizeof *keys);
    if (!keys)
        return -1;
    ring->keys = keys;
    ring->keys[ring->count++] = *k;
    return 0;
}

char *rfs_text_next_line(char **cursor, int *lineno)
{
    while (*cursor) {
        char *line = *cursor;
        *cursor = strchr(line, '\n');
        if (*cursor)
            *(*cursor)++ = '\0';
        ++*lineno;
        line += strspn(line, " \t\r");
        if (*line != '\0' && *line != '#')
            return line;
    }
    return NULL;
}

static int parse_keys(char *text, const char *path, struct rfs_keyring *ring, char *err,
                      size_t errlen)
{
    int lineno = 0;
    for (char *line; (line = rfs_text_next_line(&text, &lineno));) {
        struct rfs_key k;
        const char *why = NULL;
        if (parse_line(line, &k, &why) < 0)
            return failf(err, errlen, -EINVAL, "key file %s, line %d: expected %s", path,
                         lineno, why);
        if (add_key(ring, &k) < 0) {
            failf(err, errlen, -EINVAL, "key file %s, line %d: key '%s' twice, or too many keys",
                  path, lineno, k.name);
            rfs_key_wipe(&k);
            return -EINVAL;
        }
    }
    return 0;
}

int rfs_keyring_load(const char *path, struct rfs_keyring *ring, char *err, size_t errlen)
{
    char *text = NULL;
    *ring = (struct rfs_keyring) { 0 };
    int rc = read_private_file(path, &text, err, errlen);
    if (rc < 0)
        return rc;
    rc = parse_keys(text, path, ring, err, errlen);
    OPENSSL_cleanse(text, strlen(text));
    free(text);
    if (rc == 0 && ring->count == 0)
        rc = failf(err, errlen, -EINVAL, "key file %s: no key in it", path);
    if (rc < 0)
        rfs_keyring_free(ring);
    return rc;
}

void rfs_keyring_free(struct rfs_keyring *ring)
{
    for (size_t i = 0; i < ring->count; i++)
        rfs_key_wipe(&ring->keys[i]);
    free(ring->keys);
    *ring = (struct rfs_keyring) { 0 };
}

const struct rfs_key *rfs_keyring_find(const struct rfs_keyring *ring, const char *name,
                                       size_t len)
{
    for (size_t i = 0; i < ring->count; i++)
        if (strlen(ring->keys[i].name) == len && memcmp(ring->keys[i].name, name, len) == 0)
            return &ring->keys[i];
    return NULL;
}

int rfs_key_load(const char *path, struct rfs_key *key, char *err, size_t errlen)
{
    struct rfs_keyring ring;
    int rc = rfs_keyring_load(path, &ring, err, errlen);
    if (rc < 0)
        return rc;
    if (ring.count != 1) {
        rfs_keyring_free(&ring);
        return failf(err, errlen, -EINVAL, "key file %s: a client's key file holds one key",
                     path);
    }
    *key = ring.keys[0];
    free(key->root);
    key->root = NULL;
    key->read_only = 0;
    free(ring.keys);
    return 0;
}

void rfs_key_wipe(struct rfs_key *key)
{
    free(key->root);
    OPENSSL_cleanse(key, sizeof *key);
}

int rfs_auth_nonce(uint8_t nonce[RFS_AUTH_NONCE])
{
    return RAND_bytes(nonce, RFS_AUTH_NONCE) == 1 ? 0 : -EIO;
}

void rfs_auth_mac(const struct rfs_key *key, char role, const uint8_t client_nonce[RFS_AUTH_NONCE],
                  const uint8_t server_nonce[RFS_AUTH_NONCE], const uint8_t *binding,
                  size_t binding_len, uint8_t mac[RFS_AUTH_MAC])
{
    /* "rfs1", the role, the name with its length, both nonces, the binding:
     * every field has a fixed size or a length in front, so no two
     * different exchanges hash the same bytes. */
    uint8_t msg[4 + 1 + 1 + RFS_AUTH_MAX_NAME + 2 * RFS_AUTH_NONCE + 1 + RFS_AUTH_BINDING];
    size_t n = 0, name_len = strlen(key->name);
    if (binding_len > RFS_AUTH_BINDING)
        binding_len = RFS_AUTH_BINDING;
    memcpy(msg, "rfs1", 4);
    n = 4;
    msg[n++] = (uint8_t) role;
    msg[n++] = (uint8_t) name_len;
    memcpy(msg + n, key->name, name_len);
    n += name_len;
    memcpy(msg + n, client_nonce, RFS_AUTH_NONCE);
    n += RFS_AUTH_NONCE;
    memcpy(msg + n, server_nonce, RFS_AUTH_NONCE);
    n += RFS_AUTH_NONCE;
    msg[n++] = (uint8_t) binding_len;
    if (binding_len)
        memcpy(msg + n, binding, binding_len);
    n += binding_len;
    unsigned int len = RFS_AUTH_MAC;
    HMAC(EVP_sha256(), key->secret, (int) key->secret_len, msg, n, mac, &len);
}

int rfs_auth_mac_equal(const uint8_t a[RFS_AUTH_MAC], const uint8_t b[RFS_AUTH_MAC])
{
    return CRYPTO_memcmp(a, b, RFS_AUTH_MAC) == 0;
}
