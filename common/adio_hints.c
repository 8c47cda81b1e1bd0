/*
 * Table-driven hints (adio_hints.h): parse and check a value as its table
 * entry says, install defaults and the user's values into fd->info, and
 * decode fd->info into the driver's settings.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adio_hints.h"

const char *const adio_hint_switch[] = { "disable", "enable", NULL };

union decoded {
    unsigned long long n;
    double d;
};

static int word_index(const struct adio_hint *h, const char *value)
{
    for (int i = 0; h->words[i]; i++)
        if (strcmp(value, h->words[i]) == 0)
            return i;
    return -1;
}

/* 0 and the value decoded, or -1: the hint does not accept it. */
static int parse(const struct adio_hint *h, const char *value, union decoded *out)
{
    char *end;
    int i;
    switch (h->kind) {
    case ADIO_HINT_WORD:
        i = word_index(h, value);
        out->n = i < 0 ? 0 : h->values ? (unsigned long long) h->values[i] : (unsigned) i;
        return i < 0 ? -1 : 0;
    case ADIO_HINT_COUNT:
        errno = 0;
        out->n = strtoull(value, &end, 10);
        return isdigit((unsigned char) value[0]) && !*end && !errno && out->n >= h->min &&
               out->n <= h->max ? 0 : -1;
    case ADIO_HINT_SECONDS:
        out->d = strtod(value, &end);
        return end != value && !*end && out->d >= (double) h->min &&
               out->d <= (double) h->max ? 0 : -1;
    case ADIO_HINT_TEXT:
        return value[0] && (!h->check || h->check(value)) ? 0 : -1;
    }
    return -1;
}

static void describe(const struct adio_hint *h, char *s, size_t len)
{
    size_t k = 0;
    switch (h->kind) {
    case ADIO_HINT_WORD:
        for (int i = 0; h->words[i] && k < len; i++)
            k += (size_t) snprintf(s + k, len - k, "%s%s", i ? ", " : "one of ", h->words[i]);
        break;
    case ADIO_HINT_COUNT:
        snprintf(s, len, "a whole number from %llu to %llu", h->min, h->max);
        break;
    case ADIO_HINT_SECONDS:
        snprintf(s, len, "seconds (a decimal number) from %llu to %llu", h->min, h->max);
        break;
    case ADIO_HINT_TEXT:
        snprintf(s, len, "%s", h->accepted ? h->accepted : "any text but an empty one");
        break;
    }
}

static int refuse(const struct adio_hint *h, const char *value, const char *myname)
{
    char accepted[256], msg[MPI_MAX_INFO_VAL + 512];
    describe(h, accepted, sizeof accepted);
    snprintf(msg, sizeof msg, "hint %s=%s, accepted: %s", h->name, value, accepted);
    /* MPICH's messages keep only the keys its own code uses: none of the
     * MPI_Info ones takes a string */
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                MPI_ERR_INFO_VALUE, "**infoval", "**arg %s", msg);
}

/* The value of key in info (value: MPI_MAX_INFO_VAL + 1 bytes): 1 if set. */
static int given(MPI_Info info, const char *key, char *value)
{
    int flag = 0;
    if (info != MPI_INFO_NULL)
        ADIOI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    return flag;
}

/* In effect when not given: the environment's value, else the default. */
static const char *fallback(const struct adio_hint *h)
{
    const char *env = h->env ? getenv(h->env) : NULL;
    return env && *env ? env : h->dflt;
}

static void store(const struct adio_hint *h, const char *text, const union decoded *d,
                  char *at)
{
    if (h->to.size == 0)
        return;
    if (h->kind == ADIO_HINT_TEXT) {
        snprintf(at, h->to.size, "%s", text);
    } else if (h->kind == ADIO_HINT_SECONDS) {
        memcpy(at, &d->d, sizeof d->d);
    } else if (h->to.size == sizeof(int)) {
        int v = (int) d->n;
        memcpy(at, &v, sizeof v);
    } else {
        uint64_t v = d->n;
        memcpy(at, &v, sizeof v);
    }
}

int adio_hints_install(ADIO_File fd, MPI_Info users_info, const struct adio_hint *table,
                       size_t n, const char *myname)
{
    char value[MPI_MAX_INFO_VAL + 1];
    union decoded ignored;
    int error = MPI_SUCCESS;
    for (size_t i = 0; i < n && error == MPI_SUCCESS; i++)
        if (given(users_info, table[i].name, value) && parse(&table[i], value, &ignored) < 0)
            error = refuse(&table[i], value, myname);
    if (fd->info == MPI_INFO_NULL)
        MPI_Info_create(&fd->info);
    for (size_t i = 0; i < n; i++) {
        const struct adio_hint *h = &table[i];
        const char *dflt = fallback(h);
        if (dflt && !given(fd->info, h->name, value))
            ADIOI_Info_set(fd->info, h->name, dflt);
        if (fd->fs_ptr && (error != MPI_SUCCESS || h->at_open))
            continue;
        if (given(users_info, h->name, value))
            ADIOI_Info_set(fd->info, h->name, value);
    }
    return error;
}

int adio_hints_decode(MPI_Info info, const struct adio_hint *table, size_t n, int open_file,
                      void *settings, const char *myname)
{
    char value[MPI_MAX_INFO_VAL + 1];
    for (size_t i = 0; i < n; i++) {
        const struct adio_hint *h = &table[i];
        const char *text = given(info, h->name, value) ? value : fallback(h);
        union decoded d;
        if (!text || (open_file && h->at_open))
            continue;
        if (parse(h, text, &d) < 0)
            return refuse(h, text, myname);
        store(h, text, &d, (char *) settings + h->to.offset);
    }
    return MPI_SUCCESS;
}
