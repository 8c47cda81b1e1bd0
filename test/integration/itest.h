/* Small helpers of the MPI integration tests. A failed check prints the
 * place and aborts the job, so the runner sees a non-zero exit. */
#ifndef ITEST_H_INCLUDED
#define ITEST_H_INCLUDED

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fprintf(stderr, "\n");                                                \
            MPI_Abort(MPI_COMM_WORLD, 1);                                         \
        }                                                                         \
    } while (0)

static inline const char *err_string(int rc)
{
    static char s[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, s, &len);
    return s;
}

#define CHECK_MPI(call)                                                           \
    do {                                                                          \
        int rc_ = (call);                                                         \
        CHECK(rc_ == MPI_SUCCESS, "%s", err_string(rc_));                        \
    } while (0)

/* The call must fail with this error class. */
#define CHECK_CLASS(call, expected)                                               \
    do {                                                                          \
        int rc_ = (call), class_ = MPI_SUCCESS;                                   \
        if (rc_ != MPI_SUCCESS)                                                   \
            MPI_Error_class(rc_, &class_);                                        \
        CHECK(class_ == (expected), "class %d, expected %d (%s)", class_,         \
              (expected), rc_ ? err_string(rc_) : "success");                     \
    } while (0)

/* What the MPI lets a test see of ROMIO. ITEST_MPI=openmpi-VERSION (set by
 * test/openmpi/run.sh, which counts the checks left out as skipped): Open
 * MPI's ROMIO glue drops ROMIO's error messages, and up to 4.1 its
 * MPI_File_get_info returns the info the application gave and its
 * MPI_File_set_info keeps the new one, neither asking the io component. */
static inline int romio_info_reported(void)
{
    const char *mpi = getenv("ITEST_MPI");
    return !mpi || strncmp(mpi, "openmpi-4.", 10) != 0;
}

static inline int romio_messages_kept(void)
{
    const char *mpi = getenv("ITEST_MPI");
    return !mpi || strncmp(mpi, "openmpi-", 8) != 0;
}

/* MPI_File_get_info of fh has key, with the value `expect` unless NULL. */
static inline void info_expect(MPI_File fh, const char *key, const char *expect)
{
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (!romio_info_reported())
        return;
    CHECK_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag, "MPI_File_get_info has no %s", key);
    if (expect)
        CHECK(strcmp(value, expect) == 0, "%s is %s, expected %s", key, value, expect);
    MPI_Info_free(&info);
}

/* rc is MPI_ERR_INFO_VALUE with a message naming key=value (the message
 * of an error made on another process is not this process's to read:
 * ROMIO's create step opens on one process and passes on its code). */
static inline void check_refused(int rc, const char *key, const char *value, int own)
{
    char what[MPI_MAX_INFO_VAL + 64];
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_INFO_VALUE, "%s=%s: class %d, expected MPI_ERR_INFO_VALUE (%s)", key,
          value, cls, rc ? err_string(rc) : "success");
    snprintf(what, sizeof what, "%s=%s", key, value);
    CHECK(!own || !romio_messages_kept() || strstr(err_string(rc), what), "message without %s: %s", what, err_string(rc));
}

/* Opening (and creating) name with key=value fails with MPI_ERR_INFO_VALUE,
 * and leaves no file behind. */
static inline void open_refused(const char *name, const char *key, const char *value)
{
    MPI_Info info;
    MPI_File fh;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info_create(&info);
    MPI_Info_set(info, key, value);
    int rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    check_refused(rc, key, value, rank == 0);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_NO_SUCH_FILE);
}

/* A hint and a value: one refused, or one get_info must report. */
struct hint_pair {
    const char *key, *value;
};
#define HINT_PAIRS(a) (a), sizeof(a) / sizeof((a)[0])

/* Each invalid value refused by the open (open_refused), then name created
 * without hints: get_info reports each default. */
static inline MPI_File open_checking_hints(const char *name, const struct hint_pair *invalid,
                                          size_t n_invalid, const struct hint_pair *defaults,
                                          size_t n_defaults)
{
    MPI_File fh;
    for (size_t i = 0; i < n_invalid; i++)
        open_refused(name, invalid[i].key, invalid[i].value);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    for (size_t i = 0; i < n_defaults; i++)
        info_expect(fh, defaults[i].key, defaults[i].value);
    return fh;
}

/* MPI_File_set_info with the one hint key=value: its return code. */
static inline int set_one_hint(MPI_File fh, const char *key, const char *value)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, key, value);
    int rc = MPI_File_set_info(fh, info);
    MPI_Info_free(&info);
    return rc;
}

/* MPI_File_set_info with key=value fails with MPI_ERR_INFO_VALUE; the hint
 * keeps the value `kept`. */
static inline void set_info_refused(MPI_File fh, const char *key, const char *value,
                                    const char *kept)
{
    if (!romio_info_reported())
        return;
    check_refused(set_one_hint(fh, key, value), key, value, 1);
    info_expect(fh, key, kept);
}

/* MPI_File_set_info with key=value succeeds; then the file reports `now`. */
static inline void set_info_expect(MPI_File fh, const char *key, const char *value,
                                   const char *now)
{
    if (!romio_info_reported())
        return;
    CHECK_MPI(set_one_hint(fh, key, value));
    info_expect(fh, key, now);
}

/* The byte at file offset `off` of the test pattern `seed`: the seed is
 * multiplied in, so that every seed gives other bytes (an xor of a small
 * seed never reached the bits taken). */
static inline unsigned char pattern_byte(uint64_t off, unsigned seed)
{
    uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull + (uint64_t) seed * 0xD1B54A32D192ED03ull;
    return (unsigned char) (x >> 29);
}

static inline void pattern_fill(unsigned char *buf, uint64_t len, uint64_t off, unsigned seed)
{
    for (uint64_t i = 0; i < len; i++)
        buf[i] = pattern_byte(off + i, seed);
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline int64_t pattern_check(const unsigned char *buf, uint64_t len, uint64_t off,
                                    unsigned seed)
{
    for (uint64_t i = 0; i < len; i++)
        if (buf[i] != pattern_byte(off + i, seed))
            return (int64_t) i;
    return -1;
}

#endif
