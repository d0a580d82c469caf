/*
 * txn.c: the transaction manager: xid assignment with reservation,
 * begin / commit / abort, lock-free snapshots with reuse, and the status
 * oracle.  The protocol, and why each ordering below is needed, is in
 * src/txn/README.md; the comments here point at it.
 */
#include "txn/txn.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port/atomics.h"
#include "port/clock.h"
#include "port/futex.h"
#include "port/mem.h"
#include "port/membarrier.h"
#include "port/spin.h"

struct txn_mgr {
    /* Read-mostly: set at creation. */
    buf_pool *pool;
    wal *wal; /* commits wait for it (txn_mgr_set_wal()), or NULL */
    clog *clog;
    procarray *pa;
    rowlock_table *rowlocks; /* row locks (rowlock.h) */
    uint32_t max_sessions;
    txn_reserve_fn reserve;
    void *reserve_ctx;
    bool horizon_ok; /* membarrier_ready(): txn_horizon() can be computed */

    /*
     * The completion line: written by every transaction with an xid when
     * it ends, read by every snapshot.  begun <= done + (transactions in
     * the middle of ending); see README.md.
     */
    CACHE_ALIGNED atomic_u64 completions_done;
    atomic_u64 completions_begun;
    atomic_u32 latest_completed; /* highest xid that has ended */
    /* Sessions waiting for a transaction to end (wait_for_end()), and the
     * futex word an ending transaction bumps when there are any: on the
     * line every ending writer writes anyway (end_wake()). */
    atomic_u32 end_waiters;
    atomic_u32 end_seq;

    /* The highest horizon computed so far (txn_horizon_recent()), and
     * the earliest time the next may be computed: read by the writers that
     * prune and shed, written once per computation. */
    CACHE_ALIGNED atomic_u32 horizon_last;
    atomic_u64 horizon_next_ns;

    /* Read by every ending transaction, written only by a snapshot that
     * had to hold endings off: read-mostly, so on a line of its own. */
    CACHE_ALIGNED atomic_u32 hold_requests;

    /* Taken by held-off endings and by the snapshot holding them off. */
    CACHE_ALIGNED pthread_mutex_t completion_lock;

    /* Xid assignment: next_xid and xid_limit change only under the lock
     * (atomics so that txn_mgr_next_xid() may read them without it). */
    CACHE_ALIGNED pthread_mutex_t assign_lock;
    atomic_u32 next_xid;
    atomic_u32 xid_limit;
#ifdef KEEL_FAULT_INJECTION
    void (*publish_hook)(void *arg); /* txn_set_publish_hook() */
    void *publish_hook_arg;
#endif
};

struct txn_session {
    txn_mgr *mgr;
    procarray *pa;
    buf_session *bs;
    uint32_t slot;
    bool in_txn;
    bool snap_valid;    /* snap may be reused while snap_done is current */
    xid_t xid;          /* the running transaction's xid, or 0 */
    uint64_t snap_done; /* completions_done that snap reflects */
    snapshot snap;      /* xip: max_sessions entries, ours */
    txn_stats stats;
    xid_t conflict_xid; /* running writer whose row failed us, or 0 */
    rowlock_owner rowlocks; /* the transaction's row locks */
    /* Whether commits wait for their record to be durable: -1 as the
     * log says (the database's option), else the session's choice. */
    int8_t sync_commit;
    cid_state cids; /* its commands (cid.h); reset as a writer ends */
};

/* ------------------------------------------------------------------ */
/* The manager                                                         */
/* ------------------------------------------------------------------ */

