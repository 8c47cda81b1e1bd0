#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int log_level = RFS_LOG_INFO;
static const char *const level_names[] = { "error", "warn", "info", "debug" };

void rfs_log_set_level(enum rfs_log_level level)
{
    atomic_store(&log_level, level);
}

int rfs_log_parse_level(const char *name)
{
    for (int i = 0; i <= RFS_LOG_DEBUG; i++)
        if (strcmp(name, level_names[i]) == 0)
            return i;
    return -1;
}

void rfs_log(enum rfs_log_level level, const char *fmt, ...)
{
    if ((int) level > atomic_load(&log_level))
        return;
    char line[1024];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%02d:%02d:%02d.%03ld rfsd[%d] %s: ", tm.tm_hour,
                     tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, (int) getpid(),
                     level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t) n < sizeof line)
        vsnprintf(line + n, sizeof line - (size_t) n, fmt, ap);
    va_end(ap);
    /* One write per line so that lines of different threads do not mix. */
    fprintf(stderr, "%s\n", line);
}
