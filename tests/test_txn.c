/*
 * test_txn.c: transactions: begin / commit / abort and the statuses they
 * leave; read-only transactions take no xid; snapshot contents with
 * sessions in known states; snapshot reuse and recomputation; both process
 * array layouts; session exhaustion; xid reservation; the status oracle,
 * crashed transactions included; a commit whose log write fails; and
 * transactions ending in the middle of a snapshot's scan (a scan hook in
 * fault-injection builds), which must make the snapshot rescan, and after
 * TXN_SNAPSHOT_TRIES rescans hold endings off; the horizon, and a
 * transaction ending between a snapshot's publication and its
 * confirmation (a hook in fault-injection builds).
 *
 * The stress test runs writers (assign, record, commit / abort / crash at
 * random) against readers that check every snapshot they take: its shape
 * (xmin <= xip < xmax, sorted, own xid absent), that everything committed
 * before it began is visible, that nothing seen as finished had not begun
 * to finish, that aborted work is never visible, that what a session saw
 * finished stays finished, and that a visible transaction's dependency (a
 * commit it had itself seen) is visible too, which only a consistent cut of
 * the process array guarantees; and that no horizon computed meanwhile (a
 * thread computes them all along) is above a live snapshot's xmin.
 * Failures are counted in atomics and
 * asserted from the main thread.  Writers stop early if they reach ST_CAP
 * xids (the size of the tables that record them).
 */
#include "testutil.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port/atomics.h"
#include "port/clock.h"
#include "port/membarrier.h"
#include "storage/bufmgr.h"
#include "storage/fault.h"
#include "storage/smgr.h"
#include "txn/clog.h"
#include "txn/procarray.h"
#include "txn/rowlock.h"
#include "txn/snapshot.h"
#include "txn/txn.h"

#define REL_CLOG  ((relnumber_t)16500)
#define POOL_SIZE 256

typedef struct fixture {
    procarray_layout layout;
    char *dir;
    smgr *sm;
    buf_pool *pool;
    buf_session *bs;
    txn_mgr *m;
    txn_session *sess[16]; /* attached by attach(), for teardown */
    kerr err;
} fixture;

static int setup_layout(void **state, procarray_layout layout)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->layout = layout;
    tu_storage_open(&f->dir, &f->sm, &f->err);
    assert_int_equal(smgr_create(f->sm, REL_CLOG, NULL, &f->err), KEEL_OK);
    tu_pool_open(f->sm, POOL_SIZE, &f->pool, &f->bs, &f->err);
    *state = f;
    return 0;
}

static int setup_padded(void **state)
{
    return setup_layout(state, PROCARRAY_PADDED);
}

static int setup_packed(void **state)
{
    return setup_layout(state, PROCARRAY_PACKED);
}

static int teardown(void **state)
{
    fixture *f = *state;

#ifdef KEEL_FAULT_INJECTION
    fault_disarm_all();
#endif
    /* Sessions a failed test left attached. */
    for (int i = 0; i < 16; i++)
        txn_session_detach(f->sess[i]);
    txn_mgr_destroy(f->m);
    tu_pool_drop(f->pool, f->bs, &f->err);
    tu_storage_close(f->dir, f->sm);
    free(f);
    return 0;
}

static void mgr_open(fixture *f, uint32_t max_sessions, xid_t next_xid,
                     xid_t limit, txn_reserve_fn reserve, void *ctx)
{
    if (txn_mgr_create(f->pool, REL_CLOG, max_sessions, f->layout, next_xid,
                       limit, reserve, ctx, &f->m, &f->err) != KEEL_OK)
        fail_msg("txn_mgr_create: %s", f->err.msg);
    assert_int_equal(txn_mgr_layout(f->m), f->layout);
}

static txn_session *attach(fixture *f)
{
    txn_session *s = NULL;

    if (txn_session_attach(f->m, f->bs, &s, &f->err) != KEEL_OK)
        fail_msg("txn_session_attach: %s", f->err.msg);
    for (int i = 0; i < 16; i++)
        if (f->sess[i] == NULL) {
            f->sess[i] = s;
            break;
        }
    return s;
}

static void detach(fixture *f, txn_session *s)
{
    for (int i = 0; i < 16; i++)
        if (f->sess[i] == s)
            f->sess[i] = NULL;
    txn_session_detach(s);
}

static void begin(fixture *f, txn_session *s)
{
    if (txn_begin(s, &f->err) != KEEL_OK)
        fail_msg("txn_begin: %s", f->err.msg);
}

static xid_t assign(fixture *f, txn_session *s)
{
    xid_t x = XID_INVALID;

    if (txn_assign_xid(s, &x, &f->err) != KEEL_OK)
        fail_msg("txn_assign_xid: %s", f->err.msg);
    assert_int_equal(txn_current_xid(s), x);
    return x;
}

static void commit(fixture *f, txn_session *s)
{
    if (txn_commit(s, &f->err) != KEEL_OK)
        fail_msg("txn_commit: %s", f->err.msg);
    assert_false(txn_in_progress(s));
}

/* A transaction that writes: begin, assign, and return its xid. */
static xid_t writer(fixture *f, txn_session *s)
{
    begin(f, s);
    return assign(f, s);
}

static xid_status status_of(fixture *f, txn_session *s, xid_t xid)
{
    xid_status st = (xid_status)-1;

    if (txn_xid_status(s, xid, &st, &f->err) != KEEL_OK)
        fail_msg("txn_xid_status(%u): %s", xid, f->err.msg);
    return st;
}

static xid_status clog_status(fixture *f, xid_t xid)
{
    xid_status st = (xid_status)-1;

    if (clog_get(txn_mgr_clog(f->m), f->bs, xid, &st, &f->err) != KEEL_OK)
        fail_msg("clog_get(%u): %s", xid, f->err.msg);
    return st;
}

static txn_stats stats_of(txn_session *s)
{
    txn_stats st;

    txn_session_stats(s, &st);
    return st;
}

/* ---- basics ------------------------------------------------------------ */

static void test_begin_commit_abort(void **state)
{
    fixture *f = *state;
    txn_session *s, *o;
    xid_t x, y, again;

    mgr_open(f, 4, XID_FIRST_NORMAL, 0, NULL, NULL);
    s = attach(f);
    o = attach(f);
    assert_null(txn_snapshot(s));
    assert_false(txn_in_progress(s));

    /* Misuse is an error, not a crash. */
    assert_int_equal(txn_commit(s, &f->err), KEEL_EINVAL);
    assert_int_equal(txn_assign_xid(s, &x, &f->err), KEEL_EINVAL);
    assert_int_equal(txn_refresh_snapshot(s, &f->err), KEEL_EINVAL);

    x = writer(f, s);
    assert_int_equal(x, XID_FIRST_NORMAL);
    assert_int_equal(txn_begin(s, &f->err), KEEL_EINVAL);
    assert_int_equal(txn_assign_xid(s, &again, &f->err), KEEL_OK);
    assert_int_equal(again, x); /* one xid per transaction */
    assert_int_equal(txn_mgr_next_xid(f->m), x + 1);
    assert_true(
        procarray_get_xid(txn_mgr_procarray(f->m), txn_session_slot(s)) == x);
    assert_int_equal(status_of(f, o, x), XID_STATUS_IN_PROGRESS);
    assert_int_equal(status_of(f, s, x), XID_STATUS_IN_PROGRESS);
    commit(f, s);
    assert_int_equal(txn_current_xid(s), XID_INVALID);
    assert_true(procarray_get_xid(txn_mgr_procarray(f->m),
                                  txn_session_slot(s)) == XID_INVALID);
    assert_int_equal(status_of(f, o, x), XID_STATUS_COMMITTED);
    assert_int_equal(clog_status(f, x), XID_STATUS_COMMITTED);

    y = writer(f, s);
    assert_int_equal(y, x + 1);
    txn_abort(s, NULL);
    assert_false(txn_in_progress(s));
    assert_int_equal(status_of(f, o, y), XID_STATUS_ABORTED);
    assert_int_equal(clog_status(f, y), XID_STATUS_ABORTED);
    assert_int_equal(status_of(f, o, x), XID_STATUS_COMMITTED);
    txn_abort(s, NULL); /* outside a transaction: nothing */

    assert_int_equal(stats_of(s).commits, 1);
    assert_int_equal(stats_of(s).aborts, 1);
    assert_int_equal(stats_of(s).xids_assigned, 2);
    detach(f, s);
    detach(f, o);
}

/*
 * Command ids (cid.h): a command that has not written is not left behind;
 * combo ids are one per pair, stable as the table grows; a transaction
 * with an xid starts the next one afresh, a read-only one leaves the
 * state alone; and the visibility carries the state.
 */