int txn_mgr_create(buf_pool *pool, relnumber_t clog_rel, uint32_t max_sessions,
                   procarray_layout layout, xid_t next_xid, xid_t xid_limit,
                   txn_reserve_fn reserve, void *reserve_ctx, txn_mgr **out,
                   kerr *err)
{
    txn_mgr *m;
    int rc;

    *out = NULL;
    if (next_xid < XID_FIRST_NORMAL || next_xid > TXN_XID_LAST + 1)
        return kerr_set(err, KEEL_EINVAL,
                        "next transaction id %u is out of range (%u .. %u)",
                        next_xid, XID_FIRST_NORMAL, TXN_XID_LAST + 1);
    m = mem_alloc_aligned(sizeof(*m));
    if (m == NULL)
        return kerr_set(err, KEEL_ENOMEM,
                        "out of memory for the transaction manager");
    m->pa = NULL;
    m->rowlocks = NULL;
    rc = procarray_create(max_sessions, layout, &m->pa, err);
    if (rc == KEEL_OK)
        rc = rowlock_create(m->pa, TXN_ROWLOCKS_PER_PART, &m->rowlocks, err);
    if (rc == KEEL_OK)
        rc = clog_open(pool, clog_rel, &m->clog, err);
    if (rc != KEEL_OK) {
        rowlock_destroy(m->rowlocks);
        procarray_destroy(m->pa);
        mem_free_aligned(m);
        return rc;
    }
    m->pool = pool;
    m->max_sessions = max_sessions;
    m->reserve = reserve;
    m->reserve_ctx = reserve_ctx;
    m->horizon_ok = membarrier_ready();
    atomic_store_relaxed(&m->horizon_last, XID_INVALID);
    atomic_store_relaxed(&m->horizon_next_ns, 0);
    atomic_store_relaxed(&m->completions_done, 0);
    atomic_store_relaxed(&m->completions_begun, 0);
    atomic_store_relaxed(&m->latest_completed, next_xid - 1);
    atomic_store_relaxed(&m->hold_requests, 0);
    atomic_store_relaxed(&m->next_xid, next_xid);
    atomic_store_relaxed(&m->xid_limit, xid_limit);
    pthread_mutex_init(&m->completion_lock, NULL);
    pthread_mutex_init(&m->assign_lock, NULL);
    *out = m;
    return KEEL_OK;
}

void txn_mgr_destroy(txn_mgr *m)
{
    if (m == NULL)
        return;
    rowlock_destroy(m->rowlocks);
    procarray_destroy(m->pa);
    clog_close(m->clog);
    pthread_mutex_destroy(&m->completion_lock);
    pthread_mutex_destroy(&m->assign_lock);
    mem_free_aligned(m);
}

void txn_mgr_set_wal(txn_mgr *m, wal *w)
{
    m->wal = w;
}

xid_t txn_mgr_next_xid(txn_mgr *m)
{
    return atomic_load_relaxed(&m->next_xid);
}

xid_t txn_mgr_xid_limit(txn_mgr *m)
{
    return atomic_load_relaxed(&m->xid_limit);
}

procarray_layout txn_mgr_layout(const txn_mgr *m)
{
    return procarray_get_layout(m->pa);
}

procarray *txn_mgr_procarray(txn_mgr *m)
{
    return m->pa;
}

clog *txn_mgr_clog(txn_mgr *m)
{
    return m->clog;
}

/* ------------------------------------------------------------------ */
/* Sessions                                                            */
/* ------------------------------------------------------------------ */

int txn_session_attach(txn_mgr *m, buf_session *bs, txn_session **out,
                       kerr *err)
{
    txn_session *s;
    int rc;

    *out = NULL;
    /* Written at every begin and end: lines of its own (port/mem.h). */
    s = mem_alloc_aligned(sizeof(*s));
    if (s != NULL)
        s->snap.xip = mem_alloc_lines(sizeof(xid_t) * m->max_sessions);
    if (s == NULL || s->snap.xip == NULL) {
        mem_free_aligned(s);
        return kerr_set(err, KEEL_ENOMEM, "out of memory for a session");
    }
    rc = procarray_attach(m->pa, &s->slot, err);
    if (rc != KEEL_OK) {
        mem_free_aligned(s->snap.xip);
        mem_free_aligned(s);
        return rc;
    }
    s->mgr = m;
    s->pa = m->pa;
    s->bs = bs;
    s->sync_commit = -1;
    cid_state_init(&s->cids);
    *out = s;
    return KEEL_OK;
}

void txn_session_detach(txn_session *s)
{
    if (s == NULL)
        return;
    txn_abort(s, NULL);
    cid_state_free(&s->cids);
    rowlock_owner_free(&s->rowlocks);
    procarray_detach(s->pa, s->slot);
    mem_free_aligned(s->snap.xip);
    mem_free_aligned(s);
}

uint32_t txn_session_slot(const txn_session *s)
{
    return s->slot;
}

void txn_session_stats(const txn_session *s, txn_stats *out)
{
    *out = s->stats;
}

/* ------------------------------------------------------------------ */
/* Snapshots                                                           */
/* ------------------------------------------------------------------ */

