/*
 * select_txn.c: pgbench's select-only transaction (see select_txn.h).
 *
 * What one transaction does, in order, and what each step costs in shared
 * state:
 *   keel_begin()            the snapshot (reused when no transaction with
 *                           an xid ended since the session's last one);
 *                           the engine starts the catalog cache's
 *                           transaction (invalidations, coarse clock)
 *   5 catalog look-ups      session-private: keel_class by name in
 *                           keel_catalog (negative), then in public (hit);
 *                           keel_attribute by (relid, "abalance");
 *                           keel_statistic by (relid, attnum, false);
 *                           the list of keel_index rows of relid
 *   btree_lookup_heap()     pgbench_accounts_pkey's leaf, found in the
 *                           session's directory of the index (no pin or
 *                           lock on the root or level 1), pinned and
 *                           share-locked in one atomic, released in
 *                           another; the heap row, predicted from the
 *                           leaf's bounds, prefetched before the leaf is
 *                           read
 *   heap_fetch_cols()       the heap page's pin and share lock (one
 *                           atomic, and one to release), the visibility
 *                           check against the snapshot, the row's columns
 *                           up to abalance decoded
 *   keel_commit()           a read-only end: no commit log, no shared
 *                           counter
 */
#include "select_txn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/syscache.h"

int select_client_open(keel_db *db, select_client *c, char *msg, size_t msglen)
{
    keel_error e = {0};
    catalog_txn ct;
    uint32_t pi;
    int rc;

    memset(c, 0, sizeof(*c));
    rc = keel_session_begin(db, &c->s, &e);
    if (rc != KEEL_OK) {
        snprintf(msg, msglen, "%s", e.msg);
        return rc;
    }
    if (c->s->cache == NULL) {
        snprintf(msg, msglen, "the session has no catalog cache");
        select_client_close(c);
        return KEEL_EINVAL;
    }
    c->tab = calloc(1, sizeof(*c->tab));
    if (c->tab == NULL) {
        snprintf(msg, msglen, "out of memory");
        select_client_close(c);
        return KEEL_ENOMEM;
    }
    rc = keel_begin(c->s);
    if (rc == KEEL_OK)
        rc = engine_catalog_txn(c->s, false, &ct);
    if (rc == KEEL_OK)
        rc = engine_table_open(c->s, &ct, "public", SELECT_TABLE, c->tab);
    for (pi = 0; rc == KEEL_OK && pi < c->tab->nidx; pi++)
        if (c->tab->idx[pi].primary)
            break;
    if (rc == KEEL_OK && pi == c->tab->nidx)
        rc = kerr_set(&c->s->bs->err, KEEL_EINVAL, "%s has no primary key",
                      SELECT_TABLE);
    if (rc == KEEL_OK)
        rc = heap_row_init(&c->row, &c->tab->h->heap, &c->s->bs->err);
    if (rc == KEEL_OK) {
        c->relid = c->tab->rel.oid;
        c->heap = c->tab->h;
        c->indexoid = c->tab->idx[pi].indexoid;
        c->pkey = c->tab->ih[pi];
        c->tuples = c->tab->rel.tuples;
        rc = keel_commit(c->s);
    }
    if (rc != KEEL_OK) {
        snprintf(msg, msglen, "%s", keel_session_error(c->s));
        select_client_close(c);
    }
    return rc;
}

int select_client_accounts(select_client *c, int32_t *n)
{
    keel_value row[8];
    keel_scan *sc = NULL;
    bool found = true;
    int32_t count = 0;
    int rc;

    if (c->tuples >= 1) {
        *n = c->tuples < INT32_MAX ? (int32_t)c->tuples : INT32_MAX;
        return KEEL_OK;
    }
    if (c->row.natts > sizeof(row) / sizeof(row[0]))
        return kerr_set(&c->s->bs->err, KEEL_EINVAL,
                        "%s has %u columns, not pgbench's 4", SELECT_TABLE,
                        c->row.natts);
    rc = keel_begin(c->s);
    if (rc != KEEL_OK)
        return rc; /* nothing begun: the caller's transaction, if any, stays */
    rc = keel_scan_begin(c->s, "public", SELECT_TABLE, NULL, NULL, NULL, &sc);
    while (rc == KEEL_OK && (rc = keel_scan_next(sc, row, &found)) == KEEL_OK &&
           found) {
        if (count == INT32_MAX || row[0].isnull || row[0].v.i4 != count + 1) {
            rc = kerr_set(&c->s->bs->err, KEEL_EINVAL,
                          "%s was never analyzed, and its aids are not "
                          "1..N: row %d has aid %d",
                          SELECT_TABLE, count + 1,
                          row[0].isnull ? 0 : row[0].v.i4);
            break;
        }
        count++;
    }
    keel_scan_end(sc);
    if (rc == KEEL_OK && count == 0)
        rc = kerr_set(&c->s->bs->err, KEEL_EINVAL, "%s is empty", SELECT_TABLE);
    if (rc == KEEL_OK)
        rc = keel_commit(c->s);
    if (rc != KEEL_OK)
        keel_abort(c->s); /* a no-op once the commit ended it */
    if (rc == KEEL_OK)
        *n = count;
    return rc;
}

