/*
 * wal.h: the write-ahead log: records, insertion, flushing with group
 * commit, segments, and reading the log back.
 *
 * The log is one stream of bytes addressed by LSN (the byte position since
 * the database was made), kept in segment files of WAL_SEG_SIZE bytes in
 * DIR/wal/, segment n holding [n * WAL_SEG_SIZE, (n + 1) * WAL_SEG_SIZE).
 * Records are 8-byte aligned, may cross segment boundaries, and each
 * carries its own LSN and a CRC-32C, so that a stale record (from a
 * recycled segment) or a torn one is told from a real one.
 *
 * Inserting a record reserves its space with one fetch-add on the insert
 * position and copies it into a shared ring buffer with no lock held; a
 * flush waits only for the insertions below its target (insertion slots,
 * README.md) and writes and fdatasyncs under the write lock, so that one
 * fdatasync covers every commit whose record it reaches (group commit).
 * The protocol is in src/wal/README.md.
 */
#ifndef KEEL_WAL_WAL_H
#define KEEL_WAL_WAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "port/atomics.h"
#include "port/crc32c.h"
#include "port/error.h"

typedef uint64_t wal_lsn;

#define WAL_DIR_NAME     "wal"
#define WAL_SEG_SIZE     (UINT64_C(16) << 20)
#define WAL_BUFFER_SIZE  (UINT32_C(16) << 20)
#define WAL_FIRST_LSN    WAL_SEG_SIZE /* LSN 0 means "none" on pages */
#define WAL_ALIGN        8
#define WAL_MAX_RECORD   (UINT32_C(1) << 20)
#define WAL_INSERT_SLOTS 16

/* Record types (the header's `type`). */
typedef enum wal_type {
    WAL_NOOP = 0,      /* filler: a record given up after its space was
                        * reserved (the redo pointer moved under it) */
    WAL_PAGES = 1,     /* changes to pages (storage/buf_log.h) */
    WAL_CHECKPOINT,    /* a checkpoint ended: its redo pointer and counters */
    WAL_FILE_CREATE,   /* a relation file was made */
    WAL_XACT_END,      /* a transaction's end in the commit log, no body
                        * (txn/clog.h): info WAL_INFO_COMMIT or _ABORT */
    WAL_TYPE_COUNT
} wal_type;

/*
 * What a WAL_PAGES record did, as the access method names it (the
 * header's `info`): for `keel wal` and its per-kind totals.  Redo does not
 * look at it, except in a WAL_XACT_END record, where it is the status.
 */
typedef enum wal_info {
    WAL_INFO_PAGE = 0, /* unnamed page change */
    WAL_INFO_HEAP_INSERT,
    WAL_INFO_HEAP_DELETE,
    WAL_INFO_HEAP_UPDATE, /* pruning for the new version included */
    WAL_INFO_BTREE_INSERT,
    WAL_INFO_BTREE_SPLIT,
    WAL_INFO_BTREE_NEWROOT,
    WAL_INFO_BTREE_DEAD,
    WAL_INFO_BTREE_SHED,
    WAL_INFO_COMMIT,
    WAL_INFO_ABORT,
    WAL_INFO_CLOG_EXTEND,
    WAL_INFO_HEAP_UNDO, /* a change taken back: a rollback to a savepoint */
    WAL_INFO_COUNT
} wal_info;

const char *wal_info_name(uint8_t info);
const char *wal_type_name(uint8_t type);

/*
 * Every record starts with this 24-byte header, as the files hold it.
 * Only the helpers below read or write its packed fields:
 *
 *   len   header and body, without the padding
 *   crc   CRC-32C of the body followed by the header from `pos` on
 *   pos   bits 0-47: the record's own LSN, modulo 2^48 (the reader knows
 *         the full position it expects and compares these bits: a stale
 *         record of a recycled segment is a few checkpoints old, never
 *         2^48 bytes, 256 TiB, away); bits 48-55: wal_type; bits 56-63:
 *         wal_info
 *   xid   the transaction the record belongs to, or 0
 *   gap   the record's LSN less the log's durable end when it was
 *         inserted, or WAL_GAP_UNKNOWN when that does not fit: the reader
 *         (check_tail() in wal_read.c) only asks whether a record claims
 *         durability past a damaged one at most two segments before it,
 *         so a durable end 4 GiB behind claims nothing it needs anyway
 *
 * src/wal/README.md says why this layout.
 */
