/* The lab's programs and their runner agree through files in a directory:
 * one side makes DIR/NAME, the other waits for it. */
#ifndef LAB_HANDSHAKE_H_INCLUDED
#define LAB_HANDSHAKE_H_INCLUDED

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../integration/itest.h"

static inline double lab_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int lab_exists(const char *dir, const char *name)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

static inline void lab_mark(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL, "cannot make %s", p);
    fclose(f);
}

static inline void lab_await(const char *dir, const char *name)
{
    while (!lab_exists(dir, name))
        usleep(20000);
}

#endif