void select_client_close(select_client *c)
{
    heap_row_free(&c->row);
    free(c->tab);
    keel_session_end(c->s);
    memset(c, 0, sizeof(*c));
}

/*
 * The relation cache's miss: resolves the handles of relation relid and
 * index indexoid again (after DDL replaced the table), inside the running
 * transaction.  KEEL_OK or an error in the session.
 */
static int select_client_resolve(select_client *c, oid_t relid, oid_t indexoid)
{
    catalog_txn ct;
    engine_rel *ix;
    int rc;

    rc = engine_catalog_txn(c->s, false, &ct);
    if (rc == KEEL_OK)
        rc = engine_table_open(c->s, &ct, "public", SELECT_TABLE, c->tab);
    if (rc == KEEL_OK && c->tab->rel.oid != relid)
        rc = kerr_set(&c->s->bs->err, KEEL_EINVAL,
                      "%s changed during the transaction", SELECT_TABLE);
    if (rc == KEEL_OK)
        rc = engine_index_handle(c->s, indexoid, &ix);
    if (rc == KEEL_OK) {
        heap_row_free(&c->row);
        rc = heap_row_init(&c->row, &c->tab->h->heap, &c->s->bs->err);
    }
    if (rc != KEEL_OK)
        return rc;
    c->relid = relid;
    c->indexoid = indexoid;
    c->heap = c->tab->h;
    c->pkey = ix;
    return KEEL_OK;
}

/*
 * The planner's catalog look-ups: the relation's oid, the column's number,
 * whether it has statistics, the primary key's oid.  Everything found is
 * released before returning.  KEEL_OK or an error in the session.
 */
static int select_plan(select_client *c, const char *probe, oid_t *relid,
                       uint16_t *attnum, oid_t *indexoid)
{
    syscache *sc = c->s->cache;
    kerr *err = &c->s->bs->err;
    catcache_entry *rel_e, *att_e, *st_e, *e;
    catcache_list *l;
    syscache_key key;
    int rc;

    /* The search path: keel_catalog first, where the name is absent. */
    rc = syscache_search2(sc, CACHE_CLASS_NAME, SYSCACHE_NAME(SELECT_TABLE),
                          NAMESPACE_CATALOG, &e);
    if (rc == KEEL_OK) {
        syscache_release(sc, e);
        return kerr_set(err, KEEL_EINVAL, "%s is a catalog", SELECT_TABLE);
    }
    if (rc != KEEL_ENOENT)
        return rc;
    rc = syscache_search2(sc, CACHE_CLASS_NAME, SYSCACHE_NAME(SELECT_TABLE),
                          NAMESPACE_PUBLIC, &rel_e);
    if (rc != KEEL_OK)
        return rc == KEEL_ENOENT
                   ? kerr_set(err, KEEL_ENOENT, "table \"%s\" does not exist",
                              SELECT_TABLE)
                   : rc;
    *relid = ((const catalog_relation *)syscache_row(rel_e))->oid;
    rc = syscache_search2(sc, CACHE_ATTRIBUTE_NAME, *relid,
                          SYSCACHE_NAME(SELECT_COLUMN), &att_e);
    if (rc != KEEL_OK) {
        syscache_release(sc, rel_e);
        return rc == KEEL_ENOENT
                   ? kerr_set(err, KEEL_ENOENT, "column \"%s\" does not exist",
                              SELECT_COLUMN)
                   : rc;
    }
    {
        const catalog_attribute *att = syscache_row(att_e);
        *attnum = att->attnum;
        if (att->type != KEEL_INT4) {
            syscache_release(sc, att_e);
            syscache_release(sc, rel_e);
            return kerr_set(err, KEEL_ETYPE, "column \"%s\" is not int4",
                            SELECT_COLUMN);
        }
    }
    /* The column's statistics: found or not, both are answers. */
    rc = syscache_search3(sc, CACHE_STATISTIC, *relid, *attnum, 0, &st_e);
    if (rc == KEEL_OK)
        syscache_release(sc, st_e);
    else if (rc == KEEL_ENOENT)
        rc = KEEL_OK;
    if (rc == KEEL_OK && probe != NULL) {
        rc = syscache_search2(sc, CACHE_CLASS_NAME, SYSCACHE_NAME(probe),
                              NAMESPACE_PUBLIC, &e);
        if (rc == KEEL_OK) {
            syscache_release(sc, e);
            rc = kerr_set(err, KEEL_EEXIST, "relation \"%s\" exists", probe);
        } else if (rc == KEEL_ENOENT) {
            rc = KEEL_OK;
        }
    }
    key = *relid;
    if (rc == KEEL_OK)
        rc = syscache_list(sc, CACHE_INDEX_TABLE, 1, &key, &l);
    if (rc == KEEL_OK) {
        uint32_t n = syscache_list_count(l);
        *indexoid = 0;
        for (uint32_t i = 0; i < n; i++) {
            const catalog_indexdef *ix = syscache_list_row(l, i);
            if (ix->primary) {
                *indexoid = ix->indexoid;
                break;
            }
        }
        syscache_list_release(sc, l);
        if (*indexoid == 0)
            rc = kerr_set(err, KEEL_EINVAL, "%s has no primary key",
                          SELECT_TABLE);
    }
    syscache_release(sc, att_e);
    syscache_release(sc, rel_e);
    return rc;
}

