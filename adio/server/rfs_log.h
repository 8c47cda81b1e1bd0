/*
 * Levelled logging to stderr for rfsd: a line per event with its time,
 * process and level, or, when stderr is systemd's stream to the journal
 * (JOURNAL_STREAM), with the level as an sd-daemon <N> prefix and nothing
 * the journal records itself. No MPI here.
 */
#ifndef RFS_LOG_H_INCLUDED
#define RFS_LOG_H_INCLUDED

enum rfs_log_level { RFS_LOG_ERROR, RFS_LOG_WARN, RFS_LOG_INFO, RFS_LOG_DEBUG };

void rfs_log_set_level(enum rfs_log_level level);
/* Parses error|warn|info|debug; returns -1 for anything else. */
int rfs_log_parse_level(const char *name);
void rfs_log(enum rfs_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* RFS_LOG_H_INCLUDED */
