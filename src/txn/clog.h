/*
 * clog.h: the commit status log.
 *
 * The final status of every transaction id, two bits each (0 = in progress
 * or never finished, 1 = committed, 2 = aborted), stored in the pages of one
 * relation, after each page's 24-byte header: 32672 ids per 8 KiB page, id
 * x in block x / CLOG_XIDS_PER_PAGE.  Pages are read and written through the
 * buffer pool like any other relation (shared content lock to read,
 * exclusive lock and buf_mark_dirty() to write), so they reach disk at
 * eviction and checkpoint and are checksummed like every page.
 *
 * The relation grows as ids need new pages.  Extension is serialized by a
 * mutex in the clog, which re-checks the size under it, so two sessions that
 * need the same new page add it once.  A page that does not exist yet holds
 * no statuses: its ids read as in progress.
 *
 * Ids below XID_FIRST_NORMAL (XID_FROZEN among them) are committed by
 * definition; nothing is stored for them.
 *
 * Thread safety: every function may be called concurrently, each thread
 * with its own buf_session.
 */
#ifndef KEEL_TXN_CLOG_H
#define KEEL_TXN_CLOG_H

#include <stdint.h>

#include "port/error.h"
#include "storage/bufmgr.h"
#include "storage/page.h"
#include "txn/snapshot.h"
#include "wal/wal.h"

/* Statuses per page: 4 per byte of the space after the header. */
#define CLOG_XIDS_PER_PAGE ((xid_t)((BLOCK_SIZE - PAGE_HEADER_SIZE) * 4))

typedef struct clog clog;

/*
 * Opens the commit log kept in relation rel of pool's storage manager.  The
 * relation must exist (the engine creates it with the database; it may be
 * empty): ENOENT otherwise, since silently starting a fresh log would turn
 * every committed transaction into an aborted one.  EINVAL for relation 0,
 * ENOMEM.  The pool must outlive the clog.
 */
int clog_open(buf_pool *pool, relnumber_t rel, clog **out, kerr *err);

/* Frees c (its pages stay in the pool, dirty or not).  NULL is ignored. */
void clog_close(clog *c);

/* The relation the log lives in. */
relnumber_t clog_relnumber(const clog *c);

/*
 * Reads xid's status into *status.  Ids below XID_FIRST_NORMAL read as
 * COMMITTED; an id whose page does not exist yet, or whose bits were never
 * set, reads as IN_PROGRESS.  Errors from the buffer pool (EIO, ECORRUPT,
 * EVERSION, EEXHAUSTED, ENOMEM) are returned with their message copied into
 * err; ECORRUPT also for the invalid bit pattern 3.
 */
int clog_get(clog *c, buf_session *s, xid_t xid, xid_status *status, kerr *err);

/*
 * Records xid's final status (COMMITTED or ABORTED; IN_PROGRESS resets the
 * bits, for tests and recovery tools).  Extends the relation first if xid's
 * page does not exist.  EINVAL for ids below XID_FIRST_NORMAL or another
 * status; buffer pool errors as clog_get(), and ENOSPC/EIO from extension.
 * On failure nothing was changed.
 */
int clog_set(clog *c, buf_session *s, xid_t xid, xid_status status, kerr *err);

/*
 * Makes sure the page holding xid's status exists, extending the relation
 * (through as many pages as needed) if not.  The transaction manager calls
 * it when it hands out the first id of a page, so that commit does not
 * extend.  Costs one atomic load when the page exists.  Errors as
 * buf_extend().
 */
int clog_ensure(clog *c, buf_session *s, xid_t xid, kerr *err);

/* Number of pages the log has now. */
blocknum_t clog_npages(clog *c);

/*
 * The highest transaction id whose end (committed or aborted, or the
 * invalid pattern) the log's last two pages record, in *out; XID_INVALID
 * if they record none.  Every id the log records was handed out, so the
 * next id to hand out must lie past it.  Buffer pool errors as
 * clog_get().
 */
int clog_last_ended(clog *c, buf_session *s, xid_t *out, kerr *err);

/*
 * Verifies a commit-log page (block blk) read from disk, for `keel check`:
 * no status has the invalid pattern 3 (a new page is valid).  KEEL_OK, or
 * ECORRUPT with a message naming the block and the first such id.
 */
int clog_page_verify(const void *page, blocknum_t blk, kerr *err);

/*
 * A transaction's end is logged as a bodiless WAL_XACT_END record (its
 * header names the transaction, and whether it committed or aborted:
 * WAL_INFO_COMMIT or WAL_INFO_ABORT) where the page was logged since the
 * redo pointer (storage/buf_log.h, buf_log_bare()); recovery replays
 * record h through clog_redo_end() on the page of h's transaction in
 * relation rel.
 */
int clog_redo_end(buf_session *s, const wal_record *h, relnumber_t rel);

#endif /* KEEL_TXN_CLOG_H */
