/*
 * lock.c: table locks as the API sees them: keel_lock_table(), the
 * session's lock timeout, the messages of a lock not granted, and what a
 * wait means for the catalog entry that named the table
 * (engine_table_settle()).  The lock manager itself is src/storage/lmgr.c.
 */
#include <stdio.h>

#include "engine/engine.h"

/* PostgreSQL's names of the modes, as its messages spell them. */
static const char *const mode_names[] = {
    [KEEL_LOCK_ACCESS_SHARE] = "AccessShareLock",
    [KEEL_LOCK_ROW_SHARE] = "RowShareLock",
    [KEEL_LOCK_ROW_EXCLUSIVE] = "RowExclusiveLock",
    [KEEL_LOCK_SHARE_UPDATE_EXCLUSIVE] = "ShareUpdateExclusiveLock",
    [KEEL_LOCK_SHARE] = "ShareLock",
    [KEEL_LOCK_SHARE_ROW_EXCLUSIVE] = "ShareRowExclusiveLock",
    [KEEL_LOCK_EXCLUSIVE] = "ExclusiveLock",
    [KEEL_LOCK_ACCESS_EXCLUSIVE] = "AccessExclusiveLock",
};

int engine_lock_error(keel_session *s, int rc, keel_lock_mode mode,
                      bool nowait, const char *schema, const char *name)
{
    kerr *e = &s->bs->err;

    if (schema == NULL)
        schema = "public";
    if (rc == KEEL_ELOCKTIMEOUT && nowait)
        return kerr_set(e, rc, "could not obtain lock on relation \"%s.%s\"",
                        schema, name);
    if (rc == KEEL_ELOCKTIMEOUT)
        return kerr_set(e, rc,
                        "canceling statement due to lock timeout: %s on "
                        "relation \"%s.%s\" not granted within %u ms",
                        mode_names[mode], schema, name, s->lp->timeout_ms);
    if (rc == KEEL_EDEADLOCK)
        return kerr_set(e, rc,
                        "deadlock detected: waiting for %s on relation "
                        "\"%s.%s\" closed a cycle of waiting transactions",
                        mode_names[mode], schema, name);
    return kerr_set(e, rc, "out of memory locking relation \"%s.%s\"", schema,
                    name);
}

/*
 * Takes the running transaction's snapshot again, and brings the catalog
 * caches up to it (as session_txn_begin(): until they apply no message),
 * then the transaction's own messages (none: the caller checked).
 */
static int snapshot_again(keel_session *s)
{
    kerr *e = &s->bs->err;
    bool consumed = true;
    int rc = KEEL_OK;

    while (rc == KEEL_OK && consumed) {
        rc = txn_refresh_snapshot(s->ts, e);
        if (rc == KEEL_OK)
            rc = syscache_txn_begin(s->cache, &s->cache_ct, &consumed);
    }
    s->inval_applied = 0;
    return rc;
}

int engine_table_settle(keel_session *s, const engine_rel *h,
                        keel_lock_mode mode, int rc, int may_refresh,
                        const char *schema, const char *name)
{
    bool dropped = atomic_load_acquire(&h->dropped) != 0;

    if (rc != ENGINE_DROPPED && rc != LMGR_WAITED)
        return engine_lock_error(s, rc, mode, false, schema, name);
    /* Nothing it did depends on the old snapshot: no catalog row changed,
     * and no table read or written (every read or write takes a lock).
     * And no xid yet, so that every xid comes after the snapshot its
     * transaction reads with: a build whose snapshot saw a deleter commit
     * has a higher xid than that deleter, which keel check relies on
     * (writers and builds take their xids once their lock is held). */
    if (may_refresh != 0 && s->inval.count == 0 && !s->inval.overflow &&
        txn_current_xid(s->ts) == XID_INVALID &&
        (may_refresh == ENGINE_REFRESH_AGAIN ||
         lmgr_holds_only(s->lp, h->oid, mode))) {
        rc = snapshot_again(s);
        return rc == KEEL_OK ? ENGINE_AGAIN : rc;
    }
    if (dropped)
        return kerr_set(&s->bs->err, KEEL_ENOENT,
                        "table \"%s.%s\" does not exist: a transaction that "
                        "dropped it committed",
                        schema != NULL ? schema : "public", name);
    return KEEL_OK;
}

keel_status keel_lock_table(keel_session *s, const char *schema,
                            const char *table, keel_lock_mode mode, bool nowait)
{
    engine_table t;
    catalog_txn ct;
    int rc;

    kerr_clear(&s->bs->err);
    if (mode < KEEL_LOCK_ACCESS_SHARE || mode > KEEL_LOCK_ACCESS_EXCLUSIVE)
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "lock mode %d is not one of 1 (ACCESS SHARE) to 8 "
                        "(ACCESS EXCLUSIVE)",
                        (int)mode);
    if (s->scan == NULL && !txn_in_progress(s->ts))
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "LOCK TABLE can only be used in transaction blocks "
                        "(keel_begin)");
    rc = engine_stmt_begin(s);
    if (rc != KEEL_OK)
        return rc;
    if (!nowait) {
        rc = engine_catalog_txn(s, false, &ct);
        if (rc == KEEL_OK)
            rc = engine_table_open(s, &ct, schema, table, true, mode, &t);
        return engine_stmt_end(s, rc, false);
    }
    /* NOWAIT: found, then locked only if that needs no wait. */
    rc = engine_check_name(s, "table", table);
    if (rc == KEEL_OK)
        rc = engine_catalog_txn(s, false, &ct);
    if (rc == KEEL_OK)
        rc = engine_table_open(s, &ct, schema, table, true, 0, &t);
    if (rc == KEEL_OK) {
        rc = lmgr_acquire(s->lp, s->lock_strong, t.rel.oid, mode, true);
        if (rc != KEEL_OK)
            rc = engine_lock_error(s, rc, mode, true, schema, table);
    }
    if (rc == KEEL_OK && atomic_load_acquire(&t.h->dropped) != 0)
        rc = kerr_set(&s->bs->err, KEEL_ENOENT,
                      "table \"%s.%s\" does not exist: a transaction that "
                      "dropped it committed",
                      schema != NULL ? schema : "public", table);
    return engine_stmt_end(s, rc, false);
}

void keel_session_set_lock_timeout(keel_session *s, uint32_t timeout_ms)
{
    lmgr_set_timeout(s->lp, timeout_ms);
}

void keel_session_set_row_nowait(keel_session *s, bool nowait)
{
    s->row_nowait = nowait;
}

void keel_session_set_value_text(keel_session *s, keel_value_text_fn fn,
                                 void *arg)
{
    s->value_text = fn;
    s->value_text_arg = arg;
}
