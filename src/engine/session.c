/*
 * session.c: sessions, transactions as the API sees them, the statement
 * bracket, and resolving names to open relations.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "port/clock.h"
#include "port/mem.h"

keel_status keel_session_begin(keel_db *db, keel_session **out, keel_error *err)
{
    keel_session *s = mem_alloc_aligned(sizeof(*s)); /* see port/mem.h */
    kerr e;
    int rc;

    kerr_clear(&e);
    *out = NULL;
    if (s == NULL) {
        rc = kerr_set(&e, KEEL_ENOMEM, "out of memory for a session");
        goto fail;
    }
    s->db = db;
    s->lock_strong = lmgr_strong_counts(db->locks);
    rc = buf_session_create(db->pool, &s->bs, &e);
    if (rc == KEEL_OK)
        rc = txn_session_attach(db->txn, s->bs, &s->ts, &e);
    if (rc == KEEL_OK) {
        syscache_options o = {db->cache_prune_min_age, db->cache_memory_target};
        rc = syscache_create(db->cat, db->inval, &o, &s->cache, &e);
        if (rc != KEEL_OK)
            txn_session_detach(s->ts);
    }
    if (rc == KEEL_OK) {
        rc = lmgr_proc_create(db->locks, &s->lp, &e);
        if (rc != KEEL_OK) {
            syscache_destroy(s->cache);
            txn_session_detach(s->ts);
        }
    }
    if (rc != KEEL_OK) {
        buf_session_destroy(s->bs);
        mem_free_aligned(s);
        goto fail;
    }
    pthread_mutex_lock(&db->rel_lock);
    db->nsessions++;
    pthread_mutex_unlock(&db->rel_lock);
    *out = s;
    return KEEL_OK;
fail:
    if (err != NULL) {
        err->code = e.code;
        snprintf(err->msg, sizeof(err->msg), "%s", e.msg);
    }
    return rc;
}

void keel_session_end(keel_session *s)
{
    keel_db *db;

    if (s == NULL)
        return;
    db = s->db;
    /* A scan still open is the caller's to free (keel_scan_end). */
    engine_scan_orphan(s);
    keel_abort(s);
    heap_row_free(&s->result);
    for (uint32_t i = 0; i < ENGINE_SESSION_DIRS; i++)
        btree_dir_free(s->dirs[i]);
    syscache_destroy(s->cache);
    txn_session_detach(s->ts);
    buf_session_destroy(s->bs);
    inval_pending_free(&s->inval);
    lmgr_proc_destroy(s->lp);
    free(s->held);
    free(s->drops);
    free(s->savepoints);
    free(s->undo);
    mem_free_aligned(s);
    pthread_mutex_lock(&db->rel_lock);
    db->nsessions--;
    pthread_mutex_unlock(&db->rel_lock);
}

btree_dir *engine_index_dir(keel_session *s, const btree *bt)
{
    uint32_t i, lru = 0;

    if (!btree_dir_applies(bt))
        return NULL;
    s->dir_clock++;
    for (i = 0; i < ENGINE_SESSION_DIRS && s->dirs[i] != NULL; i++)
        if (btree_dir_is_for(s->dirs[i], bt)) {
            s->dir_used[i] = s->dir_clock;
            return s->dirs[i];
        }
    if (i < ENGINE_SESSION_DIRS) {
        s->dirs[i] = btree_dir_new(0);
        s->dir_used[i] = s->dir_clock;
        return s->dirs[i];
    }
    for (i = 1; i < ENGINE_SESSION_DIRS; i++)
        if (s->dir_used[i] < s->dir_used[lru])
            lru = i;
    if (s->dir_clock - s->dir_used[lru] < ENGINE_DIR_IDLE)
        return NULL;
    s->dir_used[lru] = s->dir_clock;
    return s->dirs[lru];
}

const char *keel_session_error(const keel_session *s)
{
    return buf_session_error(s->bs)->msg;
}

/*
 * Starts the session's transaction: its snapshot, then the catalog caches'
 * view of the queue.  If the caches applied messages, the snapshot is
 * taken again until they apply none, so that the caches agree with it
 * (syscache_txn_begin()).  On failure no transaction is running.
 */
static int session_txn_begin(keel_session *s, kerr *e)
{
    bool consumed = false;
    int rc = txn_begin(s->ts, e);

    s->inval_applied = 0;
    while (rc == KEEL_OK) {
        rc = engine_catalog_txn(s, false, &s->cache_ct);
        if (rc == KEEL_OK)
            rc = syscache_txn_begin(s->cache, &s->cache_ct, &consumed);
        if (rc != KEEL_OK || !consumed)
            break;
        rc = txn_refresh_snapshot(s->ts, e);
    }
    if (rc != KEEL_OK) {
        syscache_txn_end(s->cache);
        txn_abort(s->ts, NULL);
    }
    return rc;
}