static int xid_cmp(const void *a, const void *b)
{
    xid_t x = *(const xid_t *)a, y = *(const xid_t *)b;

    return x < y ? -1 : x > y;
}

static void xids_sort(xid_t *x, uint32_t n)
{
    if (n > 32) {
        qsort(x, n, sizeof(*x), xid_cmp);
        return;
    }
    for (uint32_t i = 1; i < n; i++) {
        xid_t v = x[i];
        uint32_t j = i;

        for (; j > 0 && x[j - 1] > v; j--)
            x[j] = x[j - 1];
        x[j] = v;
    }
}

/*
 * Fills the session's snapshot from the xids a scan collected into its xip
 * (n of them, below xmax, not sorted yet) and done, and publishes its xmin.
 */
static void snapshot_fill(txn_session *s, xid_t xmax, uint32_t n, uint64_t done)
{
    xid_t xmin = xmax;

    /* Only the lowest before the snapshot is confirmed: the caller sorts
     * the accepted one (a shorter window for endings to fall into). */
    for (uint32_t i = 0; i < n; i++)
        if (s->snap.xip[i] < xmin)
            xmin = s->snap.xip[i];
    s->snap.xmax = xmax;
    s->snap.xmin = xmin;
    s->snap.nxip = n;
    s->snap_done = done;
    s->snap_valid = true;
    s->snap.own_xid = s->xid;
    /* The write the padded layout gives its own line. */
    procarray_set_xmin(s->pa, s->slot, s->snap.xmin);
}

/*
 * The scan with endings held off: announce the hold, take the completion
 * lock (which held-off endings queue on), wait for the endings that had
 * already passed the announcement to finish, then scan and publish the
 * snapshot's xmin.  Nothing can end during that scan, nor before the xmin
 * is out (README.md, "The horizon").
 */
static void snapshot_scan_held(txn_session *s)
{
    txn_mgr *m = s->mgr;
    uint64_t done, begun;
    xid_t xmax;
    spin_wait w;

    atomic_fetch_add_explicit(&m->hold_requests, 1, memory_order_seq_cst);
    pthread_mutex_lock(&m->completion_lock);
    spin_wait_init(&w);
    for (;;) {
        /* done first: begun == done read in this order means no ending
         * was in flight at the second load (README.md). */
        done = atomic_load_explicit(&m->completions_done, memory_order_seq_cst);
        begun =
            atomic_load_explicit(&m->completions_begun, memory_order_seq_cst);
        if (begun == done)
            break;
        spin_wait_once(&w);
    }
    xmax = atomic_load_acquire(&m->latest_completed) + 1;
    snapshot_fill(s, xmax, procarray_collect(m->pa, xmax, s->slot, s->snap.xip),
                  done);
    pthread_mutex_unlock(&m->completion_lock);
    atomic_fetch_sub_explicit(&m->hold_requests, 1, memory_order_seq_cst);
    s->stats.snapshots_serialized++;
}

/*
 * Whether no ending has begun since the one done counts, read after the
 * session's xmin was published: the compiler keeps the load after the
 * store, and the CPU may not, which txn_horizon()'s membarrier_all()
 * answers for (README.md, "The horizon").
 */
static inline bool snapshot_confirmed(const txn_mgr *m, uint64_t done)
{
#ifdef KEEL_FAULT_INJECTION
    if (m->publish_hook != NULL)
        m->publish_hook(m->publish_hook_arg);
#endif
    atomic_signal_fence(memory_order_seq_cst);
    return atomic_load_acquire(&m->completions_begun) == done;
}

/*
 * Takes the session's snapshot into s->snap and publishes its xmin.  Reuses
 * the previous one when no transaction with an xid has ended since it was
 * taken.  Otherwise scans the process array without a lock, and accepts
 * the scan only if no ending began before the scan was over and its xmin
 * was published (README.md, "Consistent snapshots" and "The horizon");
 * after TXN_SNAPSHOT_TRIES failed scans, holds endings off for one.  An
 * xmin published for a scan that is not accepted is never above the one
 * finally accepted, so publishing it early is safe.
 */
