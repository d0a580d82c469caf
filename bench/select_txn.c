/*
 * select_txn.c: pgbench's select-only transaction (see select_txn.h),
 * over the public API alone.
 *
 * What one transaction does, in order, and what each step costs in shared
 * state:
 *   keel_begin()            the snapshot (reused when no transaction with
 *                           an xid ended since the session's last one);
 *                           the engine starts the catalog cache's
 *                           transaction (invalidations, coarse clock)
 *   keel_select_column()    5 catalog look-ups, session-private:
 *                           keel_class by name in keel_catalog (negative),
 *                           then in public (hit); keel_attribute by
 *                           (relid, "abalance"); keel_statistic by
 *                           (relid, attnum, false); the list of keel_index
 *                           rows of relid.  The handles of the table and
 *                           its primary key, the ones the session's last
 *                           call used (no lock).  pgbench_accounts_pkey's leaf,
 *                           found in the session's directory of the index
 *                           (no pin or lock on the root or level 1),
 *                           pinned and share-locked in one atomic,
 *                           released in another; the heap row, predicted
 *                           from the leaf's bounds, prefetched before the
 *                           leaf is read.  The heap page's pin and share
 *                           lock (one atomic, and one to release), the
 *                           visibility check against the snapshot, the
 *                           row's columns up to abalance decoded, the key
 *                           checked
 *   keel_commit()           a read-only end: no commit log, no shared
 *                           counter
 */
#include "select_txn.h"

#include <stdio.h>
#include <string.h>

/* Copies the session's message into msg; returns rc. */
static int client_error(const select_client *c, int rc, char *msg,
                        size_t msglen)
{
    snprintf(msg, msglen, "%s", keel_session_error(c->s));
    return rc;
}

int select_client_open(keel_db *db, select_client *c, char *msg, size_t msglen)
{
    keel_error e = {0};
    keel_value key = {.isnull = false}, bal;
    keel_type type = KEEL_INT4;
    bool found;
    int rc;

    memset(c, 0, sizeof(*c));
    rc = keel_session_begin(db, &c->s, &e);
    if (rc != KEEL_OK) {
        snprintf(msg, msglen, "%s", e.msg);
        return rc;
    }
    rc = keel_table_rows(c->s, NULL, SELECT_TABLE, &c->tuples);
    if (rc == KEEL_OK)
        rc = keel_column_type(c->s, NULL, SELECT_TABLE, SELECT_COLUMN, &type);
    if (rc == KEEL_OK && type != KEEL_INT4) {
        snprintf(msg, msglen, "column %s of %s is not int4", SELECT_COLUMN,
                 SELECT_TABLE);
        select_client_close(c);
        return KEEL_ETYPE;
    }
    if (rc == KEEL_OK)
        rc = keel_select_column(c->s, NULL, SELECT_TABLE, SELECT_COLUMN, &key,
                                &bal, &found);
    if (rc != KEEL_OK) {
        client_error(c, rc, msg, msglen);
        select_client_close(c);
    }
    return rc;
}

int select_client_accounts(select_client *c, int32_t *n, char *msg,
                           size_t msglen)
{
    keel_value row[8];
    keel_scan *sc = NULL;
    uint16_t ncols = 0;
    bool found = true;
    int32_t count = 0;
    int rc;

    if (c->tuples >= 1) {
        *n = c->tuples < INT32_MAX ? (int32_t)c->tuples : INT32_MAX;
        return KEEL_OK;
    }
    rc = keel_begin(c->s);
    if (rc != KEEL_OK) /* nothing begun: the caller's transaction stays */
        return client_error(c, rc, msg, msglen);
    rc = keel_table_columns(c->s, NULL, SELECT_TABLE, &ncols);
    if (rc == KEEL_OK && ncols > sizeof(row) / sizeof(row[0])) {
        snprintf(msg, msglen, "%s has %u columns, not pgbench's 4",
                 SELECT_TABLE, ncols);
        keel_abort(c->s);
        return KEEL_EINVAL;
    }
    if (rc == KEEL_OK)
        rc = keel_scan_begin(c->s, NULL, SELECT_TABLE, NULL, NULL, NULL, &sc);
    while (rc == KEEL_OK && (rc = keel_scan_next(sc, row, &found)) == KEEL_OK &&
           found) {
        if (count == INT32_MAX || row[0].isnull || row[0].v.i4 != count + 1) {
            snprintf(msg, msglen,
                     "%s was never analyzed, and its aids are not 1..N: row "
                     "%d has aid %d",
                     SELECT_TABLE, count + 1, row[0].isnull ? 0 : row[0].v.i4);
            keel_scan_end(sc);
            keel_abort(c->s);
            return KEEL_EINVAL;
        }
        count++;
    }
    keel_scan_end(sc);
    if (rc == KEEL_OK && count == 0) {
        snprintf(msg, msglen, "%s is empty", SELECT_TABLE);
        keel_abort(c->s);
        return KEEL_EINVAL;
    }
    if (rc == KEEL_OK)
        rc = keel_commit(c->s);
    if (rc != KEEL_OK) {
        client_error(c, rc, msg, msglen);
        keel_abort(c->s); /* a no-op once the commit ended it */
        return rc;
    }
    *n = count;
    return KEEL_OK;
}