keel_status keel_begin(keel_session *s)
{
    kerr *e = &s->bs->err;

    kerr_clear(e);
    if (s->scan != NULL)
        return kerr_set(e, KEEL_EINVAL, "a scan is open in this session");
    if (txn_in_progress(s->ts))
        return kerr_set(e, KEEL_EINVAL, "a transaction is already running");
    s->implicit = false;
    s->failed = false;
    engine_savepoints_end(s);
    inval_pending_clear(&s->inval);
    return session_txn_begin(s, e);
}

keel_status keel_commit(keel_session *s)
{
    kerr *e = &s->bs->err;
    xid_t xid;
    bool claims;
    int rc;

    kerr_clear(e);
    /* Nothing changes: the scan may go on, and so may its transaction
     * (keel_scan_end() commits a scan's own). */
    if (s->scan != NULL)
        return kerr_set(e, KEEL_EINVAL,
                        "a scan is open in this session: end it first");
    if (!txn_in_progress(s->ts))
        return kerr_set(e, KEEL_EINVAL, "no transaction is running");
    if (s->failed) {
        keel_abort(s);
        return kerr_set(e, KEEL_EINVAL,
                        "the transaction failed earlier and was rolled back");
    }
    /* Announced before the commit is visible, withdrawn after the
     * messages are in the queue: see inval.h, "Commit ordering". */
    inval_commit_begin(s->db->inval, &s->inval);
    /* Claims on schemas and tables (DDL only) go once the commit is
     * visible. */
    claims = s->nheld > 0;
    xid = claims ? txn_current_xid(s->ts) : XID_INVALID;
    rc = txn_commit(s->ts, e);
    if (claims) {
        engine_claims_release(s, rc == KEEL_OK ? xid : XID_INVALID);
        /* Before the locks go: whoever waited for a dropped table finds
         * it gone (engine_table_settle()), and its snapshot taken again
         * then reads the queue with these messages in it.  (A drop holds
         * a claim, so a transaction without claims dropped nothing.) */
        for (uint32_t i = 0; rc == KEEL_OK && i < s->ndrops; i++)
            atomic_store_release(&s->drops[i]->dropped, 1);
        s->ndrops = 0;
    }
    inval_commit_end(s->db->inval, &s->inval, rc == KEEL_OK);
    engine_savepoints_end(s);
    syscache_txn_end(s->cache);
    lmgr_set_xid(s->lp, 0);
    s->follow_set = false;
    lmgr_release_all(s->lp);
    return rc;
}

keel_status keel_abort(keel_session *s)
{
    kerr e;
    int rc;

    if (engine_scan_implicit(s))
        return KEEL_OK; /* outside a transaction: the scan's own goes on */
    engine_scan_orphan(s);
    /* Entries built from the transaction's own rows must go. */
    if (s->inval.count > 0 || s->inval.overflow)
        syscache_apply_pending(s->cache, &s->inval);
    syscache_txn_end(s->cache);
    /* The message of the failure that led here stays, unless the abort
     * itself fails. */
    rc = txn_abort(s->ts, &e);
    if (rc != KEEL_OK)
        s->bs->err = e;
    if (s->nheld > 0)
        engine_claims_release(s, XID_INVALID);
    inval_pending_clear(&s->inval);
    engine_savepoints_end(s);
    s->ndrops = 0;
    s->failed = false;
    s->implicit = false;
    lmgr_set_xid(s->lp, 0);
    s->follow_set = false;
    lmgr_release_all(s->lp);
    return rc;
}

keel_status keel_set_isolation(keel_session *s, keel_isolation level)
{
    kerr_clear(&s->bs->err);
    if (level != KEEL_REPEATABLE_READ && level != KEEL_READ_COMMITTED)
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "isolation level %d is not one of 0 (repeatable "
                        "read) or 1 (read committed)",
                        (int)level);
    s->read_committed = level == KEEL_READ_COMMITTED;
    return KEEL_OK;
}

keel_status keel_new_snapshot(keel_session *s)
{
    kerr *e = &s->bs->err;
    bool consumed = true;
    int rc = KEEL_OK;

    kerr_clear(e);
    if (s->scan != NULL)
        return kerr_set(e, KEEL_EINVAL, "a scan is open in this session");
    if (!txn_in_progress(s->ts))
        return KEEL_OK;
    if (!s->read_committed)
        return KEEL_OK; /* repeatable read: the snapshot stays */
    if (s->failed)
        return kerr_set(e, KEEL_EINVAL,
                        "the transaction failed earlier: call keel_abort");
    s->follow_set = false;
    /* The caches brought up to the new snapshot, as at a transaction's
     * start, then the transaction's own changes applied to them again. */
    while (rc == KEEL_OK && consumed) {
        rc = txn_refresh_snapshot(s->ts, e);
        if (rc == KEEL_OK)
            rc = syscache_txn_begin(s->cache, &s->cache_ct, &consumed);
    }
    if (rc == KEEL_OK && (s->inval.count > 0 || s->inval.overflow))
        syscache_apply_pending(s->cache, &s->inval);
    s->inval_applied = 0;
    if (rc != KEEL_OK)
        s->failed = true;
    return rc;
}