static void snapshot_take(txn_session *s)
{
    txn_mgr *m = s->mgr;
    uint64_t done = atomic_load_acquire(&m->completions_done);

    if (s->snap_valid && done == s->snap_done) {
        s->snap.own_xid = s->xid;
        procarray_set_xmin(s->pa, s->slot, s->snap.xmin);
        if (snapshot_confirmed(m, done)) {
            s->stats.snapshots_reused++;
            return;
        }
        done = atomic_load_acquire(&m->completions_done);
    }
    for (int attempt = 0;; attempt++) {
        xid_t xmax;

        if (attempt == TXN_SNAPSHOT_TRIES) {
            snapshot_scan_held(s);
            break;
        }
        xmax = atomic_load_acquire(&m->latest_completed) + 1;
        /* The scan's loads are acquire loads, so the confirming load
         * cannot be satisfied before them. */
        snapshot_fill(s, xmax,
                      procarray_collect(m->pa, xmax, s->slot, s->snap.xip),
                      done);
        if (snapshot_confirmed(m, done))
            break;
        s->stats.snapshot_retries++;
        done = atomic_load_acquire(&m->completions_done);
    }
    xids_sort(s->snap.xip, s->snap.nxip);
    s->stats.snapshots_taken++;
}

xid_t txn_horizon(txn_mgr *m)
{
    xid_t h;

    if (!m->horizon_ok)
        return XID_INVALID;
    /* Every xid below latest_completed that is still running is published
     * (README.md, "Assignment"), and so seen by the first scan. */
    h = atomic_load_acquire(&m->latest_completed) + 1;
    h = procarray_oldest(m->pa, h, true);
    /* Every xmin published before the barrier is seen by the second scan;
     * a snapshot whose xmin is published after it confirms itself after
     * it, and so sees any ending this horizon has passed. */
    if (!membarrier_all())
        return XID_INVALID;
    return procarray_oldest(m->pa, h, false);
}

#ifdef KEEL_FAULT_INJECTION
void txn_set_publish_hook(txn_mgr *m, void (*fn)(void *arg), void *arg)
{
    m->publish_hook = fn;
    m->publish_hook_arg = arg;
}
#endif

xid_t txn_horizon_recent(txn_mgr *m, xid_t want)
{
    xid_t h = atomic_load_acquire(&m->horizon_last), nh;
    uint64_t now, next, cost, cpu;

    if (want < h || !m->horizon_ok)
        return h;
    /* One computation at a time, and none before the time the last one
     * set: the others make do with the last (any horizon once computed
     * stays one).  The claim pushes that time far out until it is done. */
    now = clock_now_ns();
    next = atomic_load_relaxed(&m->horizon_next_ns);
    if (now < next || !atomic_compare_exchange_strong_explicit(
                          &m->horizon_next_ns, &next, UINT64_MAX,
                          memory_order_relaxed, memory_order_relaxed))
        return h;
    cpu = clock_thread_cpu_ns();
    nh = txn_horizon(m);
    /* The barrier waits for every CPU running the process to be
     * interrupted: keep the computations' share of this thread's time
     * under 1 / TXN_HORIZON_COST_RATIO.  CPU time, not the wall clock, so
     * that a computation preempted part way does not hold the next off
     * for long; never more than TXN_HORIZON_INTERVAL_MAX_NS. */
    cost = (clock_thread_cpu_ns() - cpu) * TXN_HORIZON_COST_RATIO;
    if (cost < TXN_HORIZON_INTERVAL_NS)
        cost = TXN_HORIZON_INTERVAL_NS;
    if (cost > TXN_HORIZON_INTERVAL_MAX_NS)
        cost = TXN_HORIZON_INTERVAL_MAX_NS;
    atomic_store_relaxed(&m->horizon_next_ns, now + cost);
    while (nh > h && !atomic_compare_exchange_weak_explicit(
                         &m->horizon_last, &h, nh, memory_order_release,
                         memory_order_acquire))
        ;
    return nh > h ? nh : h;
}

int txn_begin(txn_session *s, kerr *err)
{
    if (s->in_txn)
        return kerr_set(err, KEEL_EINVAL,
                        "a transaction is already running in this session");
    assert(s->xid == XID_INVALID);
    s->in_txn = true;
    s->conflict_xid = XID_INVALID; /* a committed one's, not waited for */
    snapshot_take(s);
    return KEEL_OK;
}

int txn_refresh_snapshot(txn_session *s, kerr *err)
{
    if (!s->in_txn)
        return kerr_set(err, KEEL_EINVAL, "no transaction is running");
    snapshot_take(s);
    return KEEL_OK;
}

bool txn_in_progress(const txn_session *s)
{
    return s->in_txn;
}

xid_t txn_current_xid(const txn_session *s)
{
    return s->xid;
}

