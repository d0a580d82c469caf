/*
 * lmgr.c: the shared lock table behind lmgr_acquire()'s fast path: lock
 * objects and their holders, waiting on futexes, transfers of fast-path
 * entries, and the deadlock search.  The protocol is in
 * src/storage/README.md, "Table locks".
 *
 * Lock order: a proc's fp_latch, then a partition's mutex (several only
 * in the deadlock search, in index order), then a proc's holds_mutex.
 * The procs mutex comes before all of them.
 */
#include "storage/lmgr.h"

#include <assert.h>
#include <stdlib.h>

#include "port/clock.h"
#include "port/futex.h"
#include "port/spin.h"

#define MODE_BIT(m) ((uint16_t)(1u << (m)))
#define STRONG(m)   ((m) >= KEEL_LOCK_SHARE)

/* PostgreSQL's conflict table: the modes each mode conflicts with. */
static const uint16_t conflict_tab[KEEL_LOCK_ACCESS_EXCLUSIVE + 1] = {
    [KEEL_LOCK_ACCESS_SHARE] = MODE_BIT(KEEL_LOCK_ACCESS_EXCLUSIVE),
    [KEEL_LOCK_ROW_SHARE] =
        MODE_BIT(KEEL_LOCK_EXCLUSIVE) | MODE_BIT(KEEL_LOCK_ACCESS_EXCLUSIVE),
    [KEEL_LOCK_ROW_EXCLUSIVE] =
        MODE_BIT(KEEL_LOCK_SHARE) | MODE_BIT(KEEL_LOCK_SHARE_ROW_EXCLUSIVE) |
        MODE_BIT(KEEL_LOCK_EXCLUSIVE) | MODE_BIT(KEEL_LOCK_ACCESS_EXCLUSIVE),
    [KEEL_LOCK_SHARE_UPDATE_EXCLUSIVE] =
        MODE_BIT(KEEL_LOCK_SHARE_UPDATE_EXCLUSIVE) | MODE_BIT(KEEL_LOCK_SHARE) |
        MODE_BIT(KEEL_LOCK_SHARE_ROW_EXCLUSIVE) |
        MODE_BIT(KEEL_LOCK_EXCLUSIVE) | MODE_BIT(KEEL_LOCK_ACCESS_EXCLUSIVE),
    [KEEL_LOCK_SHARE] =
        MODE_BIT(KEEL_LOCK_ROW_EXCLUSIVE) |
        MODE_BIT(KEEL_LOCK_SHARE_UPDATE_EXCLUSIVE) |
        MODE_BIT(KEEL_LOCK_SHARE_ROW_EXCLUSIVE) |
        MODE_BIT(KEEL_LOCK_EXCLUSIVE) | MODE_BIT(KEEL_LOCK_ACCESS_EXCLUSIVE),
    [KEEL_LOCK_SHARE_ROW_EXCLUSIVE] =
        MODE_BIT(KEEL_LOCK_ROW_EXCLUSIVE) |
        MODE_BIT(KEEL_LOCK_SHARE_UPDATE_EXCLUSIVE) | MODE_BIT(KEEL_LOCK_SHARE) |
        MODE_BIT(KEEL_LOCK_SHARE_ROW_EXCLUSIVE) |
        MODE_BIT(KEEL_LOCK_EXCLUSIVE) | MODE_BIT(KEEL_LOCK_ACCESS_EXCLUSIVE),
    [KEEL_LOCK_EXCLUSIVE] =
        MODE_BIT(KEEL_LOCK_ROW_SHARE) | MODE_BIT(KEEL_LOCK_ROW_EXCLUSIVE) |
        MODE_BIT(KEEL_LOCK_SHARE_UPDATE_EXCLUSIVE) | MODE_BIT(KEEL_LOCK_SHARE) |
        MODE_BIT(KEEL_LOCK_SHARE_ROW_EXCLUSIVE) |
        MODE_BIT(KEEL_LOCK_EXCLUSIVE) | MODE_BIT(KEEL_LOCK_ACCESS_EXCLUSIVE),
    [KEEL_LOCK_ACCESS_EXCLUSIVE] =
        MODE_BIT(KEEL_LOCK_ACCESS_SHARE) | MODE_BIT(KEEL_LOCK_ROW_SHARE) |
        MODE_BIT(KEEL_LOCK_ROW_EXCLUSIVE) |
        MODE_BIT(KEEL_LOCK_SHARE_UPDATE_EXCLUSIVE) | MODE_BIT(KEEL_LOCK_SHARE) |
        MODE_BIT(KEEL_LOCK_SHARE_ROW_EXCLUSIVE) |
        MODE_BIT(KEEL_LOCK_EXCLUSIVE) | MODE_BIT(KEEL_LOCK_ACCESS_EXCLUSIVE),
};