int engine_wait_xid(keel_session *s, xid_t xid, const char *table)
{
    uint64_t start = clock_now_ns();
    uint64_t dl_at = start + (uint64_t)LMGR_DEADLOCK_MS * 1000000u;
    uint64_t deadline =
        s->lp->timeout_ms ? start + (uint64_t)s->lp->timeout_ms * 1000000u : 0;
    bool checked = false;
    int rc = KEEL_OK;

    if (s->row_nowait && !txn_wait_end(s->ts, xid, 0))
        return kerr_set(&s->bs->err, KEEL_EBUSY,
                        "could not obtain lock on row in relation \"%s\"",
                        table);
    lmgr_xid_wait_begin(s->lp, xid);
    for (;;) {
        uint64_t now = clock_now_ns(), until = checked ? deadline : dl_at;
        if (deadline != 0 && deadline < until)
            until = deadline;
        if (until == 0)
            until = now + 1000000000u;
        if (txn_wait_end(s->ts, xid, until > now ? until - now : 0))
            break;
        now = clock_now_ns();
        if (!checked && now >= dl_at) {
            checked = true;
            if (lmgr_xid_deadlock(s->lp)) {
                rc = kerr_set(&s->bs->err, KEEL_EDEADLOCK,
                              "deadlock detected: waiting for transaction "
                              "%u, which changed a row of table \"%s\", "
                              "closed a cycle of waiting transactions",
                              (unsigned)xid, table);
                break;
            }
        }
        if (deadline != 0 && now >= deadline) {
            rc = kerr_set(&s->bs->err, KEEL_ELOCKTIMEOUT,
                          "canceling statement due to lock timeout: "
                          "transaction %u, which changed a row of table "
                          "\"%s\", did not end within %u ms",
                          (unsigned)xid, table, s->lp->timeout_ms);
            break;
        }
    }
    lmgr_xid_wait_end(s->lp);
    return rc;
}

int engine_stmt_begin_slow(keel_session *s)
{
    kerr *e = &s->bs->err;

    kerr_clear(e);
    if (s->scan != NULL)
        return kerr_set(e, KEEL_EINVAL, "a scan is open in this session");
    if (txn_in_progress(s->ts)) {
        if (s->failed)
            return kerr_set(e, KEEL_EINVAL,
                            "the transaction failed earlier: call keel_abort");
        return KEEL_OK;
    }
    inval_pending_clear(&s->inval);
    s->implicit = true;
    return session_txn_begin(s, e);
}

int engine_stmt_end_slow(keel_session *s, int rc, bool changed)
{
    if (!s->implicit) {
        if (rc != KEEL_OK && changed)
            s->failed = true;
        return rc;
    }
    s->implicit = false;
    if (rc != KEEL_OK) {
        kerr saved = s->bs->err;
        keel_abort(s);
        s->bs->err = saved;
        return rc;
    }
    return keel_commit(s);
}

int engine_catalog_txn(keel_session *s, bool write, catalog_txn *ct)
{
    kerr *e = &s->bs->err;
    int rc;

    memset(ct, 0, sizeof(*ct));
    ct->bs = s->bs;
    ct->inval = &s->inval;
    ct->xid = XID_INVALID;
    if (write && s->db->read_only)
        return kerr_set(e, KEEL_EREADONLY, "database \"%s\" is open read-only",
                        s->db->dir);
    if (write) {
        rc = txn_assign_xid(s->ts, &ct->xid, e);
        /* Whoever waits for it finds it (deadlock searches). */
        if (rc == KEEL_OK &&
            atomic_load_explicit(&s->lp->cur_xid, memory_order_relaxed) !=
                ct->xid)
            lmgr_set_xid(s->lp, ct->xid);
        /* A statement that writes is a command of its own, after the ones
         * whose changes it is to see; one made while a scan is open is
         * part of the scan's (dml.c). */
        if (rc == KEEL_OK && s->scan == NULL)
            rc = cid_next(txn_cids(s->ts), e);
        if (rc != KEEL_OK)
            return rc;
    }
    return txn_visibility(s->ts, &ct->vis, e);
}

int engine_catalog_txn_unlocked(keel_session *s, catalog_txn *ct)
{
    if (s->db->read_only)
        return kerr_set(&s->bs->err, KEEL_EREADONLY,
                        "database \"%s\" is open read-only", s->db->dir);
    return engine_catalog_txn(s, false, ct);
}

int engine_stmt_begin_catalog(keel_session *s, bool write, catalog_txn *ct)
{
    int rc = engine_stmt_begin(s);

    if (rc != KEEL_OK)
        return rc;
    rc = engine_catalog_txn(s, write, ct);
    if (rc != KEEL_OK)
        return engine_stmt_end(s, rc, false);
    return KEEL_OK;
}

