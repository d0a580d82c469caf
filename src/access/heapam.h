/*
 * heapam.h: the heap access method: a relation's rows, unordered, in
 * slotted pages (heap_page.h), with multi-version visibility.
 *
 * Every row version carries the transaction that inserted it (xmin) and
 * the one that deleted or updated it (xmax).  Which versions a transaction
 * sees is decided by its snapshot and the commit status of those two
 * transactions (heap_tuple_visible()).  An update deletes the old version
 * and inserts a new one at a new tid.  Writers follow "first updater wins"
 * (PostgreSQL's repeatable read): deleting or updating a row version that
 * another transaction has already deleted or updated, and that has not
 * aborted, fails with KEEL_ESERIALIZE; the check and the change happen
 * together under the page's exclusive content lock, so two transactions
 * can never both delete or update the same version, and no update is lost.
 *
 * Locking: each operation pins and locks one heap page at a time (shared
 * to read, exclusive to change), and releases every pin and lock it took
 * before it returns, on success and on error, except where a function says
 * otherwise (a bulk insert keeps its current page pinned between calls).
 * Lock order: a heap page's content lock may be held while the status
 * oracle reads the commit log (which locks commit-log pages); the commit
 * log never calls into the heap, so heap page lock -> clog page lock is the
 * only order and cannot deadlock.  Readers (fetch, scans) copy what they
 * need under the shared lock and decide visibility after releasing it.
 *
 * Errors are returned as keel_status codes with the message in the
 * session's kerr (buf_session_error()).
 *
 * Command ids (txn/cid.h): every version also records the command of its
 * writing transaction that inserted or deleted it, and a transaction sees
 * its own changes by command: vis->cids->reading is the reading command,
 * and a version the reader's transaction inserted in that command or a
 * later one is not seen, one it deleted in that command or a later one
 * still is.  So a scan that is open while its own command changes the relation
 * (an UPDATE reading the rows it updates) meets neither the new versions
 * nor the loss of the old ones.
 *
 * Not yet: a free space map (the relation handle remembers one block with
 * room; pages left behind with room are not refilled), vacuum (dead
 * versions stay).
 */
#ifndef KEEL_ACCESS_HEAPAM_H
#define KEEL_ACCESS_HEAPAM_H

#include <stdbool.h>
#include <stdint.h>

#include "access/heap_page.h"
#include "access/tid.h"
#include "access/tuple.h"
#include "port/atomics.h"
#include "storage/bufmgr.h"
#include "txn/rowlock.h"
#include "txn/snapshot.h"

#define HEAP_NO_BLOCK ((blocknum_t)0xFFFFFFFF)

/*
 * A heap relation handle, owned by the caller (typically one per relation,
 * shared by all sessions; every field but the hint is read-only after
 * heap_rel_init(), and the hint is atomic).  The relation's file must
 * exist (smgr_create()); an empty file is an empty heap.
 */
typedef struct heap_rel {
    relnumber_t relnumber;
    const tuple_desc *desc; /* the row type; must outlive the handle */
    uint16_t stride;        /* bytes a row without nulls takes on a page
                               when all such rows are one size, else 0:
                               where a fetch guesses a tuple sits */
    uint16_t per_page;      /* rows of stride bytes (and their line
                               pointers) a page holds; 0 if stride is */
    uint16_t plain_cols;    /* leading columns with no string among them
                               (name, char, text): fetching no more of
                               them copies no bytes */
    atomic_u32 hint;        /* a block that had room lately, or
                               HEAP_NO_BLOCK; only a hint */
    atomic_u64 pruned;      /* versions pruning has removed (relaxed) */
    atomic_u64 hot_updates; /* heap-only updates made (relaxed) */
    atomic_u64 apart;       /* updates that placed their new version with
                               the old page unlocked (relaxed) */
} heap_rel;

/* Initializes rel for relation relnumber with rows of type desc (which
 * must be complete: the handle derives its stride from it). */
void heap_rel_init(heap_rel *rel, relnumber_t relnumber,
                   const tuple_desc *desc);

/* Versions pruning has removed from rel's pages through this handle. */
uint64_t heap_pruned(const heap_rel *rel);

/*
 * A row copied out of the heap: where it lives, its transaction ids, and
 * its values.  The values (and the strings they point to) live in the
 * row's own memory, so no buffer stays pinned: they are valid until the
 * row is filled again (by heap_fetch() or heap_scan_next()) or freed.
 */
