/*
 * dml.c: rows through the API: insert, lookup by primary key, range
 * scans, update and delete by primary key or of a scan's current row,
 * and analyze.
 *
 * Index maintenance: a row goes into the heap first (its tid is the
 * entries' payload), then into every index.  If an index refuses it (a
 * unique violation, or any error) the entries already made are removed
 * and the heap row is deleted again by the same transaction, so nobody
 * ever sees it and the transaction may continue (unless that delete fails
 * too: then the transaction must be aborted).  An update checks its
 * unique keys before it changes anything; a conflict that appears between
 * the check and the index insert (a concurrent insert of the same key)
 * leaves the transaction failed: it must be aborted.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "port/mem.h"
#include "storage/fault.h"

/*
 * The opening of a row call (keel_insert, keel_lookup, keel_update,
 * keel_delete, keel_fetch_changed, keel_scan_update, keel_scan_delete):
 * engine_stmt_begin(), except that it may be made while the
 * session's scan is open.  It is then part of the scan's statement: it
 * runs in the scan's transaction and as the scan's command, so that the
 * scan meets neither the versions it writes nor the loss of the ones it
 * replaces (README.md, "Commands").  A call that writes needs that
 * transaction to be an explicit one: a scan's own transaction commits at
 * keel_scan_end(), which could not report a failed commit.
 */
static inline int row_stmt_begin(keel_session *s, bool write)
{
    if (s->scan == NULL)
        return engine_stmt_begin(s);
    kerr_clear(&s->bs->err);
    if (s->failed)
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "the transaction failed earlier: call keel_abort");
    if (write && engine_scan_implicit(s))
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "a scan outside a transaction cannot have rows "
                        "changed under it: call keel_begin first");
    return KEEL_OK;
}

/* A session's table call, statement begun: resolves the table into t.
 * A writer takes its xid once the table is locked
 * (engine_catalog_txn_unlocked()). */
static int resolve_table(keel_session *s, bool write, const char *schema,
                         const char *table, catalog_txn *ct, engine_table *t)
{
    int rc = write ? engine_catalog_txn_unlocked(s, ct)
                   : engine_catalog_txn(s, false, ct);

    if (rc == KEEL_OK)
        rc = engine_table_open(s, ct, schema, table, !write,
                               write ? KEEL_LOCK_ROW_EXCLUSIVE
                                     : KEEL_LOCK_ACCESS_SHARE,
                               t);
    if (rc == KEEL_OK && write)
        rc = engine_catalog_txn(s, true, ct);
    return rc;
}

/* resolve_table() into a table allocated for the caller to free. */
static int open_table(keel_session *s, bool write, const char *schema,
                      const char *table, catalog_txn *ct, engine_table **t)
{
    *t = calloc(1, sizeof(**t));
    if (*t == NULL)
        return kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    return resolve_table(s, write, schema, table, ct, *t);
}

/* Fails unless values can be a row of t: engine_check_values() passes and
 * the row fits in a heap page. */
static int check_row(keel_session *s, engine_table *t, const keel_value *values)
{
    size_t size;
    int rc = engine_check_values(s, t->h->desc, values);

    /* A primary key added after the table was made leaves its columns'
     * handle as it was: their not-null is checked here too. */
    for (uint32_t i = 0; rc == KEEL_OK && i < t->nidx; i++)
        for (uint16_t k = 0; t->idx[i].primary && k < t->idx[i].nkeys; k++)
            if (values[t->idx[i].keys[k] - 1].isnull)
                rc = kerr_set(&s->bs->err, KEEL_ETYPE,
                              "null value in column %u of table \"%s\" "
                              "violates its primary key",
                              (unsigned)t->idx[i].keys[k], t->rel.name);
    if (rc == KEEL_OK)
        rc = heap_row_size(&t->h->heap, values, &size, &s->bs->err);
    return rc;
}

static int primary_index(keel_session *s, engine_table *t, uint32_t *pi)
{
    for (uint32_t i = 0; i < t->nidx; i++)
        if (t->idx[i].primary) {
            *pi = i;
            return KEEL_OK;
        }
    return kerr_set(&s->bs->err, KEEL_EINVAL, "table \"%s\" has no primary key",
                    t->rel.name);
}

/*
 * Replaces the message of a unique violation in index i of t by one that
 * names the index and the key as PostgreSQL does: 'duplicate key value
 * violates unique constraint "NAME": Key (col, ...)=(val, ...) already
 * exists.'  Names that cannot be looked up are given by number.
 */
static void unique_message(keel_session *s, const engine_table *t, uint32_t i,
                           const keel_value *keys)
{
    const catalog_indexdef *ix = &t->idx[i];
    char name[KEEL_NAME_LEN], cols[256], vals[256];
    size_t nc = 0, nv = 0;
    catcache_entry *e;

    snprintf(name, sizeof(name), "%u", (unsigned)ix->indexoid);
    if (syscache_search1(s->cache, CACHE_CLASS_OID, ix->indexoid, &e) ==
        KEEL_OK) {
        snprintf(name, sizeof(name), "%s",
                 ((const catalog_relation *)syscache_row(e))->name);
        syscache_release(s->cache, e);
    }
    cols[0] = vals[0] = '\0';
    for (uint16_t k = 0; k < ix->nkeys; k++) {
        const tuple_attr *a = &t->h->desc->attrs[ix->keys[k] - 1];
        const keel_value *v = &keys[k];
        char one[96];
        snprintf(one, sizeof(one), "%u", (unsigned)ix->keys[k]);
        if (syscache_search2(s->cache, CACHE_ATTRIBUTE_NUM, t->rel.oid,
                             ix->keys[k], &e) == KEEL_OK) {
            snprintf(one, sizeof(one), "%s",
                     ((const catalog_attribute *)syscache_row(e))->name);
            syscache_release(s->cache, e);
        }
        nc += (size_t)snprintf(cols + nc, nc < sizeof(cols) ? sizeof(cols) - nc : 0,
                               "%s%s", k > 0 ? ", " : "", one);
        if (v->isnull)
            snprintf(one, sizeof(one), "null");
        else if (s->value_text != NULL)
            s->value_text(s->value_text_arg, a->type, v, one, sizeof(one));
        else if (a->type == KEEL_INT2)
            snprintf(one, sizeof(one), "%d", v->v.i2);
        else if (a->type == KEEL_INT4)
            snprintf(one, sizeof(one), "%d", v->v.i4);
        else if (a->type == KEEL_INT8 || a->type == KEEL_TIMESTAMP ||
                 a->type == KEEL_TIMESTAMPTZ)
            snprintf(one, sizeof(one), "%lld", (long long)v->v.i8);
        else if (a->type == KEEL_DATE)
            snprintf(one, sizeof(one), "%d", v->v.i4);
        else if (a->type == KEEL_OID)
            snprintf(one, sizeof(one), "%u", v->v.oid);
        else if (a->type == KEEL_BOOL)
            snprintf(one, sizeof(one), "%s", v->v.b ? "t" : "f");
        else if (a->type == KEEL_FLOAT8)
            snprintf(one, sizeof(one), "%.17g", v->v.f8);
        else if (a->type == KEEL_NUMERIC)
            value_numeric_text(v, one, sizeof(one));
        else if (a->type == KEEL_UUID || a->type == KEEL_BYTEA)
            value_bytes_text(a->type, v, one, sizeof(one));
        else
            snprintf(one, sizeof(one), "%.*s", (int)mem_strnlen(v->v.s.ptr, v->v.s.len < 80 ? v->v.s.len : 80),
                     v->v.s.ptr);
        nv += (size_t)snprintf(vals + nv, nv < sizeof(vals) ? sizeof(vals) - nv : 0,
                               "%s%s", k > 0 ? ", " : "", one);
    }
    kerr_set(&s->bs->err, KEEL_EUNIQUE,
             "duplicate key value violates unique constraint \"%s\": "
             "Key (%s)=(%s) already exists.",
             name, cols, vals);
}

/*
 * Inserts the index entries of the row vals at tid nt, removing on error
 * those it made.  One it fails to remove names a version that its
 * inserter deletes or aborts with: a dead version's entry, as harmless as
 * any other.
 */
static int index_insert_all(keel_session *s, catalog_txn *ct, engine_table *t,
                            const keel_value *vals, tid nt, xid_t *running)
{
    catalog_live_ctx lc = {&t->h->heap, s->bs, &ct->vis, s->db->txn,
                           XID_INVALID, XID_INVALID};
    keel_value keys[BTREE_MAX_KEYS];
    uint32_t i;
    int rc = KEEL_OK;

    /* A unique index's leaf that fills up first sheds the entries of
     * versions no snapshot can see (their marks are the unique check's). */
    for (i = 0; rc == KEEL_OK && i < t->nidx; i++) {
        engine_index_key(&t->idx[i], vals, keys);
        rc = t->idx[i].unique
                 ? btree_insert_prune(t->ih[i]->bt, s->bs, keys, nt,
                                      catalog_row_is_live,
                                      catalog_row_removable, &lc)
                 : btree_insert(t->ih[i]->bt, s->bs, keys, nt, NULL, &lc);
        if (rc == KEEL_EUNIQUE)
            unique_message(s, t, i, keys);
        if (rc != KEEL_OK)
            break;
    }
    if (running != NULL)
        *running = rc == KEEL_EUNIQUE ? lc.running : XID_INVALID;
    if (rc != KEEL_OK) {
        kerr saved = s->bs->err;
        fault_point(FAULT_POINT_INDEX_UNDO, t->rel.relnumber, nt.block);
        while (i-- > 0) {
            engine_index_key(&t->idx[i], vals, keys);
            (void)btree_delete(t->ih[i]->bt, s->bs, keys, nt);
        }
        s->bs->err = saved;
    }
    return rc;
}

