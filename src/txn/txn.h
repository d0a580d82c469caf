/*
 * txn.h: transactions: xid assignment, begin / commit / abort, snapshots,
 * and the status oracle the access methods use.
 *
 * One txn_mgr per database holds the commit log (clog.h), the process array
 * (procarray.h) and the counters; one txn_session per session (thread)
 * holds the session's transaction and its snapshot.
 *
 * A transaction takes its snapshot at txn_begin() and gets an xid only when
 * it first writes (txn_assign_xid()); a read-only transaction never has one
 * and ends without touching the commit log or any shared counter.  Commit
 * records COMMITTED in the commit log, then withdraws the xid from the
 * process array; abort the same with ABORTED.
 *
 * Xids are durable without a write-ahead log by reservation: the manager
 * hands out ids below xid_limit freely and, before the first id at or past
 * it, asks the engine (the reserve callback) to record a higher limit
 * durably.  After a crash the engine restarts from the recorded limit, so an
 * id that may appear on disk is never handed out again.
 *
 * Snapshots take no lock (see src/txn/README.md for why that is safe), and
 * a session that takes a snapshot when no transaction with an xid has
 * finished since its previous one reuses it.
 *
 * Errors are returned as keel_status codes with a message in the caller's
 * kerr.  Every txn_session function must be called by the session's own
 * thread; txn_xid_status() may be called from that thread at any time.
 */
#ifndef KEEL_TXN_TXN_H
#define KEEL_TXN_TXN_H

#include <stdbool.h>
#include <stdint.h>

#include "port/error.h"
#include "storage/bufmgr.h"
#include "txn/clog.h"
#include "txn/procarray.h"
#include "txn/rowlock.h"
#include "txn/snapshot.h"
#include "wal/wal.h"

/* The last xid that may be handed out (no wraparound yet). */
#define TXN_XID_LAST ((xid_t)0xFFFFFFF0u)

/* Row locks held at once (rowlock.h): 64 partitions of this many,
 * 512 Ki in all; a partition's last entry taken answers ENOMEM. */
#define TXN_ROWLOCKS_PER_PART 8192

/* How far each reservation raises the limit. */
#define TXN_XID_RESERVE_CHUNK ((xid_t)65536)

/*
 * The engine's reservation hook: durably record that xids below new_limit
 * may have been handed out (so a restart begins at new_limit), and return
 * KEEL_OK; or fail with a keel_status and a message in err, which fails the
 * assignment that needed it.  Called under the assignment lock, so at most
 * one call runs at a time, with limits that only grow.
 */
typedef int (*txn_reserve_fn)(void *ctx, xid_t new_limit, kerr *err);

/*
 * Lock-free scans a snapshot tries before it holds ending transactions off
 * and scans once more (README.md, "Consistent snapshots").
 */
#define TXN_SNAPSHOT_TRIES 4

typedef struct txn_mgr txn_mgr;
typedef struct txn_session txn_session;

/* Per-session counters (private to the session; read by its thread). */
typedef struct txn_stats {
    uint64_t snapshots_taken;      /* computed by scanning the array */
    uint64_t snapshots_reused;     /* reused: nothing finished since */
    uint64_t snapshot_retries;     /* scans repeated because a transaction
                                      finished during them */
    uint64_t snapshots_serialized; /* taken with finishing held off */
    uint64_t xids_assigned;
    uint64_t commits;       /* of transactions with an xid */
    uint64_t aborts;        /* of transactions with an xid */
    uint64_t readonly_ends; /* commits and aborts without an xid */
} txn_stats;

/*
 * Creates the transaction manager.
 *   pool          the buffer pool the commit log is read through; must
 *                 outlive the manager.
 *   clog_rel      the commit log's relation, which must exist (ENOENT).
 *   max_sessions  process array slots, 1 .. PROCARRAY_MAX_SESSIONS.
 *   layout        PROCARRAY_PADDED (normal) or PROCARRAY_PACKED (benchmarks).
 *   next_xid      the first xid to hand out, >= XID_FIRST_NORMAL: for a new
 *                 database XID_FIRST_NORMAL, on reopen the recorded limit.
 *   xid_limit     ids >= this need a reservation first (see above).
 *   reserve, ctx  the reservation hook; NULL means ids need no durability
 *                 (benchmarks, tests) and xid_limit is ignored.
 * EINVAL for out-of-range arguments, ENOMEM, and the commit log's errors.
 */
