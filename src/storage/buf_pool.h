/*
 * buf_pool.h: the buffer pool's shared structure and the replacement
 * policy's entry points.  Internal to the buffer manager.
 */
#ifndef KEEL_STORAGE_BUF_POOL_H
#define KEEL_STORAGE_BUF_POOL_H

#include <pthread.h>

#include "storage/buf_table.h"
#include "storage/bufmgr.h"

struct buf_pool {
    /* Read-mostly: set at creation, read on every access. */
    buf_desc *descs;   /* nbuffers descriptors, cache-line aligned */
    char *pages;       /* nbuffers * BLOCK_SIZE bytes, page aligned */
    size_t pages_size; /* mapping size of pages */
    uint32_t nbuffers;
    smgr *smgr;
    struct wal *wal; /* the log, or NULL (buf_pool_set_wal()) */
#ifndef NDEBUG
    /* Builds with assertions: each buffer's page as the log has it (read
     * from disk, then changed by its records), to check that every change
     * to a page is in the log (buf_log.c).  NULL without a log. */
    char *log_shadow;
    uint8_t *log_shadow_ok; /* per buffer: log_shadow is to be trusted */
#endif
    buf_table table;

    /* The clock hand, alone on its line: every sweep step bumps it. */
    CACHE_ALIGNED atomic_u64 clock_hand;

    /*
     * Files written since the last checkpoint (cold: taken on writes).  A
     * write and the recording of its file hold write_barrier shared; the
     * checkpoint takes the set holding it exclusively, so every write that
     * finished before that instant is in the set it takes, and every later
     * one is in the next.  checkpoint_lock makes checkpoints one at a time.
     */
    CACHE_ALIGNED pthread_rwlock_t write_barrier;
    pthread_mutex_t checkpoint_lock;
    pthread_mutex_t sync_lock; /* protects the three fields below */
    relnumber_t *pending_sync;
    uint32_t npending_sync;
    uint32_t pending_sync_cap;
};

/* A ring of buffers reused by one session's bulk operation. */
struct buf_strategy {
    buf_strategy_kind kind;
    uint32_t nring;
    uint32_t current;
    int32_t ring[]; /* buffer ids, BUF_INVALID where not yet filled */
};

/*
 * Chooses a buffer to evict and pins it (a compare-and-swap from refcount
 * zero, usage zero).  With a strategy, the ring's next buffer is reused if
 * nobody else has used it since; otherwise the clock sweep runs and its
 * choice joins the ring.  The buffer may be dirty.  KEEL_EEXHAUSTED (with
 * the message in err) if the sweep found every buffer pinned.
 */
int buf_victim_pick(buf_pool *p, buf_strategy *st, int32_t *id, kerr *err);

#endif /* KEEL_STORAGE_BUF_POOL_H */