keel_status keel_insert(keel_session *s, const char *schema, const char *table,
                const keel_value *values)
{
    catalog_txn ct;
    engine_table tab, *t = &tab;
    bool must_abort = false;
    xid_t running = XID_INVALID;
    int32_t pinned;
    tid nt;
    int rc = row_stmt_begin(s, true);

    if (rc != KEEL_OK)
        return rc;
    tab.nidx = 0;
    rc = resolve_table(s, true, schema, table, &ct, t);
    if (rc == KEEL_OK)
        rc = check_row(s, t, values);
    if (rc == KEEL_OK)
        rc = engine_undo_reserve(s, 1);
again:
    /* The row's page stays pinned until its index entries are in, so
     * that deleting it again, should one fail, reads nothing. */
    if (rc == KEEL_OK)
        rc = heap_insert_pinned(&t->h->heap, s->bs, ct.xid,
                                cid_stamp(ct.vis.cids), values, &nt, &pinned);
    if (rc == KEEL_OK) {
        rc = index_insert_all(s, &ct, t, values, nt, &running);
        if (rc != KEEL_OK) {
            /* A row that could not be deleted again would stay, live for
             * the transaction and lacking index entries: the transaction
             * would have to abort.  Deleted as a reader of every command
             * (a scan's command does not see its own row). */
            kerr saved = s->bs->err;
            cid_t reading = ct.vis.cids->reading;
            ct.vis.cids->reading = CID_ALL;
            if (heap_delete(&t->h->heap, s->bs, &ct.vis, ct.xid, nt) != KEEL_OK)
                must_abort = true;
            ct.vis.cids->reading = reading;
            s->bs->err = saved;
        } else if ((rc = engine_write_guard(s, &ct.vis, t->h, table)) !=
                   KEEL_OK) {
            must_abort = true;
        } else {
            engine_undo_note(s, t->h, nt, true, 0);
        }
        buf_release(s->bs, pinned);
        /* The key's row is another transaction's, inserted or deleted
         * and not yet committed or aborted: as PostgreSQL's unique
         * check, wait for it to end, then try again (23505 if it
         * committed an insert, the row goes in if it aborted one). */
        if (rc == KEEL_EUNIQUE && running != XID_INVALID && !must_abort) {
            rc = engine_wait_xid(s, running, table);
            if (rc == KEEL_OK)
                goto again;
        }
    }
    return engine_stmt_end(s, rc, must_abort);
}

/* Versions of one key a point search keeps, on the stack: the last in
 * tid order; those before them are scanned only if none of these is
 * seen. */
#define FIND_TIDS 64

/*
 * The versions of key (nkeys columns) in index bt before `window`, the
 * first tid btree_search_last() kept, oldest first: each one but `skip`
 * (a tid tried already, or an invalid one) is fetched into row, decoding
 * ncols columns, until vis sees one (*found).  Entries are ordered by
 * key and tid, so the scan stops at the first tid not below window; a
 * version any snapshot of the caller's sees was in the index before the
 * search that chose window.
 */
static __attribute__((noinline)) int
scan_older(keel_session *s, btree *bt, engine_rel *h, const keel_value *key,
           uint16_t nkeys, const visibility *vis, uint16_t ncols, tid window,
           tid skip, heap_row *row, bool *found)
{
    btree_bound b = {key, nkeys, true};
    btree_scan *sc = NULL;
    tid t;
    int rc = btree_scan_begin(bt, s->bs, &b, &b, &sc);

    while (rc == KEEL_OK && !*found) {
        rc = btree_scan_next(sc, &t, NULL);
        if (rc == KEEL_ENOENT) {
            rc = KEEL_OK;
            break;
        }
        if (rc != KEEL_OK || tid_compare(t, window) >= 0)
            break;
        if (tid_compare(t, skip) == 0)
            continue;
        rc = heap_fetch_cols(&h->heap, s->bs, vis, t, ncols, row);
        if (rc == KEEL_OK)
            *found = true;
        else if (rc == KEEL_ENOENT)
            rc = KEEL_OK;
    }
    btree_scan_end(sc);
    return rc;
}

/*
 * Fetches the version at tt into row if ct sees it: KEEL_OK with *found,
 * KEEL_OK without (dead or invisible), or an error.
 */
static int fetch_visible(keel_session *s, catalog_txn *ct, engine_table *t,
                         tid tt, heap_row *row, bool *found)
{
    int rc = heap_fetch_cols(&t->h->heap, s->bs, &ct->vis, tt,
                             t->h->desc->natts, row);

    if (rc == KEEL_OK)
        *found = true;
    return rc == KEEL_ENOENT ? KEEL_OK : rc;
}

/*
 * Finds the version visible to ct whose key in index ix (a unique one:
 * a snapshot sees at most one version of a key) equals keys; copies it
 * into row and sets *found.  A point search keeps the key's last
 * FIND_TIDS versions in tid order without allocating, and they are tried
 * last first (an update's new version, the one most transactions see,
 * usually lands after the old; only the order of the reads depends on
 * it); the versions before them are scanned only if none is seen.
 */
static int find_by_key(keel_session *s, catalog_txn *ct, engine_table *t,
                       uint32_t ix, const keel_value *keys, heap_row *row,
                       bool *found)
{
    btree *bt = t->ih[ix]->bt;
    tid tids[FIND_TIDS];
    uint32_t count = 0;
    int rc;

    *found = false;
    rc = btree_search_last(bt, s->bs, keys, engine_index_dir(s, bt), tids,
                           FIND_TIDS, &count);
    for (uint32_t i = count < FIND_TIDS ? count : FIND_TIDS;
         rc == KEEL_OK && !*found && i-- > 0;)
        rc = fetch_visible(s, ct, t, tids[i], row, found);
    if (rc != KEEL_OK || *found || count <= FIND_TIDS)
        return rc;
    return scan_older(s, bt, t->h, keys, t->idx[ix].nkeys, &ct->vis,
                      t->h->desc->natts, tids[0], (tid){0, 0}, row, found);
}

/*
 * A primary key's values, key, against its nkeys columns cols (1-based)
 * of rows described by d: EINVAL without a key, ETYPE for a string
 * without bytes; *none when a value is null (no row has a null in its
 * primary key).
 */
static inline int key_check(keel_session *s, const tuple_desc *d,
                            const uint16_t *cols, uint16_t nkeys,
                            const keel_value *key, bool *none)
{
    *none = false;
    if (key == NULL)
        return kerr_set(&s->bs->err, KEEL_EINVAL, "no key given");
    for (uint16_t k = 0; k < nkeys; k++) {
        if (key[k].isnull)
            *none = true;
        else if (type_has_bytes(d->attrs[cols[k] - 1].type) &&
                 key[k].v.s.len > 0 && key[k].v.s.ptr == NULL)
            return kerr_set(&s->bs->err, KEEL_ETYPE,
                            "key column %u: string value without bytes", k + 1);
    }
    return KEEL_OK;
}

/*
 * find_by_key() on t's primary key: prepares row, zeroed or used before,
 * for t's heap (heap_row_prepare(); the caller frees it, also on error)
 * and copies into it the version visible
 * to ct of the row whose primary key is key.  *found tells whether there
 * is one (a key with a null finds none); with must_exist, a missing row
 * is KEEL_ENOENT instead.  EINVAL if t has no primary key or key is NULL,
 * ETYPE for a string key without bytes (key_check()).
 */
static int find_by_primary_key(keel_session *s, catalog_txn *ct,
                               engine_table *t, const keel_value *key,
                               bool must_exist, heap_row *row, bool *found)
{
    uint32_t pi = 0;
    bool none = false;
    int rc = primary_index(s, t, &pi);

    *found = false;
    if (rc == KEEL_OK)
        rc = key_check(s, t->h->desc, t->idx[pi].keys, t->idx[pi].nkeys, key,
                       &none);
    if (rc == KEEL_OK)
        rc = heap_row_prepare(row, &t->h->heap, &s->bs->err);
    if (rc == KEEL_OK && !none)
        rc = find_by_key(s, ct, t, pi, key, row, found);
    if (rc == KEEL_OK && must_exist && !*found)
        rc = kerr_set(&s->bs->err, KEEL_ENOENT,
                      "table \"%s\" has no row with that key", t->rel.name);
    return rc;
}

/* Allocates nothing once the session's result row has room for the
 * table's columns: the table is resolved on the stack. */
keel_status keel_lookup(keel_session *s, const char *schema, const char *table,
                const keel_value *key, keel_value *out, bool *found)
{
    catalog_txn ct;
    engine_table t;
    int rc = row_stmt_begin(s, false);

    *found = false;
    if (rc != KEEL_OK)
        return rc;
    t.nidx = 0;
    rc = resolve_table(s, false, schema, table, &ct, &t);
    if (rc == KEEL_OK)
        rc = find_by_primary_key(s, &ct, &t, key, false, &s->result, found);
    if (rc == KEEL_OK && *found)
        memcpy(out, s->result.values, t.rel.natts * sizeof(keel_value));
    return engine_stmt_end(s, rc, false);
}

