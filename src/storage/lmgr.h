/*
 * lmgr.h: table locks, held until the holder's transaction ends, in
 * PostgreSQL's eight modes (keel_lock_mode) and with its conflict table.
 *
 * The shared lock table (partitions of lock objects, each listing its
 * holders and a queue of waiters) knows every strong lock.  The weak
 * modes every query takes (ACCESS SHARE, ROW SHARE, ROW EXCLUSIVE) go, in
 * the common case, into the taker's own lmgr_proc instead: a "fast path"
 * slot on cache lines no other session writes, guarded by a latch that
 * only its owner takes, unless a strong locker comes by.  A strong locker
 * (SHARE and above: the modes that conflict with a weak one) first counts
 * itself in its partition's strong count, which sends later weak lockers
 * of the partition to the shared table, then moves every other session's
 * fast-path entries for its table there ("transfer"), and only then
 * looks for conflicts.  See src/storage/README.md, "Table locks".
 *
 * A request that conflicts waits on a futex in its lmgr_proc, up to a
 * timeout; after LMGR_DEADLOCK_MS of waiting it looks once for a cycle of
 * waiters through itself and, finding one, gives up (KEEL_EDEADLOCK).
 */
#ifndef KEEL_STORAGE_LMGR_H
#define KEEL_STORAGE_LMGR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "keel/keel.h"
#include "port/atomics.h"
#include "port/error.h"
#include "port/mem.h"

/* Partitions of the shared lock table (a power of two). */
#define LMGR_PARTITIONS 16
/* Fast-path slots of one session: tables it holds weak locks on. */
#define LMGR_FP_SLOTS 16
/* How long a wait goes on before it looks for a deadlock. */
#define LMGR_DEADLOCK_MS 20
/* lmgr_acquire()'s result for a lock granted after a wait (not a
 * keel_status: past every one). */
#define LMGR_WAITED 1000

typedef struct lmgr lmgr;
typedef struct lmgr_lock lmgr_lock;
typedef struct lmgr_hold lmgr_hold;

/*
 * One session's lock state, allocated on cache lines of its own.  The
 * first line is the fast path: written by its owner at every lock and at
 * every transaction end, read by others only when a strong locker
 * transfers its entries (under fp_latch).  Wait state follows, on lines
 * of its own.
 */
typedef struct lmgr_proc {
    /* Fast path: the latch (0 free, 1 held) guards every field to
     * has_shared; its owner takes it with one exchange, a strong locker
     * transferring spins on it. */
    atomic_u32 fp_latch;
    uint32_t fp_used;                 /* slots in use, a bit each */
    bool has_shared;                  /* it may hold locks in the table */
    uint8_t fp_mode[LMGR_FP_SLOTS];   /* modes held, 1 << (mode - 1) */
    uint32_t fp_oid[LMGR_FP_SLOTS];   /* the table of each slot */
    lmgr *mgr;
    /* Waiting: wait_state is the futex word (LMGR_WAIT_*); the rest is
     * written under the partition mutex of the lock waited on. */
    CACHE_ALIGNED atomic_u32 wait_state;
    lmgr_lock *wait_lock;
    lmgr_hold *wait_hold;
    keel_lock_mode wait_mode;
    struct lmgr_proc *wait_next; /* the lock's queue */
    uint64_t dl_mark;            /* deadlock search's visit mark */
    /* Row waits (read committed): the owner's transaction id once it has
     * one, and the transaction whose end it waits for (lmgr_xid_wait_*),
     * 0 for none; written by the owner, read by deadlock searches. */
    atomic_u32 cur_xid;
    atomic_u32 xwait_xid;
    uint32_t timeout_ms;         /* the owner's lock timeout, 0: none */
    /* The session's holds in the shared table, under holds_mutex. */
    CACHE_ALIGNED pthread_mutex_t holds_mutex;
    lmgr_hold *holds;
    /* Every proc, under the manager's procs mutex. */
    struct lmgr_proc *next, *prev;
} lmgr_proc;

enum { LMGR_WAIT_NONE = 0, LMGR_WAIT_WAITING, LMGR_WAIT_GRANTED };

/* Creates the shared table.  ENOMEM with err set. */
int lmgr_create(lmgr **out, kerr *err);

/* Frees it; every proc must be destroyed first. */
void lmgr_destroy(lmgr *m);

/* A session's lock state, holding nothing.  ENOMEM. */
int lmgr_proc_create(lmgr *m, lmgr_proc **out, kerr *err);

/* Releases what p holds and frees it. */
void lmgr_proc_destroy(lmgr_proc *p);

/* Whether conflicting mode a with mode b (PostgreSQL's table). */
bool lmgr_conflicts(keel_lock_mode a, keel_lock_mode b);

/* lmgr_acquire() past its fast path. */
int lmgr_acquire_slow(lmgr_proc *p, uint32_t oid, keel_lock_mode mode,
                      bool nowait);

/* How long p's requests wait at most, in ms (0: for ever); by p's owner. */
void lmgr_set_timeout(lmgr_proc *p, uint32_t timeout_ms);

/* The strong counts' array, read by the fast path. */
const atomic_u32 *lmgr_strong_counts(const lmgr *m);