int engine_stmt_begin_unlocked(keel_session *s, catalog_txn *ct)
{
    int rc = engine_stmt_begin(s);

    if (rc != KEEL_OK)
        return rc;
    rc = engine_catalog_txn_unlocked(s, ct);
    if (rc != KEEL_OK)
        return engine_stmt_end(s, rc, false);
    return KEEL_OK;
}

int engine_check_name(keel_session *s, const char *what, const char *name)
{
    size_t n;

    if (name == NULL || name[0] == '\0')
        return kerr_set(&s->bs->err, KEEL_EINVAL, "%s name is empty", what);
    n = strlen(name);
    if (n >= KEEL_NAME_LEN)
        return kerr_set(&s->bs->err, KEEL_ETOOBIG,
                        "%s name \"%.32s...\" is %zu bytes, longer than %d",
                        what, name, n, KEEL_NAME_LEN - 1);
    return KEEL_OK;
}

/* The cached handle of oid, or NULL; caller holds rel_lock. */
static engine_rel *rel_find(keel_db *db, oid_t oid)
{
    for (engine_rel *r = db->rels; r != NULL; r = r->next)
        if (r->oid == oid)
            return r;
    return NULL;
}

/* Keeps handle r in one of the session's slots, round robin. */
static void rel_remember(keel_session *s, engine_rel *r)
{
    uint32_t i = s->rel_next;

    s->rel_oids[i] = r->oid;
    s->rel_handles[i] = r;
    s->rel_next = (i + 1) % ENGINE_SESSION_RELS;
}

/* Publishes r unless another session did first; returns the winner, also
 * kept in the session's slots. */
static engine_rel *rel_publish(keel_session *s, engine_rel *r)
{
    keel_db *db = s->db;
    engine_rel *have;

    pthread_mutex_lock(&db->rel_lock);
    have = rel_find(db, r->oid);
    if (have == NULL) {
        r->next = db->rels;
        db->rels = r;
        have = r;
        r = NULL;
    }
    pthread_mutex_unlock(&db->rel_lock);
    if (r != NULL) {
        btree_close(r->bt);
        tupdesc_free(r->desc);
        free(r);
    }
    rel_remember(s, have);
    return have;
}

/*
 * The published handle of oid, or NULL.  The session's own slots are
 * tried first: a handle, once published, is never changed or freed
 * before the database closes, so they need no lock; only the first use
 * of a relation in the session (or after its slot was taken over) reads
 * db->rels under rel_lock.
 */
static engine_rel *rel_cached(keel_session *s, oid_t oid)
{
    keel_db *db = s->db;
    engine_rel *r;

    for (uint32_t i = 0; i < ENGINE_SESSION_RELS; i++)
        if (s->rel_oids[i] == oid && s->rel_handles[i] != NULL)
            return s->rel_handles[i];
    pthread_mutex_lock(&db->rel_lock);
    r = rel_find(db, oid);
    pthread_mutex_unlock(&db->rel_lock);
    if (r != NULL)
        rel_remember(s, r);
    return r;
}

int engine_index_handle(keel_session *s, oid_t oid, engine_rel **out)
{
    engine_rel *r = rel_cached(s, oid);
    int rc;

    if (r != NULL && r->kind != RELKIND_INDEX) /* a damaged keel_index row */
        return kerr_set(&s->bs->err, KEEL_ECORRUPT,
                        "relation %u is named as an index, but is a table",
                        oid);
    if (r == NULL) {
        r = calloc(1, sizeof(*r));
        if (r == NULL)
            return kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
        r->oid = oid;
        r->kind = RELKIND_INDEX;
        rc = btree_open(s->bs, oid, &r->bt);
        if (rc != KEEL_OK) {
            free(r);
            return rc;
        }
        r = rel_publish(s, r);
    }
    *out = r;
    return KEEL_OK;
}

int engine_table_handle(keel_session *s, catalog_txn *ct,
                        const catalog_relation *rel, engine_rel **out)
{
    engine_rel *r = rel_cached(s, rel->oid);
    catalog_attribute *atts;
    catalog_txn own;
    uint32_t n = 0;
    int rc;

    if (r != NULL && r->kind != RELKIND_TABLE) /* a damaged keel_class row */
        return kerr_set(&s->bs->err, KEEL_ECORRUPT,
                        "relation %u is named as a table, but is an index",
                        rel->oid);
    if (r != NULL) {
        *out = r;
        return KEEL_OK;
    }
    if (ct == NULL) {
        rc = engine_catalog_txn(s, false, &own);
        if (rc != KEEL_OK)
            return rc;
        ct = &own;
    }
    atts = calloc(CATALOG_MAX_COLUMNS, sizeof(*atts));
    r = calloc(1, sizeof(*r));
    if (atts == NULL || r == NULL) {
        free(atts);
        free(r);
        return kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    }
    rc = catalog_attributes(s->db->cat, ct, rel->oid, atts, CATALOG_MAX_COLUMNS,
                            &n);
    if (rc == KEEL_OK && (n != rel->natts || n == 0))
        rc = kerr_set(&s->bs->err, KEEL_ECORRUPT,
                      "relation \"%s\" has %u attributes, not %u", rel->name, n,
                      rel->natts);
    if (rc == KEEL_OK && (r->desc = tupdesc_alloc((uint16_t)n)) == NULL)
        rc = kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    for (uint32_t i = 0; rc == KEEL_OK && i < n; i++)
        rc = tupdesc_set(r->desc, (uint16_t)i, atts[i].type, atts[i].charlen,
                         atts[i].notnull, &s->bs->err);
    free(atts);
    if (rc != KEEL_OK) {
        tupdesc_free(r->desc);
        free(r);
        return rc;
    }
    r->oid = rel->oid;
    r->kind = RELKIND_TABLE;
    heap_rel_init(&r->heap, rel->relnumber, r->desc);
    *out = rel_publish(s, r);
    return KEEL_OK;
}

