/*
 * savepoint.c: savepoints within a transaction (keel_savepoint(),
 * keel_rollback_to_savepoint(), keel_release_savepoint()).
 *
 * keel gives a transaction one xid, and its rows carry it; a savepoint
 * gets no xid of its own.  Instead, while a savepoint is set, every change
 * of a row the transaction makes is noted in the session, newest last
 * (engine_undo_note()), and a rollback to the savepoint takes back, newest
 * first, those noted since it was set (heap_undo_insert(),
 * heap_undo_claim()): a version it inserted becomes deleted by its own
 * inserter, seen by nobody, and one it deleted or updated has no deleter
 * again.  Each is a logged change of its page, so a crash after the
 * rollback replays it, and the transaction's commit then keeps exactly
 * what came before the savepoint and after the rollback.
 *
 * Index entries made since the savepoint stay, naming versions nobody
 * sees, as those of an aborted transaction do.  Table locks taken since
 * stay until the transaction ends; row locks taken since are
 * released (one made stronger since stays as strong).  Catalog changes (DDL, ANALYZE) are
 * not taken back: the engine's shared state (claims, files, dropped
 * tables) follows them, so a rollback to a savepoint set before one is
 * refused, and the transaction can then only abort.  So is one after a
 * failure that already left the transaction to abort (s->failed).
 */
#include <stdlib.h>

#include "engine/engine.h"

int engine_undo_reserve_slow(keel_session *s, uint32_t n)
{
    engine_undo *u;
    uint32_t cap;

    if (s->undo_cap - s->nundo >= n)
        return KEEL_OK;
    cap = s->undo_cap ? s->undo_cap : 64;
    while (cap - s->nundo < n) {
        if (cap > UINT32_MAX / 2)
            return kerr_set(&s->bs->err, KEEL_ENOMEM,
                            "too many changes since the first savepoint");
        cap *= 2;
    }
    u = realloc(s->undo, (size_t)cap * sizeof(*u));
    if (u == NULL)
        return kerr_set(&s->bs->err, KEEL_ENOMEM,
                        "out of memory noting a change for a savepoint");
    s->undo = u;
    s->undo_cap = cap;
    return KEEL_OK;
}

void engine_undo_note_slow(keel_session *s, engine_rel *h, tid t, bool insert,
                           uint32_t old_cid)
{
    /* engine_undo_reserve() made room */
    s->undo[s->nundo++] =
        (engine_undo){.h = h, .t = t, .old_cid = old_cid, .insert = insert};
}

void engine_savepoints_end(keel_session *s)
{
    s->nsavepoints = 0;
    s->nundo = 0;
}

/* What every savepoint call needs: an explicit transaction, no scan open,
 * and, unless level is 0, a savepoint of that level. */
static int savepoint_check(keel_session *s, uint32_t level)
{
    kerr *e = &s->bs->err;

    kerr_clear(e);
    if (s->scan != NULL)
        return kerr_set(e, KEEL_EINVAL, "a scan is open in this session");
    if (!txn_in_progress(s->ts) || s->implicit)
        return kerr_set(e, KEEL_EINVAL,
                        "savepoints need a transaction begun by keel_begin");
    if (level != 0 && (level > s->nsavepoints))
        return kerr_set(e, KEEL_EINVAL,
                        "no savepoint %u: the transaction has %u",
                        (unsigned)level, (unsigned)s->nsavepoints);
    return KEEL_OK;
}

keel_status keel_savepoint(keel_session *s, uint32_t *level)
{
    int rc = savepoint_check(s, 0);
    engine_savepoint *sp;

    if (rc != KEEL_OK)
        return rc;
    if (s->failed)
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "the transaction failed earlier: call keel_abort");
    if (s->nsavepoints == s->savepoints_cap) {
        uint32_t cap = s->savepoints_cap ? 2 * s->savepoints_cap : 8;
        sp = cap > UINT32_MAX / 2
                 ? NULL
                 : realloc(s->savepoints, (size_t)cap * sizeof(*sp));
        if (sp == NULL)
            return kerr_set(&s->bs->err, KEEL_ENOMEM,
                            "out of memory for a savepoint");
        s->savepoints = sp;
        s->savepoints_cap = cap;
    }
    s->savepoints[s->nsavepoints++] =
        (engine_savepoint){.nundo = s->nundo,
                           .nrowlocks = txn_rowlocks_mark(s->ts),
                           .nheld = s->nheld,
                           .ndrops = s->ndrops,
                           .inval_adds = s->inval.adds,
                           .inval_overflow = s->inval.overflow};
    *level = s->nsavepoints;
    return KEEL_OK;
}

keel_status keel_release_savepoint(keel_session *s, uint32_t level)
{
    int rc = savepoint_check(s, level);

    if (rc == KEEL_OK && level == 0)
        rc = kerr_set(&s->bs->err, KEEL_EINVAL, "savepoint levels start at 1");
    if (rc != KEEL_OK)
        return rc;
    /* Its changes become the enclosing savepoint's, if there is one. */
    s->nsavepoints = level - 1;
    if (s->nsavepoints == 0)
        s->nundo = 0;
    return KEEL_OK;
}

keel_status keel_rollback_to_savepoint(keel_session *s, uint32_t level)
{
    const engine_savepoint *sp;
    xid_t xid;
    int rc = savepoint_check(s, level);

    if (rc == KEEL_OK && level == 0)
        rc = kerr_set(&s->bs->err, KEEL_EINVAL, "savepoint levels start at 1");
    if (rc != KEEL_OK)
        return rc;
    sp = &s->savepoints[level - 1];
    if (s->failed)
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "the transaction failed in a way a savepoint cannot "
                        "take back: it can only be rolled back");
    if (s->inval.adds != sp->inval_adds ||
        s->inval.overflow != sp->inval_overflow || s->nheld != sp->nheld ||
        s->ndrops != sp->ndrops)
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "the transaction changed the schema (or statistics) "
                        "since the savepoint, which a rollback to a "
                        "savepoint cannot take back: it can only be rolled "
                        "back");
    xid = txn_current_xid(s->ts);
    while (s->nundo > sp->nundo) {
        const engine_undo *u = &s->undo[s->nundo - 1];
        heap_rel *rel = &u->h->heap;
        rc = u->insert ? heap_undo_insert(rel, s->bs, xid, u->t)
                       : heap_undo_claim(rel, s->bs, xid, u->t, u->old_cid);
        if (rc != KEEL_OK) {
            /* Partly taken back: only an abort is right now. */
            s->failed = true;
            return rc;
        }
        s->nundo--;
    }
    /* The row locks taken since go too (not a strengthening of
     * one taken before, which stays until the transaction ends). */
    txn_rowlocks_release_to(s->ts, sp->nrowlocks);
    /* Later savepoints go; this one stays, as it was set. */
    s->nsavepoints = level;
    s->follow_set = false;
    return KEEL_OK;
}