/* One session's hold on one lock: the modes it was granted.  Linked into
 * the lock's holders (under the partition mutex) and into its proc's
 * holds (under the proc's holds_mutex). */
struct lmgr_hold {
    lmgr_lock *lock;
    lmgr_proc *proc;
    uint16_t modes; /* MODE_BIT()s */
    lmgr_hold *next_in_lock;
    lmgr_hold *next_in_proc;
};

/* A table some session locks through the shared table.  Freed when no
 * one holds or waits for it. */
struct lmgr_lock {
    uint32_t oid;
    uint32_t granted[KEEL_LOCK_ACCESS_EXCLUSIVE + 1]; /* holders per mode */
    lmgr_hold *holders;
    lmgr_proc *wait_head, *wait_tail; /* FIFO */
    lmgr_lock *next;                  /* in its partition */
};

typedef struct lmgr_partition {
    CACHE_ALIGNED pthread_mutex_t mutex;
    lmgr_lock *locks;
} lmgr_partition;

struct lmgr {
    /* Strong locks held or wanted per partition: read by every weak
     * lock's fast path, written only by strong lockers, so kept on lines
     * of their own away from the partitions' mutexes. */
    CACHE_ALIGNED atomic_u32 strong[LMGR_PARTITIONS];
    lmgr_partition part[LMGR_PARTITIONS];
    CACHE_ALIGNED pthread_mutex_t procs_mutex; /* procs, dl_gen */
    lmgr_proc *procs;
    uint64_t dl_gen; /* deadlock searches, under every partition mutex */
};

bool lmgr_conflicts(keel_lock_mode a, keel_lock_mode b)
{
    return (conflict_tab[a] & MODE_BIT(b)) != 0;
}

const atomic_u32 *lmgr_strong_counts(const lmgr *m)
{
    return m->strong;
}

int lmgr_create(lmgr **out, kerr *err)
{
    lmgr *m = mem_alloc_aligned(sizeof(*m));

    *out = NULL;
    if (m == NULL)
        return kerr_set(err, KEEL_ENOMEM, "out of memory for the lock table");
    for (int i = 0; i < LMGR_PARTITIONS; i++) {
        atomic_init(&m->strong[i], 0);
        pthread_mutex_init(&m->part[i].mutex, NULL);
        m->part[i].locks = NULL;
    }
    pthread_mutex_init(&m->procs_mutex, NULL);
    m->procs = NULL;
    m->dl_gen = 0;
    *out = m;
    return KEEL_OK;
}

void lmgr_destroy(lmgr *m)
{
    if (m == NULL)
        return;
    assert(m->procs == NULL);
    for (int i = 0; i < LMGR_PARTITIONS; i++) {
        assert(m->part[i].locks == NULL);
        pthread_mutex_destroy(&m->part[i].mutex);
    }
    pthread_mutex_destroy(&m->procs_mutex);
    mem_free_aligned(m);
}

int lmgr_proc_create(lmgr *m, lmgr_proc **out, kerr *err)
{
    lmgr_proc *p = mem_alloc_aligned(sizeof(*p));

    *out = NULL;
    if (p == NULL)
        return kerr_set(err, KEEL_ENOMEM, "out of memory for a session");
    atomic_init(&p->fp_latch, 0);
    p->fp_used = 0;
    p->has_shared = false;
    p->mgr = m;
    atomic_init(&p->wait_state, LMGR_WAIT_NONE);
    p->wait_lock = NULL;
    p->wait_hold = NULL;
    p->wait_mode = 0;
    p->wait_next = NULL;
    p->dl_mark = 0;
    atomic_init(&p->cur_xid, 0);
    atomic_init(&p->xwait_xid, 0);
    p->timeout_ms = 0;
    pthread_mutex_init(&p->holds_mutex, NULL);
    p->holds = NULL;
    pthread_mutex_lock(&m->procs_mutex);
    p->prev = NULL;
    p->next = m->procs;
    if (m->procs != NULL)
        m->procs->prev = p;
    m->procs = p;
    pthread_mutex_unlock(&m->procs_mutex);
    *out = p;
    return KEEL_OK;
}