typedef struct wal_rec_hdr {
    uint32_t len;
    uint32_t crc;
    uint64_t pos; /* LSN's low 48 bits | type << 48 | info << 56 */
    uint32_t xid;
    uint32_t gap; /* LSN - durable end, or WAL_GAP_UNKNOWN */
} wal_rec_hdr;

_Static_assert(sizeof(wal_rec_hdr) == 24, "wal record header is 24 bytes");
_Static_assert(offsetof(wal_rec_hdr, pos) == 8,
               "the CRC covers header bytes 8-23");

#define WAL_HDR_SIZE    ((uint32_t)sizeof(wal_rec_hdr))
#define WAL_LSN_BITS    48
#define WAL_LSN_MASK    ((UINT64_C(1) << WAL_LSN_BITS) - 1)
#define WAL_GAP_UNKNOWN UINT32_MAX /* "durable end not known": claims 0 */

/*
 * A header for a record at lsn of len bytes (header and body), inserted
 * when the log was durable up to durable (at most lsn), with its crc
 * still 0: wal_hdr_seal() sets it once the body's CRC is known.
 */
static inline void wal_hdr_make(wal_rec_hdr *h, uint32_t len, uint64_t lsn,
                                uint64_t durable, uint32_t xid, uint8_t type,
                                uint8_t info)
{
    uint64_t gap = durable <= lsn ? lsn - durable : 0;

    h->len = len;
    h->crc = 0;
    h->pos = (lsn & WAL_LSN_MASK) | (uint64_t)type << WAL_LSN_BITS |
             (uint64_t)info << (WAL_LSN_BITS + 8);
    h->xid = xid;
    /* A durable end past the record's own position cannot be (the record
     * is not complete, so the log is not durable past it); claiming the
     * record's position then claims less, never more. */
    h->gap = gap < WAL_GAP_UNKNOWN ? (uint32_t)gap : WAL_GAP_UNKNOWN;
}

static inline uint8_t wal_hdr_type(const wal_rec_hdr *h)
{
    return (uint8_t)(h->pos >> WAL_LSN_BITS);
}

static inline uint8_t wal_hdr_info(const wal_rec_hdr *h)
{
    return (uint8_t)(h->pos >> (WAL_LSN_BITS + 8));
}

/* Whether h names lsn as its position (the low 48 bits). */
static inline bool wal_hdr_at(const wal_rec_hdr *h, uint64_t lsn)
{
    return (h->pos & WAL_LSN_MASK) == (lsn & WAL_LSN_MASK);
}

/*
 * The durable end h claims, given the record's full LSN: lsn less the
 * gap, or 0 (nothing) when the gap was not known or exceeds lsn.
 */
static inline uint64_t wal_hdr_durable(const wal_rec_hdr *h, uint64_t lsn)
{
    if (h->gap == WAL_GAP_UNKNOWN || h->gap > lsn)
        return 0;
    return lsn - h->gap;
}

/* The record's CRC: body_crc (the CRC-32C of its body) extended over the
 * header after the crc field. */
static inline uint32_t wal_hdr_crc(const wal_rec_hdr *h, uint32_t body_crc)
{
    return crc32c_extend(body_crc, (const char *)h + offsetof(wal_rec_hdr, pos),
                         WAL_HDR_SIZE - offsetof(wal_rec_hdr, pos));
}

/* Sets h's crc from its body's. */
static inline void wal_hdr_seal(wal_rec_hdr *h, uint32_t body_crc)
{
    h->crc = wal_hdr_crc(h, body_crc);
}