static void test_command_ids(void **state)
{
    fixture *f = *state;
    txn_session *s;
    cid_state *c;
    visibility vis;
    uint32_t combo, again;
    xid_t xid;

    mgr_open(f, 4, XID_FIRST_NORMAL, 0, NULL, NULL);
    s = attach(f);
    c = txn_cids(s);
    begin(f, s);
    assert_int_equal(txn_visibility(s, &vis, &f->err), KEEL_OK);
    assert_ptr_equal(vis.cids, c);
    assert_int_equal(c->current, CID_FIRST);
    assert_int_equal(c->reading, CID_ALL);
    /* Nothing written: still command 0. */
    assert_int_equal(cid_next(c, &f->err), KEEL_OK);
    assert_int_equal(c->current, CID_FIRST);
    assert_int_equal(txn_assign_xid(s, &xid, &f->err), KEEL_OK);
    assert_int_equal(cid_stamp(c), CID_FIRST);
    assert_int_equal(cid_next(c, &f->err), KEEL_OK);
    assert_int_equal(c->current, CID_FIRST + 1);
    assert_int_equal(cid_stamp(c), CID_FIRST + 1);
    for (cid_t i = 0; i < 3000; i++) {
        assert_int_equal(cid_combo(c, i, i + 7, &combo, &f->err), KEEL_OK);
        assert_int_equal(combo, i);
    }
    assert_int_equal(cid_combo(c, 5, 12, &again, &f->err), KEEL_OK);
    assert_int_equal(again, 5);
    for (uint32_t i = 0; i < 3000; i += 97) {
        cid_pair p = cid_combo_pair(c, i);
        assert_int_equal(p.cmin, i);
        assert_int_equal(p.cmax, i + 7);
    }
    /* An id it does not hold reads as command 0, not out of bounds. */
    assert_int_equal(cid_combo_pair(c, 5000).cmax, CID_FIRST);
    /* The last command: no further one. */
    c->current = CID_LAST;
    (void)cid_stamp(c);
    assert_int_equal(cid_next(c, &f->err), KEEL_EEXHAUSTED);
    assert_int_equal(c->current, CID_LAST);
    c->reading = 4;
    commit(f, s);
    assert_int_equal(c->current, CID_FIRST);
    assert_int_equal(c->reading, CID_ALL);
    assert_int_equal(c->npairs, 0);
    /* A read-only transaction leaves what its reading set for it. */
    begin(f, s);
    c->reading = 3;
    commit(f, s);
    assert_int_equal(c->reading, 3);
    c->reading = CID_ALL;
    begin(f, s);
    assert_int_equal(txn_assign_xid(s, &xid, &f->err), KEEL_OK);
    assert_int_equal(cid_combo(c, 1, 2, &combo, &f->err), KEEL_OK);
    assert_int_equal(combo, 0);
    txn_abort(s, NULL);
    assert_int_equal(c->npairs, 0);
    detach(f, s);
}

static void test_readonly_takes_no_xid(void **state)
{
    fixture *f = *state;
    txn_session *s, *r;

    mgr_open(f, 4, XID_FIRST_NORMAL, 0, NULL, NULL);
    s = attach(f);
    r = attach(f);
    begin(f, r);
    commit(f, r);
    for (int i = 0; i < 10; i++) {
        begin(f, s);
        assert_int_equal(txn_current_xid(s), XID_INVALID);
        assert_non_null(txn_snapshot(s));
        if (i % 2)
            commit(f, s);
        else
            txn_abort(s, NULL);
    }
    assert_int_equal(txn_mgr_next_xid(f->m), XID_FIRST_NORMAL);
    assert_int_equal(clog_npages(txn_mgr_clog(f->m)), 0); /* log untouched */
    assert_int_equal(stats_of(s).readonly_ends, 10);
    assert_int_equal(stats_of(s).commits + stats_of(s).aborts, 0);
    /* No completion was counted: r's snapshot is still good. */
    begin(f, r);
    assert_int_equal(stats_of(r).snapshots_reused, 1);
    commit(f, r);
    detach(f, s);
    detach(f, r);
}

/* ---- snapshots --------------------------------------------------------- */

static void assert_xip(const snapshot *sn, const xid_t *want, uint32_t n)
{
    assert_int_equal(sn->nxip, n);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(sn->xip[i], want[i]);
}

static void test_snapshot_contents(void **state)
{
    fixture *f = *state;
    txn_session *a, *b, *c, *d, *e, *r;
    const snapshot *sn;
    procarray *pa;
    xid_t xa, xb, xc, xd, xe;

    mgr_open(f, 8, XID_FIRST_NORMAL, 0, NULL, NULL);
    pa = txn_mgr_procarray(f->m);
    a = attach(f);
    b = attach(f);
    c = attach(f);
    d = attach(f);
    e = attach(f);
    r = attach(f);

    /* Nothing ever ran: empty, xmin == xmax == the next xid. */
    begin(f, r);
    sn = txn_snapshot(r);
    assert_int_equal(sn->xmax, XID_FIRST_NORMAL);
    assert_int_equal(sn->xmin, XID_FIRST_NORMAL);
    assert_int_equal(sn->nxip, 0);
    commit(f, r);

    xc = writer(f, c); /* 3: running */
    xa = writer(f, a); /* 4: running */
    xb = writer(f, b); /* 5: commits */
    xd = writer(f, d); /* 6: aborts */
    commit(f, b);
    txn_abort(d, NULL);
    xe = writer(f, e); /* 7: running, assigned after 6 ended */
    assert_true(xc < xa && xa < xb && xb < xd && xd < xe);

    begin(f, r);
    sn = txn_snapshot(r);
    assert_int_equal(sn->xmax, xd + 1); /* latest ended + 1 */
    assert_int_equal(sn->xmin, xc);
    assert_int_equal(sn->own_xid, XID_INVALID);
    assert_xip(sn, (xid_t[]){xc, xa}, 2); /* ascending; e >= xmax */
    assert_true(snapshot_running(sn, xc));
    assert_true(snapshot_running(sn, xa));
    assert_false(snapshot_running(sn, xb));
    assert_false(snapshot_running(sn, xd));
    assert_true(snapshot_running(sn, xe));
    /* The snapshot's xmin is advertised in r's slot, and withdrawn when
     * the transaction ends. */
    assert_int_equal(procarray_get_xmin(pa, txn_session_slot(r)), xc);
    commit(f, r);
    assert_int_equal(procarray_get_xmin(pa, txn_session_slot(r)), 0);

    /* Own xid: a (running) refreshes its snapshot; a is not in it. */
    assert_int_equal(txn_refresh_snapshot(a, &f->err), KEEL_OK);
    sn = txn_snapshot(a);
    assert_int_equal(sn->own_xid, xa);
    assert_xip(sn, (xid_t[]){xc}, 1);
    assert_false(snapshot_running(sn, xa));
    assert_true(snapshot_running(sn, xc));

    /* c commits, a aborts: recomputed, nothing running below xmax; e is
     * still past it, since nothing above xd has ended. */
    commit(f, c);
    txn_abort(a, NULL);
    begin(f, r);
    sn = txn_snapshot(r);
    assert_int_equal(sn->xmax, xd + 1);
    assert_int_equal(sn->nxip, 0);
    assert_int_equal(sn->xmin, sn->xmax);
    assert_true(snapshot_running(sn, xe));
    commit(f, r);
    commit(f, e);
    begin(f, r);
    sn = txn_snapshot(r);
    assert_int_equal(sn->xmax, xe + 1);
    assert_false(snapshot_running(sn, xe));
    commit(f, r);

    /* Statuses as the oracle reports them. */
    assert_int_equal(status_of(f, r, xa), XID_STATUS_ABORTED);
    assert_int_equal(status_of(f, r, xb), XID_STATUS_COMMITTED);
    assert_int_equal(status_of(f, r, xc), XID_STATUS_COMMITTED);
    assert_int_equal(status_of(f, r, xd), XID_STATUS_ABORTED);
    assert_int_equal(status_of(f, r, xe), XID_STATUS_COMMITTED);

    detach(f, a);
    detach(f, b);
    detach(f, c);
    detach(f, d);
    detach(f, e);
    detach(f, r);
}

/*
 * More transactions running than a snapshot sorts by insertion (32): 48
 * writers given xids in an order unrelated to their slots, every fourth
 * ended (committed or aborted), and one more committed after them all.
 * The snapshot holds exactly the 36 still running, ascending, and says
 * so of each; the ended ones and the last committer it sees as ended.
 */
static void test_snapshot_many_running(void **state)
{
    enum { N = 48 };
    fixture *f = *state;
    txn_session *w[N], *r, *z;
    xid_t xid[N], want[N], xz;
    const snapshot *sn;
    uint32_t nwant = 0;
    bool ended[N] = {false};

    mgr_open(f, N + 2, XID_FIRST_NORMAL, 0, NULL, NULL);
    for (int i = 0; i < N; i++)
        w[i] = attach(f); /* the first 16 also remembered for teardown */
    r = attach(f);
    z = attach(f);
    /* Slot i gets its xid at step (i * 29) % N: a permutation. */
    for (int step = 0; step < N; step++)
        for (int i = 0; i < N; i++)
            if ((i * 29) % N == step)
                xid[i] = writer(f, w[i]);
    for (int i = 0; i < N; i += 4) {
        if (i % 8 == 0)
            commit(f, w[i]);
        else
            txn_abort(w[i], NULL);
        ended[i] = true;
    }
    xz = writer(f, z);
    commit(f, z);
    for (int step = 0; step < N; step++)
        for (int i = 0; i < N; i++)
            if ((i * 29) % N == step && !ended[i])
                want[nwant++] = xid[i];
    assert_int_equal(nwant, N - N / 4);

    begin(f, r);
    sn = txn_snapshot(r);
    assert_xip(sn, want, nwant);
    assert_int_equal(sn->xmin, want[0]);
    assert_int_equal(sn->xmax, xz + 1);
    assert_false(snapshot_running(sn, xz));
    for (int i = 0; i < N; i++)
        if (snapshot_running(sn, xid[i]) == ended[i])
            fail_msg("xid %u (slot %d): running %d, ended %d", xid[i], i,
                     snapshot_running(sn, xid[i]), ended[i]);
    commit(f, r);

    for (int i = 0; i < N; i++)
        if (!ended[i])
            commit(f, w[i]);
    for (int i = 0; i < N; i++)
        detach(f, w[i]);
    detach(f, r);
    detach(f, z);
}

