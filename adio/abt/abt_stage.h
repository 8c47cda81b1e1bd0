/*
 * The local cache file of foreground and background staging: created in
 * the stage directory and unlinked at once, so nothing is left behind
 * whatever happens to the process. Space is handed out by the engine
 * (append, reset when nothing staged is pending).
 */
#ifndef ABT_STAGE_H_INCLUDED
#define ABT_STAGE_H_INCLUDED

#include <stdint.h>

struct abt_stage {
    int fd;
    uint64_t end;               /* next free byte */
    uint32_t records;           /* records that live in the file */
    uint32_t writers;           /* writes in progress outside the lock */
    int failed;                 /* a write failed (full disk): no more staging */
};

int abt_stage_open(struct abt_stage *s, const char *dir);
int abt_stage_write(struct abt_stage *s, uint64_t at, const void *buf, uint64_t len);
int abt_stage_read(struct abt_stage *s, uint64_t at, void *buf, uint64_t len);
/* Gives the space back when nothing is staged or being staged. */
void abt_stage_reset_if_empty(struct abt_stage *s);
void abt_stage_close(struct abt_stage *s);

#endif /* ABT_STAGE_H_INCLUDED */