/* The oid of schema name, through the session's cache (ENOENT). */
static int namespace_oid(keel_session *s, const char *name, oid_t *out)
{
    catcache_entry *e;
    int rc = syscache_search1(s->cache, CACHE_NAMESPACE_NAME,
                              SYSCACHE_NAME(name), &e);

    if (rc == KEEL_ENOENT)
        return kerr_set(&s->bs->err, KEEL_ENOENT,
                        "schema \"%s\" does not exist", name);
    if (rc != KEEL_OK)
        return rc;
    *out = ((const catalog_namespace *)syscache_row(e))->oid;
    syscache_release(s->cache, e);
    return KEEL_OK;
}

int engine_schema_oid(keel_session *s, const char *schema, oid_t *out)
{
    int rc = engine_check_name(s, "schema", schema);

    return rc == KEEL_OK ? namespace_oid(s, schema, out) : rc;
}

keel_status keel_relation_exists(keel_session *s, const char *schema, const char *name,
                         bool *exists)
{
    catcache_entry *e = NULL;
    int rc = engine_stmt_begin(s);

    *exists = false;
    if (rc != KEEL_OK)
        return rc;
    rc = engine_check_name(s, "relation", name);
    if (rc == KEEL_OK) {
        engine_cache_sync(s);
        rc = engine_relation_find(s, schema, name, &e);
    }
    if (rc == KEEL_OK && e != NULL) {
        *exists = true;
        syscache_release(s->cache, e);
    }
    return engine_stmt_end(s, rc, false);
}

keel_status keel_oid_new(keel_session *s, uint32_t *out)
{
    oid_t oid = 0;
    int rc = engine_oid_next(s->db, &oid, &s->bs->err);

    *out = rc == KEEL_OK ? oid : 0;
    return rc;
}

/* The indexes of table oid into t, through the session's cache. */
static int table_indexes(keel_session *s, engine_table *t)
{
    syscache_key key = t->rel.oid;
    catcache_list *l;
    uint32_t n;
    int rc = syscache_list(s->cache, CACHE_INDEX_TABLE, 1, &key, &l);

    if (rc != KEEL_OK)
        return rc;
    n = syscache_list_count(l);
    if (n > ENGINE_MAX_INDEXES) {
        /* Not one may be left out: each is kept up (a unique one
         * enforced) by every change of the table's rows. */
        syscache_list_release(s->cache, l);
        return kerr_set(&s->bs->err, KEEL_ECORRUPT,
                        "table %u has %u indexes, more than %d", t->rel.oid, n,
                        ENGINE_MAX_INDEXES);
    }
    t->nidx = n;
    for (uint32_t i = 0; i < t->nidx; i++)
        t->idx[i] = *(const catalog_indexdef *)syscache_list_row(l, i);
    syscache_list_release(s->cache, l);
    return KEEL_OK;
}

int engine_index_fits(keel_session *s, const engine_rel *table, oid_t tableoid,
                      const engine_rel *index, const catalog_indexdef *ix)
{
    const tuple_desc *td = table->desc, *kd = btree_key_desc(index->bt);
    bool ok =
        ix->tableoid == tableoid && ix->nkeys >= 1 && ix->nkeys == kd->natts;

    for (uint16_t k = 0; ok && k < ix->nkeys; k++) {
        uint16_t col = ix->keys[k];
        ok = col >= 1 && col <= td->natts &&
             kd->attrs[k].type == td->attrs[col - 1].type &&
             kd->attrs[k].len == td->attrs[col - 1].len;
    }
    if (!ok)
        return kerr_set(&s->bs->err, KEEL_ECORRUPT,
                        "index %u does not fit table %u: its keel_index row "
                        "(of table %u, %u key columns) or its meta page (%u "
                        "key columns) is damaged",
                        ix->indexoid, tableoid, ix->tableoid, ix->nkeys,
                        kd->natts);
    return KEEL_OK;
}