static int follow_row(keel_session *s, catalog_txn *ct, engine_table *t,
                      tid from, bool stay, heap_row *row, tid *latest);

keel_status keel_cas_int8(keel_session *s, const char *schema,
                          const char *table, const keel_value *key,
                          uint16_t col, int64_t expect, int64_t set,
                          int64_t *actual)
{
    return keel_cas_int8_row(s, schema, table, key, col, expect, set, actual,
                             NULL);
}

keel_status keel_cas_int8_row(keel_session *s, const char *schema,
                              const char *table, const keel_value *key,
                              uint16_t col, int64_t expect, int64_t set,
                              int64_t *actual, keel_value *row)
{
    catalog_txn ct;
    engine_table t;
    bool found = false;
    int rc = row_stmt_begin(s, false);

    if (rc != KEEL_OK)
        return rc;
    t.nidx = 0;
    rc = resolve_table(s, false, schema, table, &ct, &t);
    if (rc == KEEL_OK && col >= t.rel.natts)
        rc = kerr_set(&s->bs->err, KEEL_EINVAL,
                      "table \"%s\" has no column %u", t.rel.name,
                      (unsigned)col + 1);
    if (rc == KEEL_OK)
        rc = find_by_primary_key(s, &ct, &t, key, true, &s->result, &found);
    while (rc == KEEL_OK) {
        tid latest;
        rc = heap_cas_int8(&t.h->heap, s->bs, &ct.vis, s->result.tid,
                           s->result.xmin, col, expect, set, actual);
        if (rc != KEEL_ESERIALIZE)
            break;
        /* The version the snapshot sees was replaced (ALTER SEQUENCE):
         * the counter is the row's newest version, whatever the
         * snapshot, waiting for a transaction still replacing it. */
        s->follow_xmin = s->result.xmin;
        rc = follow_row(s, &ct, &t, s->result.tid, false, &s->result, &latest);
        if (rc == KEEL_OK) {
            s->result.tid = latest;
            s->result.xmin = s->follow_xmin;
        }
    }
    if (rc == KEEL_OK && row != NULL)
        memcpy(row, s->result.values, t.rel.natts * sizeof(keel_value));
    return engine_stmt_end(s, rc, false);
}

/* What keel_select_column()'s planning found. */
typedef struct select_plan {
    oid_t relid;
    uint16_t attnum;
    uint16_t ncols; /* columns to decode: attnum's and the key's */
    oid_t indexoid; /* the primary key */
    oid_t pktable;  /* the table its keel_index row names */
    uint16_t nkeys;
    uint16_t keys[BTREE_MAX_KEYS];
} select_plan;

/* The error of a name that found nothing: ETOOBIG if it is too long for
 * one (or EINVAL if empty), else ENOENT with what. */
static int select_not_found(keel_session *s, const char *kind, const char *name,
                            const char *what)
{
    int rc = engine_check_name(s, kind, name);

    return rc != KEEL_OK ? rc : kerr_set(&s->bs->err, KEEL_ENOENT, "%s", what);
}

/*
 * The planner's catalog look-ups for keel_select_column(), each entry
 * released before the next statement: the table (left held in *rel_e,
 * for its handle), the column, the column's statistics, the index list.
 */
static int select_plan_make(keel_session *s, const char *schema,
                            const char *table, const char *column,
                            catcache_entry **rel_e, select_plan *p)
{
    syscache *sc = s->cache;
    kerr *err = &s->bs->err;
    const catalog_relation *rel;
    const catalog_indexdef *pk = NULL;
    catcache_entry *e;
    catcache_list *l;
    syscache_key key;
    uint32_t n;
    char what[3 * KEEL_NAME_LEN];
    int rc = engine_relation_find(s, schema, table, rel_e);

    if (rc != KEEL_OK)
        return rc;
    if (*rel_e == NULL) {
        snprintf(what, sizeof(what), "table \"%s\" does not exist", table);
        return select_not_found(s, "table", table, what);
    }
    rel = syscache_row(*rel_e);
    if (rel->kind != RELKIND_TABLE || rel->nsoid == NAMESPACE_CATALOG)
        return kerr_set(err, KEEL_EINVAL, "\"%s\" is not a user table", table);
    p->relid = rel->oid;
    rc = syscache_search2(sc, CACHE_ATTRIBUTE_NAME, p->relid,
                          SYSCACHE_NAME(column), &e);
    if (rc == KEEL_ENOENT) {
        snprintf(what, sizeof(what),
                 "column \"%.63s\" of table \"%s\" does not exist", column,
                 table);
        return select_not_found(s, "column", column, what);
    }
    if (rc != KEEL_OK)
        return rc;
    p->attnum = ((const catalog_attribute *)syscache_row(e))->attnum;
    syscache_release(sc, e);
    if (p->attnum < 1 || p->attnum > rel->natts)
        return kerr_set(err, KEEL_ECORRUPT,
                        "column \"%s\" of table \"%s\" has number %u of %u",
                        column, table, p->attnum, rel->natts);
    /* The column's statistics: found or not, both are answers. */
    rc = syscache_search3(sc, CACHE_STATISTIC, p->relid, p->attnum, 0, &e);
    if (rc == KEEL_OK)
        syscache_release(sc, e);
    else if (rc != KEEL_ENOENT)
        return rc;
    key = p->relid;
    rc = syscache_list(sc, CACHE_INDEX_TABLE, 1, &key, &l);
    if (rc != KEEL_OK)
        return rc;
    n = syscache_list_count(l);
    for (uint32_t i = 0; i < n && pk == NULL; i++) {
        const catalog_indexdef *ix = syscache_list_row(l, i);
        if (ix->primary)
            pk = ix;
    }
    if (pk != NULL) {
        p->indexoid = pk->indexoid;
        p->pktable = pk->tableoid;
        p->nkeys = pk->nkeys;
        p->ncols = p->attnum > pk->keys[0] ? p->attnum : pk->keys[0];
        p->keys[0] = pk->keys[0];
        for (uint16_t k = 1; k < pk->nkeys && k < BTREE_MAX_KEYS; k++) {
            p->keys[k] = pk->keys[k];
            if (p->keys[k] > p->ncols)
                p->ncols = p->keys[k];
            if (p->keys[k] < 1)
                p->keys[0] = 0;
        }
    }
    syscache_list_release(sc, l);
    if (pk == NULL)
        return kerr_set(err, KEEL_EINVAL, "table \"%s\" has no primary key",
                        table);
    if (p->ncols > rel->natts || p->keys[0] < 1 || p->nkeys < 1 ||
        p->nkeys > BTREE_MAX_KEYS)
        return kerr_set(err, KEEL_ECORRUPT,
                        "the primary key %u of table \"%s\" does not fit its "
                        "%u columns",
                        p->indexoid, table, rel->natts);
    return KEEL_OK;
}

/*
 * select_fetch()'s second step, when the key's first entry, at tried, is
 * not the version vis sees (the row was updated or deleted since): the
 * key's last FIND_TIDS entries from one search (no allocation), last in
 * tid order first, as find_by_key() takes them; the ones before them
 * are scanned only if none of these is seen.
 */
static __attribute__((noinline)) int
select_versions(keel_session *s, engine_rel *h, engine_rel *ix,
                const keel_value *key, uint16_t nkeys, const visibility *vis,
                uint16_t ncols, tid tried, heap_row *row, bool *found)
{
    tid tids[FIND_TIDS];
    uint32_t count = 0;
    int rc = btree_search_last(ix->bt, s->bs, key, engine_index_dir(s, ix->bt),
                               tids, FIND_TIDS, &count);

    for (uint32_t i = count < FIND_TIDS ? count : FIND_TIDS;
         rc == KEEL_OK && !*found && i-- > 0;) {
        if (tid_compare(tids[i], tried) == 0)
            continue;
        rc = heap_fetch_cols(&h->heap, s->bs, vis, tids[i], ncols, row);
        if (rc == KEEL_OK)
            *found = true;
        else if (rc == KEEL_ENOENT)
            rc = KEEL_OK;
    }
    if (rc != KEEL_OK || *found || count <= FIND_TIDS)
        return rc;
    return scan_older(s, ix->bt, h, key, nkeys, vis, ncols, tids[0], tried, row,
                      found);
}

/*
 * Fetches into row, decoding its first ncols columns, the version of key
 * in index ix (the table's primary key, of nkeys columns) that vis sees:
 * the first entry the index holds for the key is tried alone (a row
 * never updated has no other); only if the transaction does not see it
 * are the others looked at (select_versions()).
 */
static inline int select_fetch(keel_session *s, engine_rel *h, engine_rel *ix,
                               const keel_value *key, uint16_t nkeys,
                               const visibility *vis, uint16_t ncols,
                               heap_row *row, bool *found)
{
    tid t;
    int rc = btree_lookup_heap(ix->bt, s->bs, key, &h->heap,
                               engine_index_dir(s, ix->bt), &t, NULL);

    if (rc == KEEL_ENOENT) /* no entry */
        return KEEL_OK;
    if (rc == KEEL_OK)
        rc = heap_fetch_cols(&h->heap, s->bs, vis, t, ncols, row);
    if (rc == KEEL_OK)
        *found = true;
    if (rc != KEEL_ENOENT)
        return rc;
    return select_versions(s, h, ix, key, nkeys, vis, ncols, t, row, found);
}

