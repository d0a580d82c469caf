/*
 * lwlock.c: shared/exclusive locks that sleep on a futex.
 *
 * Protocol of the word (see lwlock.h): a shared acquirer adds one when the
 * exclusive bit is clear; an exclusive acquirer sets the exclusive bit when
 * the word has no holders.  Before sleeping a waiter sets LW_WAITERS_BIT
 * with a compare-and-swap and then sleeps on the exact value it installed,
 * so a release that happens in between changes the word and the sleep
 * returns at once.  The holder whose release leaves the lock free clears the
 * bit and wakes every sleeper; they then race again.  Waking all is simple
 * and, for locks held this briefly, cheaper than handing off in order.
 */
#include "storage/lwlock.h"

#include <assert.h>
#include <stdint.h>

#include "port/futex.h"

/* Pause iterations before a waiter goes to sleep. */
#define LW_SPINS 64

static inline bool lw_attempt(lwlock *l, lwlock_mode mode, uint32_t *cur)
{
    uint32_t old = *cur;
    uint32_t want;

    if (mode == LW_EXCLUSIVE) {
        if (old & (LW_EXCLUSIVE_BIT | LW_SHARED_MASK))
            return false;
        want = old | LW_EXCLUSIVE_BIT;
    } else {
        if (old & LW_EXCLUSIVE_BIT)
            return false;
        assert((old & LW_SHARED_MASK) < LW_SHARED_MASK);
        want = old + 1;
    }
    return atomic_compare_exchange_weak_explicit(
        &l->word, cur, want, memory_order_acquire, memory_order_relaxed);
}

bool lwlock_try_acquire(lwlock *l, lwlock_mode mode)
{
    uint32_t cur = atomic_load_relaxed(&l->word);

    for (;;) {
        if (lw_attempt(l, mode, &cur))
            return true;
        /* A failed CAS reloaded cur; give up only if the lock conflicts. */
        if (mode == LW_EXCLUSIVE ? (cur & (LW_EXCLUSIVE_BIT | LW_SHARED_MASK))
                                 : (cur & LW_EXCLUSIVE_BIT))
            return false;
    }
}

void lwlock_acquire(lwlock *l, lwlock_mode mode)
{
    uint32_t cur = atomic_load_relaxed(&l->word);
    int spins = 0;

    for (;;) {
        if (lw_attempt(l, mode, &cur))
            return;
        if (spins < LW_SPINS) {
            /* The holder is likely running and about to release. */
            spins++;
            cpu_relax();
            cur = atomic_load_relaxed(&l->word);
            continue;
        }
        /* Announce ourselves, then sleep on the value we installed. */
        if (!(cur & LW_WAITERS_BIT)) {
            uint32_t want = cur | LW_WAITERS_BIT;
            if (!atomic_compare_exchange_weak_explicit(&l->word, &cur, want,
                                                       memory_order_relaxed,
                                                       memory_order_relaxed))
                continue;
            cur = want;
        }
        futex_wait(&l->word, cur);
        cur = atomic_load_relaxed(&l->word);
    }
}

void lwlock_release(lwlock *l)
{
    uint32_t now;

    /* One atomic: the caller knows which mode it holds by the word itself,
     * since an exclusive holder excludes everyone else. */
    if (atomic_load_relaxed(&l->word) & LW_EXCLUSIVE_BIT)
        now = atomic_fetch_and_explicit(&l->word, ~LW_EXCLUSIVE_BIT,
                                        memory_order_release) &
              ~LW_EXCLUSIVE_BIT;
    else
        now = atomic_fetch_sub_explicit(&l->word, 1, memory_order_release) - 1;

    /*
     * If that left the lock free with sleepers, clear the bit and wake them.
     * Should the CAS fail, someone acquired the lock meanwhile, and the
     * waiters bit it preserved makes its release do the wake-up instead.
     */
    if (now == LW_WAITERS_BIT) {
        uint32_t expected = LW_WAITERS_BIT;
        if (atomic_compare_exchange_strong_explicit(&l->word, &expected, 0,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed))
            futex_wake(&l->word, INT32_MAX);
    }
}