static void test_snapshot_reuse(void **state)
{
    fixture *f = *state;
    txn_session *r, *w;
    const snapshot *sn;
    procarray *pa;
    xid_t x, y;

    mgr_open(f, 4, XID_FIRST_NORMAL, 0, NULL, NULL);
    pa = txn_mgr_procarray(f->m);
    r = attach(f);
    w = attach(f);
    x = writer(f, w); /* running throughout the first part */

    begin(f, r);
    assert_int_equal(stats_of(r).snapshots_taken, 1);
    commit(f, r);
    /* Nothing ended: reused, xmin advertised again. */
    begin(f, r);
    assert_int_equal(stats_of(r).snapshots_taken, 1);
    assert_int_equal(stats_of(r).snapshots_reused, 1);
    sn = txn_snapshot(r);
    assert_int_equal(sn->xmax, XID_FIRST_NORMAL);
    assert_true(snapshot_running(sn, x));
    assert_int_equal(procarray_get_xmin(pa, txn_session_slot(r)), sn->xmin);
    assert_int_equal(txn_refresh_snapshot(r, &f->err), KEEL_OK);
    assert_int_equal(stats_of(r).snapshots_reused, 2);
    commit(f, r);

    /* w ends: the next snapshot is recomputed and sees x finished. */
    commit(f, w);
    begin(f, r);
    assert_int_equal(stats_of(r).snapshots_taken, 2);
    sn = txn_snapshot(r);
    assert_int_equal(sn->xmax, x + 1);
    assert_false(snapshot_running(sn, x));
    commit(f, r);

    /* Starting a writer is not an ending: reuse; its abort is: recompute. */
    y = writer(f, w);
    begin(f, r);
    assert_int_equal(stats_of(r).snapshots_reused, 3);
    assert_true(snapshot_running(txn_snapshot(r), y));
    commit(f, r);
    txn_abort(w, NULL);
    begin(f, r);
    assert_int_equal(stats_of(r).snapshots_taken, 3);
    assert_int_equal(txn_snapshot(r)->xmax, y + 1);
    commit(f, r);

    /* Within a transaction, a refresh after another commit recomputes. */
    begin(f, r);
    assert_int_equal(stats_of(r).snapshots_reused, 4);
    y = writer(f, w);
    commit(f, w);
    assert_true(snapshot_running(txn_snapshot(r), y));
    assert_int_equal(txn_refresh_snapshot(r, &f->err), KEEL_OK);
    assert_false(snapshot_running(txn_snapshot(r), y));
    assert_int_equal(stats_of(r).snapshots_taken, 4);
    commit(f, r);

    /* A session's own commit invalidates its own cached snapshot. */
    x = writer(f, r);
    commit(f, r);
    begin(f, r);
    assert_false(snapshot_running(txn_snapshot(r), x));
    assert_int_equal(txn_snapshot(r)->own_xid, XID_INVALID);
    commit(f, r);
    detach(f, r);
    detach(f, w);
}

/* ---- sessions ---------------------------------------------------------- */

static void test_max_sessions(void **state)
{
    fixture *f = *state;
    txn_session *s[3], *extra = (txn_session *)&extra;
    procarray *pa;

    mgr_open(f, 3, XID_FIRST_NORMAL, 0, NULL, NULL);
    pa = txn_mgr_procarray(f->m);
    assert_int_equal(procarray_max_sessions(pa), 3);
    assert_int_equal(procarray_high_water(pa), 0);
    for (int i = 0; i < 3; i++) {
        s[i] = attach(f);
        assert_int_equal(txn_session_slot(s[i]), (uint32_t)i);
    }
    assert_int_equal(procarray_high_water(pa), 3);
    assert_int_equal(txn_session_attach(f->m, f->bs, &extra, &f->err),
                     KEEL_EEXHAUSTED);
    assert_null(extra);
    assert_non_null(strstr(f->err.msg, "3"));
    assert_non_null(strstr(f->err.msg, "max_sessions"));

    detach(f, s[2]);
    assert_int_equal(procarray_high_water(pa), 2);
    detach(f, s[0]);
    assert_int_equal(procarray_high_water(pa), 2); /* slot 1 still used */
    s[0] = attach(f);
    assert_int_equal(txn_session_slot(s[0]), 0);
    s[2] = attach(f);
    assert_int_equal(procarray_high_water(pa), 3);
    for (int i = 0; i < 3; i++)
        detach(f, s[i]);
    assert_int_equal(procarray_high_water(pa), 0);

    /* Bad arguments. */
    txn_mgr *m2 = (txn_mgr *)&m2;
    assert_int_equal(txn_mgr_create(f->pool, REL_CLOG, 0, f->layout,
                                    XID_FIRST_NORMAL, 0, NULL, NULL, &m2,
                                    &f->err),
                     KEEL_EINVAL);
    assert_null(m2);
    assert_int_equal(txn_mgr_create(f->pool, REL_CLOG, 4, f->layout, 1, 0, NULL,
                                    NULL, &m2, &f->err),
                     KEEL_EINVAL);
    assert_int_equal(txn_mgr_create(f->pool, REL_CLOG + 1, 4, f->layout,
                                    XID_FIRST_NORMAL, 0, NULL, NULL, &m2,
                                    &f->err),
                     KEEL_ENOENT);
    assert_null(m2);
}

static void test_layouts(void **state)
{
    fixture *f = *state;
    procarray *pa;

    (void)state;
    assert_int_equal(procarray_create(402, PROCARRAY_PADDED, &pa, &f->err),
                     KEEL_OK);
    assert_int_equal(procarray_get_layout(pa), PROCARRAY_PADDED);
    procarray_destroy(pa);
    assert_int_equal(procarray_create(402, PROCARRAY_PACKED, &pa, &f->err),
                     KEEL_OK);
    assert_int_equal(procarray_get_layout(pa), PROCARRAY_PACKED);
    procarray_destroy(pa);
    assert_int_equal(procarray_create(4, (procarray_layout)7, &pa, &f->err),
                     KEEL_EINVAL);
    assert_int_equal(procarray_create(PROCARRAY_MAX_SESSIONS + 1,
                                      PROCARRAY_PADDED, &pa, &f->err),
                     KEEL_EINVAL);
    assert_int_equal(sizeof(procarray_slot), CACHE_LINE_SIZE);
    assert_int_equal(sizeof(procarray_packed_slot), 12);
}

/* ---- xid reservation --------------------------------------------------- */

typedef struct reserver {
    int calls;
    xid_t last_limit;
    int fail; /* status to fail with, or KEEL_OK */
} reserver;

static int reserve_cb(void *ctx, xid_t new_limit, kerr *err)
{
    reserver *r = ctx;

    r->calls++;
    r->last_limit = new_limit;
    if (r->fail != KEEL_OK)
        return kerr_set(err, r->fail, "control file: cannot record %u",
                        new_limit);
    return KEEL_OK;
}

static void test_xid_reservation(void **state)
{
    fixture *f = *state;
    reserver rv = {0};
    txn_session *s;
    xid_t x;

    mgr_open(f, 2, XID_FIRST_NORMAL, 5, reserve_cb, &rv);
    s = attach(f);
    assert_int_equal(writer(f, s), 3);
    commit(f, s);
    assert_int_equal(writer(f, s), 4);
    commit(f, s);
    assert_int_equal(rv.calls, 0); /* below the limit */

    /* At the limit: the hook must record a higher one first; if it cannot,
     * no xid is handed out and the transaction goes on without one. */
    rv.fail = KEEL_EIO;
    begin(f, s);
    assert_int_equal(txn_assign_xid(s, &x, &f->err), KEEL_EIO);
    assert_non_null(strstr(f->err.msg, "control file"));
    assert_int_equal(rv.calls, 1);
    assert_int_equal(rv.last_limit, 5 + TXN_XID_RESERVE_CHUNK);
    assert_int_equal(txn_current_xid(s), XID_INVALID);
    assert_true(txn_in_progress(s));
    assert_int_equal(txn_mgr_next_xid(f->m), 5);
    assert_int_equal(txn_mgr_xid_limit(f->m), 5);
    rv.fail = KEEL_OK;
    assert_int_equal(assign(f, s), 5);
    assert_int_equal(rv.calls, 2);
    assert_int_equal(txn_mgr_xid_limit(f->m), 5 + TXN_XID_RESERVE_CHUNK);
    commit(f, s);
    assert_int_equal(writer(f, s), 6);
    commit(f, s);
    assert_int_equal(rv.calls, 2); /* the new limit covers it */
    detach(f, s);
    txn_mgr_destroy(f->m);
    f->m = NULL;

    /* Reopen from the recorded limit, as the engine would after a crash:
     * no xid below it is handed out again. */
    rv = (reserver){0};
    mgr_open(f, 2, 5 + TXN_XID_RESERVE_CHUNK, 5 + TXN_XID_RESERVE_CHUNK,
             reserve_cb, &rv);
    s = attach(f);
    assert_int_equal(writer(f, s), 5 + TXN_XID_RESERVE_CHUNK);
    assert_int_equal(rv.calls, 1);
    commit(f, s);
    /* 4 committed in the first run, 7 was never handed out. */
    assert_int_equal(status_of(f, s, 4), XID_STATUS_COMMITTED);
    assert_int_equal(status_of(f, s, 7), XID_STATUS_ABORTED);
    detach(f, s);
    txn_mgr_destroy(f->m);
    f->m = NULL;

    /* Near the end of the xid space the limit is capped ... (the hook
     * fails so that no commit-log page that far out is created) */
    rv = (reserver){.fail = KEEL_EIO};
    mgr_open(f, 2, TXN_XID_LAST - 10, TXN_XID_LAST - 10, reserve_cb, &rv);
    s = attach(f);
    begin(f, s);
    assert_int_equal(txn_assign_xid(s, &x, &f->err), KEEL_EIO);
    assert_int_equal(rv.last_limit, TXN_XID_LAST + 1);
    txn_abort(s, NULL);
    detach(f, s);
    txn_mgr_destroy(f->m);
    f->m = NULL;

    /* ... and past the last xid nothing more is handed out. */
    mgr_open(f, 2, TXN_XID_LAST + 1, 0, NULL, NULL);
    s = attach(f);
    begin(f, s);
    assert_int_equal(txn_assign_xid(s, &x, &f->err), KEEL_EEXHAUSTED);
    assert_non_null(strstr(f->err.msg, "wraparound"));
    assert_int_equal(txn_current_xid(s), XID_INVALID);
    commit(f, s); /* it can still end, read-only */
    detach(f, s);
    txn_mgr_destroy(f->m);
    f->m = NULL;
    assert_int_equal(txn_mgr_create(f->pool, REL_CLOG, 2, f->layout,
                                    TXN_XID_LAST + 2, 0, NULL, NULL, &f->m,
                                    &f->err),
                     KEEL_EINVAL);
}