typedef struct heap_row {
    tid tid;            /* this version's address */
    xid_t xmin;         /* inserting transaction */
    xid_t xmax;         /* deleting/updating transaction or 0, as copied */
    uint32_t cid;       /* the header's command id word, as copied */
    uint16_t natts;     /* entries in values */
    uint16_t room;      /* entries values has room for */
    keel_value *values; /* the columns, then data */
    void *data;         /* BLOCK_SIZE bytes: the tuple's copy */
    void *block;        /* the allocation holding both, values starting
                         * on a line (mem_alloc_line_start(): a session
                         * writes them at every row it reads) */
} heap_row;

/* Allocates a row for rel's rows (ENOMEM).  Free with heap_row_free(). */
int heap_row_init(heap_row *row, const heap_rel *rel, kerr *err);

/* Frees a row's memory (a zeroed or already freed row is fine). */
void heap_row_free(heap_row *row);

/*
 * heap_row_init() for a row that may still hold the memory of an earlier
 * use (or be zeroed): keeps it when it has room for rel's columns, so that
 * a caller filling one row again and again allocates once.  The row's
 * earlier values are gone either way.  ENOMEM (the row is then freed).
 */
int heap_row_prepare(heap_row *row, const heap_rel *rel, kerr *err);

/*
 * Decodes the tuple at item (len bytes: a heap page's item, at t) into
 * row, prepared for rel's rows (heap_row_init(), heap_row_prepare()), as
 * every read does: its header must fit rel's row type (as many columns,
 * a data offset inside the tuple) and its data area must be well-formed
 * for it (tuple_valid()).  ECORRUPT, with a message naming t and what is
 * wrong (a value past the end, which column is null though not null),
 * if not.  For `keel check`, which reads each tuple from the page it
 * verified; item need not be aligned.
 */
int heap_row_decode(const heap_rel *rel, heap_row *row, tid t, const void *item,
                    size_t len, kerr *err);

/*
 * The visibility rule.  Sets *visible to whether a version inserted by
 * xmin and deleted by xmax (0 = not deleted) is visible to vis's snapshot:
 * its inserter is the snapshot's own transaction, or XID_FROZEN, or
 * finished before the snapshot and committed; and it is not deleted: no
 * xmax, or xmax aborted, or xmax is another transaction that was running
 * at the snapshot or has not committed.  Asks vis's status oracle only
 * about xids the snapshot alone cannot decide; returns its error if it
 * fails.  The snapshot's own changes count whatever their commands (as
 * for a reader at CID_ALL): this is the rule by transactions alone, for
 * callers that judge other transactions' work.
 */
int heap_tuple_visible(const visibility *vis, xid_t xmin, xid_t xmax,
                       bool *visible, kerr *err);

/*
 * The visibility rule for the version whose header (fields as on the
 * page) is h: heap_tuple_visible(), and for the snapshot's own changes
 * the commands (heapam.h, above): a version its transaction inserted is
 * seen only by commands after the inserting one (reading command above
 * cmin), one it deleted still by the deleting command and those before it
 * (reading command at or below cmax).
 */
int heap_version_visible(const visibility *vis, const heap_tuple_header *h,
                         bool *visible, kerr *err);

/*
 * What a unique index's check needs to know of a version inserted by xmin
 * and deleted by xmax (0 = not deleted), from vis's transaction:
 * - HEAP_LIVE: it is, or may yet be, live for others: its inserter
 *   committed or is still running (or is vis's own transaction), and it
 *   is not deleted, or its deleter is another transaction that has not
 *   committed (a running deleter may still abort);
 * - HEAP_GONE: not live now, but this may change: vis's own transaction
 *   deleted it, or a transaction still running inserted and deleted it;
 * - HEAP_DEAD: never live again, whatever happens: its inserter aborted
 *   or its deleter committed, both final.
 * Asks vis's status oracle (its snapshot serves only for the own xid);
 * returns its error if it fails.
 */
typedef enum heap_fate { HEAP_LIVE, HEAP_GONE, HEAP_DEAD } heap_fate;

int heap_tuple_fate(const visibility *vis, xid_t xmin, xid_t xmax,
                    heap_fate *fate, kerr *err);

/* The size (header included) a row of vals would take on a page, and
 * whether it fits on one: ETYPE/ETOOBIG as tuple_size(), ETOOBIG if the
 * row is larger than a heap page holds. */