const snapshot *txn_snapshot(const txn_session *s)
{
    return s->in_txn ? &s->snap : NULL;
}

/* ------------------------------------------------------------------ */
/* Xid assignment                                                      */
/* ------------------------------------------------------------------ */

int txn_assign_xid(txn_session *s, xid_t *out, kerr *err)
{
    txn_mgr *m = s->mgr;
    xid_t xid;
    int rc;

    if (!s->in_txn)
        return kerr_set(err, KEEL_EINVAL, "no transaction is running");
    if (s->xid != XID_INVALID) {
        *out = s->xid;
        return KEEL_OK;
    }
    /* A failed log takes no more changes (wal.h): refuse before any. */
    if (m->wal != NULL && wal_failed(m->wal))
        return wal_flush(m->wal, UINT64_MAX, err);
    /*
     * Take and publish under one lock: an xid handed out after ours is
     * handed out after ours is visible in the array (README.md, "Why
     * assignment takes a lock").
     */
    pthread_mutex_lock(&m->assign_lock);
    xid = atomic_load_relaxed(&m->next_xid);
    if (xid > TXN_XID_LAST) {
        pthread_mutex_unlock(&m->assign_lock);
        return kerr_set(err, KEEL_EEXHAUSTED,
                        "transaction ids are exhausted: the last one, %u, "
                        "has been used (wraparound is not supported yet)",
                        TXN_XID_LAST);
    }
    if (m->reserve != NULL && xid >= atomic_load_relaxed(&m->xid_limit)) {
        xid_t limit = xid > TXN_XID_LAST + 1 - TXN_XID_RESERVE_CHUNK
                          ? TXN_XID_LAST + 1
                          : xid + TXN_XID_RESERVE_CHUNK;

        rc = m->reserve(m->reserve_ctx, limit, err);
        if (rc != KEEL_OK) {
            pthread_mutex_unlock(&m->assign_lock);
            return rc;
        }
        atomic_store_relaxed(&m->xid_limit, limit);
    }
    /* The xid's commit-log page, so that commit never extends. */
    rc = clog_ensure(m->clog, s->bs, xid, err);
    if (rc != KEEL_OK) {
        pthread_mutex_unlock(&m->assign_lock);
        return rc;
    }
    procarray_set_xid(s->pa, s->slot, xid);
    atomic_store_relaxed(&m->next_xid, xid + 1);
    pthread_mutex_unlock(&m->assign_lock);

    s->xid = xid;
    s->snap.own_xid = xid;
    s->stats.xids_assigned++;
    *out = xid;
    return KEEL_OK;
}

/* ------------------------------------------------------------------ */
/* Ending                                                              */
/* ------------------------------------------------------------------ */

/*
 * Withdraws the session's xid after its final status is in the commit log:
 * begun++, clear the slot, raise latest_completed, done++ (README.md).  If
 * a snapshot is holding endings off, withdraw the begun++ and queue on the
 * completion lock instead.
 */
static void completion_publish(txn_session *s, xid_t xid)
{
    txn_mgr *m = s->mgr;
    bool held = false;
    xid_t cur;

    atomic_fetch_add_explicit(&m->completions_begun, 1, memory_order_seq_cst);
    if (__builtin_expect(
            atomic_load_explicit(&m->hold_requests, memory_order_seq_cst) != 0,
            0)) {
        atomic_fetch_add_explicit(&m->completions_done, 1,
                                  memory_order_release);
        pthread_mutex_lock(&m->completion_lock);
        held = true;
        atomic_fetch_add_explicit(&m->completions_begun, 1,
                                  memory_order_seq_cst);
    }
    procarray_set_xid(s->pa, s->slot, XID_INVALID);
    cur = atomic_load_relaxed(&m->latest_completed);
    while (cur < xid && !atomic_compare_exchange_weak_explicit(
                            &m->latest_completed, &cur, xid,
                            memory_order_release, memory_order_relaxed))
        ;
    atomic_fetch_add_explicit(&m->completions_done, 1, memory_order_release);
    if (held)
        pthread_mutex_unlock(&m->completion_lock);
}

/* After a transaction with an xid left the array: wakes whoever waits
 * for one to end.  The waiter counts itself before it looks at the array,
 * the ender leaves the array before it reads the count, both sequentially
 * consistent, so one of them sees the other. */