/* Whether key value x equals y, a row's value of attribute a: int4 and
 * int8 keys (the common primary keys) without a call. */
static inline bool select_key_equal(const tuple_attr *a, const keel_value *x,
                                    const keel_value *y)
{
    if (x->isnull || y->isnull)
        return false;
    if (a->type == KEEL_INT4)
        return x->v.i4 == y->v.i4;
    if (a->type == KEEL_INT8)
        return x->v.i8 == y->v.i8;
    return value_compare(a, x, y) == 0;
}

/*
 * The handles of the planned table (its keel_class row rel) and primary
 * key: the ones the session used last if the oids are theirs, else looked
 * up (or opened), checked to fit each other (engine_index_fits()) and
 * kept for the next call.
 */
static int select_handles(keel_session *s, const catalog_relation *rel,
                          const select_plan *p, engine_rel **h, engine_rel **ix)
{
    bool fresh = false;
    int rc = KEEL_OK;

    if (s->select_heap == NULL || s->select_heap->oid != p->relid) {
        rc = engine_table_handle(s, NULL, rel, &s->select_heap);
        if (rc != KEEL_OK) {
            s->select_heap = NULL;
            return rc;
        }
        fresh = true;
    }
    if (s->select_index == NULL || s->select_index->oid != p->indexoid) {
        rc = engine_index_handle(s, p->indexoid, &s->select_index);
        if (rc != KEEL_OK) {
            s->select_index = NULL;
            return rc;
        }
        fresh = true;
    }
    if (fresh) {
        catalog_indexdef d = {
            .indexoid = p->indexoid, .tableoid = p->pktable, .nkeys = p->nkeys};
        memcpy(d.keys, p->keys, sizeof(d.keys));
        rc =
            engine_index_fits(s, s->select_heap, p->relid, s->select_index, &d);
        if (rc != KEEL_OK) {
            s->select_heap = s->select_index = NULL;
            return rc;
        }
    }
    *h = s->select_heap;
    *ix = s->select_index;
    return KEEL_OK;
}

keel_status keel_select_column(keel_session *s, const char *schema, const char *table,
                       const char *column, const keel_value *key,
                       keel_value *out, bool *found)
{
    kerr *err = &s->bs->err;
    catcache_entry *rel_e = NULL;
    engine_rel *h = NULL, *ix = NULL;
    heap_row *row = &s->result;
    select_plan p = {0};
    visibility vis;
    bool none, replanned = false;
    int rc = engine_stmt_begin(s);

    *found = false;
    if (rc != KEEL_OK)
        return rc;
    /* A name too long finds nothing: select_not_found() reports it. */
    if (table == NULL || table[0] == '\0') {
        rc = engine_check_name(s, "table", table);
        goto done;
    }
    if (column == NULL || column[0] == '\0') {
        rc = engine_check_name(s, "column", column);
        goto done;
    }
plan:
    engine_cache_sync(s);
    rc = select_plan_make(s, schema, table, column, &rel_e, &p);
    if (rc == KEEL_OK)
        rc = select_handles(s, syscache_row(rel_e), &p, &h, &ix);
    if (rel_e != NULL)
        syscache_release(s->cache, rel_e);
    /* Planned, locked, then trusted; planned once more after a wait that
     * took the snapshot again (engine_table_settle()). */
    if (rc == KEEL_OK) {
        rc = engine_table_lock(s, h, KEEL_LOCK_ACCESS_SHARE);
        if (__builtin_expect(rc != KEEL_OK, 0))
            rc = engine_table_settle(s, h, KEEL_LOCK_ACCESS_SHARE, rc,
                                     replanned ? 0 : ENGINE_REFRESH_ONCE,
                                     schema, table);
        if (rc == ENGINE_AGAIN) {
            replanned = true;
            rel_e = NULL;
            goto plan;
        }
    }
    if (rc != KEEL_OK)
        goto done;
    /* The row needs room for the table's columns, not zeroing: only the
     * first p.ncols are decoded and read. */
    if (row->data == NULL || row->room < h->desc->natts) {
        rc = heap_row_prepare(row, &h->heap, err);
        if (rc != KEEL_OK)
            goto done;
    }
    row->natts = h->desc->natts;
    rc = txn_visibility(s->ts, &vis, err);
    if (rc == KEEL_OK)
        rc = key_check(s, h->desc, p.keys, p.nkeys, key, &none);
    if (rc != KEEL_OK || none)
        goto done;
    rc = select_fetch(s, h, ix, key, p.nkeys, &vis, p.ncols, row, found);
    if (rc != KEEL_OK || !*found)
        goto done;
    for (uint16_t k = 0; k < p.nkeys; k++)
        if (!select_key_equal(&h->desc->attrs[p.keys[k] - 1], &key[k],
                              &row->values[p.keys[k] - 1])) {
            rc = kerr_set(err, KEEL_ECORRUPT,
                          "index %u of table \"%s\" led to row (%u,%u), "
                          "whose key is another",
                          p.indexoid, table, row->tid.block, row->tid.offset);
            goto done;
        }
    *out = row->values[p.attnum - 1];
done:
    rc = engine_stmt_end(s, rc, false);
    if (rc != KEEL_OK) /* this call's, or its implicit commit's */
        *found = false;
    return rc;
}

/* True if a unique index ix holds a live entry for keys other than the
 * version `self`. */
static int key_taken(keel_session *s, catalog_txn *ct, engine_table *t,
                     uint32_t ix, const keel_value *keys, tid self, bool *taken)
{
    catalog_live_ctx lc = {&t->h->heap, s->bs, &ct->vis, NULL, XID_INVALID,
                           XID_INVALID};
    btree_bound b = {keys, t->idx[ix].nkeys, true};
    btree_scan *sc = NULL;
    tid tt;
    int rc = btree_scan_begin(t->ih[ix]->bt, s->bs, &b, &b, &sc);

    *taken = false;
    while (rc == KEEL_OK && !*taken) {
        rc = btree_scan_next(sc, &tt, NULL);
        if (rc == KEEL_ENOENT) {
            rc = KEEL_OK;
            break;
        }
        if (rc == KEEL_OK && tid_compare(tt, self) != 0) {
            btree_row fate = catalog_row_is_live(&lc, tt);
            if (fate == BTREE_ROW_ERROR)
                rc = s->bs->err.code != KEEL_OK
                         ? s->bs->err.code
                         : kerr_set(&s->bs->err, KEEL_EIO,
                                    "the row at (%u,%u) could not be read",
                                    tt.block, tt.offset);
            *taken = fate == BTREE_ROW_LIVE;
        }
    }
    btree_scan_end(sc);
    return rc;
}

/* True if keys equal the key of index ix in the row values old. */
static bool same_key(const engine_table *t, uint32_t ix, const keel_value *keys,
                     const keel_value *old)
{
    const tuple_desc *d = t->h->desc;

    for (uint16_t k = 0; k < t->idx[ix].nkeys; k++) {
        uint16_t col = t->idx[ix].keys[k] - 1;
        if (value_compare(&d->attrs[col], &keys[k], &old[col]) != 0)
            return false;
    }
    return true;
}

/* ---- read committed: rows changed since the snapshot ------------------ */

/* Follows t's changed row from from to its newest version, into row,
 * waiting for the transactions still changing it: KEEL_OK with
 * *latest, KEEL_ENOENT if the row was deleted, a wait's errors. */
static int follow_row(keel_session *s, catalog_txn *ct, engine_table *t,
                      tid from, bool stay, heap_row *row, tid *latest)
{
    int rc = heap_row_prepare(row, &t->h->heap, &s->bs->err);

    while (rc == KEEL_OK) {
        xid_t wait = XID_INVALID;
        rc = heap_follow(&t->h->heap, s->bs, &ct->vis, from, &s->follow_xmin,
                         stay, row, latest, &wait);
        if (rc != KEEL_OK || wait == XID_INVALID)
            break;
        rc = engine_wait_xid(s, wait, t->rel.name);
        from = *latest;
    }
    return rc;
}

/* Whether the session follows a changed row of t (KEEL_ECHANGED) and the
 * version keel_fetch_changed() returned has primary key `key`: then
 * *following, and row holds that version (the one the caller computed
 * its change from: a change to it since is a conflict to meet again).
 * Following ends here either way. */
static int follow_find(keel_session *s, catalog_txn *ct, engine_table *t,
                       const keel_value *key, heap_row *row, bool *following)
{
    const tuple_desc *d = t->h->desc;
    uint32_t pi = 0;
    tid latest;
    int rc;

    *following = false;
    if (!s->follow_set || s->follow_table != t->rel.oid || key == NULL)
        return KEEL_OK;
    s->follow_set = false;
    rc = primary_index(s, t, &pi);
    if (rc == KEEL_OK)
        rc = follow_row(s, ct, t, s->follow_tid, true, row, &latest);
    if (rc != KEEL_OK)
        return rc;
    for (uint16_t k = 0; k < t->idx[pi].nkeys; k++) {
        uint16_t col = t->idx[pi].keys[k] - 1;
        if (key[k].isnull || row->values[col].isnull ||
            value_compare(&d->attrs[col], &key[k], &row->values[col]) != 0)
            return KEEL_OK;
    }
    *following = true;
    return KEEL_OK;
}