static inline bool lmgr_latch_try(lmgr_proc *p)
{
    return atomic_exchange_explicit(&p->fp_latch, 1, memory_order_acquire) ==
           0;
}

static inline void lmgr_latch_release(lmgr_proc *p)
{
    atomic_store_release(&p->fp_latch, 0);
}

/*
 * Locks table oid in mode for p's transaction, until lmgr_release_all():
 * KEEL_OK, or LMGR_WAITED if it was granted after a wait.  A request that
 * conflicts with another session's lock waits, up to p's timeout
 * (lmgr_set_timeout()), and then fails with KEEL_ELOCKTIMEOUT; with nowait
 * it fails so at once.  KEEL_EDEADLOCK if the wait closes a cycle (the
 * request is withdrawn; the locks held stay), KEEL_ENOMEM.  No message is
 * set: the caller names the table.  A mode already held is granted at
 * once.
 *
 * The weak modes' common case, inline: the latch of p's own fast path
 * (one exchange on p's line), the partition's strong count read (a line
 * written only by strong lockers), a slot filled.
 */
static inline int lmgr_acquire(lmgr_proc *p, const atomic_u32 *strong,
                               uint32_t oid, keel_lock_mode mode, bool nowait)
{
    if (mode <= KEEL_LOCK_ROW_EXCLUSIVE && mode >= KEEL_LOCK_ACCESS_SHARE &&
        lmgr_latch_try(p)) {
        uint8_t bit = (uint8_t)(1u << (mode - 1));
        uint32_t used = p->fp_used, i;
        /* Acquire: a lock granted here comes after the strong holder's
         * release (and what it stored before, such as a build's xid). */
        if (atomic_load_acquire(&strong[oid & (LMGR_PARTITIONS - 1)]) != 0)
            goto slow;
        for (uint32_t u = used; u != 0; u &= u - 1) {
            i = (uint32_t)__builtin_ctz(u);
            if (p->fp_oid[i] == oid) {
                p->fp_mode[i] |= bit;
                lmgr_latch_release(p);
                return KEEL_OK;
            }
        }
        /* The first free slot (LMGR_FP_SLOTS if none: fp_used's bits
         * above the slots are always clear). */
        i = (uint32_t)__builtin_ctz(~used);
        if (i < LMGR_FP_SLOTS) {
            p->fp_oid[i] = oid;
            p->fp_mode[i] = bit;
            p->fp_used = used | 1u << i;
            lmgr_latch_release(p);
            return KEEL_OK;
        }
    slow:
        lmgr_latch_release(p);
    }
    return lmgr_acquire_slow(p, oid, mode, nowait);
}

/*
 * Row waits.  A transaction that must wait for another to end (read
 * committed, meeting a row that one is changing) sets what it waits for
 * with lmgr_xid_wait_begin(), sleeps elsewhere (the transaction layer's
 * wait), and after LMGR_DEADLOCK_MS asks lmgr_xid_deadlock() once whether
 * the wait closes a cycle, through lock waits and other row waits: the
 * edge from a row waiter goes to the proc whose cur_xid (set by its owner
 * with lmgr_set_xid(), 0 once its transaction ends) is the xid waited for.
 */
static inline void lmgr_set_xid(lmgr_proc *p, uint32_t xid)
{
    atomic_store_explicit(&p->cur_xid, xid, memory_order_relaxed);
}
static inline void lmgr_xid_wait_begin(lmgr_proc *p, uint32_t xid)
{
    atomic_store_explicit(&p->xwait_xid, xid, memory_order_release);
}
static inline void lmgr_xid_wait_end(lmgr_proc *p)
{
    atomic_store_explicit(&p->xwait_xid, 0, memory_order_release);
}
/* Whether p's row wait (begun) closes a cycle of waiters. */
bool lmgr_xid_deadlock(lmgr_proc *p);

/* Takes p's latch, which a transfer holds now. */
void lmgr_latch_wait(lmgr_proc *p);

/* lmgr_release_all() for locks in the shared table. */
void lmgr_release_shared(lmgr_proc *p);

/*
 * Releases every lock p holds, waking whoever can now go on (the end of
 * p's transaction).  Inline: a transaction that only took fast-path locks
 * clears its slots under its own latch.
 */
static inline void lmgr_release_all(lmgr_proc *p)
{
    bool shared;

    if (!lmgr_latch_try(p))
        lmgr_latch_wait(p); /* a transfer is moving our entries */
    p->fp_used = 0;
    shared = p->has_shared;
    if (shared)
        p->has_shared = false;
    lmgr_latch_release(p);
    if (shared)
        lmgr_release_shared(p);
}

/* Whether p holds no lock at all (by p's own thread). */
bool lmgr_holds_none(lmgr_proc *p);

/* Whether the one lock p holds is mode on oid (by p's own thread). */
bool lmgr_holds_only(lmgr_proc *p, uint32_t oid, keel_lock_mode mode);

/* Whether p holds mode on oid, on the fast path (*fast true) or in the
 * shared table (by p's own thread; for tests). */
bool lmgr_holds(lmgr_proc *p, uint32_t oid, keel_lock_mode mode, bool *fast);

#endif /* KEEL_STORAGE_LMGR_H */
