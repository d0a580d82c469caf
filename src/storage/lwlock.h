/*
 * lwlock.h: a shared/exclusive lock in one 32-bit word that sleeps on a
 * futex when contended.
 *
 * Used for the mapping table's partition locks (a buffer's content lock
 * lives in its state word instead: buf_internals.h).  The word
 * holds the number of shared holders (low bits), an exclusive bit, and a
 * "someone is sleeping" bit that tells the releasing holder it must issue a
 * wake-up; an uncontended acquire and release are one atomic each and make
 * no system call.  A waiter spins briefly before sleeping, because holders
 * keep these locks for short, CPU-bound stretches.
 *
 * Not fair, not recursive.  No deadlock detection: callers follow the lock
 * ordering rules in src/storage/README.md.
 */
#ifndef KEEL_STORAGE_LWLOCK_H
#define KEEL_STORAGE_LWLOCK_H

#include <stdbool.h>

#include "port/atomics.h"

typedef struct lwlock {
    atomic_u32 word;
} lwlock;

typedef enum lwlock_mode { LW_SHARED, LW_EXCLUSIVE } lwlock_mode;

#define LW_EXCLUSIVE_BIT (UINT32_C(1) << 31)
#define LW_WAITERS_BIT   (UINT32_C(1) << 30)
#define LW_SHARED_MASK   (LW_WAITERS_BIT - 1)

static inline void lwlock_init(lwlock *l)
{
    atomic_store_relaxed(&l->word, 0);
}

/* Acquires l in mode, sleeping while it is held in a conflicting mode. */
void lwlock_acquire(lwlock *l, lwlock_mode mode);

/* Acquires l in mode if that is possible without waiting. */
bool lwlock_try_acquire(lwlock *l, lwlock_mode mode);

/* Releases l, held by the caller in either mode. */
void lwlock_release(lwlock *l);

/* For assertions: is l held exclusively / at all (by anyone)? */
static inline bool lwlock_held_exclusive(lwlock *l)
{
    return (atomic_load_relaxed(&l->word) & LW_EXCLUSIVE_BIT) != 0;
}
static inline bool lwlock_held(lwlock *l)
{
    return (atomic_load_relaxed(&l->word) &
            (LW_EXCLUSIVE_BIT | LW_SHARED_MASK)) != 0;
}

#endif /* KEEL_STORAGE_LWLOCK_H */