/*
 * A write met a running transaction's shared lock on its row (a locker,
 * txn/rowlock.h): waits for it to end.  Under repeatable read, one that
 * committed may have written what this transaction's snapshot cannot see
 * (a child of the row it locked, which a delete's foreign-key check
 * would miss), so the write fails with KEEL_ESERIALIZE, as PostgreSQL's
 * check with its crosscheck snapshot does; read committed tries again,
 * and its checks take a new snapshot.
 */
static int locker_wait(keel_session *s, engine_table *t, xid_t locker)
{
    xid_status st = XID_STATUS_IN_PROGRESS;
    int rc = engine_wait_xid(s, locker, t->rel.name);

    if (rc != KEEL_OK || s->read_committed)
        return rc;
    rc = txn_xid_status(s->ts, locker, &st, &s->bs->err);
    if (rc == KEEL_OK && st != XID_STATUS_ABORTED)
        rc = kerr_set(&s->bs->err, KEEL_ESERIALIZE,
                      "could not serialize access: the row of table \"%s\" "
                      "was locked by transaction %u, which committed after "
                      "this transaction's snapshot",
                      t->rel.name, (unsigned)locker);
    return rc;
}

/* The visibility a write of ct's transaction works with: a row lock's
 * holder it meets is named in *locker, and under read committed a change
 * it meets in *met (following: the version need only be committed). */
static visibility write_visibility(const keel_session *s,
                                   const catalog_txn *ct, bool following,
                                   write_conflict *met, xid_t *locker)
{
    visibility wv = ct->vis;

    wv.locker = locker;
    if (s->read_committed) {
        wv.met = met;
        wv.committed_ok = following;
    }
    return wv;
}

/* A write (read committed) met another transaction's change to its row:
 * waits for a running one (KEEL_OK: try the version again); for one that
 * committed, the row was deleted (KEEL_ENOENT) or updated (KEEL_ECHANGED,
 * the session now following it). */
static int met_change(keel_session *s, engine_table *t, const write_conflict *m)
{
    int rc;

    if (!m->committed)
        return engine_wait_xid(s, m->xid, t->rel.name);
    /* Committed, it may still be in the process array (its commit record
     * on its way to disk), where the next statement's snapshot would not
     * see it: its old version and this transaction's new one would both
     * be visible then.  It leaves the array once durable: a wait even
     * for a session that waits for no running writer (its row is not
     * locked, only on its way to the log). */
    {
        bool nowait = s->row_nowait;
        s->row_nowait = false;
        rc = engine_wait_xid(s, m->xid, t->rel.name);
        s->row_nowait = nowait;
    }
    if (rc != KEEL_OK)
        return rc;
    if (!m->updated)
        return kerr_set(&s->bs->err, KEEL_ENOENT,
                        "the row of table \"%s\" was deleted by transaction "
                        "%u, which committed after the statement's snapshot",
                        t->rel.name, (unsigned)m->xid);
    s->follow_set = true;
    s->follow_table = t->rel.oid;
    s->follow_tid = (tid){.block = m->next_block, .offset = m->next_offset};
    s->follow_xmin = m->xid; /* the updater made the next version */
    return kerr_set(&s->bs->err, KEEL_ECHANGED,
                    "the row of table \"%s\" was updated by transaction %u, "
                    "which committed after the statement's snapshot",
                    t->rel.name, (unsigned)m->xid);
}

keel_status keel_fetch_changed(keel_session *s, const char *schema,
                               const char *table, keel_value *out, bool *found)
{
    catalog_txn ct;
    engine_table t;
    tid latest;
    int rc = row_stmt_begin(s, false);

    *found = false;
    if (rc != KEEL_OK)
        return rc;
    t.nidx = 0;
    rc = resolve_table(s, false, schema, table, &ct, &t);
    if (rc == KEEL_OK && (!s->follow_set || s->follow_table != t.rel.oid))
        rc = kerr_set(&s->bs->err, KEEL_EINVAL,
                      "no changed row of table \"%s\" to fetch: the "
                      "session's last change of it did not return "
                      "KEEL_ECHANGED",
                      t.rel.name);
    if (rc == KEEL_OK)
        rc = follow_row(s, &ct, &t, s->follow_tid, false, &s->result, &latest);
    if (rc == KEEL_OK) {
        s->follow_tid = latest;
        *found = true;
        memcpy(out, s->result.values, t.rel.natts * sizeof(keel_value));
    } else if (rc == KEEL_ENOENT && s->follow_set) {
        s->follow_set = false; /* deleted since: nothing to follow */
        rc = KEEL_OK;
    }
    return engine_stmt_end(s, rc, false);
}

/*
 * Replaces version old of a row of t (read by ct's snapshot, or with
 * following the version keel_fetch_changed() returned, which need only be
 * committed) by values, which check_row() passed: if no index's key
 * changes, the new version may be heap-only (placed beside the old one:
 * no index entries, access/README.md); else the keys of t's unique
 * indexes that change are checked first (KEEL_EUNIQUE, nothing changed);
 * read committed waits for a running changer of the version and reports
 * a committed one's change (met_change()); then the new version's index
 * entries, whose failure takes the update back (heap_update_undo()), and
 * the write guard.  *changed: the write guard refused a change it cannot
 * take back, and the transaction must abort.  The shared body of
 * keel_update() and keel_scan_update().
 */
static int update_version(keel_session *s, catalog_txn *ct, engine_table *t,
                          const heap_row *old, bool following,
                          const keel_value *values, bool *changed)
{
    keel_value keys[BTREE_MAX_KEYS];
    heap_update_hold hold;
    write_conflict met = {0};
    xid_t locker = XID_INVALID;
    visibility wv;
    bool hot_ok = true, keeps_key = true;
    tid nt;
    int rc = KEEL_OK;

    *changed = false;
    /* No index key changes: the new version may be heap-only, with no
     * entries of its own (access/heap_page.h, "Heap-only updates"). */
    for (uint32_t i = 0; hot_ok && i < t->nidx; i++) {
        engine_index_key(&t->idx[i], values, keys);
        hot_ok = same_key(t, i, keys, old->values);
    }
    for (uint32_t i = 0; !hot_ok && rc == KEEL_OK && i < t->nidx; i++) {
        bool taken = false;
        if (!t->idx[i].unique)
            continue;
        engine_index_key(&t->idx[i], values, keys);
        if (same_key(t, i, keys, old->values))
            continue; /* only this row can hold it: heap_update decides */
        keeps_key = false;
        rc = key_taken(s, ct, t, i, keys, old->tid, &taken);
        if (rc == KEEL_OK && taken) {
            unique_message(s, t, i, keys);
            rc = KEEL_EUNIQUE;
        }
    }
    /* Both versions' pages stay pinned until the new one's index entries
     * are in, so that taking the update back, should one fail, reads
     * nothing.  A write guard's refusal leaves the transaction to abort. */
    /* Read committed waits for a running changer of the row, and reports
     * a committed one's update for the caller to check the row again. */
    wv = write_visibility(s, ct, following, &met, &locker);
    wv.keeps_key = keeps_key;
    if (rc == KEEL_OK)
        rc = engine_undo_reserve(s, 2);
    while (rc == KEEL_OK) {
        met.xid = locker = XID_INVALID;
        rc = heap_update_held(&t->h->heap, s->bs, &wv, ct->xid, old->tid,
                              values, hot_ok, &nt, &hold);
        if (rc == KEEL_ESERIALIZE && (locker != XID_INVALID ||
                                      met.xid != XID_INVALID)) {
            rc = locker != XID_INVALID ? locker_wait(s, t, locker)
                                       : met_change(s, t, &met);
            if (rc == KEEL_OK)
                continue;
        }
        break;
    }
    /* KEY SHARE holders of the old version hold the new one too */
    if (rc == KEEL_OK && keeps_key && wv.rowlocks != NULL) {
        rc = rowlock_carry(wv.rowlocks, t->h->heap.relnumber, old->tid.block,
                           old->tid.offset, nt.block, nt.offset, ct->xid,
                           &s->bs->err);
        if (rc != KEEL_OK)
            heap_update_undo(s->bs, ct->xid, &hold);
    }
    if (rc == KEEL_OK) {
        rc = hold.hot ? KEEL_OK
                      : index_insert_all(s, ct, t, values, nt, NULL);
        if (rc != KEEL_OK) {
            heap_update_undo(s->bs, ct->xid, &hold);
        } else {
            heap_update_release(s->bs, &hold);
            rc = engine_write_guard(s, &ct->vis, t->h, t->rel.name);
            *changed = rc != KEEL_OK;
            if (rc == KEEL_OK) {
                engine_undo_note(s, t->h, old->tid, false, hold.old_cid);
                engine_undo_note(s, t->h, nt, true, 0);
            }
        }
    }
    return rc;
}

/*
 * Deletes version old of a row of t, as update_version() replaces one
 * (read committed's waits and reports included).  Deletes add no index
 * entries, and are not guarded.  The shared body of keel_delete() and
 * keel_scan_delete().
 */