/* ---- the status oracle ------------------------------------------------- */

static void test_oracle_and_crash(void **state)
{
    fixture *f = *state;
    txn_session *s, *o;
    visibility vis;
    xid_status st;
    xid_t x, y;

    mgr_open(f, 4, XID_FIRST_NORMAL, 0, NULL, NULL);
    s = attach(f);
    o = attach(f);
    assert_int_equal(status_of(f, o, XID_FROZEN), XID_STATUS_COMMITTED);
    assert_int_equal(status_of(f, o, XID_INVALID), XID_STATUS_COMMITTED);

    /* Published, then the session goes away without ending it. */
    x = writer(f, s);
    assert_int_equal(status_of(f, o, x), XID_STATUS_IN_PROGRESS);
    assert_int_equal(clog_status(f, x), XID_STATUS_IN_PROGRESS);
    detach(f, s);
    assert_int_equal(status_of(f, o, x), XID_STATUS_ABORTED);
    assert_int_equal(clog_status(f, x), XID_STATUS_ABORTED);
    begin(f, o);
    assert_false(snapshot_running(txn_snapshot(o), x)); /* it ended */
    commit(f, o);

    /* An xid the log never heard of and nobody runs: crashed (or from a
     * run that died) reads as aborted. */
    s = attach(f);
    y = writer(f, s);
    assert_int_equal(clog_status(f, y + 50), XID_STATUS_IN_PROGRESS);
    assert_int_equal(status_of(f, o, y + 50), XID_STATUS_ABORTED);

    /* txn_visibility hands out the snapshot and this oracle. */
    assert_int_equal(txn_visibility(o, &vis, &f->err), KEEL_EINVAL);
    begin(f, o);
    assert_int_equal(txn_visibility(o, &vis, &f->err), KEEL_OK);
    assert_ptr_equal(vis.snap, txn_snapshot(o));
    assert_int_equal(vis.status(vis.status_ctx, y, &st, &f->err), KEEL_OK);
    assert_int_equal(st, XID_STATUS_IN_PROGRESS);
    assert_true(snapshot_running(vis.snap, y));
    commit(f, s);
    assert_int_equal(vis.status(vis.status_ctx, y, &st, &f->err), KEEL_OK);
    assert_int_equal(st, XID_STATUS_COMMITTED);
    assert_true(snapshot_running(vis.snap, y)); /* the snapshot is older */
    commit(f, o);
    detach(f, s);
    detach(f, o);
}

#ifdef KEEL_FAULT_INJECTION
/*
 * Transactions that end in the middle of a snapshot's scan, between the
 * slots it reads (the scan hook makes the interleaving exact).  y ends,
 * then x, which saw y's commit, ends; the scan read y's slot before and
 * x's slot after.  Taken as is, the scan would show x finished and y
 * running: x's effects without those of the commit they built on.
 */
typedef struct cut_ctx {
    fixture *f;
    int calls;
    txn_session *y, *x;                 /* first part */
    txn_session *w[TXN_SNAPSHOT_TRIES]; /* second part */
    bool x_saw_y;
    int errors;
} cut_ctx;

static void cut_hook(void *arg)
{
    cut_ctx *c = arg;
    kerr err;

    c->calls++;
    if (c->y != NULL && c->calls == 1) {
        xid_t xy = txn_current_xid(c->y);
        c->errors += txn_commit(c->y, &err) != KEEL_OK;
        c->errors += txn_refresh_snapshot(c->x, &err) != KEEL_OK;
        c->x_saw_y = !snapshot_running(txn_snapshot(c->x), xy);
        c->errors += txn_commit(c->x, &err) != KEEL_OK;
    } else if (c->y == NULL && c->calls <= TXN_SNAPSHOT_TRIES) {
        /* One ending per lock-free scan; the held scan that follows must
         * not end anything (it would wait for itself). */
        c->errors += txn_commit(c->w[c->calls - 1], &err) != KEEL_OK;
    }
}

static void test_consistent_cut(void **state)
{
    fixture *f = *state;
    cut_ctx c = {.f = f};
    txn_session *r, *y, *x, *z;
    procarray *pa;
    const snapshot *sn;
    xid_t xx, xy, xz, xw[TXN_SNAPSHOT_TRIES];

    mgr_open(f, 8, XID_FIRST_NORMAL, 0, NULL, NULL);
    pa = txn_mgr_procarray(f->m);
    r = attach(f); /* slot 0 */
    y = attach(f); /* slot 1: read before the hook runs */
    x = attach(f); /* slot 2: read after */
    z = attach(f);
    assert_int_equal(txn_session_slot(y), 1);
    assert_int_equal(txn_session_slot(x), 2);
    xx = writer(f, x);
    xy = writer(f, y);
    writer(f, z);
    commit(f, z); /* xmax is now above x and y */

    c.y = y;
    c.x = x;
    procarray_set_scan_hook(pa, 1, cut_hook, &c);
    begin(f, r);
    procarray_set_scan_hook(pa, 0, NULL, NULL);
    assert_int_equal(c.errors, 0);
    assert_true(c.x_saw_y);
    sn = txn_snapshot(r);
    assert_false(snapshot_running(sn, xx));
    assert_false(snapshot_running(sn, xy)); /* the cut is consistent */
    assert_int_equal(sn->nxip, 0);
    assert_int_equal(stats_of(r).snapshot_retries, 1);
    assert_int_equal(stats_of(r).snapshots_serialized, 0);
    commit(f, r);

    /* Endings during every lock-free scan: the snapshot holds them off. */
    txn_session *w[TXN_SNAPSHOT_TRIES];
    for (int i = 0; i < TXN_SNAPSHOT_TRIES; i++) {
        w[i] = attach(f);
        xw[i] = writer(f, w[i]);
        c.w[i] = w[i];
    }
    xz = writer(f, z);
    commit(f, z); /* something ended: r cannot reuse its snapshot */
    c.y = c.x = NULL;
    c.calls = 0;
    procarray_set_scan_hook(pa, 1, cut_hook, &c);
    begin(f, r);
    procarray_set_scan_hook(pa, 0, NULL, NULL);
    assert_int_equal(c.errors, 0);
    assert_int_equal(c.calls, TXN_SNAPSHOT_TRIES + 1);
    assert_int_equal(stats_of(r).snapshot_retries, 1 + TXN_SNAPSHOT_TRIES);
    assert_int_equal(stats_of(r).snapshots_serialized, 1);
    sn = txn_snapshot(r);
    for (int i = 0; i < TXN_SNAPSHOT_TRIES; i++)
        assert_false(snapshot_running(sn, xw[i]));
    assert_int_equal(sn->xmax, xz + 1);
    commit(f, r);
    /* Endings after a held scan take the fast path again. */
    writer(f, w[0]);
    commit(f, w[0]);
    begin(f, r);
    assert_int_equal(stats_of(r).snapshots_serialized, 1);
    commit(f, r);
}

static void test_commit_failure_rolls_back(void **state)
{
    fixture *f = *state;
    txn_session *s, *o;
    xid_t x;

    mgr_open(f, 4, XID_FIRST_NORMAL, 0, NULL, NULL);
    s = attach(f);
    o = attach(f);
    x = writer(f, s);
    /* Push the log page out of the pool so that commit must read it. */
    assert_int_equal(buf_checkpoint(f->bs), KEEL_OK);
    assert_int_equal(buf_drop_rel(f->bs, REL_CLOG, 0), KEEL_OK);
    fault_arm(FAULT_OP_READ, FAULT_EIO, 0, 1, REL_CLOG);
    assert_int_equal(txn_commit(s, &f->err), KEEL_EIO);
    assert_non_null(strstr(f->err.msg, "rolled back"));
    fault_disarm_all();
    assert_false(txn_in_progress(s));
    assert_int_equal(txn_current_xid(s), XID_INVALID);
    assert_int_equal(status_of(f, o, x), XID_STATUS_ABORTED);
    begin(f, o);
    assert_false(snapshot_running(txn_snapshot(o), x));
    commit(f, o);
    /* The session goes on. */
    assert_int_equal(writer(f, s), x + 1);
    commit(f, s);
    assert_int_equal(status_of(f, o, x + 1), XID_STATUS_COMMITTED);
    detach(f, s);
    detach(f, o);
}
#else
static void test_consistent_cut(void **state)
{
    (void)state;
    skip();
}