int heap_row_size(const heap_rel *rel, const keel_value *vals, size_t *size,
                  kerr *err);

/*
 * Inserts a row of rel->desc->natts values as a version of transaction xid
 * (XID_FROZEN while a database is created), written by its command cid
 * (cid_stamp(); CID_FIRST where there are none), and returns its tid in
 * *out.
 * Uses the page the handle's hint names if it has room, else the last
 * page, else extends the relation.  ETYPE/ETOOBIG (nothing changed) if the
 * values do not suit the columns or the row does not fit in a page; errors
 * of buf_read()/buf_extend().
 */
int heap_insert(heap_rel *rel, buf_session *s, xid_t xid, cid_t cid,
                const keel_value *values, tid *out);

/*
 * heap_insert() that leaves the row's page pinned (not locked), its buffer
 * in *pinned, for the caller to give back with buf_release().  While it is
 * pinned the page stays in the pool, so deleting the row again
 * (heap_delete() as its own inserter, the undo of an insert whose index
 * entries failed) reads nothing from disk and needs no buffer: it cannot
 * fail for an I/O error or an exhausted pool.  On error nothing is pinned.
 */
int heap_insert_pinned(heap_rel *rel, buf_session *s, xid_t xid, cid_t cid,
                       const keel_value *values, tid *out, int32_t *pinned);

/*
 * Bulk insert: many rows through a BUF_STRATEGY_BULK_WRITE ring, so that a
 * load does not push the pool's working set out.  The state belongs to one
 * session and keeps the page being filled pinned between calls (no lock);
 * heap_bulk_end() releases it.  New pages are added through the ring.
 */
typedef struct heap_bulk heap_bulk;

/* Starts a bulk insert into rel by session s (ENOMEM). */
int heap_bulk_begin(heap_rel *rel, buf_session *s, heap_bulk **out);

/* Inserts one row, as heap_insert() by command CID_FIRST (a bulk insert
 * fills a table nobody else can reach yet), with the same errors, nothing
 * changed on ETYPE/ETOOBIG. */
int heap_bulk_insert(heap_bulk *b, xid_t xid, const keel_value *values,
                     tid *out);

/* Releases the pinned page and the ring, and frees b (NULL is fine). */
void heap_bulk_end(heap_bulk *b);

/*
 * Copies the row version at t into row if it is visible to vis.  ENOENT if
 * t names no row (block past the end, no such line pointer, removed) or a
 * version the snapshot does not see; ECORRUPT if the tuple does not match
 * the descriptor; errors of buf_read() and the status oracle.  Holds the
 * page's shared lock only while copying.
 */
int heap_fetch(heap_rel *rel, buf_session *s, const visibility *vis, tid t,
               heap_row *row);

/*
 * heap_fetch() of the first ncols columns only (1..natts), read straight
 * from the buffer: under the page's shared lock the version's header is
 * checked and those columns are decoded, the bytes of string values (and
 * nothing else) copied into row's memory; row->values[ncols..] are left
 * as they were.  Visibility is decided after unlocking, as heap_fetch()
 * does.  The page's lines are prefetched with the buffer's descriptor,
 * the tuple's where the relation's stride says it probably is (rows
 * loaded in order onto fresh pages of a fixed-width table).  Same results
 * and errors as heap_fetch() (ECORRUPT also if a decoded value runs past
 * the tuple), and EINVAL if ncols is 0 or over natts.
 */
int heap_fetch_cols(heap_rel *rel, buf_session *s, const visibility *vis, tid t,
                    uint16_t ncols, heap_row *row);

/*
 * heap_tuple_fate() of the version at t, whether visible or not: its
 * header is read and judged under the page's shared lock (the status
 * oracle is asked with it held).  A version pruning removed (its line
 * pointer DEAD) is HEAP_DEAD.  ENOENT if t names no row otherwise;
 * ECORRUPT for a tuple shorter than its header or a damaged line pointer;
 * errors of buf_read() and the oracle.
 */
int heap_fetch_fate(heap_rel *rel, buf_session *s, const visibility *vis, tid t,
                    heap_fate *fate);

/*
 * heap_fetch_fate(), and for a live row whose inserter, or else whose
 * deleter, is another transaction still in the process array (vis's
 * in_array; the oracle's IN_PROGRESS without one), that transaction in
 * *running (else XID_INVALID): whether the row stays depends on how it
 * ends, which a unique check may wait for, and until it has left the
 * array no snapshot sees that end, even where the commit log has it.
 */
