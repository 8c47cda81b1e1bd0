/*
 * Shared-key authentication of rfs connections (docs/security.md): key
 * files, and the challenge-response both ends compute. No secret crosses
 * the wire: each side sends a fresh nonce and proves knowledge of the key
 * with HMAC-SHA256 over both nonces, the key's name and the transport's
 * channel binding (the TLS exporter, empty over plain TCP), so a proof
 * cannot be replayed on another connection. The client proves first; the
 * server answers with its own proof, so the client knows the server too.
 * No MPI here.
 */
#ifndef RFS_AUTH_H_INCLUDED
#define RFS_AUTH_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define RFS_AUTH_NONCE       32
#define RFS_AUTH_MAC         32
#define RFS_AUTH_BINDING     32      /* bytes of a channel binding, if any */
#define RFS_AUTH_MAX_NAME    64
#define RFS_AUTH_MIN_SECRET  16
#define RFS_AUTH_MAX_SECRET  64
#define RFS_AUTH_MAX_KEYS    4096

/* AUTH request flags: the two steps of the exchange. */
#define RFS_AUTH_HELLO  1u      /* name + client nonce; reply: server nonce */
#define RFS_AUTH_PROOF  2u      /* client MAC; reply: server MAC */

/*
 * One line of a key file:   NAME HEXSECRET [ro] [root=DIR]
 * ro: the key may only read. root=DIR: the key sees only DIR, a directory
 * beneath the server's export root. A client's key file holds one line
 * (options are the server's business and ignored there).
 */
struct rfs_key {
    char name[RFS_AUTH_MAX_NAME + 1];
    uint8_t secret[RFS_AUTH_MAX_SECRET];
    size_t secret_len;
    int read_only;
    char *root;                 /* NULL: the whole export */
};

struct rfs_keyring {
    struct rfs_key *keys;
    size_t count;
};

/*
 * Load a key file. It must be a regular file of the caller's user that
 * nobody else may read or write (mode 0600 or 0400). Returns 0 or a
 * negative errno; `err` then says what is wrong and where.
 */
int rfs_keyring_load(const char *path, struct rfs_keyring *ring, char *err, size_t errlen);
void rfs_keyring_free(struct rfs_keyring *ring);
const struct rfs_key *rfs_keyring_find(const struct rfs_keyring *ring, const char *name,
                                       size_t len);
/* A client's key: the file must hold exactly one key. */
int rfs_key_load(const char *path, struct rfs_key *key, char *err, size_t errlen);
void rfs_key_wipe(struct rfs_key *key);
/*
 * Key files and rfsd's config file share one line grammar: the next line
 * of the text at *cursor that is not blank or a comment (# first), its
 * leading blanks skipped and its newline cut off (the text is changed);
 * *lineno counts every line. NULL at the end.
 */
char *rfs_text_next_line(char **cursor, int *lineno);

/* Fresh nonce from the system's CSPRNG: 0 or -EIO. */
int rfs_auth_nonce(uint8_t nonce[RFS_AUTH_NONCE]);

/* role 'C' (client's proof) or 'S' (server's). binding may be empty. */
void rfs_auth_mac(const struct rfs_key *key, char role, const uint8_t client_nonce[RFS_AUTH_NONCE],
                  const uint8_t server_nonce[RFS_AUTH_NONCE], const uint8_t *binding,
                  size_t binding_len, uint8_t mac[RFS_AUTH_MAC]);
/* Constant-time comparison of two MACs: 1 if equal. */
int rfs_auth_mac_equal(const uint8_t a[RFS_AUTH_MAC], const uint8_t b[RFS_AUTH_MAC]);

#endif /* RFS_AUTH_H_INCLUDED */