static void test_commit_failure_rolls_back(void **state)
{
    (void)state;
    skip();
}
#endif

/*
 * The horizon: latest_completed + 1 with nothing running; held back by a
 * published snapshot's xmin and by a running xid; a snapshot reused after
 * its session's transaction ended holds it back again.
 */
static void test_horizon(void **state)
{
    fixture *f = *state;
    txn_session *a, *b, *c;
    xid_t x1, x2, x3;

    if (!membarrier_ready()) {
        /* Without membarrier(2) there is no horizon, and nothing is ever
         * reclaimed. */
        mgr_open(f, 8, XID_FIRST_NORMAL, XID_FIRST_NORMAL + 1000, NULL, NULL);
        assert_int_equal(txn_horizon(f->m), XID_INVALID);
        skip();
    }
    mgr_open(f, 8, XID_FIRST_NORMAL, XID_FIRST_NORMAL + 1000, NULL, NULL);
    a = attach(f);
    b = attach(f);
    c = attach(f);
    assert_int_equal(txn_horizon(f->m), XID_FIRST_NORMAL);
    x1 = writer(f, a);
    /* a's snapshot, taken before its xid, holds the horizon. */
    assert_int_equal(txn_horizon(f->m), XID_FIRST_NORMAL);
    commit(f, a);
    assert_int_equal(txn_horizon(f->m), x1 + 1);
    /* b reads; c writes and commits past it. */
    begin(f, b);
    assert_int_equal(txn_snapshot(b)->xmin, x1 + 1);
    x2 = writer(f, c);
    commit(f, c);
    assert_int_equal(txn_horizon(f->m), x1 + 1);
    commit(f, b);
    assert_int_equal(txn_horizon(f->m), x2 + 1);
    /* A running writer: c's snapshot and then a's, which sees x3 running. */
    x3 = writer(f, c);
    assert_int_equal(txn_horizon(f->m), x2 + 1);
    begin(f, a);
    assert_int_equal(txn_snapshot(a)->xmin, x3);
    commit(f, c);
    assert_int_equal(txn_horizon(f->m), x3);
    commit(f, a);
    assert_int_equal(txn_horizon(f->m), x3 + 1);
    /* b's snapshot is reused (no ending since), its xmin published again. */
    begin(f, b);
    assert_int_equal(txn_snapshot(b)->xmin, x3 + 1);
    commit(f, b);
    begin(f, b);
    assert_int_equal(stats_of(b).snapshots_reused, 1);
    assert_int_equal(txn_horizon(f->m), x3 + 1);
    (void)writer(f, a);
    commit(f, a);
    assert_int_equal(txn_horizon(f->m), x3 + 1);
    commit(f, b);
    assert_int_equal(txn_horizon(f->m), x3 + 2);
    /* The recent horizon: computed when the last one is not enough (and
     * the wait after the last has passed: at most
     * TXN_HORIZON_INTERVAL_MAX_NS), else the last one, which stays valid. */
    assert_int_equal(txn_horizon_recent(f->m, x3 + 2), x3 + 2);
    x1 = writer(f, a);
    commit(f, a);
    assert_int_equal(txn_horizon(f->m), x1 + 1);
    assert_int_equal(txn_horizon_recent(f->m, x3), x3 + 2);
    clock_sleep_us(TXN_HORIZON_INTERVAL_MAX_NS / 1000 + 1000);
    assert_int_equal(txn_horizon_recent(f->m, x1), x1 + 1);
}

#ifdef KEEL_FAULT_INJECTION
/* In the window between a snapshot's publication and its confirmation:
 * the first time, end `ending` and compute a horizon. */
typedef struct window_ctx {
    fixture *f;
    txn_session *ending;
    xid_t horizon;
    int calls, errors;
} window_ctx;

static void window_hook(void *arg)
{
    window_ctx *c = arg;
    kerr err;

    if (c->calls++ == 0) {
        c->errors += txn_commit(c->ending, &err) != KEEL_OK;
        c->horizon = txn_horizon(c->f->m);
    }
}

/* Begins s's transaction with x ending, and a horizon computed, in the
 * window; checks the horizon and that the snapshot kept sees x ended. */
static void begin_in_window(fixture *f, window_ctx *c, txn_session *s, xid_t x)
{
    const snapshot *sn;

    c->calls = 0;
    txn_set_publish_hook(f->m, window_hook, c);
    begin(f, s);
    txn_set_publish_hook(f->m, NULL, NULL);
    assert_int_equal(c->errors, 0);
    assert_int_equal(c->calls, 2);
    assert_true(c->horizon <= x);
    sn = txn_snapshot(s);
    assert_false(snapshot_running(sn, x));
    assert_true(c->horizon <= sn->xmin);
}

/*
 * A transaction that ends, and a horizon computed, after a snapshot has
 * published its xmin but before it confirms itself: the horizon sees the
 * published xmin, and the snapshot, seeing the ending, scans again, so the
 * snapshot it keeps has the ended xid finished and an xmin at or above the
 * horizon.  Both for a new scan and for a reuse of the last snapshot.
 */
static void test_horizon_window(void **state)
{
    fixture *f = *state;
    window_ctx c = {.f = f};
    txn_session *s, *w;
    xid_t x;

    mgr_open(f, 8, XID_FIRST_NORMAL, XID_FIRST_NORMAL + 1000, NULL, NULL);
    if (!membarrier_ready())
        skip();
    s = attach(f);
    w = attach(f);
    x = writer(f, w);
    c.ending = w;
    begin_in_window(f, &c, s, x);
    assert_int_equal(stats_of(s).snapshot_retries, 1);
    commit(f, s);

    /* s's next snapshot would be its last one again (nothing ended since);
     * w's new transaction ends in the window. */
    x = writer(f, w);
    begin(f, s);
    assert_true(snapshot_running(txn_snapshot(s), x));
    commit(f, s);
    begin_in_window(f, &c, s, x);
    assert_int_equal(stats_of(s).snapshots_reused, 1);
    commit(f, s);
}
#else
static void test_horizon_window(void **state)
{
    (void)state;
    skip();
}
#endif

/* ---- stress ------------------------------------------------------------ */

#define ST_WRITERS 4
#define ST_READERS 2
#define ST_THREADS (ST_WRITERS + ST_READERS)
/*
 * Idle slots between the threads' slots: they make each scan long, so
 * that transactions end while one is in progress, between the slots it
 * reads; a scan that is not a consistent cut then shows.
 */
#define ST_GAP    1000
#define ST_MAX    (ST_THREADS * (ST_GAP + 1) + 2)
#define ST_CAP    (1u << 21) /* xids tracked */
#define ST_WINDOW 128        /* xids below xmax each snapshot checks */

enum { INTENT_NONE = 0, INTENT_COMMIT = 1, INTENT_ABORT = 2 };

typedef struct stress {
    txn_mgr *m;
    buf_pool *pool;
    uint64_t deadline_ns;
    atomic_u32 stop;
    /* Per xid, written by its writer, read by everyone. */
    atomic_u32 *intent;    /* INTENT_*, stored before ending */
    atomic_u32 *dep;       /* a commit the transaction saw, before intent */
    atomic_u64 *commit_at; /* commit_seq after its commit returned */
    atomic_u64 commit_seq;
    atomic_u32 last_committed;
    /* Results. */
    tu_failures fail;
    atomic_u64 snapshots_checked, xids_checked, deps_checked;
    atomic_u64 commits, aborts, crashes, retries, held;
    atomic_u32 horizon; /* the highest txn_horizon() so far */
    atomic_u64 horizons, horizon_checks;
    int reserve_calls; /* under the assignment lock */
} stress;

static bool st_stopping(stress *st)
{
    if (atomic_load_relaxed(&st->stop) || tu_failed(&st->fail))
        return true;
    if (clock_now_ns() >= st->deadline_ns) {
        atomic_store_relaxed(&st->stop, 1);
        return true;
    }
    return false;
}

static int st_reserve(void *ctx, xid_t new_limit, kerr *err)
{
    stress *st = ctx;

    (void)new_limit;
    (void)err;
    st->reserve_calls++;
    return KEEL_OK;
}

/* The snapshot's shape, and its xmin advertised in the session's slot. */
static void st_check_shape(stress *st, txn_session *s, const snapshot *sn,
                           xid_t own)
{
    if (sn->xmin > sn->xmax || sn->nxip > ST_MAX ||
        sn->xmin != (sn->nxip ? sn->xip[0] : sn->xmax))
        tu_fail(&st->fail, "bad snapshot: xmin %u xmax %u nxip %u", sn->xmin,
                sn->xmax, sn->nxip);
    for (uint32_t i = 0; i < sn->nxip; i++) {
        xid_t x = sn->xip[i];
        if (x < sn->xmin || x >= sn->xmax || x == own ||
            (i > 0 && x <= sn->xip[i - 1]))
            tu_fail(&st->fail, "bad xip[%u] = %u (xmin %u xmax %u own %u)", i,
                    x, sn->xmin, sn->xmax, own);
    }
    if (sn->own_xid != own || (own != XID_INVALID && snapshot_running(sn, own)))
        tu_fail(&st->fail, "own xid %u: snapshot says own %u, running %d", own,
                sn->own_xid, (int)snapshot_running(sn, own));
    if (procarray_get_xmin(txn_mgr_procarray(st->m), txn_session_slot(s)) !=
        sn->xmin)
        tu_fail(&st->fail, "advertised xmin differs from the snapshot's %u",
                sn->xmin);
    /* Nothing handed out after the snapshot was taken can be below xmax. */
    if (sn->xmax > txn_mgr_next_xid(st->m))
        tu_fail(&st->fail, "xmax %u beyond the next xid %u", sn->xmax,
                txn_mgr_next_xid(st->m));
}