void lmgr_proc_destroy(lmgr_proc *p)
{
    lmgr *m;

    if (p == NULL)
        return;
    m = p->mgr;
    lmgr_release_all(p);
    pthread_mutex_lock(&m->procs_mutex);
    if (p->prev != NULL)
        p->prev->next = p->next;
    else
        m->procs = p->next;
    if (p->next != NULL)
        p->next->prev = p->prev;
    pthread_mutex_unlock(&m->procs_mutex);
    pthread_mutex_destroy(&p->holds_mutex);
    mem_free_aligned(p);
}

void lmgr_latch_wait(lmgr_proc *p)
{
    spin_wait w;

    spin_wait_init(&w);
    while (!lmgr_latch_try(p))
        spin_wait_once(&w);
}

/* ---- the shared table (partition mutex held) ------------------------- */

static lmgr_partition *partition_of(lmgr *m, uint32_t oid)
{
    return &m->part[oid & (LMGR_PARTITIONS - 1)];
}

/* The lock object of oid, made if absent (NULL: out of memory). */
static lmgr_lock *lock_find(lmgr_partition *pt, uint32_t oid, bool make)
{
    lmgr_lock *l;

    for (l = pt->locks; l != NULL; l = l->next)
        if (l->oid == oid)
            return l;
    if (!make || (l = calloc(1, sizeof(*l))) == NULL)
        return NULL;
    l->oid = oid;
    l->next = pt->locks;
    pt->locks = l;
    return l;
}