static void end_wake(txn_mgr *m)
{
    /* A read-modify-write, not a load: it orders the array's change
     * before it as a fence would (which ThreadSanitizer does not model). */
    if (__builtin_expect(atomic_fetch_add_explicit(&m->end_waiters, 0,
                                                   memory_order_seq_cst) != 0,
                         0)) {
        atomic_fetch_add_explicit(&m->end_seq, 1, memory_order_seq_cst);
        futex_wake(&m->end_seq, INT32_MAX);
    }
}

/* How long an aborted transaction's session waits for the transaction
 * whose row it met running (txn_session.conflict_xid). */
#define TXN_CONFLICT_WAIT_NS (200u * 1000000u)

/* Waits, at most timeout_ns, for transaction xid to leave the array. */
static void wait_for_end(txn_session *s, xid_t xid, uint64_t timeout_ns)
{
    txn_mgr *m = s->mgr;
    uint64_t deadline = clock_now_ns() + timeout_ns;

    atomic_fetch_add_explicit(&m->end_waiters, 1, memory_order_seq_cst);
    for (;;) {
        uint32_t seq = atomic_load_explicit(&m->end_seq, memory_order_seq_cst);
        uint64_t now;
        if (!procarray_contains(s->pa, xid))
            break;
        now = clock_now_ns();
        if (now >= deadline)
            break;
        futex_wait_timeout(&m->end_seq, seq, deadline - now);
    }
    atomic_fetch_sub_explicit(&m->end_waiters, 1, memory_order_seq_cst);
}

bool txn_wait_end(txn_session *s, xid_t xid, uint64_t timeout_ns)
{
    wait_for_end(s, xid, timeout_ns);
    return !procarray_contains(s->pa, xid);
}

static bool session_in_array(void *ctx, xid_t xid)
{
    txn_session *s = ctx;

    return procarray_contains(s->pa, xid);
}

static void session_conflict(void *ctx, xid_t xid)
{
    txn_session *s = ctx;

    s->conflict_xid = xid;
}

/* Ends the session's transaction once its status is settled. */
static void txn_finish(txn_session *s)
{
    if (s->xid != XID_INVALID) {
        completion_publish(s, s->xid);
        end_wake(s->mgr);
        /* its row locks ended with it: their entries go too */
        if (s->rowlocks.n > 0)
            rowlock_release(s->mgr->rowlocks, &s->rowlocks, s->xid);
        /* Only a transaction with an xid writes, and so takes command
         * ids: a read-only one leaves them as it found them. */
        cid_state_reset(&s->cids);
    } else
        s->stats.readonly_ends++;
    s->xid = XID_INVALID;
    s->snap.own_xid = XID_INVALID;
    s->in_txn = false;
    procarray_set_xmin(s->pa, s->slot, XID_INVALID);
}

/* Ends a transaction whose commit failed (rc, with err's message), and
 * says so: "commit of transaction X <what>: <why>". */
static int commit_failed(txn_session *s, xid_t xid, int rc, const char *what,
                         kerr *err)
{
    char why[KERR_MSG_MAX];

    snprintf(why, sizeof(why), "%s", err != NULL ? err->msg : "");
    txn_finish(s);
    s->stats.aborts++;
    return kerr_set(err, rc, "commit of transaction %u %s: %s", xid, what,
                    why);
}

int txn_commit(txn_session *s, kerr *err)
{
    xid_t xid = s->xid;
    int rc;

    if (!s->in_txn)
        return kerr_set(err, KEEL_EINVAL, "no transaction is running");
    if (xid == XID_INVALID) {
        txn_finish(s);
        return KEEL_OK;
    }
    s->bs->log_info = WAL_INFO_COMMIT;
    s->bs->log_xid = xid;
    rc = clog_set(s->mgr->clog, s->bs, xid, XID_STATUS_COMMITTED, err);
    if (rc != KEEL_OK)
        /* Not committed, and about to be not running: it reads as aborted
         * from the moment it leaves the array, whatever the log says. */
        return commit_failed(s, xid, rc, "failed, rolled back", err);
    /* The commit record (the commit log page's change) durable before the
     * transaction leaves the array and is acknowledged; until then every
     * snapshot still sees it running.  Group commit: wal_flush(). */
    if (s->mgr->wal != NULL &&
        (s->sync_commit < 0 ? wal_synchronous(s->mgr->wal) : s->sync_commit > 0)) {
        rc = wal_flush(s->mgr->wal, s->bs->log_last, err);
        if (rc != KEEL_OK)
            /* Committed in memory, perhaps not on disk.  The log has
             * failed, so nothing is written any more; whether the
             * transaction is there after the reopen is not known (its
             * record may or may not have reached the disk). */
            return commit_failed(s, xid, rc,
                                 "is not acknowledged: its record could not "
                                 "be made durable",
                                 err);
    }
    txn_finish(s);
    s->stats.commits++;
    return KEEL_OK;
}