/* The keel_class row of table schema.name into t->rel, through the
 * session's cache (ENOENT; EINVAL for what is not a user table). */
static int table_find(keel_session *s, const char *schema, const char *name,
                      bool read, engine_table *t)
{
    catcache_entry *e;
    oid_t nsoid = 0;
    int rc;

    engine_cache_sync(s);
    rc = namespace_oid(s, schema, &nsoid);
    if (rc != KEEL_OK)
        return rc;
    rc = syscache_search2(s->cache, CACHE_CLASS_NAME, SYSCACHE_NAME(name),
                          nsoid, &e);
    if (rc == KEEL_ENOENT)
        return kerr_set(&s->bs->err, KEEL_ENOENT,
                        "table \"%s.%s\" does not exist", schema, name);
    if (rc != KEEL_OK)
        return rc;
    t->rel = *(const catalog_relation *)syscache_row(e);
    syscache_release(s->cache, e);
    if (t->rel.kind != RELKIND_TABLE ||
        (t->rel.nsoid == NAMESPACE_CATALOG && !read))
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "\"%s.%s\" is not a user table", schema, name);
    return KEEL_OK;
}

int engine_table_open(keel_session *s, catalog_txn *ct, const char *schema,
                      const char *name, bool read, keel_lock_mode mode,
                      engine_table *t)
{
    int rc;

    if (schema == NULL)
        schema = "public";
    rc = engine_check_name(s, "schema", schema);
    if (rc == KEEL_OK)
        rc = engine_check_name(s, "table", name);
    /* Found, locked, then trusted: a wait or a drop since the snapshot
     * may send it round once more, with a snapshot taken after the wait
     * (engine_table_settle()).  (The handle, built once per oid and never
     * changed, comes before the lock: the lock needs it.) */
    for (int round = 0; rc == KEEL_OK; round++) {
        rc = table_find(s, schema, name, read, t);
        if (rc == KEEL_OK)
            rc = engine_table_handle(s, ct, &t->rel, &t->h);
        if (rc == KEEL_OK && mode != 0) {
            rc = engine_table_lock(s, t->h, mode);
            /* After a first refresh, every lock held was taken here. */
            if (rc != KEEL_OK)
                rc = engine_table_settle(
                    s, t->h, mode, rc,
                    round == 0                     ? ENGINE_REFRESH_ONCE
                    : round < ENGINE_RESOLVE_ROUNDS ? ENGINE_REFRESH_AGAIN
                                                   : 0,
                    schema, name);
        }
        if (rc != ENGINE_AGAIN)
            break;
        rc = KEEL_OK;
    }
    if (rc == KEEL_OK)
        rc = table_indexes(s, t);
    for (uint32_t i = 0; rc == KEEL_OK && i < t->nidx; i++) {
        rc = engine_index_handle(s, t->idx[i].indexoid, &t->ih[i]);
        if (rc == KEEL_OK)
            rc = engine_index_fits(s, t->h, t->rel.oid, t->ih[i], &t->idx[i]);
        /* Writes keep a unique index unique only if its meta page says
         * it is one. */
        if (rc == KEEL_OK && btree_is_unique(t->ih[i]->bt) != t->idx[i].unique)
            rc = kerr_set(&s->bs->err, KEEL_ECORRUPT,
                          "index %u of table %u is %sunique by its "
                          "keel_index row, but not by its meta page",
                          t->idx[i].indexoid, t->rel.oid,
                          t->idx[i].unique ? "" : "not ");
    }
    return rc;
}

int engine_check_values(keel_session *s, const tuple_desc *d,
                        const keel_value *vals)
{
    if (vals == NULL)
        return kerr_set(&s->bs->err, KEEL_EINVAL, "no values given");
    for (uint16_t i = 0; i < d->natts; i++) {
        const keel_value *v = &vals[i];
        if (v->isnull)
            continue;
        if (d->attrs[i].type == KEEL_BOOL) {
            unsigned char b;
            memcpy(&b, &v->v.b, 1);
            if (b > 1)
                return kerr_set(&s->bs->err, KEEL_ETYPE,
                                "column %u: %u is not a boolean", i + 1, b);
        }
        if (type_has_bytes(d->attrs[i].type) &&
            v->v.s.len > 0 && v->v.s.ptr == NULL)
            return kerr_set(&s->bs->err, KEEL_ETYPE,
                            "column %u: string value without bytes", i + 1);
        if (d->attrs[i].type == KEEL_NAME && v->v.s.len > 0 &&
            v->v.s.len < KEEL_NAME_LEN &&
            memchr(v->v.s.ptr, '\0', v->v.s.len) != NULL)
            return kerr_set(&s->bs->err, KEEL_ETYPE,
                            "column %u: a name cannot hold a NUL byte", i + 1);
    }
    return KEEL_OK;
}