int txn_mgr_create(buf_pool *pool, relnumber_t clog_rel, uint32_t max_sessions,
                   procarray_layout layout, xid_t next_xid, xid_t xid_limit,
                   txn_reserve_fn reserve, void *reserve_ctx, txn_mgr **out,
                   kerr *err);

/* Frees the manager.  Every session must have been detached.  NULL is
 * ignored.  Commit-log pages stay in the pool (checkpoint it to keep them). */
void txn_mgr_destroy(txn_mgr *m);

/* The next xid that would be handed out, and the current reserved limit
 * (what a clean shutdown may record as the restart point). */
/* The log commits wait for (NULL: none); set before any session starts. */
void txn_mgr_set_wal(txn_mgr *m, wal *w);

xid_t txn_mgr_next_xid(txn_mgr *m);
xid_t txn_mgr_xid_limit(txn_mgr *m);

procarray_layout txn_mgr_layout(const txn_mgr *m);
procarray *txn_mgr_procarray(txn_mgr *m);
clog *txn_mgr_clog(txn_mgr *m);

/*
 * Attaches a session: takes a process array slot and allocates the
 * snapshot's memory (max_sessions xids).  bs is the session's buffer pool
 * session, used to read the commit log; it must outlive the txn session.
 * EEXHAUSTED when all max_sessions slots are in use, ENOMEM.
 */
int txn_session_attach(txn_mgr *m, buf_session *bs, txn_session **out,
                       kerr *err);

/*
 * Detaches the session and frees it.  A transaction still running is
 * aborted first (as if the session had crashed).  NULL is ignored.
 */
void txn_session_detach(txn_session *s);

/*
 * Begins a transaction and takes its snapshot (reused if no transaction
 * with an xid has finished since the session's previous snapshot).  EINVAL
 * if a transaction is already running in the session.
 */
int txn_begin(txn_session *s, kerr *err);

/*
 * Takes a new snapshot for the running transaction (a statement snapshot,
 * for read committed).  The previous snapshot's contents are replaced.
 * EINVAL outside a transaction.
 */
int txn_refresh_snapshot(txn_session *s, kerr *err);

/*
 * Returns the transaction's xid in *xid, assigning one on the first call
 * (call it before the transaction's first write).  Errors: EINVAL outside a
 * transaction; EEXHAUSTED when the xid space is used up (TXN_XID_LAST: no
 * wraparound yet); whatever the reserve hook returns; the commit log's
 * errors when a new log page cannot be added.  A failed call consumes no
 * xid and leaves the transaction running without one.
 */
int txn_assign_xid(txn_session *s, xid_t *xid, kerr *err);

/*
 * Commits the running transaction.  With an xid: records COMMITTED in the
 * commit log, then withdraws the xid.  If the commit log cannot be written
 * (its error is returned) the transaction is aborted instead: it ends
 * either way.  EINVAL outside a transaction.
 */
int txn_commit(txn_session *s, kerr *err);

/*
 * Aborts the running transaction (no-op outside one).  It ends whatever
 * happens: if ABORTED cannot be written to the commit log (an I/O error,
 * a log that has failed), the xid still reads as aborted, because it is
 * neither running nor committed; that error is returned, with a message
 * in err (which may be NULL).
 */
int txn_abort(txn_session *s, kerr *err);

/* Whether this session's commits wait until their record is durable:
 * 1 yes, 0 no (acknowledged at once, durable within the log writer's
 * delay), -1 as the database's synchronous_commit says (the default). */
void txn_set_synchronous_commit(txn_session *s, int mode);

/*
 * Waits at most timeout_ns for transaction xid to end (to leave the
 * process array, its status final in the commit log): true if it has.
 * For read committed's writes, which wait for a row's changer while
 * holding what they changed: the caller looks for deadlocks.
 */
