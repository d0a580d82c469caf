/*
 * buf_log.h: logging the buffer pool's page changes, and replaying them.
 *
 * A session changes a page under its exclusive content lock and marks it
 * dirty (buf_mark_dirty(), or buf_mark_dirty_range() naming the bytes it
 * changed).  The change is logged when the session unlocks the page: one
 * WAL_PAGES record holds every page the session changed under locks it
 * still holds, so that a change that spans pages (a B-tree split and its
 * parent's new downlink, an update's old and new versions) is replayed
 * whole or not at all, and each page's record is in the log before anyone
 * else can change the page again.  The record's end LSN becomes each
 * page's LSN, and the buffer pool writes no page before the log is
 * durable up to it (the write-ahead rule).
 *
 * A page whose LSN is at or below the redo pointer (its first change
 * since the last checkpoint began), or whose change named no ranges, is
 * logged whole, less the hole between `lower` and `upper`: recovery then
 * needs nothing of the page on disk, which a crash may have torn.  Other
 * changes log only the named ranges' new bytes.  Redo writes them back
 * (buf_log_redo()), which is exact because every change to a page since
 * its last whole image is in the log, in order.
 *
 * A range that a change made much like another part of the same page (a
 * row's new version beside its old one, buf_mark_dirty_like()) is logged
 * as a copy: the bytes between the two's common prefix and suffix, which
 * redo takes from the record, and where on the page the prefix and the
 * suffix are to be copied from.  Redo applies a block's copy last, when
 * every other byte of the page is as the record's change left it.
 *
 * Record body: u16 block count, then per block a reference of
 * BUF_LOG_BLOCK_BYTES (u32 relation, u32 block, u8 flags, u8 nranges),
 * then with BUF_LOG_FULL the hole (u16 lower, u16 upper; not with
 * BUF_LOG_ZERO) and the whole image ([0, lower) then [upper,
 * BLOCK_SIZE)); otherwise the operations (BUF_LOG_OPS), nranges (u16
 * offset, u16 length) pairs, the copy (BUF_LOG_COPY: a buf_log_copy),
 * and then the ranges' bytes and the copy's middle.  Every field is
 * unaligned and little-endian as the machine writes it.
 */
#ifndef KEEL_STORAGE_BUF_LOG_H
#define KEEL_STORAGE_BUF_LOG_H

#include <stdint.h>

#include "storage/bufmgr.h"
#include "wal/wal.h"

#define BUF_LOG_FULL 0x01 /* a whole image, hole left out */
#define BUF_LOG_ZERO 0x02 /* the page is all zeroes */
#define BUF_LOG_OPS  0x04 /* operations first: u16 bytes, u16 count, then
                           * each as u8 op, u8 0, u16 length, payload
                           * (padded to 2 bytes) */
#define BUF_LOG_COPY 0x08 /* a range logged as a copy (buf_log_copy) */

#define BUF_LOG_BLOCK_BYTES 10 /* a block reference's fixed part */

/* Operations redo runs on a page (buf_mark_dirty_op()). */
typedef enum buf_log_op {
    BUF_OP_BT_ADD = 1, /* u16 position, then the item: btpage_add() */
    BUF_OP_BT_DEAD,    /* u16 position: the item marked dead */
    BUF_OP_HEAP_REMOVE, /* u16 line numbers: heappage_remove_items() */
    BUF_OP_HEAP_PRUNE,  /* u16 counts of redirects, dead, unused and
                         * cleared lines, the redirects' (from, to) pairs,
                         * the three lists: heappage_prune_items() */
    BUF_OP_HEAP_UPDATE, /* an update whose new version went beside the old
                         * one: heap_update_op, then the new version's
                         * bytes that differ from the old one's */
    BUF_OP_HEAP_INSERT, /* a version added with nothing else moving:
                         * heap_insert_op, then its data */
    BUF_OP_HEAP_CLAIM,  /* a deleter's or updater's mark on a version:
                         * heap_claim_op */
    BUF_OP_HEAP_COMPACT, /* u16 upper after it: heappage_compact() */
    BUF_OP_COUNT
} buf_log_op;

/* Redo of one operation on page (block blk of its relation): false if it
 * cannot be (a damaged log). */
typedef bool (*buf_log_op_fn)(void *page, uint32_t blk, const void *payload,
                              uint16_t len);

/* Registers op's redo (once, before any open: the access methods'). */
void buf_log_register_op(uint8_t op, buf_log_op_fn fn);
bool buf_log_op_known(uint8_t op);