void *engine_array_grow(void *arr, size_t *cap, size_t first_cap, size_t size)
{
    size_t ncap = *cap ? *cap * 2 : first_cap;
    void *p;

    assert(size > 0 && first_cap > 0);
    if (ncap < *cap || ncap > SIZE_MAX / size)
        return NULL;
    p = realloc(arr, ncap * size);
    if (p != NULL)
        *cap = ncap;
    return p;
}

int engine_value_copy(const tuple_attr *a, const keel_value *v, keel_value *out)
{
    keel_value x = *v;

    if (!v->isnull && type_has_bytes(a->type)) {
        char *p = malloc(v->v.s.len + 1);
        if (p == NULL)
            return KEEL_ENOMEM;
        if (v->v.s.len > 0)
            memcpy(p, v->v.s.ptr, v->v.s.len);
        p[v->v.s.len] = '\0';
        x.v.s.ptr = p;
    }
    *out = x;
    return KEEL_OK;
}

void engine_value_free(const tuple_attr *a, const keel_value *v)
{
    if (!v->isnull && type_has_bytes(a->type))
        free((void *)v->v.s.ptr);
}

void engine_index_key(const catalog_indexdef *ix, const keel_value *row,
                      keel_value *keys)
{
    for (uint16_t k = 0; k < ix->nkeys; k++)
        keys[k] = row[ix->keys[k] - 1];
}

/* The keel_class row of table schema.table, in *rel, read in a statement
 * of its own (ENOENT). */
static int table_catalog_row(keel_session *s, const char *schema,
                             const char *table, catalog_relation *rel)
{
    engine_table t;
    catalog_txn ct;
    int rc = engine_stmt_begin(s);

    if (rc != KEEL_OK)
        return rc;
    rc = engine_catalog_txn(s, false, &ct);
    if (rc == KEEL_OK)
        rc = engine_table_open(s, &ct, schema, table, false,
                               KEEL_LOCK_ACCESS_SHARE, &t);
    if (rc == KEEL_OK)
        *rel = t.rel;
    return engine_stmt_end(s, rc, false);
}

keel_status keel_table_columns(keel_session *s, const char *schema, const char *table,
                       uint16_t *ncols)
{
    catalog_relation rel;
    int rc = table_catalog_row(s, schema, table, &rel);

    if (rc == KEEL_OK)
        *ncols = rel.natts;
    return rc;
}

keel_status keel_column_type(keel_session *s, const char *schema, const char *table,
                     const char *column, keel_type *type)
{
    engine_table t;
    catalog_txn ct;
    catcache_entry *e;
    int rc = engine_stmt_begin(s);

    if (rc != KEEL_OK)
        return rc;
    rc = engine_check_name(s, "column", column);
    if (rc == KEEL_OK)
        rc = engine_catalog_txn(s, false, &ct);
    if (rc == KEEL_OK)
        rc = engine_table_open(s, &ct, schema, table, false,
                               KEEL_LOCK_ACCESS_SHARE, &t);
    if (rc == KEEL_OK) {
        rc = syscache_search2(s->cache, CACHE_ATTRIBUTE_NAME, t.rel.oid,
                              SYSCACHE_NAME(column), &e);
        if (rc == KEEL_ENOENT)
            rc = kerr_set(&s->bs->err, KEEL_ENOENT,
                          "column \"%s\" of table \"%s\" does not exist",
                          column, table);
    }
    if (rc == KEEL_OK) {
        *type = ((const catalog_attribute *)syscache_row(e))->type;
        syscache_release(s->cache, e);
    }
    return engine_stmt_end(s, rc, false);
}

/* The name of index indexoid of table into name, from its keel_class row
 * (ECORRUPT naming the table if there is none). */
static int index_name(keel_session *s, oid_t indexoid, const char *table,
                      char *name)
{
    catcache_entry *e;
    int rc = syscache_search1(s->cache, CACHE_CLASS_OID, indexoid, &e);

    if (rc == KEEL_ENOENT)
        return kerr_set(&s->bs->err, KEEL_ECORRUPT,
                        "index %u of table \"%s\" has no keel_class row",
                        indexoid, table);
    if (rc != KEEL_OK)
        return rc;
    memcpy(name, ((const catalog_relation *)syscache_row(e))->name,
           KEEL_NAME_LEN);
    syscache_release(s->cache, e);
    return KEEL_OK;
}