int txn_abort(txn_session *s, kerr *err)
{
    kerr e;
    int rc = KEEL_OK;

    if (!s->in_txn)
        return KEEL_OK;
    if (s->xid != XID_INVALID) {
        /* A failure here changes nothing a reader can see (txn.h).  No
         * wait for the log: a crash before the record is durable leaves
         * the transaction in progress, which reads as aborted. */
        s->bs->log_info = WAL_INFO_ABORT;
        s->bs->log_xid = s->xid;
        rc = clog_set(s->mgr->clog, s->bs, s->xid, XID_STATUS_ABORTED, &e);
        /* The page's change is logged when it is unlocked, which cannot
         * fail; a log that has failed takes no record. */
        if (rc == KEEL_OK && s->mgr->wal != NULL && wal_failed(s->mgr->wal))
            rc = kerr_set(&e, KEEL_EIO, "the write-ahead log has failed");
        if (rc != KEEL_OK && err != NULL)
            kerr_set(err, rc,
                     "transaction %u is aborted, but its abort could not be "
                     "recorded: %s",
                     (unsigned)s->xid, e.msg);
        s->stats.aborts++;
    }
    txn_finish(s);
    /* Holding nothing now: let the transaction whose row ended this one
     * end too before the caller tries again (snapshot.h). */
    if (s->conflict_xid != XID_INVALID) {
        xid_t x = s->conflict_xid;
        s->conflict_xid = XID_INVALID;
        wait_for_end(s, x, TXN_CONFLICT_WAIT_NS);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Status                                                              */
/* ------------------------------------------------------------------ */

int txn_xid_status(void *ctx, xid_t xid, xid_status *status, kerr *err)
{
    txn_session *s = ctx;
    int rc;

    rc = clog_get(s->mgr->clog, s->bs, xid, status, err);
    if (rc != KEEL_OK || *status != XID_STATUS_IN_PROGRESS)
        return rc;
    if (xid == s->xid || procarray_contains(s->pa, xid))
        return KEEL_OK; /* IN_PROGRESS */
    /*
     * Not running now.  It may have ended between the first read of the
     * log and the scan: an ending writes the log before it leaves the
     * array, and the scan's acquire load saw it leave, so read again.
     */
    rc = clog_get(s->mgr->clog, s->bs, xid, status, err);
    if (rc == KEEL_OK && *status == XID_STATUS_IN_PROGRESS)
        *status = XID_STATUS_ABORTED;
    return rc;
}

static xid_t session_horizon(void *ctx, xid_t want)
{
    txn_session *s = ctx;

    return txn_horizon_recent(s->mgr, want);
}

int txn_visibility(txn_session *s, visibility *vis, kerr *err)
{
    if (!s->in_txn)
        return kerr_set(err, KEEL_EINVAL, "no transaction is running");
    vis->snap = &s->snap;
    vis->status = txn_xid_status;
    vis->status_ctx = s;
    vis->horizon = session_horizon;
    vis->conflict = session_conflict;
    vis->cids = &s->cids;
    vis->met = NULL;
    vis->committed_ok = false;
    vis->in_array = session_in_array;
    vis->rowlocks = s->mgr->rowlocks;
    vis->rowlock_owner = &s->rowlocks;
    vis->locker = NULL;
    vis->keeps_key = false;
    return KEEL_OK;
}

uint32_t txn_rowlocks_mark(const txn_session *s)
{
    return s->rowlocks.n;
}

void txn_rowlocks_release_to(txn_session *s, uint32_t mark)
{
    if (s->xid != XID_INVALID && s->rowlocks.n > mark)
        rowlock_release_from(s->mgr->rowlocks, &s->rowlocks, mark, s->xid);
}

cid_state *txn_cids(txn_session *s)
{
    return &s->cids;
}

void txn_set_synchronous_commit(txn_session *s, int mode)
{
    s->sync_commit = (int8_t)(mode < 0 ? -1 : mode > 0);
}
