/*
 * tid.h: tuple identifiers: where a heap row lives.
 */
#ifndef KEEL_ACCESS_TID_H
#define KEEL_ACCESS_TID_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/smgr.h"

/* A heap row's address: its block and its line pointer (1-based). */
typedef struct tid {
    blocknum_t block;
    uint16_t offset; /* 0 = invalid */
} tid;

#define TID_INVALID ((tid){.block = 0, .offset = 0})

static inline bool tid_valid(tid t)
{
    return t.offset != 0;
}

static inline int tid_compare(tid a, tid b)
{
    if (a.block != b.block)
        return a.block < b.block ? -1 : 1;
    return (a.offset > b.offset) - (a.offset < b.offset);
}

#endif /* KEEL_ACCESS_TID_H */
