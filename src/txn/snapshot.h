/*
 * snapshot.h: transaction ids, their status, and snapshots: what the
 * access methods need to decide which row versions a transaction sees.
 *
 * Transaction ids are 32-bit and only grow (no wraparound yet: a database
 * that would assign more than 2^32 - 3 ids refuses to).  Rows written while
 * a database is created carry XID_FROZEN and are visible to everyone.
 */
#ifndef KEEL_TXN_SNAPSHOT_H
#define KEEL_TXN_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "port/error.h"
#include "txn/cid.h"

typedef uint32_t xid_t;

#define XID_INVALID      ((xid_t)0)
#define XID_FROZEN       ((xid_t)2) /* committed before time began */
#define XID_FIRST_NORMAL ((xid_t)3) /* the first id a transaction gets */

typedef enum xid_status {
    XID_STATUS_IN_PROGRESS = 0, /* running, or crashed before finishing */
    XID_STATUS_COMMITTED = 1,
    XID_STATUS_ABORTED = 2,
} xid_status;

/*
 * A snapshot: which transactions had finished when it was taken.  A
 * transaction's effects are visible to the snapshot iff it committed and
 * was not running then: xid < xmax and xid not in xip (and, of course, its
 * status is committed).  The taking transaction's own xid (if it has one)
 * is never in xip; its own changes are visible to it.
 */
typedef struct snapshot {
    xid_t xmin;    /* every xid < xmin had finished */
    xid_t xmax;    /* every xid >= xmax had not started */
    xid_t own_xid; /* the taking transaction's xid, or XID_INVALID */
    uint32_t nxip; /* entries in xip */
    xid_t *xip;    /* xids in [xmin, xmax) that were running, ascending */
} snapshot;

/* True if xid was running (or not yet started) as far as s is concerned;
 * false for s's own xid and for xids that had finished. */
bool snapshot_running(const snapshot *s, xid_t xid);

/*
 * How the access methods learn a transaction's status: the transaction
 * manager supplies the real one (reading the commit log through the buffer
 * pool); tests may supply their own.  Returns a keel_status; on success
 * *status is set.  IN_PROGRESS means running now; an xid that the log does
 * not show as finished but that is not running any more (its session or the
 * process died first) is reported ABORTED.
 */
typedef int (*xid_status_fn)(void *ctx, xid_t xid, xid_status *status,
                             kerr *err);

/*
 * A horizon (txn_horizon_recent()) for a caller that needs one above want:
 * every transaction that ended below the xid returned is seen as ended by
 * every snapshot, live or future.  The transaction manager's may return
 * one no higher than want (it computes a new one at most so often).
 */
typedef xid_t (*xid_horizon_fn)(void *ctx, xid_t want);

/*
 * Notes that the caller met transaction xid running on a row it must
 * change, and fails with a serialization error.  Under repeatable read
 * waiting for xid cannot help this transaction (if xid commits, the row
 * changed after its snapshot); the transaction layer waits for xid once
 * the failed transaction has aborted and holds nothing, so that the retry
 * starts after xid ended rather than spinning against it.
 */
typedef void (*xid_conflict_fn)(void *ctx, xid_t xid);

/* Everything a visibility check needs; horizon (over status_ctx) is what
 * pruning needs too, and NULL where the caller has none (no pruning);
 * conflict (over status_ctx) NULL where nobody waits.  cids is the
 * snapshot's transaction's command state (cid.h): its changes are stamped
 * with its current command, and among them a reader sees those of the
 * commands before cids->reading (CID_ALL: all of them).  With cids NULL
 * there are no command ids: the transaction sees all of its own changes,
 * and stamps CID_FIRST. */
typedef struct visibility {
    const snapshot *snap;
    xid_status_fn status;
    void *status_ctx;
    xid_horizon_fn horizon;
    xid_conflict_fn conflict;
    cid_state *cids;
    /* Read committed (both NULL/false otherwise): a write that meets
     * another transaction's change reports it in *met instead of through
     * conflict; and with committed_ok a version it changes need only be
     * committed, not visible to snap (the newest version of a row changed
     * since the snapshot, found by following its chain). */
    struct write_conflict *met;
    bool committed_ok;
    /* Whether a committed xid is still in the process array (its commit
     * record on its way to disk), where new snapshots see it running;
     * NULL where nobody asks (read committed's chain walk does). */
    bool (*in_array)(void *ctx, xid_t xid);
    /* Row locks (rowlock.h; NULL: none): a write (or lock) of a version
     * another running transaction holds a conflicting lock on fails with
     * ESERIALIZE, naming it in *locker if locker is set (the caller waits
     * for it and tries again), else as for a running deleter (met,
     * conflict).  A lock taken is noted in rowlock_owner.  An update with
     * keeps_key changes no key column of the row (no unique index's
     * key): it meets locks as NO KEY UPDATE, so KEY SHARE holders' locks
     * go on to its new version (the caller's rowlock_carry()). */
    struct rowlock_table *rowlocks;
    struct rowlock_owner *rowlock_owner;
    xid_t *locker;
    bool keeps_key;
} visibility;

/* What a write met on a version another transaction had changed: that
 * transaction, whether it had committed (else it was running), whether it
 * updated the version (else deleted it), and then the tid of the version
 * it made. */
typedef struct write_conflict {
    xid_t xid;
    bool committed;
    bool updated;
    uint32_t next_block;
    uint16_t next_offset;
} write_conflict;

#endif /* KEEL_TXN_SNAPSHOT_H */