keel_status keel_table_describe(keel_session *s, const char *schema,
                                const char *table, keel_table_info *info,
                                keel_column_info *cols, uint16_t max_cols)
{
    engine_table t;
    catalog_txn ct;
    catcache_entry *e;
    int rc = engine_stmt_begin(s);

    if (rc != KEEL_OK)
        return rc;
    rc = engine_catalog_txn(s, false, &ct);
    if (rc == KEEL_OK)
        rc = engine_table_open(s, &ct, schema, table, true,
                               KEEL_LOCK_ACCESS_SHARE, &t);
    if (rc == KEEL_OK) {
        memset(info, 0, sizeof(*info));
        info->oid = t.rel.oid;
        info->ncols = t.rel.natts;
        info->nindexes = (uint16_t)t.nidx;
        for (uint32_t i = 0; i < t.nidx; i++)
            if (t.idx[i].primary) {
                info->npkey = t.idx[i].nkeys;
                memcpy(info->pkey, t.idx[i].keys,
                       t.idx[i].nkeys * sizeof(info->pkey[0]));
                rc = index_name(s, t.idx[i].indexoid, table, info->pkey_name);
            }
    }
    for (uint16_t a = 1; rc == KEEL_OK && a <= t.rel.natts && a <= max_cols;
         a++) {
        const catalog_attribute *att;
        rc = syscache_search2(s->cache, CACHE_ATTRIBUTE_NUM, t.rel.oid, a, &e);
        if (rc == KEEL_ENOENT)
            rc = kerr_set(&s->bs->err, KEEL_ECORRUPT,
                          "table \"%s\" has no column %u in keel_attribute",
                          table, (unsigned)a);
        if (rc != KEEL_OK)
            break;
        att = syscache_row(e);
        memcpy(cols[a - 1].name, att->name, KEEL_NAME_LEN);
        cols[a - 1].type = att->type;
        cols[a - 1].charlen = att->charlen;
        cols[a - 1].notnull = att->notnull;
        syscache_release(s->cache, e);
    }
    return engine_stmt_end(s, rc, false);
}

keel_status keel_table_indexes(keel_session *s, const char *schema,
                               const char *table, keel_index_info *out,
                               uint16_t max, uint16_t *n)
{
    engine_table t;
    catalog_txn ct;
    int rc = engine_stmt_begin(s);

    *n = 0;
    if (rc != KEEL_OK)
        return rc;
    rc = engine_catalog_txn(s, false, &ct);
    if (rc == KEEL_OK)
        rc = engine_table_open(s, &ct, schema, table, true,
                               KEEL_LOCK_ACCESS_SHARE, &t);
    for (uint32_t i = 0; rc == KEEL_OK && i < t.nidx && i < max; i++) {
        keel_index_info *x = &out[i];
        memset(x, 0, sizeof(*x));
        x->nkeys = t.idx[i].nkeys;
        memcpy(x->keys, t.idx[i].keys, t.idx[i].nkeys * sizeof(x->keys[0]));
        x->unique = t.idx[i].unique;
        x->primary = t.idx[i].primary;
        rc = index_name(s, t.idx[i].indexoid, table, x->name);
    }
    if (rc == KEEL_OK)
        *n = (uint16_t)t.nidx;
    return engine_stmt_end(s, rc, false);
}

keel_status keel_table_rows(keel_session *s, const char *schema, const char *table,
                    double *rows)
{
    catalog_relation rel;
    int rc = table_catalog_row(s, schema, table, &rel);

    if (rc == KEEL_OK)
        *rows = rel.tuples;
    return rc;
}

void engine_session_stats_get(const keel_session *s, engine_session_stats *out)
{
    txn_stats ts;

    txn_session_stats(s->ts, &ts);
    memset(out, 0, sizeof(*out));
    out->buffer_reads = buf_session_reads(s->bs);
    out->snapshots_taken = ts.snapshots_taken;
    out->snapshots_reused = ts.snapshots_reused;
    for (uint32_t i = 0; i < ENGINE_SESSION_DIRS; i++)
        if (s->dirs[i] != NULL) {
            btree_dir_stats st;
            btree_dir_stats_get(s->dirs[i], &st);
            out->index_dir_moves += st.moves;
        }
}

keel_status keel_session_set_cache_options(keel_session *s, int32_t prune_min_age,
                                   uint64_t memory_target)
{
    syscache_options o = {prune_min_age, memory_target};

    kerr_clear(&s->bs->err);
    if (prune_min_age < -1)
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "catalog cache prune_min_age %d is below -1",
                        (int)prune_min_age);
    syscache_set_options(s->cache, &o);
    return KEEL_OK;
}

void keel_session_cache_stats(const keel_session *s, keel_cache_stats *out)
{
    syscache_stats st;

    syscache_get_stats(s->cache, &st);
    memset(out, 0, sizeof(*out));
    out->bytes = st.bytes;
    out->positive_bytes = st.positive_bytes;
    out->negative_bytes = st.negative_bytes;
    out->list_bytes = st.list_bytes;
    out->entries = st.entries;
    out->negative_entries = st.negative_entries;
    out->hits = st.hits;
    out->negative_hits = st.negative_hits;
    out->misses = st.misses;
    out->list_hits = st.list_hits;
    out->list_misses = st.list_misses;
    out->evictions = st.evictions;
    out->age_prunes = st.age_prunes;
    out->invalidations = st.invalidations;
    out->resets = st.resets;
    out->block_bytes = st.block_bytes;
}

void keel_session_set_synchronous_commit(keel_session *s, bool on)
{
    txn_set_synchronous_commit(s->ts, on ? 1 : 0);
}