static xid_status st_status(stress *st, txn_session *s, xid_t x)
{
    xid_status status = XID_STATUS_IN_PROGRESS;
    kerr err;

    if (txn_xid_status(s, x, &status, &err) != KEEL_OK)
        tu_fail(&st->fail, "status of %u: %s", x, err.msg);
    return status;
}

/* Visible to sn: finished before it, and committed. */
static bool st_visible(stress *st, txn_session *s, const snapshot *sn, xid_t x)
{
    return !snapshot_running(sn, x) &&
           st_status(st, s, x) == XID_STATUS_COMMITTED;
}

/*
 * The reader's checks of one snapshot, taken after commit_seq read `seq`,
 * against the same session's previous one (prev, NULL for none).
 */
static void st_check_window(stress *st, txn_session *s, const snapshot *sn,
                            uint64_t seq, const snapshot *prev)
{
    xid_t lo = sn->xmax > ST_WINDOW + XID_FIRST_NORMAL ? sn->xmax - ST_WINDOW
                                                       : XID_FIRST_NORMAL;
    uint64_t checked = 0;

    for (xid_t x = lo; x < sn->xmax && x < ST_CAP; x++) {
        bool running = snapshot_running(sn, x);
        uint64_t at = atomic_load_acquire(&st->commit_at[x]);

        checked++;
        if (at != 0 && at <= seq && running)
            tu_fail(&st->fail,
                    "xid %u committed before the snapshot began but is "
                    "running in it (xmin %u xmax %u)",
                    x, sn->xmin, sn->xmax);
        if (prev != NULL && x < prev->xmax && !snapshot_running(prev, x) &&
            running)
            tu_fail(&st->fail,
                    "xid %u finished in a session's snapshot and "
                    "running in its next one",
                    x);
        if (running)
            continue;
        uint32_t intent = atomic_load_acquire(&st->intent[x]);
        xid_status status = st_status(st, s, x);
        if (intent == INTENT_NONE)
            tu_fail(&st->fail, "xid %u seen finished before it began to end",
                    x);
        else if (status == XID_STATUS_IN_PROGRESS)
            tu_fail(&st->fail,
                    "xid %u finished in the snapshot, in progress in "
                    "the oracle",
                    x);
        else if (status == XID_STATUS_COMMITTED && intent != INTENT_COMMIT)
            tu_fail(&st->fail, "aborted xid %u is visible", x);
        else if (intent == INTENT_COMMIT && status != XID_STATUS_COMMITTED)
            tu_fail(&st->fail, "committed xid %u reads as aborted", x);
        if (status == XID_STATUS_COMMITTED) {
            xid_t d = atomic_load_relaxed(&st->dep[x]);
            if (d != XID_INVALID) {
                atomic_fetch_add_explicit(&st->deps_checked, 1,
                                          memory_order_relaxed);
                if (!st_visible(st, s, sn, d))
                    tu_fail(&st->fail,
                            "xid %u is visible but %u, whose commit it "
                            "saw, is not (xmin %u xmax %u): not a "
                            "consistent cut",
                            x, d, sn->xmin, sn->xmax);
            }
        }
    }
    atomic_fetch_add_explicit(&st->xids_checked, checked, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->snapshots_checked, 1, memory_order_relaxed);
}

typedef struct st_thread {
    stress *st;
    unsigned id;
    pthread_t th;
} st_thread;

static void st_collect_stats(stress *st, txn_session *s)
{
    txn_stats ts;

    txn_session_stats(s, &ts);
    atomic_fetch_add(&st->retries, ts.snapshot_retries);
    atomic_fetch_add(&st->held, ts.snapshots_serialized);
}

static void *st_writer_main(void *arg)
{
    st_thread *t = arg;
    stress *st = t->st;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (t->id + 1);
    buf_session *bs = NULL;
    txn_session *s = NULL;
    kerr err;

    if (buf_session_create(st->pool, &bs, &err) != KEEL_OK ||
        txn_session_attach(st->m, bs, &s, &err) != KEEL_OK) {
        tu_fail(&st->fail, "writer %u: %s", t->id, err.msg);
        goto out;
    }
    while (!st_stopping(st)) {
        unsigned r = (unsigned)(tu_rand(&rng) % 100);
        xid_t seen = atomic_load_acquire(&st->last_committed);
        xid_t x;

        if (txn_begin(s, &err) != KEEL_OK) {
            tu_fail(&st->fail, "writer begin: %s", err.msg);
            break;
        }
        if (seen != XID_INVALID && !st_visible(st, s, txn_snapshot(s), seen))
            tu_fail(&st->fail, "xid %u committed before begin, not visible",
                    seen);
        st_check_shape(st, s, txn_snapshot(s), XID_INVALID);
        if (r < 10) { /* read-only */
            if (txn_commit(s, &err) != KEEL_OK)
                tu_fail(&st->fail, "read-only commit: %s", err.msg);
            continue;
        }
        if (txn_assign_xid(s, &x, &err) != KEEL_OK) {
            tu_fail(&st->fail, "assign: %s", err.msg);
            break;
        }
        if (x >= ST_CAP) {
            txn_abort(s, NULL);
            atomic_store(&st->stop, 1);
            break;
        }
        if (st_status(st, s, x) != XID_STATUS_IN_PROGRESS)
            tu_fail(&st->fail, "own xid %u not in progress", x);
        /* Read committed: see a later commit, and depend on it. */
        seen = atomic_load_acquire(&st->last_committed);
        if (txn_refresh_snapshot(s, &err) != KEEL_OK)
            tu_fail(&st->fail, "refresh: %s", err.msg);
        st_check_shape(st, s, txn_snapshot(s), x);
        if (seen != XID_INVALID) {
            if (!st_visible(st, s, txn_snapshot(s), seen))
                tu_fail(&st->fail,
                        "xid %u committed before a refresh, not "
                        "visible to it",
                        seen);
            atomic_store_relaxed(&st->dep[x], seen);
        }
        if (r < 75) {
            atomic_store_release(&st->intent[x], INTENT_COMMIT);
            if (txn_commit(s, &err) != KEEL_OK) {
                tu_fail(&st->fail, "commit of %u: %s", x, err.msg);
                break;
            }
            uint64_t at = atomic_fetch_add(&st->commit_seq, 1) + 1;
            atomic_store_release(&st->commit_at[x], at);
            atomic_store_release(&st->last_committed, x);
            atomic_fetch_add_explicit(&st->commits, 1, memory_order_relaxed);
        } else if (r < 95) {
            atomic_store_release(&st->intent[x], INTENT_ABORT);
            txn_abort(s, NULL);
            atomic_fetch_add_explicit(&st->aborts, 1, memory_order_relaxed);
        } else { /* the session dies mid-transaction and comes back */
            atomic_store_release(&st->intent[x], INTENT_ABORT);
            st_collect_stats(st, s);
            txn_session_detach(s);
            s = NULL;
            atomic_fetch_add_explicit(&st->crashes, 1, memory_order_relaxed);
            if (txn_session_attach(st->m, bs, &s, &err) != KEEL_OK) {
                tu_fail(&st->fail, "re-attach: %s", err.msg);
                break;
            }
        }
    }
out:
    if (s != NULL) {
        st_collect_stats(st, s);
        txn_session_detach(s);
    }
    buf_session_destroy(bs);
    return NULL;
}

static void *st_reader_main(void *arg)
{
    st_thread *t = arg;
    stress *st = t->st;
    uint64_t rng = 0xD1B54A32D192ED03ull * (t->id + 1);
    buf_session *bs = NULL;
    txn_session *s = NULL;
    snapshot prev = {0};
    bool have_prev = false;
    kerr err;

    prev.xip = calloc(ST_MAX, sizeof(xid_t));
    if (buf_session_create(st->pool, &bs, &err) != KEEL_OK ||
        txn_session_attach(st->m, bs, &s, &err) != KEEL_OK) {
        tu_fail(&st->fail, "reader %u: %s", t->id, err.msg);
        goto out;
    }
    while (!st_stopping(st)) {
        uint64_t seq = atomic_load_acquire(&st->commit_seq);
        const snapshot *sn;
        int rc;

        /* Mostly new transactions; sometimes a refresh inside one. */
        if (txn_in_progress(s) && tu_rand(&rng) % 4 == 0)
            rc = txn_refresh_snapshot(s, &err);
        else {
            if (txn_in_progress(s) && txn_commit(s, &err) != KEEL_OK)
                tu_fail(&st->fail, "reader commit: %s", err.msg);
            rc = txn_begin(s, &err);
        }
        if (rc != KEEL_OK) {
            tu_fail(&st->fail, "reader snapshot: %s", err.msg);
            break;
        }
        sn = txn_snapshot(s);
        st_check_shape(st, s, sn, XID_INVALID);
        st_check_window(st, s, sn, seq, have_prev ? &prev : NULL);
        /* Every horizon computed before this snapshot ends, earlier ones
         * included, must be at or below its xmin. */
        {
            xid_t h = atomic_load_acquire(&st->horizon);
            if (h > sn->xmin)
                tu_fail(&st->fail, "horizon %u above a live snapshot's xmin %u",
                        h, sn->xmin);
            atomic_fetch_add_explicit(&st->horizon_checks, 1,
                                      memory_order_relaxed);
        }
        prev.xmin = sn->xmin;
        prev.xmax = sn->xmax;
        prev.nxip = sn->nxip;
        memcpy(prev.xip, sn->xip, sizeof(xid_t) * sn->nxip);
        have_prev = true;
    }
out:
    if (s != NULL) {
        st_collect_stats(st, s);
        txn_session_detach(s); /* ends a read-only transaction */
    }
    buf_session_destroy(bs);
    free(prev.xip);
    return NULL;
}