int heap_fetch_running(heap_rel *rel, buf_session *s, const visibility *vis,
                       tid t, heap_fate *fate, xid_t *running);

/*
 * Most rows apart that heap_tid_guess() interpolates across: about twice
 * the entries one index leaf holds (an index page of int4 keys holds ~450).
 */
#define HEAP_GUESS_MAX_ROWS 1024

/*
 * Where the row at fraction f (in [0, 1]) of the way from the row at lo to
 * the row at hi lies, if the rows between them are stored in that order on
 * full pages of rel->stride-byte rows: what an index whose keys follow the
 * heap's order (rows loaded in key order, as pgbench's are) predicts for a
 * key between two entries whose tids it knows.  True and *out set if there
 * is such a prediction; false if rel's rows vary in size, hi is before lo,
 * or they are more than max_rows (at most HEAP_GUESS_MAX_ROWS) rows apart:
 * the caller's bound on the rows between them, such as the number of key
 * values between two entries of a unique index, beyond which the entries
 * do not look clustered.  Only a guess, for prefetching.
 */
bool heap_tid_guess(const heap_rel *rel, tid lo, tid hi, double f,
                    uint64_t max_rows, tid *out);

/*
 * A hint that the row version at t is about to be fetched: the lines
 * heap_fetch() and heap_fetch_cols() read first (the page header, t's
 * line pointer and where the stride says its tuple is) are prefetched
 * with the buffer's descriptor, by buf_prefetch(): nothing is pinned or
 * waited for.  If the session's next fetch is of t itself, it reads the
 * buffer found here first, without the mapping table, and does not
 * prefetch those lines again.
 */
void heap_prefetch(const heap_rel *rel, buf_session *s, tid t);

/*
 * Read committed's re-check of a row another transaction changed and
 * committed after vis's snapshot: from version t, follows the row's
 * updates to its newest version, whose tid goes in *latest and whose
 * values are decoded into row (heap_row_prepare()d).  If a version on the
 * way is being made or changed by a transaction still running, *wait is
 * that transaction and *latest the version (row is not filled): the
 * caller waits for it to end and follows again from there.  KEEL_ENOENT
 * if a committed transaction deleted the row (or this one changed it
 * already), KEEL_ECORRUPT for a chain that names itself or does not end;
 * I/O errors.  Visibility to the snapshot is not asked: every version
 * after one the snapshot saw is younger than the snapshot's xmin, so none
 * has been pruned.  With stay, version t itself is decoded, whoever has
 * changed it since.  *xmin (XID_INVALID: any) is the transaction that
 * made version t: a line holding another's is taken for the row gone
 * (pruned, and a heap-only version's line reused), as each later link is
 * checked against the updater that made it; on return it is the maker of
 * version *latest, for the next call.
 */
int heap_follow(heap_rel *rel, buf_session *s, const visibility *vis, tid t,
                xid_t *xmin, bool stay, heap_row *row, tid *latest,
                xid_t *wait);

/*
 * Deletes the row version at t as transaction xid, which must be vis's
 * snapshot's own_xid (EINVAL otherwise), by its current command
 * (cid_stamp(vis->cids)).  Under the page's exclusive lock: ENOENT if t
 * names no version visible to the snapshot as its reading command
 * (including one this transaction deleted already, in an earlier command or, though
 * still visible to it, in this one); ESERIALIZE if another transaction has
 * deleted or updated it and has not aborted (it is running, or committed
 * after the snapshot was taken); ENOMEM or EEXHAUSTED if the version was
 * inserted by an earlier command of the transaction and no combo id can
 * be had for the pair; otherwise sets its xmax to xid (replacing an
 * aborted transaction's).  On any error nothing has changed.
 */
int heap_delete(heap_rel *rel, buf_session *s, const visibility *vis, xid_t xid,
                tid t);

/*
 * Locks the row version at t for transaction xid (vis's own) in mode, as
 * SELECT ... FOR KEY SHARE, FOR SHARE, FOR NO KEY UPDATE or FOR UPDATE
 * does: the same checks as heap_delete() (ENOENT, ESERIALIZE, under the
 * page's lock, shared here), then an entry in vis->rowlocks
 * (txn/rowlock.h; ENOMEM when it is full), unless another running
 * transaction holds a lock that conflicts with mode: then ESERIALIZE,
 * that holder in *vis->locker (or met, or conflict, as a running deleter
 * is reported).  Nothing on the page changes and nothing is logged:
 * lockers whose modes agree go on beside it, and a deleter or updater of
 * the version that mode holds off (visibility.keeps_key) waits until xid
 * ends.
 */
