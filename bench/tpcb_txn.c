/*
 * tpcb_txn.c: pgbench's read-write transaction (see tpcb_txn.h), over the
 * public API alone.
 *
 * An UPDATE ... SET x = x + :delta is a keel_lookup() of the row and a
 * keel_update() of all its columns, in the same transaction, after the
 * statement's keel_new_snapshot(): the lookup reads the version the
 * snapshot sees.  If a transaction the snapshot does not see changed the
 * row since, repeatable read fails the update with KEEL_ESERIALIZE;
 * read committed waits for that transaction and answers KEEL_ECHANGED,
 * and the increment is computed again from the newest version
 * (keel_fetch_changed()) until an update goes in: no increment is ever
 * lost.  The filler is copied out of the row read before the update,
 * whose arguments must not point into memory the session owns.
 */
#include "tpcb_txn.h"

#include <stdio.h>
#include <string.h>

#define TPCB_MAX_COLS   8   /* pgbench's tables have 3, 4, 4 and 6 */
#define TPCB_FILLER_MAX 128 /* bytes of the widest filler, char(88) */

/* A pgbench table: name, columns, and the int4 column to add to or sum. */
typedef struct tpcb_table {
    const char *name;
    uint16_t ncols;
    uint16_t col; /* 0-based */
} tpcb_table;

static const tpcb_table tpcb_branches = {"pgbench_branches", 3, 1};
static const tpcb_table tpcb_tellers = {"pgbench_tellers", 4, 2};
static const tpcb_table tpcb_accounts = {"pgbench_accounts", 4, 2};
static const tpcb_table tpcb_history = {"pgbench_history", 6, 3};

/* Aborts the transaction and copies the session's message into msg;
 * returns rc. */
static int txn_fail(keel_session *s, int rc, char *msg, size_t msglen)
{
    snprintf(msg, msglen, "%s", keel_session_error(s));
    keel_abort(s);
    return rc;
}

/*
 * Scans table t in the running transaction of s: its rows counted into
 * *count and column t->col summed into *sum; with ids, column 0 must
 * number the rows 1..count in the scan's (primary-key) order.
 */
static int scan_table(keel_session *s, const tpcb_table *t, bool ids,
                      uint64_t *count, int64_t *sum, char *msg, size_t msglen)
{
    keel_value row[TPCB_MAX_COLS];
    keel_scan *sc = NULL;
    uint16_t ncols = 0;
    bool found = true;
    int rc = keel_table_columns(s, NULL, t->name, &ncols);

    *count = 0;
    *sum = 0;
    if (rc == KEEL_OK && ncols != t->ncols) {
        snprintf(msg, msglen, "%s has %u columns, not pgbench's %u", t->name,
                 ncols, t->ncols);
        return KEEL_EINVAL;
    }
    if (rc == KEEL_OK)
        rc = keel_scan_begin(s, NULL, t->name, NULL, NULL, NULL, &sc);
    while (rc == KEEL_OK && (rc = keel_scan_next(sc, row, &found)) == KEEL_OK &&
           found) {
        if (ids && (row[0].isnull || row[0].v.i4 < 1 ||
                    (uint64_t)row[0].v.i4 != *count + 1)) {
            snprintf(msg, msglen, "the ids of %s are not 1..N: row %llu has %d",
                     t->name, (unsigned long long)*count + 1,
                     row[0].isnull ? 0 : row[0].v.i4);
            keel_scan_end(sc);
            return KEEL_EINVAL;
        }
        (*count)++;
        if (!row[t->col].isnull)
            *sum += row[t->col].v.i4;
    }
    keel_scan_end(sc);
    if (rc != KEEL_OK) {
        snprintf(msg, msglen, "%s", keel_session_error(s));
        return rc;
    }
    if (ids && (*count == 0 || *count > INT32_MAX)) {
        snprintf(msg, msglen, "%s has %llu rows", t->name,
                 (unsigned long long)*count);
        return KEEL_EINVAL;
    }
    return KEEL_OK;
}

int tpcb_totals_read(keel_session *s, tpcb_totals *t, char *msg, size_t msglen)
{
    uint64_t nb = 0, nt = 0, na = 0;
    int rc = keel_begin(s);

    memset(t, 0, sizeof(*t));
    if (rc != KEEL_OK) { /* nothing begun: the caller's transaction stays */
        snprintf(msg, msglen, "%s", keel_session_error(s));
        return rc;
    }
    rc = scan_table(s, &tpcb_branches, true, &nb, &t->bbalance, msg, msglen);
    if (rc == KEEL_OK)
        rc = scan_table(s, &tpcb_tellers, true, &nt, &t->tbalance, msg, msglen);
    if (rc == KEEL_OK)
        rc =
            scan_table(s, &tpcb_accounts, true, &na, &t->abalance, msg, msglen);
    if (rc == KEEL_OK)
        rc = scan_table(s, &tpcb_history, false, &t->history, &t->delta, msg,
                        msglen);
    if (rc != KEEL_OK) {
        keel_abort(s);
        return rc;
    }
    rc = keel_commit(s);
    if (rc != KEEL_OK)
        return txn_fail(s, rc, msg, msglen);
    t->branches = (int32_t)nb;
    t->tellers = (int32_t)nt;
    t->accounts = (int32_t)na;
    return KEEL_OK;
}

bool tpcb_totals_consistent(const tpcb_totals *t)
{
    return t->bbalance == t->tbalance && t->tbalance == t->abalance &&
           t->abalance == t->delta;
}