static int delete_version(keel_session *s, catalog_txn *ct, engine_table *t,
                          tid old, bool following)
{
    write_conflict met = {0};
    xid_t locker = XID_INVALID;
    visibility wv = write_visibility(s, ct, following, &met, &locker);
    uint32_t old_cid = 0;
    int rc = engine_undo_reserve(s, 1);

    while (rc == KEEL_OK) {
        met.xid = locker = XID_INVALID;
        rc = heap_delete_cid(&t->h->heap, s->bs, &wv, ct->xid, old, &old_cid);
        if (rc == KEEL_ESERIALIZE && (locker != XID_INVALID ||
                                      met.xid != XID_INVALID)) {
            rc = locker != XID_INVALID ? locker_wait(s, t, locker)
                                       : met_change(s, t, &met);
            if (rc == KEEL_OK)
                continue;
        }
        break;
    }
    if (rc == KEEL_OK)
        engine_undo_note(s, t->h, old, false, old_cid);
    return rc;
}

keel_status keel_update(keel_session *s, const char *schema, const char *table,
                const keel_value *key, const keel_value *values)
{
    catalog_txn ct;
    engine_table tab, *t = &tab;
    heap_row row = {0};
    bool found = false, changed = false, following = false;
    int rc = row_stmt_begin(s, true);

    if (rc != KEEL_OK)
        return rc;
    tab.nidx = 0;
    rc = resolve_table(s, true, schema, table, &ct, t);
    if (rc == KEEL_OK)
        rc = check_row(s, t, values);
    if (rc == KEEL_OK && s->read_committed)
        rc = follow_find(s, &ct, t, key, &row, &following);
    if (rc == KEEL_OK && !following)
        rc = find_by_primary_key(s, &ct, t, key, true, &row, &found);
    if (rc == KEEL_OK)
        rc = update_version(s, &ct, t, &row, following, values, &changed);
    heap_row_free(&row);
    return engine_stmt_end(s, rc, changed);
}

/*
 * Locks version old of a row of t in mode (heap_lock_row()), with read
 * committed's waits and reports as delete_version(); the holder of a
 * conflicting lock is waited for under either isolation, and the version
 * tried again (a lock changes nothing a snapshot could miss).
 */
static int lock_version(keel_session *s, catalog_txn *ct, engine_table *t,
                        tid old, bool following, rowlock_mode mode)
{
    write_conflict met = {0};
    xid_t locker = XID_INVALID;
    visibility wv = write_visibility(s, ct, following, &met, &locker);
    int rc = KEEL_OK;

    while (rc == KEEL_OK) {
        met.xid = locker = XID_INVALID;
        rc = heap_lock_row(&t->h->heap, s->bs, &wv, ct->xid, old, mode);
        if (rc == KEEL_ESERIALIZE && locker != XID_INVALID) {
            rc = engine_wait_xid(s, locker, t->rel.name);
            if (rc == KEEL_OK)
                continue;
        } else if (rc == KEEL_ESERIALIZE && met.xid != XID_INVALID) {
            rc = met_change(s, t, &met);
            if (rc == KEEL_OK)
                continue;
        }
        break;
    }
    return rc;
}

/* The row with primary key `key` (or the version the session follows,
 * under read committed) deleted (mode 0) or locked in mode: the shared
 * body of keel_delete() and keel_lock_row(). */
static keel_status delete_or_lock(keel_session *s, const char *schema,
                                  const char *table, const keel_value *key,
                                  int mode)
{
    catalog_txn ct;
    engine_table tab, *t = &tab;
    heap_row row = {0};
    bool found = false, following = false;
    int rc = row_stmt_begin(s, true);

    if (rc != KEEL_OK)
        return rc;
    tab.nidx = 0;
    if (mode != 0 && (mode < KEEL_ROW_KEY_SHARE || mode > KEEL_ROW_UPDATE))
        rc = kerr_set(&s->bs->err, KEEL_EINVAL, "unknown row lock mode %d",
                      mode);
    if (rc == KEEL_OK)
        rc = resolve_table(s, true, schema, table, &ct, t);
    if (rc == KEEL_OK && s->read_committed)
        rc = follow_find(s, &ct, t, key, &row, &following);
    if (rc == KEEL_OK && !following)
        rc = find_by_primary_key(s, &ct, t, key, true, &row, &found);
    if (rc == KEEL_OK)
        rc = mode == 0 ? delete_version(s, &ct, t, row.tid, following)
                       : lock_version(s, &ct, t, row.tid, following,
                                      (rowlock_mode)mode);
    heap_row_free(&row);
    return engine_stmt_end(s, rc, false);
}

keel_status keel_lock_row(keel_session *s, const char *schema,
                          const char *table, const keel_value *key,
                          keel_row_lock mode)
{
    return delete_or_lock(s, schema, table, key, (int)mode);
}

keel_status keel_delete(keel_session *s, const char *schema, const char *table,
                const keel_value *key)
{
    return delete_or_lock(s, schema, table, key, 0);
}

/* ---- scans ------------------------------------------------------------ */

struct keel_scan {
    keel_session *s;
    engine_table *t;
    catalog_txn ct;
    btree_scan *bsc; /* through an index, */
    heap_scan *hsc;  /* or in heap order (a table without a primary key) */
    tid retry;       /* the entry whose row could not be fetched, if valid:
                      * the next keel_scan_next() fetches it first */
    heap_row row;  /* the version keel_scan_next() returned last */
    char schema[KEEL_NAME_LEN]; /* the table's, for messages */
    bool current;  /* row is the scan's current row: returned by the last
                    * keel_scan_next(), not yet changed through the scan */
    bool follow;   /* a change of it through the scan met a committed
                    * update (KEEL_ECHANGED): the next one changes the
                    * version the session follows (read committed) */
    bool implicit; /* the scan's own transaction, committed at its end */
    bool orphan;   /* its transaction or session ended first: all it holds
                    * is gone, and keel_scan_end() only frees it */
};

/* Returns what sc holds (pins, its copy of the table) and detaches it
 * from its session. */
static void scan_release(keel_scan *sc)
{
    btree_scan_end(sc->bsc);
    heap_scan_end(sc->hsc);
    heap_row_free(&sc->row);
    /* Its command is over: readers see all of the transaction again. */
    txn_cids(sc->s->ts)->reading = CID_ALL;
    free(sc->t);
    sc->bsc = NULL;
    sc->hsc = NULL;
    sc->t = NULL;
    sc->s->scan = NULL;
}

bool engine_scan_implicit(const keel_session *s)
{
    return s->scan != NULL && s->scan->implicit;
}

void engine_scan_orphan(keel_session *s)
{
    keel_scan *sc = s->scan;

    if (sc == NULL)
        return;
    scan_release(sc);
    sc->s = NULL;
    sc->orphan = true;
}

/* Fails unless b can bound a scan of index ix of t: at most its key
 * columns, values given for them, strings with bytes. */
static int bound_check(keel_session *s, const engine_table *t, uint32_t ix,
                       const keel_bound *b, const char *which)
{
    const tuple_desc *d = t->h->desc;

    if (b == NULL)
        return KEEL_OK;
    if (b->ncols > t->idx[ix].nkeys)
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "the %s bound has %u columns, the index %u", which,
                        b->ncols, t->idx[ix].nkeys);
    if (b->ncols > 0 && b->vals == NULL)
        return kerr_set(&s->bs->err, KEEL_EINVAL, "the %s bound has no values",
                        which);
    for (uint16_t k = 0; k < b->ncols; k++)
        if (!b->vals[k].isnull &&
            type_has_bytes(d->attrs[t->idx[ix].keys[k] - 1].type) &&
            b->vals[k].v.s.len > 0 && b->vals[k].v.s.ptr == NULL)
            return kerr_set(&s->bs->err, KEEL_ETYPE,
                            "the %s bound's column %u: string value without "
                            "bytes",
                            which, k + 1);
    return KEEL_OK;
}