/*
 * A record as the reader returns it: its header decoded, with its full
 * LSN (the position the reader found it at).
 */
typedef struct wal_record {
    uint64_t lsn;      /* the record's own position */
    uint64_t durable;  /* the durable end its header claims, 0: none */
    uint32_t len;      /* header and body, without the padding */
    uint32_t body_len; /* len less the header */
    uint32_t xid;
    uint8_t type; /* wal_type */
    uint8_t info; /* wal_info */
} wal_record;

/* Decodes h, found at lsn, into *out; h's length is at least the
 * header's (the reader checks it first). */
static inline void wal_hdr_decode(const wal_rec_hdr *h, uint64_t lsn,
                                  wal_record *out)
{
    out->lsn = lsn;
    out->durable = wal_hdr_durable(h, lsn);
    out->len = h->len;
    out->body_len = h->len - WAL_HDR_SIZE;
    out->xid = h->xid;
    out->type = wal_hdr_type(h);
    out->info = wal_hdr_info(h);
}

static inline uint64_t wal_align(uint64_t n)
{
    return (n + WAL_ALIGN - 1) & ~(uint64_t)(WAL_ALIGN - 1);
}

/* The body of a WAL_CHECKPOINT record. */
typedef struct wal_checkpoint_body {
    uint64_t redo;     /* replay starts here */
    uint32_t next_xid; /* no transaction id at or past it was used */
    uint32_t next_oid;
    uint64_t time_ns; /* CLOCK_REALTIME at its end */
} wal_checkpoint_body;

/* The body of a WAL_FILE_CREATE record. */
typedef struct wal_file_body {
    uint32_t relnumber;
    uint32_t reserved;
} wal_file_body;

typedef struct wal wal;

typedef struct wal_options {
    bool synchronous_commit; /* see keel_db_options */
    uint32_t writer_delay_ms;
    uint32_t buffer_size; /* the ring buffer, bytes (a power of two) */
    /* Ask for a checkpoint (wal_checkpoint_due) after this many bytes of
     * log since the last redo pointer, or this many seconds. */
    uint64_t checkpoint_bytes;
    uint32_t checkpoint_seconds;
} wal_options;

void wal_options_init(wal_options *o);

/* The whole page images a record carries, as its builder counted them
 * (storage/buf_log.c): for the log's counters (wal_stats_read()). */
typedef struct wal_fpi {
    uint32_t count;
    uint32_t bytes; /* the images' page bytes, holes left out */
} wal_fpi;

/*
 * What the log did since it was opened (every counter starts at zero
 * then).  Records, images and image bytes are counted by each insert in
 * its insertion slot (a line its holder writes anyway) and summed over
 * the slots here, so a reader sees each slot's figures as of some moment
 * during the read, not one instant of the whole log.
 */
typedef struct wal_stats {
    uint64_t records;      /* records inserted, fillers (WAL_NOOP) included */
    uint64_t fpi;          /* whole page images in them */
    uint64_t fpi_bytes;    /* the images' bytes (wal_fpi.bytes) */
    uint64_t bytes;        /* the insert position's advance: headers, bodies
                            * and padding */
    uint64_t buffers_full; /* inserts that found the ring full and waited
                            * for (or made) a write to the files */
    uint64_t writes;       /* writes to segment files */
    uint64_t syncs;        /* fdatasyncs of segment files */
    uint64_t insert_lsn;   /* the insert position now */
    uint64_t reset_ns;     /* CLOCK_REALTIME when the log was opened */
} wal_stats;

void wal_stats_read(wal *w, wal_stats *out);

/* Makes dir/wal with its first segment (a new database). */
int wal_create(const char *dir, kerr *err);

/*
 * Opens the log of dir, whose valid records end at `end` (found by
 * wal_find_end()), with redo pointer redo.  For writing, the log writer
 * thread starts, and with zero_tail (after a crash) the rest of end's
 * segment is zeroed and later segments removed: what a crash left beyond
 * the end must never pass for records.  read_only: nothing is written;
 * any insert fails.
 */