void select_client_close(select_client *c)
{
    keel_session_end(c->s);
    memset(c, 0, sizeof(*c));
}

int select_txn_run(select_client *c, int32_t aid, const char *probe,
                   int32_t *abalance, char *msg, size_t msglen)
{
    keel_session *s = c->s;
    keel_value key = {.isnull = false}, bal;
    bool found = false, exists = false;
    int rc;

    key.v.i4 = aid;
    rc = keel_begin(s);
    if (rc != KEEL_OK)
        return client_error(c, rc, msg, msglen);
    if (probe != NULL) {
        rc = keel_relation_exists(s, "public", probe, &exists);
        if (rc == KEEL_OK && exists) {
            snprintf(msg, msglen, "relation \"%s\" exists", probe);
            keel_abort(s);
            return KEEL_EEXIST;
        }
    }
    if (rc == KEEL_OK)
        rc = keel_select_column(s, NULL, SELECT_TABLE, SELECT_COLUMN, &key,
                                &bal, &found);
    if (rc == KEEL_OK)
        rc = keel_commit(s);
    if (rc != KEEL_OK) {
        client_error(c, rc, msg, msglen);
        keel_abort(s); /* a no-op once the commit ended it */
        return rc;
    }
    if (!found) {
        snprintf(msg, msglen, "no account %d", aid);
        return KEEL_ENOENT;
    }
    *abalance = bal.isnull ? 0 : bal.v.i4;
    return KEEL_OK;
}

void select_counts_read(const select_client *c, select_counts *out)
{
    keel_cache_stats cs;
    engine_session_stats ss;

    keel_session_cache_stats(c->s, &cs);
    engine_session_stats_get(c->s, &ss);
    memset(out, 0, sizeof(*out));
    out->hits = cs.hits;
    out->negative_hits = cs.negative_hits;
    out->misses = cs.misses;
    out->list_hits = cs.list_hits;
    out->list_misses = cs.list_misses;
    out->snapshots_reused = ss.snapshots_reused;
    out->snapshots_taken = ss.snapshots_taken;
    out->buffer_reads = ss.buffer_reads;
    out->dir_moves = ss.index_dir_moves;
}

void select_counts_diff(const select_counts *a, const select_counts *b,
                        select_counts *out)
{
    out->txns = b->txns - a->txns;
    out->hits = b->hits - a->hits;
    out->negative_hits = b->negative_hits - a->negative_hits;
    out->misses = b->misses - a->misses;
    out->list_hits = b->list_hits - a->list_hits;
    out->list_misses = b->list_misses - a->list_misses;
    out->snapshots_reused = b->snapshots_reused - a->snapshots_reused;
    out->snapshots_taken = b->snapshots_taken - a->snapshots_taken;
    out->buffer_reads = b->buffer_reads - a->buffer_reads;
    out->dir_moves = b->dir_moves - a->dir_moves;
}

void select_counts_add(select_counts *sum, const select_counts *c)
{
    sum->txns += c->txns;
    sum->hits += c->hits;
    sum->negative_hits += c->negative_hits;
    sum->misses += c->misses;
    sum->list_hits += c->list_hits;
    sum->list_misses += c->list_misses;
    sum->snapshots_reused += c->snapshots_reused;
    sum->snapshots_taken += c->snapshots_taken;
    sum->buffer_reads += c->buffer_reads;
    sum->dir_moves += c->dir_moves;
}