keel_status keel_scan_begin(keel_session *s, const char *schema, const char *table,
                    const char *index, const keel_bound *lower,
                    const keel_bound *upper, keel_scan **out)
{
    keel_scan *sc = calloc(1, sizeof(*sc));
    btree_bound lo, hi;
    uint32_t ix = 0;
    bool seq = false;
    int rc = engine_stmt_begin(s);

    *out = NULL;
    if (rc != KEEL_OK) {
        free(sc);
        return rc;
    }
    if (sc == NULL)
        rc = kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    if (rc == KEEL_OK)
        rc = open_table(s, false, schema, table, &sc->ct, &sc->t);
    if (rc == KEEL_OK && index == NULL) {
        /* Without a primary key: the heap in storage order, unbounded. */
        seq = true;
        for (uint32_t i = 0; i < sc->t->nidx && seq; i++)
            if (sc->t->idx[i].primary) {
                ix = i;
                seq = false;
            }
        if (seq && (lower != NULL || upper != NULL))
            rc = kerr_set(&s->bs->err, KEEL_EINVAL,
                          "table \"%s\" has no primary key: a scan with "
                          "bounds needs an index",
                          table);
    }
    if (rc == KEEL_OK && index != NULL)
        rc = engine_check_name(s, "index", index);
    if (rc == KEEL_OK && index != NULL) {
        catalog_relation r;
        rc = catalog_relation_by_name(s->db->cat, &sc->ct, index,
                                      sc->t->rel.nsoid, &r);
        for (ix = 0; rc == KEEL_OK && ix < sc->t->nidx; ix++)
            if (sc->t->idx[ix].indexoid == r.oid)
                break;
        if (rc == KEEL_OK && ix == sc->t->nidx)
            rc = kerr_set(&s->bs->err, KEEL_ENOENT,
                          "\"%s\" is not an index of table \"%s\"", index,
                          table);
    }
    if (rc == KEEL_OK && !seq)
        rc = bound_check(s, sc->t, ix, lower, "lower");
    if (rc == KEEL_OK && !seq)
        rc = bound_check(s, sc->t, ix, upper, "upper");
    if (rc == KEEL_OK)
        rc = heap_row_init(&sc->row, &sc->t->h->heap, &s->bs->err);
    /* The scan is a command of its own, after every change before it
     * (read as it, below, from its first row on). */
    if (rc == KEEL_OK)
        rc = cid_next(txn_cids(s->ts), &s->bs->err);
    if (rc == KEEL_OK && seq) {
        rc = heap_scan_begin(&sc->t->h->heap, s->bs, &sc->ct.vis, &sc->hsc);
    } else if (rc == KEEL_OK) {
        if (lower)
            lo = (btree_bound){lower->vals, lower->ncols, lower->inclusive};
        if (upper)
            hi = (btree_bound){upper->vals, upper->ncols, upper->inclusive};
        rc = btree_scan_begin(sc->t->ih[ix]->bt, s->bs, lower ? &lo : NULL,
                              upper ? &hi : NULL, &sc->bsc);
    }
    if (rc != KEEL_OK) {
        if (sc != NULL) {
            heap_row_free(&sc->row);
            free(sc->t);
            free(sc);
        }
        return engine_stmt_end(s, rc, false);
    }
    sc->s = s;
    snprintf(sc->schema, sizeof(sc->schema), "%s",
             schema != NULL ? schema : "public");
    sc->implicit = s->implicit;
    s->implicit = false;
    s->scan = sc;
    /* Until it ends, the session reads as the scan's command: the calls
     * made while it is open are part of it (row_stmt_begin()), and
     * neither it nor they see what they change. */
    txn_cids(s->ts)->reading = txn_cids(s->ts)->current;
    *out = sc;
    return KEEL_OK;
}

keel_status keel_scan_next(keel_scan *sc, keel_value *out, bool *found)
{
    keel_session *s = sc->s;
    tid tt;
    int rc;

    *found = false;
    if (sc->orphan)
        return KEEL_EINVAL; /* no session to leave a message in */
    kerr_clear(&s->bs->err);
    /* The scan moves on: what it returned last is no longer its row, and
     * a change of that row that met a committed update is not followed
     * by the scan's next change. */
    sc->current = false;
    sc->follow = false;
    if (sc->hsc != NULL) {
        rc = heap_scan_next(sc->hsc, &sc->row, found);
        if (rc == KEEL_OK && *found) {
            memcpy(out, sc->row.values, sc->t->rel.natts * sizeof(keel_value));
            sc->current = true;
        }
        return rc;
    }
    for (;;) {
        if (tid_valid(sc->retry)) {
            tt = sc->retry;
            sc->retry = TID_INVALID;
        } else {
            rc = btree_scan_next(sc->bsc, &tt, NULL);
            if (rc == KEEL_ENOENT)
                return KEEL_OK;
            if (rc != KEEL_OK)
                return rc;
        }
        rc = heap_fetch(&sc->t->h->heap, s->bs, &sc->ct.vis, tt, &sc->row);
        if (rc == KEEL_ENOENT)
            continue;
        if (rc != KEEL_OK) {
            sc->retry = tt;
            return rc;
        }
        memcpy(out, sc->row.values, sc->t->rel.natts * sizeof(keel_value));
        *found = true;
        sc->current = true;
        return KEEL_OK;
    }
}

/*
 * The opening of keel_scan_update() and keel_scan_delete(), after
 * row_stmt_begin(): KEEL_EINVAL without a current row or for a system
 * catalog (as engine_table_open() refuses a writer one); then, as
 * resolve_table() for a writer but with the scan's table (its indexes as
 * the scan's snapshot saw them, which is the statement's), a catalog_txn
 * without an xid, ROW EXCLUSIVE on the table, and the xid.  A lock that
 * waited keeps the snapshot: the scan has read with it already (a build
 * committed meanwhile is the write guard's to refuse).
 */
static int scan_write_begin(keel_scan *sc, catalog_txn *ct)
{
    keel_session *s = sc->s;
    engine_table *t = sc->t;
    int rc;

    if (!sc->current)
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "the scan of table \"%s\" has no current row: "
                        "keel_scan_next() returned none, or it was changed "
                        "through the scan already",
                        t->rel.name);
    /* A scan may read a system catalog; only DDL writes one. */
    if (t->rel.nsoid == NAMESPACE_CATALOG)
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "\"%s.%s\" is not a user table", sc->schema,
                        t->rel.name);
    rc = engine_catalog_txn_unlocked(s, ct);
    if (rc == KEEL_OK) {
        rc = engine_table_lock(s, t->h, KEEL_LOCK_ROW_EXCLUSIVE);
        if (rc != KEEL_OK)
            rc = engine_table_settle(s, t->h, KEEL_LOCK_ROW_EXCLUSIVE, rc,
                                     false, sc->schema, t->rel.name);
    }
    if (rc == KEEL_OK)
        rc = engine_catalog_txn(s, true, ct);
    return rc;
}

/*
 * The version a change through scan sc applies to: the scan's row, or
 * (read committed) after a change of it through the scan returned
 * KEEL_ECHANGED, the version the session follows since, which
 * keel_fetch_changed() returned (*following; decoded into row, the
 * version the caller computed its change from).  Following ends here
 * either way, as in follow_find().
 */
static int scan_version(keel_scan *sc, catalog_txn *ct, heap_row *row,
                        const heap_row **old, bool *following)
{
    keel_session *s = sc->s;
    tid latest;
    int rc;

    *old = &sc->row;
    *following = false;
    if (!sc->follow)
        return KEEL_OK;
    sc->follow = false;
    if (!s->read_committed || !s->follow_set ||
        s->follow_table != sc->t->rel.oid)
        return KEEL_OK;
    s->follow_set = false;
    rc = follow_row(s, ct, sc->t, s->follow_tid, true, row, &latest);
    if (rc == KEEL_OK) {
        *old = row;
        *following = true;
    }
    return rc;
}

keel_status keel_scan_update(keel_scan *sc, const keel_value *values)
{
    keel_session *s;
    catalog_txn ct;
    heap_row row = {0};
    const heap_row *old = NULL;
    bool changed = false, following = false;
    int rc;

    if (sc == NULL || sc->orphan)
        return KEEL_EINVAL; /* no session to leave a message in */
    s = sc->s;
    assert(s->scan == sc);
    rc = row_stmt_begin(s, true);
    if (rc != KEEL_OK)
        return rc;
    rc = scan_write_begin(sc, &ct);
    if (rc == KEEL_OK)
        rc = check_row(s, sc->t, values);
    if (rc == KEEL_OK)
        rc = scan_version(sc, &ct, &row, &old, &following);
    if (rc == KEEL_OK)
        rc = update_version(s, &ct, sc->t, old, following, values, &changed);
    if (rc == KEEL_OK)
        sc->current = false;
    else if (rc == KEEL_ECHANGED)
        sc->follow = true;
    heap_row_free(&row);
    return engine_stmt_end(s, rc, changed);
}

keel_status keel_scan_delete(keel_scan *sc)
{
    keel_session *s;
    catalog_txn ct;
    heap_row row = {0};
    const heap_row *old = NULL;
    bool following = false;
    int rc;

    if (sc == NULL || sc->orphan)
        return KEEL_EINVAL;
    s = sc->s;
    assert(s->scan == sc);
    rc = row_stmt_begin(s, true);
    if (rc != KEEL_OK)
        return rc;
    rc = scan_write_begin(sc, &ct);
    if (rc == KEEL_OK)
        rc = scan_version(sc, &ct, &row, &old, &following);
    if (rc == KEEL_OK)
        rc = delete_version(s, &ct, sc->t, old->tid, following);
    if (rc == KEEL_OK)
        sc->current = false;
    else if (rc == KEEL_ECHANGED)
        sc->follow = true;
    heap_row_free(&row);
    return engine_stmt_end(s, rc, false);
}

void keel_scan_end(keel_scan *sc)
{
    keel_session *s;

    if (sc == NULL)
        return;
    s = sc->s;
    if (!sc->orphan) {
        scan_release(sc);
        if (sc->implicit) {
            /* Read only: nothing to lose.  The session's message stays
             * the scan's last failure's, for a caller that reports it
             * after ending the scan. */
            kerr saved = s->bs->err;
            (void)keel_commit(s);
            s->bs->err = saved;
        }
    }
    free(sc);
}

/* ---- analyze ---------------------------------------------------------- */

/* The value as text, for keel_statistic's most-common values. */
static void value_text(const tuple_attr *a, const keel_value *v, char *buf,
                       size_t cap)
{
    switch (a->type) {
    case KEEL_INT2:
        snprintf(buf, cap, "%d", v->v.i2);
        break;
    case KEEL_INT4:
    case KEEL_DATE:
        snprintf(buf, cap, "%d", v->v.i4);
        break;
    case KEEL_INT8:
    case KEEL_TIMESTAMP:
    case KEEL_TIMESTAMPTZ:
        snprintf(buf, cap, "%lld", (long long)v->v.i8);
        break;
    case KEEL_OID:
        snprintf(buf, cap, "%u", v->v.oid);
        break;
    case KEEL_BOOL:
        snprintf(buf, cap, "%s", v->v.b ? "true" : "false");
        break;
    case KEEL_FLOAT8:
        snprintf(buf, cap, "%.17g", v->v.f8);
        break;
    case KEEL_NUMERIC:
        value_numeric_text(v, buf, cap);
        break;
    case KEEL_UUID:
    case KEEL_BYTEA:
        value_bytes_text(a->type, v, buf, cap);
        break;
    default: {
        size_t n = v->v.s.len < cap - 1 ? v->v.s.len : cap - 1;
        memcpy(buf, v->v.s.ptr, n);
        buf[n] = '\0';
        break;
    }
    }
}