/* A pseudo-random number in 0..n-1 (xorshift64*; n > 0). */
static uint32_t draw(uint64_t *rng, uint32_t n)
{
    uint64_t x = *rng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    return (uint32_t)(((x * UINT64_C(0x2545F4914F6CDD1D)) >> 32) % n);
}

void tpcb_params_next(uint64_t *rng, const tpcb_totals *t, tpcb_params *p)
{
    p->aid = (int32_t)draw(rng, (uint32_t)t->accounts) + 1;
    p->tid = (int32_t)draw(rng, (uint32_t)t->tellers) + 1;
    p->bid = (int32_t)draw(rng, (uint32_t)t->branches) + 1;
    p->delta = (int32_t)draw(rng, 10001) - 5000;
}

/*
 * UPDATE t SET col = col + delta WHERE id = id, in the running
 * transaction of s; the new value in *out.  On failure the transaction
 * is aborted (txn_fail()).
 */
static int add_to_row(keel_session *s, const tpcb_table *t, int32_t id,
                      int32_t delta, int32_t *out, char *msg, size_t msglen)
{
    keel_value key = {.isnull = false}, row[TPCB_MAX_COLS];
    keel_value *filler = &row[t->ncols - 1];
    char copy[TPCB_FILLER_MAX];
    bool found = false;
    int64_t v;
    int rc;

    key.v.i4 = id;
    rc = keel_new_snapshot(s);
    if (rc == KEEL_OK)
        rc = keel_lookup(s, NULL, t->name, &key, row, &found);
    if (rc != KEEL_OK)
        return txn_fail(s, rc, msg, msglen);
again:
    if (!found) {
        snprintf(msg, msglen, "%s has no row %d", t->name, id);
        keel_abort(s);
        return KEEL_ENOENT;
    }
    v = (row[t->col].isnull ? 0 : (int64_t)row[t->col].v.i4) + delta;
    if (v < INT32_MIN || v > INT32_MAX ||
        (!filler->isnull && filler->v.s.len > sizeof(copy))) {
        snprintf(msg, msglen, "%s row %d: %s", t->name, id,
                 v < INT32_MIN || v > INT32_MAX ? "balance out of int4 range"
                                                : "filler too long");
        keel_abort(s);
        return KEEL_EINVAL;
    }
    row[t->col].isnull = false;
    row[t->col].v.i4 = (int32_t)v;
    if (!filler->isnull) {
        memcpy(copy, filler->v.s.ptr, filler->v.s.len);
        filler->v.s.ptr = copy;
    }
    rc = keel_update(s, NULL, t->name, &key, row);
    if (rc == KEEL_ECHANGED) {
        /* Read committed: the row's newest version, to add to. */
        rc = keel_fetch_changed(s, NULL, t->name, row, &found);
        if (rc == KEEL_OK)
            goto again;
    }
    if (rc != KEEL_OK)
        return txn_fail(s, rc, msg, msglen);
    *out = (int32_t)v;
    return KEEL_OK;
}

int tpcb_txn_try(keel_session *s, const tpcb_params *p, int64_t mtime,
                 int32_t *abalance, char *msg, size_t msglen)
{
    keel_value key = {.isnull = false}, got, h[6];
    int32_t bal = 0, ignored;
    bool found = false;
    int rc = keel_begin(s);

    if (rc != KEEL_OK) { /* nothing begun: the caller's transaction stays */
        snprintf(msg, msglen, "%s", keel_session_error(s));
        return rc;
    }
    rc = add_to_row(s, &tpcb_accounts, p->aid, p->delta, &bal, msg, msglen);
    if (rc != KEEL_OK)
        return rc;
    key.v.i4 = p->aid;
    rc = keel_new_snapshot(s);
    if (rc == KEEL_OK)
        rc = keel_select_column(s, NULL, tpcb_accounts.name, "abalance", &key,
                                &got, &found);
    if (rc != KEEL_OK)
        return txn_fail(s, rc, msg, msglen);
    if (!found || got.isnull || got.v.i4 != bal) {
        snprintf(msg, msglen, "account %d read back %d, not the %d written",
                 p->aid, found && !got.isnull ? got.v.i4 : 0, bal);
        keel_abort(s);
        return KEEL_ECORRUPT;
    }
    rc = add_to_row(s, &tpcb_tellers, p->tid, p->delta, &ignored, msg, msglen);
    if (rc == KEEL_OK)
        rc = add_to_row(s, &tpcb_branches, p->bid, p->delta, &ignored, msg,
                        msglen);
    if (rc != KEEL_OK)
        return rc;
    for (int i = 0; i < 6; i++)
        h[i].isnull = false;
    h[0].v.i4 = p->tid;
    h[1].v.i4 = p->bid;
    h[2].v.i4 = p->aid;
    h[3].v.i4 = p->delta;
    h[4].v.i8 = mtime;
    h[5].isnull = true;
    rc = keel_new_snapshot(s);
    if (rc == KEEL_OK)
        rc = keel_insert(s, NULL, tpcb_history.name, h);
    if (rc == KEEL_OK)
        rc = keel_commit(s);
    if (rc != KEEL_OK)
        return txn_fail(s, rc, msg, msglen);
    *abalance = bal;
    return KEEL_OK;
}

int tpcb_txn_run(keel_session *s, const tpcb_params *p, int64_t mtime,
                 uint32_t max_tries, uint32_t *tries, char *msg, size_t msglen)
{
    int32_t bal;
    int rc;

    *tries = 0;
    do {
        (*tries)++;
        rc = tpcb_txn_try(s, p, mtime, &bal, msg, msglen);
    } while ((rc == KEEL_ESERIALIZE || rc == KEEL_EDEADLOCK) &&
             (max_tries == 0 || *tries < max_tries));
    return rc;
}