int heap_lock_row(heap_rel *rel, buf_session *s, const visibility *vis,
                  xid_t xid, tid t, rowlock_mode mode);

/* heap_delete() that also sets *old_cid to the version's command id word
 * as it was before, for heap_undo_claim(). */
int heap_delete_cid(heap_rel *rel, buf_session *s, const visibility *vis,
                    xid_t xid, tid t, uint32_t *old_cid);

/*
 * Updates the row version at t to values as transaction xid (vis's own
 * xid) and its current command: deletes it exactly as heap_delete() (same
 * ENOENT/ESERIALIZE/ENOMEM rules, checked atomically under the exclusive
 * lock) and inserts the new version,
 * on the same page if it has room, else as heap_insert(); *new_tid is its
 * address, and the old version records it.  ETYPE/ETOOBIG are found before
 * anything changes.  If the new version cannot be placed (I/O error, pool
 * exhausted) the old version's xmax is restored and the error returned.
 */
int heap_update(heap_rel *rel, buf_session *s, const visibility *vis, xid_t xid,
                tid t, const keel_value *values, tid *new_tid);

/* The pages of an update's two versions, pinned (heap_update_held()). */
typedef struct heap_update_hold {
    int32_t old_id, new_id; /* the same buffer, pinned twice, if the new
                             * version went beside the old one */
    tid old_tid, new_tid;
    uint32_t old_cid; /* the old version's command id before the update */
    bool hot;         /* the new version is heap-only: it needs no index
                       * entries */
} heap_update_hold;

/*
 * heap_update() that leaves the pages of both versions pinned (not
 * locked) in *hold, for heap_update_release() or heap_update_undo().
 * While they are pinned, taking the update back reads nothing and needs
 * no buffer.  On error nothing is pinned and nothing has changed.  With
 * hot_ok (the caller found that no index key changes), a new version
 * placed on the old one's page is heap-only (heap_page.h, "Heap-only
 * updates") and hold->hot says so: the caller then adds no index
 * entries.
 */
int heap_update_held(heap_rel *rel, buf_session *s, const visibility *vis,
                     xid_t xid, tid t, const keel_value *values, bool hot_ok,
                     tid *new_tid, heap_update_hold *hold);

/* Heap-only updates made in rel since it was set up (relaxed). */
uint64_t heap_hot_updates(const heap_rel *rel);

/* Updates in rel since it was set up whose new version went to another
 * page while the old one's was unlocked, because the page for it came
 * before the old one and was busy (heap_update(); relaxed).  The others
 * are one log record each. */
uint64_t heap_updates_apart(const heap_rel *rel);

/* Releases what heap_update_held() left pinned. */
void heap_update_release(buf_session *s, heap_update_hold *hold);

/*
 * Takes back the update hold describes, made by transaction xid, for a
 * statement that failed after it (an index entry for the new version that
 * could not be made): the new version deleted by its own inserter, which
 * nobody sees, and the old one without a deleter again, as if the update
 * had never run (a snapshot that saw the old version sees it still).
 * Cannot fail: both pages are pinned, and neither version can be pruned
 * while xid runs.  Then releases them.
 */
void heap_update_undo(buf_session *s, xid_t xid, heap_update_hold *hold);

/*
 * Compares and sets, in place, int8 column col (0-based) of the version
 * at t that xmin inserted: if it holds expect, it becomes set; *actual
 * gets what it held.  Outside every transaction: no new version and no
 * deleter, every snapshot reads the new value at once, no abort undoes
 * it; logged as a change of the page's bytes, replayed by recovery.  For
 * counters (SQL sequences).  EINVAL unless the column is NOT NULL int8
 * with only fixed-width columns before it; ENOENT if the version is not
 * there (pruned since, its line reused) or holds a null; ESERIALIZE if
 * another transaction (vis's status oracle says) has updated or deleted
 * the version and not aborted: its successor is the counter now, which
 * a snapshot older than that change cannot see; the errors of reading
 * the page.
 */