/*
 * Rows analyze looks at: all of a table up to this many, else a uniform
 * random sample of this many (PostgreSQL's 300 * default_statistics_target).
 */
#define ANALYZE_SAMPLE_ROWS 30000

/* One column's sample: slot i holds the value of the sample's row i. */
typedef struct col_sample {
    const tuple_attr *attr;
    keel_value *vals; /* strings copied (malloc'd) */
    size_t n, cap;
} col_sample;

static int sample_cmp(const void *a, const void *b, void *arg)
{
    return value_compare(arg, a, b);
}

/* Stores a copy of v in slot (slot <= c->n; slot == n appends). */
static int sample_set(col_sample *c, size_t slot, const keel_value *v)
{
    keel_value x;

    if (slot == c->n && c->n == c->cap) {
        keel_value *nv = engine_array_grow(c->vals, &c->cap, 256, sizeof(*nv));
        if (nv == NULL)
            return KEEL_ENOMEM;
        c->vals = nv;
    }
    if (engine_value_copy(c->attr, v, &x) != KEEL_OK)
        return KEEL_ENOMEM;
    if (slot < c->n)
        engine_value_free(c->attr, &c->vals[slot]);
    else
        c->n++;
    c->vals[slot] = x;
    return KEEL_OK;
}

/*
 * Fills st from the sample of a table of `rows` rows: null fraction,
 * distinct count, the most common values (ties: the smaller value first).
 * A sample of the whole table gives exact figures; otherwise the distinct
 * count is the Haas-Stokes estimate PostgreSQL uses (all values distinct in
 * the sample: the column is taken to be unique).
 */
static void sample_stats(col_sample *c, size_t rows, catalog_statistic *st)
{
    size_t best_n[CATALOG_STAT_MCVS] = {0};
    size_t best_i[CATALOG_STAT_MCVS] = {0};
    size_t distinct = 0, once = 0, nn = 0;

    /* The non-null values to the front, the nulls after them. */
    for (size_t i = 0; i < c->n; i++)
        if (!c->vals[i].isnull) {
            keel_value t = c->vals[nn];
            c->vals[nn++] = c->vals[i];
            c->vals[i] = t;
        }
    if (nn > 1) /* an empty sample has no array */
        qsort_r(c->vals, nn, sizeof(keel_value), sample_cmp, (void *)c->attr);
    st->nullfrac = c->n ? (double)(c->n - nn) / (double)c->n : 0.0;
    for (size_t i = 0; i < nn;) {
        size_t j = i + 1;
        while (j < nn && value_compare(c->attr, &c->vals[i], &c->vals[j]) == 0)
            j++;
        distinct++;
        once += j - i == 1;
        for (int k = 0; k < CATALOG_STAT_MCVS; k++) {
            if (j - i > best_n[k]) {
                for (int m = CATALOG_STAT_MCVS - 1; m > k; m--) {
                    best_n[m] = best_n[m - 1];
                    best_i[m] = best_i[m - 1];
                }
                best_n[k] = j - i;
                best_i[k] = i;
                break;
            }
        }
        i = j;
    }
    st->ndistinct = (double)distinct;
    if (c->n < rows && nn > 0) {
        double n = (double)nn, total = (1.0 - st->nullfrac) * (double)rows;
        double est = once == nn
                         ? total
                         : n * (double)distinct /
                               (n - (double)once + (double)once * n / total);
        if (est < (double)distinct)
            est = (double)distinct;
        if (est > total)
            est = total;
        st->ndistinct = floor(est + 0.5);
    }
    st->nmcv = 0;
    for (int k = 0; k < CATALOG_STAT_MCVS && best_n[k] > 0; k++) {
        value_text(c->attr, &c->vals[best_i[k]], st->mcv[k],
                   sizeof(st->mcv[k]));
        st->mcf[k] = (double)best_n[k] / (double)c->n;
        st->nmcv++;
    }
}

static void samples_free(col_sample *cs, uint16_t ncols)
{
    for (uint16_t i = 0; i < ncols; i++) {
        for (size_t j = 0; cs[i].attr != NULL && j < cs[i].n; j++)
            engine_value_free(cs[i].attr, &cs[i].vals[j]);
        free(cs[i].vals);
    }
    free(cs);
}

/* The sample slot of the rows-th row (0-based) seen by a scan, by
 * reservoir sampling (Algorithm R), or SIZE_MAX if it is left out. */
static size_t sample_slot(size_t rows, uint64_t *rng)
{
    uint64_t x;

    if (rows < ANALYZE_SAMPLE_ROWS)
        return rows;
    x = *rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    x = (x * UINT64_C(0x2545F4914F6CDD1D)) % ((uint64_t)rows + 1);
    return x < ANALYZE_SAMPLE_ROWS ? (size_t)x : SIZE_MAX;
}

keel_status keel_analyze(keel_session *s, const char *schema, const char *table)
{
    catalog_txn ct = {0};
    engine_table *t = NULL;
    col_sample *cs = NULL;
    catalog_statistic *old = NULL;
    heap_scan *hs = NULL;
    heap_row row = {0};
    keel_value vals[13];
    uint16_t ncols = 0;
    uint32_t nold = 0;
    size_t rows = 0, slot;
    uint64_t rng = UINT64_C(0x9E3779B97F4A7C15); /* repeatable samples */
    bool found, changed = false;
    smgr_rel *sr;
    int rc = engine_stmt_begin(s);

    if (rc != KEEL_OK)
        return rc;
    rc = open_table(s, true, schema, table, &ct, &t);
    if (rc == KEEL_OK) {
        ncols = t->rel.natts;
        cs = calloc(ncols, sizeof(*cs));
        old = calloc(CATALOG_MAX_COLUMNS, sizeof(*old));
        if (cs == NULL || old == NULL)
            rc = kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    }
    for (uint16_t i = 0; rc == KEEL_OK && i < ncols; i++)
        cs[i].attr = &t->h->desc->attrs[i];
    if (rc == KEEL_OK)
        rc = heap_row_init(&row, &t->h->heap, &s->bs->err);
    if (rc == KEEL_OK)
        rc = heap_scan_begin(&t->h->heap, s->bs, &ct.vis, &hs);
    while (rc == KEEL_OK) {
        rc = heap_scan_next(hs, &row, &found);
        if (rc != KEEL_OK || !found)
            break;
        slot = sample_slot(rows, &rng);
        rows++;
        for (uint16_t i = 0; slot != SIZE_MAX && rc == KEEL_OK && i < ncols;
             i++)
            if (sample_set(&cs[i], slot, &row.values[i]) != KEEL_OK)
                rc = kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    }
    heap_scan_end(hs);
    heap_row_free(&row);
    /* Replace the old statistics rows, then the counts in keel_class. */
    if (rc == KEEL_OK)
        rc = catalog_statistics_of(s->db->cat, &ct, t->rel.oid, old,
                                   CATALOG_MAX_COLUMNS, &nold);
    for (uint32_t i = 0; rc == KEEL_OK && i < nold && i < CATALOG_MAX_COLUMNS;
         i++) {
        catalog_statistic_values(&old[i], vals);
        rc = catalog_delete(s->db->cat, &ct, CAT_STATISTIC, old[i].tid, vals);
        changed = changed || rc == KEEL_OK;
    }
    for (uint16_t i = 0; rc == KEEL_OK && i < ncols; i++) {
        catalog_statistic st = {.relid = t->rel.oid,
                                .attnum = (uint16_t)(i + 1),
                                .inherited = false};
        sample_stats(&cs[i], rows, &st);
        catalog_statistic_values(&st, vals);
        rc = catalog_insert(s->db->cat, &ct, CAT_STATISTIC, vals);
        changed = changed || rc == KEEL_OK;
        /* The first statistics of the table, inserted by another
         * transaction this one cannot see: the same conflict as two
         * replacing old ones, which their deletes report. */
        if (rc == KEEL_EUNIQUE)
            rc = kerr_set(&s->bs->err, KEEL_ESERIALIZE,
                          "table \"%s\" is being analyzed by another "
                          "transaction, or was since this one began",
                          t->rel.name);
    }
    if (rc == KEEL_OK)
        rc = smgr_rel_open(s->db->smgr, t->rel.relnumber, &sr, &s->bs->err);
    if (rc == KEEL_OK) {
        catalog_relation r = t->rel;
        r.pages = (int32_t)smgr_nblocks(sr);
        r.tuples = (double)rows;
        catalog_relation_values(&r, vals);
        rc = catalog_update(s->db->cat, &ct, CAT_CLASS, t->rel.tid, vals);
        changed = true;
    }
    if (cs != NULL)
        samples_free(cs, ncols);
    free(old);
    free(t);
    return engine_stmt_end(s, rc, changed || ct.undo_failed);
}
