#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static atomic_int log_level = RFS_LOG_INFO;
static const char *const level_names[] = { "error", "warn", "info", "debug" };
/* sd-daemon(3) priorities of the levels: err, warning, info, debug */
static const char *const journal_prefixes[] = { "<3>", "<4>", "<6>", "<7>" };

static pthread_once_t journal_once = PTHREAD_ONCE_INIT;
static int to_journal;

/* systemd sets JOURNAL_STREAM to the device and inode of the stream it
 * connected to the journal; stderr is that stream only if they match (a
 * child whose stderr went elsewhere inherits the variable too). */
static void find_journal(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    to_journal = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0
                 && (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

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

/* The line's start: the journal has its own time, process and level
 * fields, and takes the level from a <N> prefix. */
static int line_head(char *line, size_t size, enum rfs_log_level level)
{
    if (to_journal)
        return snprintf(line, size, "%s", journal_prefixes[level]);
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    return snprintf(line, size, "%02d:%02d:%02d.%03ld rfsd[%d] %s: ", tm.tm_hour, tm.tm_min,
                    tm.tm_sec, ts.tv_nsec / 1000000, (int) getpid(), level_names[level]);
}

void rfs_log(enum rfs_log_level level, const char *fmt, ...)
{
    if ((int) level > atomic_load(&log_level))
        return;
    pthread_once(&journal_once, find_journal);
    char line[1024];
    int n = line_head(line, sizeof line, level);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t) n < sizeof line)
        vsnprintf(line + n, sizeof line - (size_t) n, fmt, ap);
    va_end(ap);
    /* One write per line so that lines of different threads do not mix. */
    fprintf(stderr, "%s\n", line);
}