int heap_cas_int8(heap_rel *rel, buf_session *s, const visibility *vis,
                  tid t, xid_t xmin,
                  uint16_t col, int64_t expect, int64_t set, int64_t *actual);

/*
 * A rollback to a savepoint: takes back a change that transaction xid,
 * still running, made to the version at t, later changes of its own to
 * the version having been taken back first.  heap_undo_insert(): the
 * version xid inserted is deleted by its inserter as of its inserting
 * command, so that nobody ever sees it (as heap_update_undo() does with
 * an update's new version; pruning removes it once xid has ended).
 * heap_undo_claim(): the version xid deleted or updated has no deleter
 * again, and the command id word old_cid it had before
 * (heap_delete_cid(), heap_update_hold's old_cid).  Each is logged.
 * Errors: those of reading the page (EIO, ECORRUPT, EEXHAUSTED), and
 * ECORRUPT if the version is not as xid's change left it; nothing has
 * changed then.
 */
int heap_undo_insert(heap_rel *rel, buf_session *s, xid_t xid, tid t);
int heap_undo_claim(heap_rel *rel, buf_session *s, xid_t xid, tid t,
                    uint32_t old_cid);

/*
 * Whether the version at t is dead for good (heap_tuple_fate()'s
 * HEAP_DEAD), in *dead, and if so why, in *deleter: the xid of its
 * committed deleter, or XID_INVALID if its inserter aborted or pruning
 * removed it.  No snapshot can see the version once the deleter is below
 * the horizon (txn_horizon()), nor ever one whose inserter aborted or
 * that was pruned: then its index entries may go.  Decided under the
 * page's share lock, as
 * heap_fetch_fate(), whose errors it returns (ENOENT when t names no
 * row), with *dead false.
 */
int heap_fetch_dead(heap_rel *rel, buf_session *s, const visibility *vis, tid t,
                    bool *dead, xid_t *deleter);

/*
 * Sequential scans, through a BUF_STRATEGY_BULK_READ ring.  A scan covers
 * the blocks the relation had when it began and returns, in tid order,
 * each version visible to vis.  It copies each page under a shared lock
 * and decides visibility on the copy, so between calls it holds no pin and
 * no lock; vis (and its snapshot) must stay valid until heap_scan_end().
 */
typedef struct heap_scan heap_scan;

/* Starts a scan of rel by session s (ENOMEM, or smgr errors). */
int heap_scan_begin(heap_rel *rel, buf_session *s, const visibility *vis,
                    heap_scan **out);

/*
 * Copies the next visible row into row and sets *found, or sets *found to
 * false at the end.  On error (buf_read(), the status oracle, ECORRUPT) the
 * scan stays where it was, so the call may be repeated.
 */
int heap_scan_next(heap_scan *sc, heap_row *row, bool *found);

/*
 * After heap_scan_next() failed on a row that does not decode (ECORRUPT:
 * its tuple is shorter than a header, or does not fit the row type),
 * moves the scan past that row and returns true, so that the next call
 * goes on with the rows after it: for a reader that lists what it can
 * and leaves the damaged rows to be reported.  False, moving nothing, if
 * the last call did not fail on a row (an unreadable page, the status
 * oracle's error, or no failure).
 */
bool heap_scan_skip(heap_scan *sc);

/*
 * From now on, counts the versions the scan passes that its snapshot
 * cannot see yet: their inserters were running when it was taken, or
 * began later, and have not aborted (one more visibility check, and a
 * status look-up, per invisible version).  heap_scan_newer() is the count:
 * not 0 means the rows changed since the snapshot (a reader of the
 * snapshot may ignore that; a builder of an index must not).
 */
void heap_scan_count_newer(heap_scan *sc);
uint64_t heap_scan_newer(const heap_scan *sc);

/*
 * The tid an index entry for the row version at t (the last one
 * heap_scan_next() returned) names: t itself, or for a heap-only version
 * the root of its chain (heap_page.h, "Heap-only updates"), found on the
 * scan's copy of the page.  ECORRUPT for a heap-only version no chain
 * reaches.
 */
int heap_scan_root(heap_scan *sc, tid t, tid *root);

/* Frees the scan (NULL is fine). */
void heap_scan_end(heap_scan *sc);

/* Registers the heap's log operations' redo (storage/buf_log.h); once,
 * before a database with a log is opened. */
void heap_log_register(void);

#endif /* KEEL_ACCESS_HEAPAM_H */