/*
 * Computes horizons until the end, keeping the highest in st->horizon.
 * They may go back for a moment (a session about to take a new snapshot
 * publishes its last one's xmin until it knows whether it may reuse it),
 * which is safe: only a horizon above a live snapshot's xmin is wrong.
 */
static void *st_horizon_main(void *arg)
{
    st_thread *t = arg;
    stress *st = t->st;

    while (!st_stopping(st)) {
        xid_t h = txn_horizon(st->m);
        xid_t prev = atomic_load_relaxed(&st->horizon);

        if (h == XID_INVALID)
            break; /* no membarrier(2): nothing to check */
        while (h > prev && !atomic_compare_exchange_weak_explicit(
                               &st->horizon, &prev, h, memory_order_release,
                               memory_order_relaxed))
            ;
        atomic_fetch_add_explicit(&st->horizons, 1, memory_order_relaxed);
    }
    return NULL;
}

static void test_stress(void **state)
{
    fixture *f = *state;
    double seconds = tu_stress_seconds(2.0);
    st_thread th[ST_WRITERS + ST_READERS], hz;
    stress *st = calloc(1, sizeof(*st));
    procarray *pa;

    assert_non_null(st);
    st->fail = (tu_failures)TU_FAILURES_INIT;
    st->intent = calloc(ST_CAP, sizeof(*st->intent));
    st->dep = calloc(ST_CAP, sizeof(*st->dep));
    st->commit_at = calloc(ST_CAP, sizeof(*st->commit_at));
    assert_true(st->intent && st->dep && st->commit_at);
    mgr_open(f, ST_MAX, XID_FIRST_NORMAL, XID_FIRST_NORMAL + 100, st_reserve,
             st);
    st->m = f->m;
    st->pool = f->pool;
    /* Fill the first slots, then free one every ST_GAP + 1 for the
     * threads, which take the lowest free slot. */
    pa = txn_mgr_procarray(f->m);
    for (uint32_t i = 0; i < ST_THREADS * (ST_GAP + 1); i++) {
        uint32_t slot;
        assert_int_equal(procarray_attach(pa, &slot, &f->err), KEEL_OK);
        assert_int_equal(slot, i);
    }
    for (uint32_t i = 0; i < ST_THREADS; i++)
        procarray_detach(pa, i * (ST_GAP + 1));
    st->deadline_ns = clock_now_ns() + (uint64_t)(seconds * 1e9);
    for (unsigned i = 0; i < ST_WRITERS + ST_READERS; i++) {
        th[i].st = st;
        th[i].id = i;
        assert_int_equal(
            pthread_create(&th[i].th, NULL,
                           i < ST_WRITERS ? st_writer_main : st_reader_main,
                           &th[i]),
            0);
    }
    hz.st = st;
    hz.id = ST_THREADS;
    assert_int_equal(pthread_create(&hz.th, NULL, st_horizon_main, &hz), 0);
    for (unsigned i = 0; i < ST_WRITERS + ST_READERS; i++)
        assert_int_equal(pthread_join(th[i].th, NULL), 0);
    assert_int_equal(pthread_join(hz.th, NULL), 0);
    for (uint32_t i = 0; i < ST_THREADS * (ST_GAP + 1); i++)
        if (i % (ST_GAP + 1) != 0)
            procarray_detach(pa, i);

    printf("  %s: %llu commits, %llu aborts, %llu crashes; %llu snapshots "
           "checked (%llu xids, %llu dependencies); %llu rescans, %llu "
           "held; %d reservations\n",
           f->layout == PROCARRAY_PADDED ? "padded" : "packed",
           (unsigned long long)st->commits, (unsigned long long)st->aborts,
           (unsigned long long)st->crashes,
           (unsigned long long)st->snapshots_checked,
           (unsigned long long)st->xids_checked,
           (unsigned long long)st->deps_checked,
           (unsigned long long)st->retries, (unsigned long long)st->held,
           st->reserve_calls);
    printf("  %llu horizons computed, %llu checked against live snapshots\n",
           (unsigned long long)st->horizons,
           (unsigned long long)st->horizon_checks);
    tu_failures_check(&st->fail);
    assert_true(st->commits > 0);
    assert_true(st->snapshots_checked > 0);
    assert_true(st->reserve_calls >= 1); /* the first limit was 103 */
    assert_int_equal(procarray_high_water(txn_mgr_procarray(f->m)), 0);
    tu_assert_pool_quiet(f->pool);
    free(st->intent);
    free(st->dep);
    free(st->commit_at);
    free(st);
}

/* ---- shared row locks (rowlock.h) ------------------------------------- */

/*
 * Entries are found by version, skipped for their own transaction,
 * counted once per transaction, dropped by their owner's release and,
 * once their transaction has left the process array, by the next look
 * at them; a partition full of live entries refuses (ENOMEM), and takes
 * entries again once their holders end.
 */
