/*
 * freelist.c: choosing buffers to evict: the clock sweep and access
 * strategy rings.
 *
 * The clock hand is one atomic counter; each step takes the next buffer with
 * a fetch_add, so concurrent sweepers never examine the same step twice.  A
 * pinned buffer is skipped; an unpinned one with a non-zero usage count has
 * it lowered by one; an unpinned one at zero is taken.  Pinning the victim
 * is a compare-and-swap from exactly that state, so a victim is never a
 * buffer anyone holds at that instant.  The caller must still re-check,
 * under the header lock, that nobody pinned it since (see bufmgr.c).
 */
#include "storage/buf_pool.h"

#include <stdlib.h>

/* Tries to pin buffer d for eviction: succeeds only if it is unpinned,
 * unlocked, not in I/O and its usage count is at most max_usage. */
static bool victim_try_pin(buf_desc *d, uint32_t max_usage)
{
    uint64_t cur = atomic_load_relaxed(&d->state);

    while (BUF_REFCOUNT(cur) == 0 && !(cur & (BM_LOCKED | BM_IO_IN_PROGRESS)) &&
           BUF_USAGE(cur) <= max_usage) {
        if (atomic_compare_exchange_weak_explicit(
                &d->state, &cur, cur + BUF_REFCOUNT_ONE, memory_order_acquire,
                memory_order_relaxed))
            return true;
    }
    return false;
}

/*
 * The clock sweep.  Gives up after examining twice the pool's size of
 * buffers in a row that were pinned (a usage-count decrement restarts the
 * count, since that buffer will be free on the next pass), so that a pool
 * whose every buffer is pinned reports exhaustion instead of spinning.
 */
static int clock_sweep(buf_pool *p, int32_t *id, kerr *err)
{
    uint64_t tries = 2 * (uint64_t)p->nbuffers;

    for (;;) {
        uint64_t tick =
            atomic_fetch_add_explicit(&p->clock_hand, 1, memory_order_relaxed);
        buf_desc *d = &p->descs[tick % p->nbuffers];
        uint64_t cur = atomic_load_relaxed(&d->state);

        for (;;) {
            if (BUF_REFCOUNT(cur) != 0 ||
                (cur & (BM_LOCKED | BM_IO_IN_PROGRESS))) {
                if (--tries == 0)
                    return kerr_set(err, KEEL_EEXHAUSTED,
                                    "buffer pool exhausted: all %u buffers "
                                    "are pinned",
                                    p->nbuffers);
                break;
            }
            if (BUF_USAGE(cur) > 0) {
                if (atomic_compare_exchange_weak_explicit(
                        &d->state, &cur, cur - BUF_USAGE_ONE,
                        memory_order_relaxed, memory_order_relaxed)) {
                    tries = 2 * (uint64_t)p->nbuffers;
                    break;
                }
                continue;
            }
            if (atomic_compare_exchange_weak_explicit(
                    &d->state, &cur, cur + BUF_REFCOUNT_ONE,
                    memory_order_acquire, memory_order_relaxed)) {
                *id = d->id;
                return KEEL_OK;
            }
        }
    }
}

int buf_victim_pick(buf_pool *p, buf_strategy *st, int32_t *id, kerr *err)
{
    int rc;

    if (st == NULL)
        return clock_sweep(p, id, err);

    st->current = (st->current + 1) % st->nring;
    int32_t cand = st->ring[st->current];
    /*
     * Reuse the ring's buffer if only we have used it since (usage count
     * at most one: our own load).  If someone else pinned it meanwhile it
     * has become shared data, so leave it to the clock.
     */
    if (cand != BUF_INVALID && victim_try_pin(&p->descs[cand], 1)) {
        *id = cand;
        return KEEL_OK;
    }
    rc = clock_sweep(p, id, err);
    if (rc == KEEL_OK)
        st->ring[st->current] = *id;
    return rc;
}

buf_strategy *buf_strategy_create(buf_pool *p, buf_strategy_kind kind)
{
    uint32_t n = kind == BUF_STRATEGY_BULK_READ ? 32 : 256;
    buf_strategy *st;

    /* A ring never takes more than an eighth of the pool. */
    if (n > p->nbuffers / 8)
        n = p->nbuffers / 8 > 0 ? p->nbuffers / 8 : 1;
    st = malloc(sizeof(*st) + sizeof(int32_t) * n);
    if (st == NULL)
        return NULL;
    st->kind = kind;
    st->nring = n;
    st->current = 0;
    for (uint32_t i = 0; i < n; i++)
        st->ring[i] = BUF_INVALID;
    return st;
}

void buf_strategy_free(buf_strategy *st)
{
    free(st);
}

uint32_t buf_strategy_ring_size(const buf_strategy *st)
{
    return st->nring;
}
