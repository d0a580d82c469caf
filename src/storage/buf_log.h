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
 * Record body: u16 block count, u16 zero, then per block a buf_log_block
 * followed by either the whole image ([0, lower) then [upper, BLOCK_SIZE))
 * or nranges (offset, length) pairs and then their bytes.
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

/* Operations redo runs on a page (buf_mark_dirty_op()). */
typedef enum buf_log_op {
    BUF_OP_BT_ADD = 1, /* u16 position, then the item: btpage_add() */
    BUF_OP_BT_DEAD,    /* u16 position: the item marked dead */
    BUF_OP_HEAP_REMOVE, /* u16 line numbers: heappage_remove_items() */
    BUF_OP_COUNT
} buf_log_op;

/* Redo of one operation on page: false if it cannot be (a damaged log). */
typedef bool (*buf_log_op_fn)(void *page, const void *payload, uint16_t len);

/* Registers op's redo (once, before any open: the access methods'). */
void buf_log_register_op(uint8_t op, buf_log_op_fn fn);
bool buf_log_op_known(uint8_t op);

/* Runs the operations (bytes as in the record) on page; false if one
 * fails or is malformed. */
bool buf_log_run_ops(void *page, const char *ops, uint16_t bytes,
                     uint16_t count);

typedef struct buf_log_block {
    uint32_t rel;
    uint32_t blk;
    uint8_t flags;   /* BUF_LOG_* */
    uint8_t nranges; /* without BUF_LOG_FULL */
    uint16_t lower;  /* with BUF_LOG_FULL: the hole */
    uint16_t upper;
    uint16_t reserved;
} buf_log_block;

_Static_assert(sizeof(buf_log_block) == 16, "block reference is 16 bytes");

/* Logs that the file of rel is about to be made (WAL_FILE_CREATE), so
 * that redo makes it should a crash lose it. */
int buf_log_file_create(buf_session *s, relnumber_t rel);

/* Logs what the session changed under the locks it holds (all of its
 * pending pages), now.  Called by buf_unlock(); callable before. */
void buf_log_emit(buf_session *s);

/*
 * Replays one WAL_PAGES record (header h, its body) through session s,
 * whose own changes are not logged (buf_log_set_off()): each block is
 * read (made, with the file, if missing), skipped if its LSN shows the
 * change there already, else changed and dirtied with the record's end
 * as its LSN.  KEEL_ECORRUPT for a malformed body, naming the LSN.
 */
int buf_log_redo(buf_session *s, const wal_rec_hdr *h, const char *body);

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
int buf_log_blocks(const wal_rec_hdr *h, const char *body,
                   void (*fn)(void *arg, const buf_log_block *b,
                              uint32_t data_len),
                   void *arg, kerr *err);

#endif /* KEEL_STORAGE_BUF_LOG_H */
