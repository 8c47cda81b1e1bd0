/*
 * Hint tables: a driver states each of its hints once (name, default,
 * the values accepted, where the decoded value goes) and both SetInfo
 * and Open work from that table, so that MPI_File_get_info reports what
 * is in effect and an invalid value is refused the same way everywhere:
 * MPI_ERR_INFO_VALUE, naming the hint, the value and what is accepted.
 */
#ifndef ADIO_HINTS_H_INCLUDED
#define ADIO_HINTS_H_INCLUDED

#include <stddef.h>

#include "adio.h"

enum adio_hint_kind {
    ADIO_HINT_WORD,             /* one of `words`: decodes to values[i], or to i */
    ADIO_HINT_COUNT,            /* a whole number from min to max */
    ADIO_HINT_SECONDS,          /* a decimal number from min to max: decodes to a double */
    ADIO_HINT_TEXT,             /* any text but "" that `check` (if any) accepts */
};

/* Where a decoded value goes: a member of the driver's settings. An
 * integer member is an int or a 64-bit integer, a TEXT member a char
 * array; size 0: the hint is read elsewhere (checked here all the same). */
struct adio_hint_field {
    size_t offset, size;
};
#define ADIO_HINT_TO(type, member) { offsetof(type, member), sizeof(((type *) 0)->member) }
/* A number macro as a default's text. */
#define ADIO_HINT_STR(x) ADIO_HINT_STR_(x)
#define ADIO_HINT_STR_(x) #x

struct adio_hint {
    const char *name;
    enum adio_hint_kind kind;
    const char *dflt;           /* in effect when not given; NULL: none */
    const char *env;            /* an environment variable that, set, replaces dflt */
    int at_open;                /* read at open only: an open file keeps its value */
    const char *const *words;   /* WORD: NULL-terminated */
    const long long *values;    /* WORD: what each word decodes to; NULL: its index */
    unsigned long long min, max;    /* COUNT, SECONDS */
    int (*check)(const char *value);    /* TEXT */
    const char *accepted;       /* TEXT: what check accepts, for the error message */
    struct adio_hint_field to;
};

/* disable, enable: decode to 0, 1 */
extern const char *const adio_hint_switch[];

/*
 * SetInfo: the defaults of the n hints of `table` where fd->info has none
 * (creating fd->info), then the values of users_info. Before Open
 * (fd->fs_ptr NULL) they go in as given, invalid ones too, for Open's
 * adio_hints_decode to refuse: ROMIO's ADIO_Open does not look at
 * SetInfo's error code. On an open file every value is checked first,
 * nothing is installed when one is invalid, and the hints read at open
 * keep the value in effect. MPI_SUCCESS or MPI_ERR_INFO_VALUE.
 */
int adio_hints_install(ADIO_File fd, MPI_Info users_info, const struct adio_hint *table,
                       size_t n, const char *myname);
/*
 * The n hints of `table` in info (the default for one it lacks; info may
 * be MPI_INFO_NULL) decoded into settings; with open_file, only those that
 * may change on an open file. MPI_SUCCESS or MPI_ERR_INFO_VALUE naming
 * the first invalid value.
 */
int adio_hints_decode(MPI_Info info, const struct adio_hint *table, size_t n, int open_file,
                      void *settings, const char *myname);

#endif /* ADIO_HINTS_H_INCLUDED */