int wal_open(const char *dir, wal_lsn end, wal_lsn redo, bool read_only,
             bool zero_tail, const wal_options *o, wal **out, kerr *err);

/* Stops the writer, flushes what is complete (unless the log failed)
 * and frees w. */
void wal_close(wal *w);

/*
 * Appends a record of `type`/`info` for `xid`, its body the n parts
 * (total bytes in all, at most WAL_MAX_RECORD less the header), holding
 * the whole page images fpi says (NULL: none), for the counters.  Sets
 * *end to its end LSN (what must be durable for the record to be).  hint
 * spreads callers over the insertion slots (a session passes something of
 * its own).  If redo is not NULL, *redo is the redo pointer the caller
 * built the record against; if a checkpoint moved it and the record falls
 * past the new one, the record is not written (a filler takes its space),
 * *redo becomes the new pointer and KEEL_EBUSY asks the caller to build
 * the record again.  KEEL_EIO (or the failure's code) once the log has
 * failed; KEEL_EREADONLY for a read-only log.
 */
int wal_insert(wal *w, uint32_t hint, uint8_t type, uint8_t info, uint32_t xid,
               const struct iovec *parts, int n, uint32_t total,
               const wal_fpi *fpi, wal_lsn *redo, wal_lsn *end, kerr *err);

/*
 * Makes the log durable up to at least upto (an end LSN from
 * wal_insert()).  Waits only for insertions below it; a flush in progress
 * that covers it is waited for, not repeated.  KEEL_EIO / KEEL_ENOSPC if
 * writing or syncing failed, now or before: the log is then failed, and
 * every later insert and flush fails too, until the database is reopened.
 */
int wal_flush(wal *w, wal_lsn upto, kerr *err);

/* The end of the last reserved record. */
wal_lsn wal_insert_lsn(wal *w);
/* Whether the log has failed (wal_flush() above). */
bool wal_failed(const wal *w);
bool wal_synchronous(const wal *w);

/* The redo pointer records are built against: a page whose LSN is at or
 * below it is logged whole.  Passed to wal_insert(), which says if it
 * moved meanwhile. */
wal_lsn wal_redo_hint(wal *w);

/*
 * A checkpoint's start: the new redo pointer is the insert position now;
 * every record reserved past it is built against it.
 */
wal_lsn wal_redo_begin(wal *w);

/*
 * Removes (or renames for reuse) the segments wholly before redo, which
 * recovery no longer needs.
 */
void wal_remove_old(wal *w, wal_lsn redo);

/* Whether a checkpoint is due: checkpoint_bytes of log since the redo
 * pointer, or checkpoint_seconds since the last checkpoint began. */
bool wal_checkpoint_due(wal *w);


/* ---- reading ------------------------------------------------------ */

typedef struct wal_reader wal_reader;

/* A reader of dir's log from start (a record's LSN). */
int wal_reader_open(const char *dir, wal_lsn start, wal_reader **out,
                    kerr *err);
void wal_reader_close(wal_reader *r);

/*
 * The next record: *rec, its header decoded, and its body (rec->body_len
 * bytes), both valid until the next call.  KEEL_EEOF at the end of the valid
 * log (a zeroed or torn tail: *rec NULL); KEEL_ECORRUPT, naming the segment and
 * offset, if a damaged record is followed by one that says it was durable.
 */
int wal_reader_next(wal_reader *r, const wal_record **rec, const char **body,
                    kerr *err);

/* Where the reader stands: the LSN just past the last record returned. */
wal_lsn wal_reader_end(const wal_reader *r);

/* The LSN of the end of the valid log from start (KEEL_ECORRUPT as
 * above). */
int wal_find_end(const char *dir, wal_lsn start, wal_lsn *end, kerr *err);

#endif /* KEEL_WAL_WAL_H */