int select_txn_run(select_client *c, int32_t aid, const char *probe,
                   int32_t *abalance)
{
    keel_session *s = c->s;
    buf_session *bs = s->bs;
    keel_value key = {.isnull = false};
    visibility vis;
    oid_t relid = 0, indexoid = 0;
    uint16_t attnum = 0;
    bool found = true;
    tid t;
    int rc;

    rc = keel_begin(s);
    if (rc != KEEL_OK)
        return rc;
    rc = select_plan(c, probe, &relid, &attnum, &indexoid);
    if (rc == KEEL_OK && (relid != c->relid || indexoid != c->indexoid))
        rc = select_client_resolve(c, relid, indexoid);
    if (rc == KEEL_OK && (attnum < 1 || attnum > c->row.natts))
        rc = kerr_set(&bs->err, KEEL_ECORRUPT, "column %s has number %u",
                      SELECT_COLUMN, attnum);
    if (rc == KEEL_OK)
        rc = txn_visibility(s->ts, &vis, &bs->err);
    if (rc == KEEL_OK) {
        key.v.i4 = aid;
        rc = btree_lookup_heap(c->pkey->bt, bs, &key, &c->heap->heap,
                               engine_index_dir(s, c->pkey->bt), &t, NULL);
        /* Only the columns up to abalance are decoded (aid, to recheck
         * the key, is the first). */
        if (rc == KEEL_OK)
            rc = heap_fetch_cols(&c->heap->heap, bs, &vis, t, attnum, &c->row);
        if (rc == KEEL_ENOENT) {
            found = false;
            rc = KEEL_OK;
        }
    }
    if (rc == KEEL_OK && found) {
        if (c->row.values[0].v.i4 != aid)
            rc = kerr_set(&bs->err, KEEL_ECORRUPT,
                          "account %d: the index led to account %d", aid,
                          c->row.values[0].v.i4);
        else
            *abalance = c->row.values[attnum - 1].v.i4;
    }
    if (rc != KEEL_OK) {
        kerr saved = bs->err;
        keel_abort(s);
        bs->err = saved;
        return rc;
    }
    rc = keel_commit(s);
    if (rc == KEEL_OK && !found)
        rc = KEEL_ENOENT;
    return rc;
}

void select_counts_read(const select_client *c, select_counts *out)
{
    syscache_stats cs;
    txn_stats ts;

    syscache_get_stats(c->s->cache, &cs);
    txn_session_stats(c->s->ts, &ts);
    memset(out, 0, sizeof(*out));
    out->hits = cs.hits;
    out->negative_hits = cs.negative_hits;
    out->misses = cs.misses;
    out->list_hits = cs.list_hits;
    out->list_misses = cs.list_misses;
    out->snapshots_reused = ts.snapshots_reused;
    out->snapshots_taken = ts.snapshots_taken;
    out->buffer_reads = buf_session_reads(c->s->bs);
    if (c->pkey != NULL) {
        const btree_dir *d = engine_index_dir_held(c->s, c->pkey->bt);
        btree_dir_stats st;
        if (d != NULL) {
            btree_dir_stats_get(d, &st);
            out->dir_moves = st.moves;
        }
    }
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