bool txn_wait_end(txn_session *s, xid_t xid, uint64_t timeout_ns);

/* True while a transaction is running in the session. */
bool txn_in_progress(const txn_session *s);

/* How many row locks the running transaction has noted (for a
 * savepoint), and the release of those noted after mark (a rollback to
 * it). */
uint32_t txn_rowlocks_mark(const txn_session *s);
void txn_rowlocks_release_to(txn_session *s, uint32_t mark);

/* The running transaction's xid, XID_INVALID if it has none (yet). */
xid_t txn_current_xid(const txn_session *s);

/*
 * The running transaction's snapshot, NULL outside a transaction.  Valid
 * until the session's next txn_begin(), txn_refresh_snapshot() or detach.
 */
const snapshot *txn_snapshot(const txn_session *s);

/*
 * The status oracle, an xid_status_fn (ctx is a txn_session *): COMMITTED
 * or ABORTED if the commit log says so; otherwise IN_PROGRESS if the xid is
 * published in the process array, else ABORTED (it crashed, its abort
 * record was lost, or it was never handed out).  Ids below
 * XID_FIRST_NORMAL are COMMITTED.  Errors are the commit log's.
 */
int txn_xid_status(void *ctx, xid_t xid, xid_status *status, kerr *err);

/*
 * Fills *vis for the running transaction: its snapshot, the oracle above,
 * txn_horizon_recent() as its horizon, and the session's command state.
 * EINVAL outside a transaction.
 */
int txn_visibility(txn_session *s, visibility *vis, kerr *err);

/*
 * The session's command state (cid.h): the current command of its
 * transaction, which advances with cid_next(), the command its readers
 * read as (CID_ALL unless the caller sets another, for as long as it
 * needs), and its combo ids.  Reset to CID_FIRST, read as CID_ALL, when a
 * transaction with an xid ends; a read-only one changes it only through
 * reading.
 */
cid_state *txn_cids(txn_session *s);

/*
 * The horizon: an xid such that every transaction that ended below it is
 * seen as ended by every snapshot that exists now or will ever be taken.
 * A row version whose deleter committed below it can be seen by no
 * snapshot any more (nor one whose inserter aborted, horizon or not).
 * XID_INVALID if it cannot be computed here (no membarrier(2)): nothing
 * may then be reclaimed.  Costs two scans of the process array and a
 * barrier on every CPU running the process's threads (a few
 * microseconds); snapshots pay one load for it (README.md, "The
 * horizon").
 */
xid_t txn_horizon(txn_mgr *m);

/* How long txn_horizon_recent() waits after a computation begins before
 * it begins another: at least the first, and TXN_HORIZON_COST_RATIO times
 * the CPU time the computation took, but not more than the second. */
#define TXN_HORIZON_INTERVAL_NS     100000
#define TXN_HORIZON_INTERVAL_MAX_NS 5000000
#define TXN_HORIZON_COST_RATIO      50

/*
 * A horizon for a caller that needs one above want: the highest computed
 * so far if it is (a horizon once computed stays one: every snapshot taken
 * later sees at least what it saw), else a new one (txn_horizon()) unless
 * one is being computed, or the wait after the last (above) has not
 * passed, so that callers held back by an old snapshot do not
 * each pay for one, and the barriers take at most a small share of the
 * time however many callers want one.  May be XID_INVALID (none yet, or
 * no membarrier(2)).
 */
xid_t txn_horizon_recent(txn_mgr *m, xid_t want);

#ifdef KEEL_FAULT_INJECTION
/*
 * Tests only: makes every snapshot call fn(arg) after it has published its
 * xmin and before it confirms itself (README.md, "The horizon"), so that
 * a test can end transactions and compute horizons in that window.  fn
 * NULL removes the hook.  Set it while no snapshot is being taken.
 */
void txn_set_publish_hook(txn_mgr *m, void (*fn)(void *arg), void *arg);
#endif

/* The session's counters, and its process array slot. */
void txn_session_stats(const txn_session *s, txn_stats *out);
uint32_t txn_session_slot(const txn_session *s);

#endif /* KEEL_TXN_TXN_H */