/* Frees l if nobody holds or waits for it. */
static void lock_free_if_idle(lmgr_partition *pt, lmgr_lock *l)
{
    if (l->holders != NULL || l->wait_head != NULL)
        return;
    for (lmgr_lock **pp = &pt->locks; *pp != NULL; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    free(l);
}

/* p's hold on l, made (and linked into p's holds) if absent; NULL: out of
 * memory. */
static lmgr_hold *hold_find(lmgr_lock *l, lmgr_proc *p, bool make)
{
    lmgr_hold *h;

    for (h = l->holders; h != NULL; h = h->next_in_lock)
        if (h->proc == p)
            return h;
    if (!make || (h = calloc(1, sizeof(*h))) == NULL)
        return NULL;
    h->lock = l;
    h->proc = p;
    h->next_in_lock = l->holders;
    l->holders = h;
    pthread_mutex_lock(&p->holds_mutex);
    h->next_in_proc = p->holds;
    p->holds = h;
    pthread_mutex_unlock(&p->holds_mutex);
    return h;
}

/* Unlinks h, which holds nothing, from its lock and proc, and frees it. */
static void hold_drop(lmgr_hold *h)
{
    lmgr_proc *p = h->proc;

    assert(h->modes == 0);
    for (lmgr_hold **pp = &h->lock->holders; *pp != NULL;
         pp = &(*pp)->next_in_lock)
        if (*pp == h) {
            *pp = h->next_in_lock;
            break;
        }
    pthread_mutex_lock(&p->holds_mutex);
    for (lmgr_hold **pp = &p->holds; *pp != NULL; pp = &(*pp)->next_in_proc)
        if (*pp == h) {
            *pp = h->next_in_proc;
            break;
        }
    pthread_mutex_unlock(&p->holds_mutex);
    free(h);
}

/* Whether mode conflicts with what others than h's proc were granted. */
static bool conflicts_granted(const lmgr_lock *l, const lmgr_hold *h,
                              keel_lock_mode mode)
{
    uint16_t c = conflict_tab[mode];

    for (int j = KEEL_LOCK_ACCESS_SHARE; j <= KEEL_LOCK_ACCESS_EXCLUSIVE; j++)
        if ((c & MODE_BIT(j)) &&
            l->granted[j] > ((h->modes & MODE_BIT(j)) ? 1u : 0u))
            return true;
    return false;
}

static void grant(lmgr_lock *l, lmgr_hold *h, keel_lock_mode mode)
{
    h->modes |= MODE_BIT(mode);
    l->granted[mode]++;
}

static void queue_remove(lmgr_lock *l, lmgr_proc *p)
{
    lmgr_proc *prev = NULL;

    for (lmgr_proc *w = l->wait_head; w != NULL; prev = w, w = w->wait_next)
        if (w == p) {
            if (prev != NULL)
                prev->wait_next = w->wait_next;
            else
                l->wait_head = w->wait_next;
            if (l->wait_tail == w)
                l->wait_tail = prev;
            break;
        }
    p->wait_next = NULL;
}

/*
 * Grants, in queue order, every waiter of l whose mode conflicts neither
 * with what is granted nor with a waiter before it that stays, and wakes
 * it.  The wake happens under the partition mutex, which the waiter takes
 * once more before it returns, so that its proc outlives the wake.
 */
static void wake_waiters(lmgr_lock *l)
{
    uint16_t ahead = 0;
    lmgr_proc *w = l->wait_head;

    while (w != NULL) {
        lmgr_proc *next = w->wait_next;
        keel_lock_mode mode = w->wait_mode;
        if (!(conflict_tab[mode] & ahead) &&
            !conflicts_granted(l, w->wait_hold, mode)) {
            queue_remove(l, w);
            grant(l, w->wait_hold, mode);
            w->wait_lock = NULL;
            atomic_store_explicit(&w->wait_state, LMGR_WAIT_GRANTED,
                                  memory_order_release);
            futex_wake(&w->wait_state, 1);
        } else {
            ahead |= MODE_BIT(mode);
        }
        w = next;
    }
}

/* Withdraws p's request (still queued) on l: its hold goes if it holds
 * nothing, waiters behind it may now be granted. */
static void withdraw(lmgr_partition *pt, lmgr_lock *l, lmgr_proc *p)
{
    lmgr_hold *h = p->wait_hold;

    queue_remove(l, p);
    p->wait_lock = NULL;
    p->wait_hold = NULL;
    atomic_store_explicit(&p->wait_state, LMGR_WAIT_NONE, memory_order_relaxed);
    if (h->modes == 0)
        hold_drop(h);
    wake_waiters(l);
    lock_free_if_idle(pt, l);
}

/* ---- transfers ------------------------------------------------------- */

/*
 * Moves every other proc's fast-path entries for oid into the shared
 * table.  The caller has counted its strong request in the partition: a
 * proc whose latch is taken here after that saw the count (its fast path
 * reads it under its latch), so no new entry for oid appears once the
 * transfer has passed it.  ENOMEM leaves what was moved moved.
 */
static int transfer(lmgr_proc *self, uint32_t oid)
{
    lmgr *m = self->mgr;
    lmgr_partition *pt = partition_of(m, oid);
    int rc = KEEL_OK;

    pthread_mutex_lock(&m->procs_mutex);
    for (lmgr_proc *q = m->procs; q != NULL && rc == KEEL_OK; q = q->next) {
        if (q == self)
            continue;
        if (!lmgr_latch_try(q))
            lmgr_latch_wait(q);
        for (uint32_t u = q->fp_used; u != 0 && rc == KEEL_OK; u &= u - 1) {
            uint32_t i = (uint32_t)__builtin_ctz(u);
            lmgr_lock *l;
            lmgr_hold *h;
            if (q->fp_oid[i] != oid)
                continue;
            pthread_mutex_lock(&pt->mutex);
            l = lock_find(pt, oid, true);
            h = l != NULL ? hold_find(l, q, true) : NULL;
            if (h == NULL) {
                if (l != NULL)
                    lock_free_if_idle(pt, l);
                rc = KEEL_ENOMEM;
            } else {
                for (int j = KEEL_LOCK_ACCESS_SHARE;
                     j <= KEEL_LOCK_ROW_EXCLUSIVE; j++)
                    if ((q->fp_mode[i] & (1u << (j - 1))) &&
                        !(h->modes & MODE_BIT(j)))
                        grant(l, h, (keel_lock_mode)j);
                q->fp_used &= ~(1u << i);
                q->has_shared = true;
            }
            pthread_mutex_unlock(&pt->mutex);
        }
        lmgr_latch_release(q);
    }
    pthread_mutex_unlock(&m->procs_mutex);
    return rc;
}

/* ---- deadlocks ------------------------------------------------------- */

/* Whether a waiter q (every partition mutex held) waits, through the
 * procs it waits for, on target: q's edges are the holders of what it
 * waits for whose modes conflict with its request, and the waiters ahead
 * of it whose requests do. */
static bool waits_on(lmgr *m, lmgr_proc *q, lmgr_proc *target)
{
    lmgr_lock *l = q->wait_lock;
    uint32_t xw = atomic_load_explicit(&q->xwait_xid, memory_order_acquire);
    uint16_t c;

    /* A row wait: its one edge goes to the transaction's proc. */
    if (xw != 0) {
        for (lmgr_proc *r = m->procs; r != NULL; r = r->next) {
            if (r == q ||
                atomic_load_explicit(&r->cur_xid, memory_order_relaxed) != xw)
                continue;
            if (r == target)
                return true;
            if (r->dl_mark != m->dl_gen) {
                r->dl_mark = m->dl_gen;
                return waits_on(m, r, target);
            }
            return false;
        }
        return false;
    }
    if (l == NULL ||
        atomic_load_relaxed(&q->wait_state) != LMGR_WAIT_WAITING)
        return false;
    c = conflict_tab[q->wait_mode];
    for (lmgr_hold *h = l->holders; h != NULL; h = h->next_in_lock) {
        lmgr_proc *r = h->proc;
        if (r == q || !(h->modes & c))
            continue;
        if (r == target)
            return true;
        if (r->dl_mark != m->dl_gen) {
            r->dl_mark = m->dl_gen;
            if (waits_on(m, r, target))
                return true;
        }
    }
    for (lmgr_proc *r = l->wait_head; r != NULL && r != q; r = r->wait_next) {
        if (!(MODE_BIT(r->wait_mode) & c))
            continue;
        if (r == target)
            return true;
        if (r->dl_mark != m->dl_gen) {
            r->dl_mark = m->dl_gen;
            if (waits_on(m, r, target))
                return true;
        }
    }
    return false;
}

/*
 * Looks for a cycle of waiters through p, with every partition mutex
 * held (so the graph stands still).  Finding one, p withdraws its request
 * and true is returned; if p was granted meanwhile, false.
 */
static bool deadlock_check(lmgr_proc *p)
{
    lmgr *m = p->mgr;
    bool found = false;

    /* The procs mutex keeps the list of procs (row waits' edges). */
    pthread_mutex_lock(&m->procs_mutex);
    for (int i = 0; i < LMGR_PARTITIONS; i++)
        pthread_mutex_lock(&m->part[i].mutex);
    if (atomic_load_relaxed(&p->wait_state) == LMGR_WAIT_WAITING) {
        m->dl_gen++;
        p->dl_mark = m->dl_gen;
        found = waits_on(m, p, p);
        if (found)
            withdraw(partition_of(m, p->wait_lock->oid), p->wait_lock, p);
    }
    for (int i = LMGR_PARTITIONS - 1; i >= 0; i--)
        pthread_mutex_unlock(&m->part[i].mutex);
    pthread_mutex_unlock(&m->procs_mutex);
    return found;
}

bool lmgr_xid_deadlock(lmgr_proc *p)
{
    lmgr *m = p->mgr;
    bool found = false;

    pthread_mutex_lock(&m->procs_mutex);
    for (int i = 0; i < LMGR_PARTITIONS; i++)
        pthread_mutex_lock(&m->part[i].mutex);
    if (atomic_load_relaxed(&p->xwait_xid) != 0) {
        m->dl_gen++;
        p->dl_mark = m->dl_gen;
        found = waits_on(m, p, p);
    }
    for (int i = LMGR_PARTITIONS - 1; i >= 0; i--)
        pthread_mutex_unlock(&m->part[i].mutex);
    pthread_mutex_unlock(&m->procs_mutex);
    return found;
}

/* ---- acquire and release --------------------------------------------- */

/* Sleeps until p's request is granted (KEEL_OK), times out, or closes a
 * cycle.  Partition mutex not held. */
static int wait_granted(lmgr_proc *p, lmgr_partition *pt, uint32_t timeout_ms)
{
    uint64_t start = clock_now_ns();
    uint64_t deadline = timeout_ms ? start + (uint64_t)timeout_ms * 1000000u : 0;
    uint64_t dl_at = start + (uint64_t)LMGR_DEADLOCK_MS * 1000000u;
    bool checked = false;
    int rc = KEEL_OK;

    for (;;) {
        uint64_t now, until;
        if (atomic_load_acquire(&p->wait_state) == LMGR_WAIT_GRANTED)
            break;
        now = clock_now_ns();
        if (!checked && now >= dl_at) {
            checked = true;
            if (deadlock_check(p)) {
                rc = KEEL_EDEADLOCK;
                break;
            }
            continue;
        }
        if (deadline != 0 && now >= deadline) {
            pthread_mutex_lock(&pt->mutex);
            if (atomic_load_relaxed(&p->wait_state) == LMGR_WAIT_WAITING) {
                withdraw(pt, p->wait_lock, p);
                rc = KEEL_ELOCKTIMEOUT;
            }
            pthread_mutex_unlock(&pt->mutex);
            break;
        }
        until = checked ? deadline : dl_at;
        if (deadline != 0 && deadline < until)
            until = deadline;
        if (until == 0)
            futex_wait(&p->wait_state, LMGR_WAIT_WAITING);
        else
            futex_wait_timeout(&p->wait_state, LMGR_WAIT_WAITING, until - now);
    }
    if (rc == KEEL_OK) {
        /* The granter woke us under the mutex: let it finish. */
        pthread_mutex_lock(&pt->mutex);
        atomic_store_explicit(&p->wait_state, LMGR_WAIT_NONE,
                              memory_order_relaxed);
        p->wait_hold = NULL;
        pthread_mutex_unlock(&pt->mutex);
    }
    return rc;
}

void lmgr_set_timeout(lmgr_proc *p, uint32_t timeout_ms)
{
    p->timeout_ms = timeout_ms;
}

int lmgr_acquire_slow(lmgr_proc *p, uint32_t oid, keel_lock_mode mode,
                      bool nowait)
{
    lmgr *m = p->mgr;
    lmgr_partition *pt = partition_of(m, oid);
    atomic_u32 *strong = &m->strong[oid & (LMGR_PARTITIONS - 1)];
    lmgr_lock *l;
    lmgr_hold *h;
    uint16_t waiting = 0;
    int rc = KEEL_OK;

    assert(mode >= KEEL_LOCK_ACCESS_SHARE && mode <= KEEL_LOCK_ACCESS_EXCLUSIVE);
    if (STRONG(mode)) {
        atomic_fetch_add_explicit(strong, 1, memory_order_seq_cst);
        rc = transfer(p, oid);
        if (rc != KEEL_OK) {
            atomic_fetch_sub_explicit(strong, 1, memory_order_seq_cst);
            return rc;
        }
    }
    /* Marked before any hold exists, so that the release looks. */
    if (!lmgr_latch_try(p))
        lmgr_latch_wait(p);
    p->has_shared = true;
    lmgr_latch_release(p);
    pthread_mutex_lock(&pt->mutex);
    l = lock_find(pt, oid, true);
    h = l != NULL ? hold_find(l, p, true) : NULL;
    if (h == NULL) {
        if (l != NULL)
            lock_free_if_idle(pt, l);
        pthread_mutex_unlock(&pt->mutex);
        rc = KEEL_ENOMEM;
        goto fail;
    }
    if (h->modes & MODE_BIT(mode)) {
        /* Held already; a strong mode was counted when first granted. */
        pthread_mutex_unlock(&pt->mutex);
        if (STRONG(mode))
            atomic_fetch_sub_explicit(strong, 1, memory_order_seq_cst);
        return KEEL_OK;
    }
    for (lmgr_proc *w = l->wait_head; w != NULL; w = w->wait_next)
        waiting |= MODE_BIT(w->wait_mode);
    /* A newcomer queues behind conflicting waiters; one that holds a mode
     * already does not (it could block them: the deadlock search sees). */
    if (!conflicts_granted(l, h, mode) &&
        (h->modes != 0 || !(conflict_tab[mode] & waiting))) {
        grant(l, h, mode);
        pthread_mutex_unlock(&pt->mutex);
        return KEEL_OK;
    }
    if (nowait) {
        if (h->modes == 0)
            hold_drop(h);
        lock_free_if_idle(pt, l);
        pthread_mutex_unlock(&pt->mutex);
        rc = KEEL_ELOCKTIMEOUT;
        goto fail;
    }
    p->wait_lock = l;
    p->wait_hold = h;
    p->wait_mode = mode;
    p->wait_next = NULL;
    atomic_store_explicit(&p->wait_state, LMGR_WAIT_WAITING,
                          memory_order_relaxed);
    if (l->wait_tail != NULL)
        l->wait_tail->wait_next = p;
    else
        l->wait_head = p;
    l->wait_tail = p;
    pthread_mutex_unlock(&pt->mutex);
    rc = wait_granted(p, pt, p->timeout_ms);
    if (rc == KEEL_OK)
        return LMGR_WAITED;
fail:
    if (STRONG(mode))
        atomic_fetch_sub_explicit(strong, 1, memory_order_seq_cst);
    return rc;
}

void lmgr_release_shared(lmgr_proc *p)
{
    lmgr *m = p->mgr;
    lmgr_hold *h;

    for (;;) {
        lmgr_partition *pt;
        lmgr_lock *l;
        uint16_t modes;
        pthread_mutex_lock(&p->holds_mutex);
        h = p->holds;
        pthread_mutex_unlock(&p->holds_mutex);
        if (h == NULL)
            break;
        /* Only p and transfers of p's fast path (cleared: none now) add
         * to p's holds, so h stays p's first until dropped below. */
        l = h->lock;
        pt = partition_of(m, l->oid);
        pthread_mutex_lock(&pt->mutex);
        modes = h->modes;
        for (int j = KEEL_LOCK_ACCESS_SHARE; j <= KEEL_LOCK_ACCESS_EXCLUSIVE;
             j++)
            if (modes & MODE_BIT(j)) {
                l->granted[j]--;
                if (STRONG(j))
                    atomic_fetch_sub_explicit(
                        &m->strong[l->oid & (LMGR_PARTITIONS - 1)], 1,
                        memory_order_seq_cst);
            }
        h->modes = 0;
        hold_drop(h);
        wake_waiters(l);
        lock_free_if_idle(pt, l);
        pthread_mutex_unlock(&pt->mutex);
    }
}

bool lmgr_holds_none(lmgr_proc *p)
{
    bool none;

    if (!lmgr_latch_try(p))
        lmgr_latch_wait(p);
    none = p->fp_used == 0 && !p->has_shared;
    lmgr_latch_release(p);
    return none;
}

bool lmgr_holds(lmgr_proc *p, uint32_t oid, keel_lock_mode mode, bool *fast)
{
    lmgr_partition *pt = partition_of(p->mgr, oid);
    bool held = false;

    *fast = false;
    if (!lmgr_latch_try(p))
        lmgr_latch_wait(p);
    for (uint32_t u = p->fp_used; u != 0; u &= u - 1) {
        uint32_t i = (uint32_t)__builtin_ctz(u);
        if (p->fp_oid[i] == oid && mode <= KEEL_LOCK_ROW_EXCLUSIVE &&
            (p->fp_mode[i] & (1u << (mode - 1))))
            held = *fast = true;
    }
    lmgr_latch_release(p);
    if (held)
        return true;
    pthread_mutex_lock(&pt->mutex);
    {
        lmgr_lock *l = lock_find(pt, oid, false);
        lmgr_hold *h = l != NULL ? hold_find(l, p, false) : NULL;
        held = h != NULL && (h->modes & MODE_BIT(mode));
    }
    pthread_mutex_unlock(&pt->mutex);
    return held;
}

bool lmgr_holds_only(lmgr_proc *p, uint32_t oid, keel_lock_mode mode)
{
    uint32_t held = 0; /* locks seen: 1 if that one mode on oid */
    bool other = false, shared;

    if (!lmgr_latch_try(p))
        lmgr_latch_wait(p);
    for (uint32_t u = p->fp_used; u != 0; u &= u - 1) {
        uint32_t i = (uint32_t)__builtin_ctz(u);
        if (p->fp_oid[i] == oid && mode <= KEEL_LOCK_ROW_EXCLUSIVE &&
            p->fp_mode[i] == (1u << (mode - 1)))
            held++;
        else
            other = true;
    }
    shared = p->has_shared;
    lmgr_latch_release(p);
    if (shared && !other) {
        /* Holds' modes change only under their partitions' mutexes, but
         * nobody else grants p anything while p is not waiting. */
        lmgr_partition *pt = partition_of(p->mgr, oid);
        pthread_mutex_lock(&pt->mutex);
        pthread_mutex_lock(&p->holds_mutex);
        for (lmgr_hold *h = p->holds; h != NULL; h = h->next_in_proc) {
            if (h->lock->oid == oid && h->modes == MODE_BIT(mode))
                held++;
            else
                other = true;
        }
        pthread_mutex_unlock(&p->holds_mutex);
        pthread_mutex_unlock(&pt->mutex);
    }
    return !other && held == 1;
}