/* Runs the operations (bytes as in the record) on page; false if one
 * fails or is malformed. */
bool buf_log_run_ops(void *page, uint32_t blk, const char *ops,
                     uint16_t bytes, uint16_t count);

/* A block reference, as read from a record. */
typedef struct buf_log_block {
    uint32_t rel;
    uint32_t blk;
    uint8_t flags;   /* BUF_LOG_* */
    uint8_t nranges; /* without BUF_LOG_FULL */
    uint16_t lower;  /* with BUF_LOG_FULL: the hole */
    uint16_t upper;
} buf_log_block;

/* A copy, as logged: [dst, dst + len) becomes prefix bytes from src, the
 * record's len - prefix - suffix bytes, and suffix bytes from tail. */
typedef struct buf_log_copy {
    uint16_t dst, len;
    uint16_t src, prefix;
    uint16_t tail, suffix;
} buf_log_copy;

#define BUF_LOG_COPY_BYTES 12
_Static_assert(sizeof(buf_log_copy) == BUF_LOG_COPY_BYTES,
               "a copy is logged as six u16");

/* Makes copy c on page, its middle bytes from middle (redo's, and the
 * debugging shadow's, one way of doing it). */
void buf_log_copy_apply(void *page, const buf_log_copy *c, const char *middle);

/* Logs that the file of rel is about to be made (WAL_FILE_CREATE), so
 * that redo makes it should a crash lose it. */
int buf_log_file_create(buf_session *s, relnumber_t rel);

/* Logs what the session changed under the locks it holds (all of its
 * pending pages), now.  Called by buf_unlock(); callable before. */
void buf_log_emit(buf_session *s);

/*
 * Replays one WAL_PAGES record (h, as the log's reader decoded it, and
 * its body) through session s,
 * whose own changes are not logged (buf_log_set_off()): each block is
 * read (made, with the file, if missing), skipped if its LSN shows the
 * change there already, else changed and dirtied with the record's end
 * as its LSN.  KEEL_ECORRUPT for a malformed body, naming the LSN.
 */
int buf_log_redo(buf_session *s, const wal_record *h, const char *body);

/*
 * A change whose record says all of it in its header (type, info and
 * transaction, no body): fn makes it again on page, as it was made
 * (false: it cannot be, a damaged log).  A transaction's end in the commit
 * log is one (txn/clog.h).
 */
typedef bool (*buf_log_bare_fn)(void *page, uint8_t info, uint32_t xid);

/*
 * Logs the change just made to page id (pinned, exclusively locked, not
 * marked dirty yet) as a bodiless record of `type` for the session's
 * log_info and log_xid, instead of the WAL_PAGES record buf_mark_dirty()
 * would make of it, and marks the page dirty with the record's end as its
 * LSN.  Only if the page was logged since the redo pointer (its first
 * change after it must carry a whole image, against a torn write) and
 * nothing of any page is pending; returns false, having done nothing, if
 * not, or if the log took no record: the caller marks the change as
 * usual.  fn, which redo runs, checks it in assertion builds.
 */
bool buf_log_bare(buf_session *s, int32_t id, uint8_t type,
                  buf_log_bare_fn fn);

/*
 * Replays a record that buf_log_bare() made (h) on block blk of rel
 * through session s, as buf_log_redo() replays a WAL_PAGES record: skipped
 * if the page's LSN shows the change there already.  KEEL_ECORRUPT if fn
 * fails, naming the LSN.
 */
int buf_log_redo_bare(buf_session *s, const wal_record *h, relnumber_t rel,
                      blocknum_t blk, buf_log_bare_fn fn);

#ifndef NDEBUG
/*
 * Assertion builds: the check that every change of a page is in the log.
 * A page read from disk is remembered (buf_log_shadow_load()); each
 * record's changes are applied to that copy and the result must equal the
 * page; a page written must equal it too (buf_log_shadow_check(): a change
 * made with no record would be written behind the log's back).  Pages
 * changed without logging (recovery, unlogged loads) are not checked until
 * their next whole image.
 */
void buf_log_shadow_load(buf_pool *p, int32_t id, bool ok);
void buf_log_shadow_check(buf_pool *p, int32_t id, const void *page);
#endif

/* Walks a WAL_PAGES record's blocks for `keel wal`: calls fn for each.
 * ECORRUPT if malformed. */
int buf_log_blocks(const wal_record *h, const char *body,
                   void (*fn)(void *arg, const buf_log_block *b,
                              uint32_t data_len),
                   void *arg, kerr *err);

#endif /* KEEL_STORAGE_BUF_LOG_H */