static void test_rowlocks(void **state)
{
    fixture *f = *state;
    procarray *pa;
    rowlock_table *t;
    rowlock_owner a = {0}, b = {0};
    uint32_t s0, s1, added = 0;
    int rc = KEEL_OK;

    assert_int_equal(procarray_create(4, f->layout, &pa, &f->err), KEEL_OK);
    assert_int_equal(procarray_attach(pa, &s0, &f->err), KEEL_OK);
    assert_int_equal(procarray_attach(pa, &s1, &f->err), KEEL_OK);
    procarray_set_xid(pa, s0, 100);
    procarray_set_xid(pa, s1, 101);
    assert_int_equal(rowlock_create(pa, 5, &t, &f->err), KEEL_OK);
    assert_int_equal(rowlock_holder(t, 1, 0, 1, 101, ROWLOCK_KEY_SHARE), XID_INVALID);
    assert_int_equal(rowlock_add(t, &a, 1, 0, 1, 100, ROWLOCK_SHARE, NULL, &f->err), KEEL_OK);
    assert_int_equal(rowlock_add(t, &a, 1, 0, 1, 100, ROWLOCK_SHARE, NULL, &f->err), KEEL_OK);
    assert_int_equal(rowlock_count(t), 1);
    assert_int_equal(a.n, 1);
    assert_int_equal(rowlock_holder(t, 1, 0, 1, 101, ROWLOCK_KEY_SHARE), 100);
    assert_int_equal(rowlock_holder(t, 1, 0, 1, 100, ROWLOCK_KEY_SHARE), XID_INVALID);
    assert_int_equal(rowlock_holder(t, 1, 0, 2, 101, ROWLOCK_KEY_SHARE), XID_INVALID);
    assert_int_equal(rowlock_holder(t, 2, 0, 1, 101, ROWLOCK_KEY_SHARE), XID_INVALID);
    assert_int_equal(rowlock_add(t, &b, 1, 0, 1, 101, ROWLOCK_SHARE, NULL, &f->err), KEEL_OK);
    assert_int_equal(rowlock_count(t), 2);
    rowlock_release(t, &a, 100);
    assert_int_equal(a.n, 0);
    assert_int_equal(rowlock_count(t), 1);
    assert_int_equal(rowlock_holder(t, 1, 0, 1, 102, ROWLOCK_KEY_SHARE), 101);
    /* 101 ends without releasing: its entry goes at the next look */
    procarray_set_xid(pa, s1, XID_INVALID);
    assert_int_equal(rowlock_holder(t, 1, 0, 1, 102, ROWLOCK_KEY_SHARE), XID_INVALID);
    assert_int_equal(rowlock_count(t), 0);
    /* strengths: KEY SHARE holds off only a writer of the key, SHARE
     * every writer; the holder's SHARE makes its lock stronger; an
     * update that keeps the key carries others' locks to its version */
    assert_int_equal(
        rowlock_add(t, &a, 3, 0, 1, 100, ROWLOCK_KEY_SHARE, NULL, &f->err), KEEL_OK);
    assert_int_equal(rowlock_holder(t, 3, 0, 1, 102, ROWLOCK_SHARE),
                     XID_INVALID);
    assert_int_equal(rowlock_holder(t, 3, 0, 1, 102, ROWLOCK_KEY_SHARE), 100);
    assert_int_equal(rowlock_carry(t, 3, 0, 1, 0, 2, 102, &f->err), KEEL_OK);
    assert_int_equal(rowlock_holder(t, 3, 0, 2, 102, ROWLOCK_KEY_SHARE), 100);
    assert_int_equal(rowlock_holder(t, 3, 0, 2, 102, ROWLOCK_SHARE),
                     XID_INVALID);
    assert_int_equal(rowlock_carry(t, 3, 0, 1, 0, 3, 100, &f->err), KEEL_OK);
    assert_int_equal(rowlock_holder(t, 3, 0, 3, 102, ROWLOCK_KEY_SHARE),
                     XID_INVALID);
    assert_int_equal(rowlock_add(t, &a, 3, 0, 1, 100, ROWLOCK_SHARE, NULL, &f->err),
                     KEEL_OK);
    assert_int_equal(rowlock_holder(t, 3, 0, 1, 102, ROWLOCK_SHARE), 100);
    assert_int_equal(rowlock_count(t), 2);
    rowlock_release(t, &a, 100); /* the carried one was noted by no one */
    assert_int_equal(rowlock_count(t), 1);
    /* 64 partitions of 8: some partition fills before 513 entries */
    for (uint32_t blk = 0; blk < 64 * 8 + 1 && rc == KEEL_OK; blk++) {
        rc = rowlock_add(t, &a, 7, blk, 1, 100, ROWLOCK_SHARE, NULL, &f->err);
        added += rc == KEEL_OK;
    }
    assert_int_equal(rc, KEEL_ENOMEM);
    assert_non_null(strstr(f->err.msg, "out of shared memory for row locks"));
    assert_true(added >= 8 && added <= 64 * 8);
    assert_int_equal(rowlock_count(t), added + 1);
    /* its holder ends: a new transaction's lock reclaims the room */
    procarray_set_xid(pa, s0, XID_INVALID);
    procarray_set_xid(pa, s1, 102);
    assert_int_equal(rowlock_add(t, &b, 7, added, 1, 102, ROWLOCK_SHARE, NULL, &f->err), KEEL_OK);
    assert_true(rowlock_count(t) <= added + 1);
    /* conflicts between lockers: strengths that add up past 4 */
    {
        xid_t h = XID_INVALID;
        procarray_set_xid(pa, s0, 103);
        assert_int_equal(
            rowlock_add(t, &b, 4, 0, 1, 102, ROWLOCK_UPDATE, &h, &f->err),
            KEEL_OK);
        assert_int_equal(
            rowlock_add(t, &a, 4, 0, 1, 103, ROWLOCK_KEY_SHARE, &h, &f->err),
            KEEL_EBUSY);
        assert_int_equal(h, 102);
        assert_int_equal(rowlock_add(t, &b, 4, 0, 2, 102,
                                     ROWLOCK_NO_KEY_UPDATE, &h, &f->err),
                         KEEL_OK);
        assert_int_equal(
            rowlock_add(t, &a, 4, 0, 2, 103, ROWLOCK_KEY_SHARE, &h, &f->err),
            KEEL_OK);
        h = XID_INVALID;
        assert_int_equal(
            rowlock_add(t, &a, 4, 0, 2, 103, ROWLOCK_SHARE, &h, &f->err),
            KEEL_EBUSY);
        assert_int_equal(h, 102);
        assert_int_equal(
            rowlock_add(t, &a, 4, 0, 3, 103, ROWLOCK_KEY_SHARE, &h, &f->err),
            KEEL_OK);
        assert_int_equal(
            rowlock_add(t, &b, 4, 0, 3, 102, ROWLOCK_SHARE, &h, &f->err),
            KEEL_OK);
        assert_int_equal(
            rowlock_add(t, &b, 4, 0, 3, 102, ROWLOCK_UPDATE, &h, &f->err),
            KEEL_EBUSY);
        assert_int_equal(h, 103);
        assert_int_equal(rowlock_holder(t, 4, 0, 3, 104, ROWLOCK_SHARE), 102);
        /* 103 ends: 102's stronger lock goes in */
        procarray_set_xid(pa, s0, XID_INVALID);
        assert_int_equal(
            rowlock_add(t, &b, 4, 0, 3, 102, ROWLOCK_UPDATE, &h, &f->err),
            KEEL_OK);
        assert_true(ROWLOCK_CONFLICTS(ROWLOCK_KEY_SHARE, ROWLOCK_UPDATE));
        assert_false(ROWLOCK_CONFLICTS(ROWLOCK_KEY_SHARE,
                                       ROWLOCK_NO_KEY_UPDATE));
        assert_false(ROWLOCK_CONFLICTS(ROWLOCK_SHARE, ROWLOCK_SHARE));
        assert_true(ROWLOCK_CONFLICTS(ROWLOCK_SHARE, ROWLOCK_NO_KEY_UPDATE));
    }
    rowlock_release(t, &b, 101); /* not its xid: nothing goes */
    rowlock_release(t, &b, 102);
    rowlock_owner_free(&a);
    rowlock_owner_free(&b);
    rowlock_destroy(t);
    procarray_set_xid(pa, s1, XID_INVALID);
    procarray_detach(pa, s0);
    procarray_detach(pa, s1);
    procarray_destroy(pa);
}

#define RL_THREADS 4
#define RL_KEYS 16

typedef struct rl_thread {
    pthread_t th;
    procarray *pa;
    rowlock_table *t;
    uint32_t slot, id;
    uint64_t deadline_ns, rounds;
    char failure[320];
} rl_thread;

/* Each round a new xid locks a few keys; while it holds them, every
 * other transaction's look finds a holder, and none finds itself. */
static void *rl_main(void *arg)
{
    rl_thread *w = arg;
    rowlock_owner own = {0};
    uint64_t rnd = 0x9e3779b97f4a7c15ull * (w->id + 1);
    kerr err;

    while (clock_now_ns() < w->deadline_ns && w->failure[0] == '\0') {
        xid_t xid = 1000 + (xid_t)(w->rounds * RL_THREADS + w->id);
        uint32_t keys[3];
        procarray_set_xid(w->pa, w->slot, xid);
        for (int k = 0; k < 3; k++) {
            keys[k] = (uint32_t)(tu_rand(&rnd) % RL_KEYS);
            if (rowlock_add(w->t, &own, 9, keys[k], 1, xid, ROWLOCK_SHARE, NULL, &err) != KEEL_OK)
                snprintf(w->failure, sizeof(w->failure), "add: %s", err.msg);
        }
        for (int k = 0; k < 3; k++) {
            if (rowlock_holder(w->t, 9, keys[k], 1, xid, ROWLOCK_KEY_SHARE) == xid)
                snprintf(w->failure, sizeof(w->failure), "found itself");
            if (rowlock_holder(w->t, 9, keys[k], 1, 1, ROWLOCK_KEY_SHARE) == XID_INVALID)
                snprintf(w->failure, sizeof(w->failure),
                         "key %u held by %u not found", keys[k], xid);
        }
        procarray_set_xid(w->pa, w->slot, XID_INVALID);
        rowlock_release(w->t, &own, xid);
        w->rounds++;
    }
    rowlock_owner_free(&own);
    return NULL;
}

static void test_rowlock_stress(void **state)
{
    fixture *f = *state;
    rl_thread th[RL_THREADS];
    procarray *pa;
    rowlock_table *t;
    uint64_t end = clock_now_ns() + (uint64_t)(tu_stress_seconds(1.0) * 1e9);
    uint64_t rounds = 0;

    assert_int_equal(procarray_create(RL_THREADS, f->layout, &pa, &f->err),
                     KEEL_OK);
    assert_int_equal(rowlock_create(pa, 8, &t, &f->err), KEEL_OK);
    for (uint32_t i = 0; i < RL_THREADS; i++) {
        th[i] = (rl_thread){.pa = pa, .t = t, .id = i, .deadline_ns = end};
        assert_int_equal(procarray_attach(pa, &th[i].slot, &f->err), KEEL_OK);
        assert_int_equal(pthread_create(&th[i].th, NULL, rl_main, &th[i]), 0);
    }
    for (uint32_t i = 0; i < RL_THREADS; i++) {
        assert_int_equal(pthread_join(th[i].th, NULL), 0);
        if (th[i].failure[0] != '\0')
            fail_msg("thread %u: %s", i, th[i].failure);
        rounds += th[i].rounds;
    }
    printf("row locks: %llu rounds of 3 locks over %d keys\n",
           (unsigned long long)rounds, RL_KEYS);
    assert_true(rounds > 0);
    assert_int_equal(rowlock_count(t), 0);
    rowlock_destroy(t);
    for (uint32_t i = 0; i < RL_THREADS; i++)
        procarray_detach(pa, th[i].slot);
    procarray_destroy(pa);
}

#define BOTH(t)                                                                \
    cmocka_unit_test_setup_teardown(t, setup_padded, teardown),                \
        cmocka_unit_test_setup_teardown(t, setup_packed, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_begin_commit_abort),
        BOTH(test_readonly_takes_no_xid),
        cmocka_unit_test_setup_teardown(test_command_ids, setup_padded,
                                        teardown),
        BOTH(test_snapshot_contents),
        BOTH(test_snapshot_many_running),
        BOTH(test_snapshot_reuse),
        BOTH(test_max_sessions),
        cmocka_unit_test_setup_teardown(test_layouts, setup_padded, teardown),
        BOTH(test_xid_reservation),
        BOTH(test_oracle_and_crash),
        BOTH(test_consistent_cut),
        BOTH(test_commit_failure_rolls_back),
        BOTH(test_horizon),
        BOTH(test_horizon_window),
        BOTH(test_stress),
        BOTH(test_rowlocks),
        cmocka_unit_test_setup_teardown(test_rowlock_stress, setup_padded,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
