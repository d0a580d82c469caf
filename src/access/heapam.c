/*
 * heapam.c: heap relations: inserting (singly and in bulk), fetching by
 * tid, scanning, deleting and updating row versions, and the visibility
 * and write-conflict rules that decide what each transaction sees and may
 * change.  The contracts are in heapam.h, the page layout in heap_page.h.
 *
 * Locking, once more, because it is what makes the write rules hold:
 *
 * - A writer changes a page only under its exclusive content lock, and
 *   holds at most one heap page lock at a time.  An update that cannot put
 *   the new version on the old version's page therefore claims the old one
 *   (xmax = its xid) under that page's lock, releases it, places the new
 *   version elsewhere, and then relocks the old page to record where the
 *   new version went.  While the claim stands, nobody else can delete or
 *   update the old version (they see a running xmax), so the relock finds
 *   it as left.
 * - The delete/update check (visible? already deleted by someone who has
 *   not aborted?) and the setting of xmax happen under one exclusive lock:
 *   of two transactions racing for one version, the second finds the
 *   first's xid in xmax and fails.  That is "first updater wins", and why
 *   no update is lost.
 * - The status oracle may be called while a heap page lock is held (it
 *   locks commit-log pages).  Order: heap page, then commit log, never the
 *   reverse.
 * - Readers copy the tuple (fetch), the columns they want (fetch_cols) or
 *   the whole page (scan) under the shared lock and judge visibility on
 *   the copied xmin and xmax, after unlocking.  That is sound because
 *   whatever a concurrent writer does to a version after the copy is made
 *   is invisible to the reader's snapshot anyway: a new xmax
 *   belongs to a transaction that is running (or started later) as far as
 *   the snapshot is concerned.
 */
#include "access/heapam.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "port/mem.h"
#include "storage/buf_log.h"
#include "txn/cid.h"
#include "wal/wal.h"

/* Room to form one tuple: a page's worth, 8-aligned for tuple_fill(). */
typedef union tuple_buf {
    uint64_t align;
    unsigned char b[BLOCK_SIZE];
} tuple_buf;

/* Where a bulk insert is filling: a pinned, unlocked buffer, or none. */
typedef struct insert_target {
    int32_t id; /* BUF_INVALID if none */
    blocknum_t blk;
} insert_target;

struct heap_bulk {
    heap_rel *rel;
    buf_session *s;
    buf_strategy *ring;
    insert_target target;
};

struct heap_scan {
    heap_rel *rel;
    buf_session *s;
    const visibility *vis;
    buf_strategy *ring;
    blocknum_t nblocks; /* blocks when the scan began: its extent */
    blocknum_t blk;     /* block copied into page, or HEAP_NO_BLOCK */
    uint16_t nitems;    /* line pointers in page */
    uint16_t next_off;  /* next line pointer of page to look at */
    bool have_page;     /* page holds blk's copy */
    tuple_buf page;     /* the current page, copied under a shared lock */
    bool count_newer;   /* heap_scan_count_newer() was called */
    uint64_t newer;     /* versions passed that vis cannot see yet */
    bool bad_row;       /* the last call failed on next_off's tuple */
};

/* ------------------------------------------------------------------ */
/* Handles and rows                                                   */
/* ------------------------------------------------------------------ */

/* Whether values of type are strings, pointing into a row's bytes. */
static inline bool type_is_string(keel_type type)
{
    return type_has_bytes(type);
}

void heap_rel_init(heap_rel *rel, relnumber_t relnumber, const tuple_desc *desc)
{
    size_t fixed = tupdesc_fixed_size(desc);
    size_t stride = ((size_t)HEAP_TUPLE_HOFF + fixed + 7) & ~(size_t)7;

    rel->relnumber = relnumber;
    rel->desc = desc;
    rel->stride =
        fixed > 0 && stride <= HEAP_MAX_TUPLE_SIZE ? (uint16_t)stride : 0;
    rel->per_page = rel->stride == 0
                        ? 0
                        : (uint16_t)((BLOCK_SIZE - PAGE_HEADER_SIZE) /
                                     (rel->stride + HEAPPAGE_LP_SIZE));
    rel->plain_cols = 0;
    while (rel->plain_cols < desc->natts &&
           !type_is_string(desc->attrs[rel->plain_cols].type))
        rel->plain_cols++;
    atomic_init(&rel->hint, HEAP_NO_BLOCK);
    atomic_init(&rel->pruned, 0);
}

uint64_t heap_pruned(const heap_rel *rel)
{
    return atomic_load_explicit(&rel->pruned, memory_order_relaxed);
}

/* data follows room keel_values: 8-aligned as the tuple header needs. */
_Static_assert(sizeof(keel_value) % 8 == 0, "heap_row data alignment");

int heap_row_init(heap_row *row, const heap_rel *rel, kerr *err)
{
    size_t cols;

    memset(row, 0, sizeof(*row));
    row->natts = rel->desc->natts;
    row->room = row->natts > 0 ? row->natts : 1;
    cols = (size_t)row->room * sizeof(keel_value);
    /* One block: the columns, from a line's start, then the tuple's
     * copy, which ends it (but for the slack mem_alloc_line_start() may
     * leave).  Each catalog read that has no row to reuse makes one, and
     * a second, small allocation would go through calloc(), which glibc
     * serves past its per-thread cache: a catalog cache that evicts as
     * fast as it fills (at its memory target) left it freed entries to
     * sort on every miss. */
    row->block = mem_alloc_line_start(cols + BLOCK_SIZE, (void **)&row->values);
    if (row->block == NULL) {
        row->room = 0;
        return kerr_set(err, KEEL_ENOMEM, "out of memory for a heap row");
    }
    memset(row->values, 0, cols);
    row->data = (char *)row->values + cols; /* keel_value's alignment */
    return KEEL_OK;
}

void heap_row_free(heap_row *row)
{
    free(row->block); /* the columns and the tuple's copy */
    row->block = NULL;
    row->values = NULL;
    row->data = NULL;
    row->room = 0;
}

int heap_row_prepare(heap_row *row, const heap_rel *rel, kerr *err)
{
    uint16_t natts = rel->desc->natts;

    if (row->values == NULL || row->data == NULL || row->room < natts) {
        heap_row_free(row);
        return heap_row_init(row, rel, err);
    }
    row->tid = TID_INVALID;
    row->xmin = row->xmax = 0;
    row->cid = 0;
    row->natts = natts;
    memset(row->values, 0, (size_t)natts * sizeof(*row->values));
    return KEEL_OK;
}

/* Whether the header of the tuple h (len bytes) fits rel's row type and
 * row, which is to receive it. */
static inline bool header_fits(const heap_rel *rel, const heap_row *row,
                               const heap_tuple_header *h, size_t len)
{
    return len >= sizeof(*h) && h->hoff >= sizeof(*h) && h->hoff <= len &&
           h->natts == rel->desc->natts && h->natts == row->natts;
}

/* ECORRUPT for the tuple at t (len bytes, natts columns) that does not
 * fit rel's row type. */
static int row_mismatch(const heap_rel *rel, tid t, size_t len, uint16_t natts,
                        kerr *err)
{
    return kerr_set(err, KEEL_ECORRUPT,
                    "relation %u, row (%u,%u): tuple of %zu bytes with "
                    "%u columns does not match the row type (%u columns)",
                    rel->relnumber, t.block, t.offset, len, natts,
                    rel->desc->natts);
}

/* ECORRUPT for the tuple at t (len bytes) whose values do not decode: one
 * runs past its end, or a not-null column is null (row_damaged() when it
 * cannot say which). */
static int row_overrun(const heap_rel *rel, tid t, size_t len, kerr *err)
{
    return kerr_set(err, KEEL_ECORRUPT,
                    "relation %u, row (%u,%u): a value runs past the end "
                    "of the tuple (%zu bytes), or a not-null one is null",
                    rel->relnumber, t.block, t.offset, len);
}

/* ECORRUPT for the tuple h at t (len bytes, its header fitting rel) whose
 * values do not decode, naming the column and what is wrong with it. */
static int row_damaged(const heap_rel *rel, tid t, const heap_tuple_header *h,
                       size_t len, kerr *err)
{
    uint16_t col = 0;
    tuple_fault f = tuple_fault_of(
        rel->desc, (const unsigned char *)h + h->hoff, len - h->hoff,
        (h->flags & HEAP_TUPLE_HAS_NULLS) != 0, &col);
    const char *type =
        rel->desc->natts > 0 ? type_name(rel->desc->attrs[col].type) : "";

    switch (f) {
    case TUPLE_FAULT_BITMAP:
        return kerr_set(err, KEEL_ECORRUPT,
                        "relation %u, row (%u,%u): its null bitmap runs past "
                        "the end of the tuple (%zu bytes)",
                        rel->relnumber, t.block, t.offset, len);
    case TUPLE_FAULT_NULL:
        return kerr_set(err, KEEL_ECORRUPT,
                        "relation %u, row (%u,%u): column %u (%s) is null, "
                        "but the row type has it not null",
                        rel->relnumber, t.block, t.offset, col + 1, type);
    case TUPLE_FAULT_OVERRUN:
        return kerr_set(err, KEEL_ECORRUPT,
                        "relation %u, row (%u,%u): column %u (%s) runs past "
                        "the end of the tuple (%zu bytes)",
                        rel->relnumber, t.block, t.offset, col + 1, type, len);
    case TUPLE_FAULT_NONE:
        break;
    }
    return row_overrun(rel, t, len, err);
}

/*
 * Deforms the tuple of len bytes already copied to row->data, which lives
 * at t.  ECORRUPT if its header does not fit the relation's row type, or
 * its values do not (a damaged text length would put one outside the
 * tuple, a damaged null bitmap a null in a not-null column).
 */
static int row_fill(const heap_rel *rel, heap_row *row, tid t, size_t len,
                    kerr *err)
{
    const heap_tuple_header *h = row->data;

    if (!header_fits(rel, row, h, len))
        return row_mismatch(rel, t, len, len >= sizeof(*h) ? h->natts : 0, err);
    if (!tuple_valid(rel->desc, (const unsigned char *)row->data + h->hoff,
                     len - h->hoff, (h->flags & HEAP_TUPLE_HAS_NULLS) != 0))
        return row_damaged(rel, t, h, len, err);
    row->tid = t;
    row->xmin = h->xmin;
    row->xmax = h->xmax;
    row->cid = h->cid;
    tuple_deform(rel->desc, (const unsigned char *)row->data + h->hoff,
                 (h->flags & HEAP_TUPLE_HAS_NULLS) != 0, row->values);
    return KEEL_OK;
}

int heap_row_decode(const heap_rel *rel, heap_row *row, tid t, const void *item,
                    size_t len, kerr *err)
{
    assert(len <= BLOCK_SIZE);
    memcpy(row->data, item, len);
    return row_fill(rel, row, t, len, err);
}

/* ------------------------------------------------------------------ */
/* Visibility                                                         */
/* ------------------------------------------------------------------ */

static int xid_status_of(const visibility *vis, xid_t xid, xid_status *st,
                         kerr *err)
{
    return vis->status(vis->status_ctx, xid, st, err);
}

static inline bool is_own(const snapshot *snap, xid_t xid)
{
    return snap->own_xid != XID_INVALID && xid == snap->own_xid;
}

/* The commands of the reader's own transaction that inserted and deleted
 * a version whose header's command id word is cid; vis->cids is not
 * NULL. */
static inline cid_pair own_cids(const visibility *vis, uint32_t cid)
{
    return (cid & CID_COMBO) ? cid_combo_pair(vis->cids, cid & ~CID_COMBO)
                             : (cid_pair){cid, cid};
}

/* The command the reader's own changes are judged as of: its command
 * state's reading command if by_command, else CID_ALL (all are seen). */
static inline cid_t reading_command(const visibility *vis, bool by_command)
{
    return by_command ? vis->cids->reading : CID_ALL;
}

/*
 * The visibility rule (heapam.h) for a version inserted by xmin and
 * deleted by xmax, whose header's command id word is cid, by its commands
 * if by_command (else every change of the reader's own is seen).  A
 * read-only transaction (no own xid) never reaches the command ids.
 */
static inline int version_visible(const visibility *vis, bool by_command,
                                  xid_t xmin, xid_t xmax, uint32_t cid,
                                  bool *visible, kerr *err)
{
    const snapshot *snap = vis->snap;
    xid_status st;
    int rc;

    *visible = false;
    /* The inserter. */
    if (xmin != XID_FROZEN) {
        if (is_own(snap, xmin)) {
            /* Ours: not before the command after the inserting one. */
            if (vis->cids != NULL &&
                own_cids(vis, cid).cmin >= reading_command(vis, by_command))
                return KEEL_OK;
        } else {
            if (xmin < XID_FIRST_NORMAL || snapshot_running(snap, xmin))
                return KEEL_OK;
            rc = xid_status_of(vis, xmin, &st, err);
            if (rc != KEEL_OK)
                return rc;
            if (st != XID_STATUS_COMMITTED)
                return KEEL_OK;
        }
    }
    /* The deleter. */
    if (xmax == XID_INVALID) {
        *visible = true;
        return KEEL_OK;
    }
    if (is_own(snap, xmax)) {
        /* Ours: still there for the deleting command and those before. */
        *visible = vis->cids != NULL &&
                   own_cids(vis, cid).cmax >= reading_command(vis, by_command);
        return KEEL_OK;
    }
    if (snapshot_running(snap, xmax)) {
        *visible = true;
        return KEEL_OK;
    }
    rc = xid_status_of(vis, xmax, &st, err);
    if (rc != KEEL_OK)
        return rc;
    *visible = st != XID_STATUS_COMMITTED;
    return KEEL_OK;
}

int heap_tuple_visible(const visibility *vis, xid_t xmin, xid_t xmax,
                       bool *visible, kerr *err)
{
    return version_visible(vis, false, xmin, xmax, 0, visible, err);
}

int heap_version_visible(const visibility *vis, const heap_tuple_header *h,
                         bool *visible, kerr *err)
{
    return version_visible(vis, true, h->xmin, h->xmax, h->cid, visible, err);
}

/*
 * The command id word a version's header h is to have once vis's
 * transaction deletes it by command cmd: cmd, unless the transaction
 * inserted it in another command, when it takes a combo id of the two
 * (ENOMEM, EEXHAUSTED).  Changes nothing.
 */
static int cmax_word(const visibility *vis, const heap_tuple_header *h,
                     cid_t cmd, uint32_t *word, kerr *err)
{
    uint32_t combo;
    int rc;

    *word = cmd;
    /* An own version visible to a deleter has no own deleter yet, so
     * its word is its cmin. */
    if (vis->cids == NULL || !is_own(vis->snap, h->xmin) || h->cid == cmd)
        return KEEL_OK;
    rc = cid_combo(vis->cids, h->cid, cmd, &combo, err);
    if (rc == KEEL_OK)
        *word = CID_COMBO | combo;
    return rc;
}

int heap_tuple_fate(const visibility *vis, xid_t xmin, xid_t xmax,
                    heap_fate *fate, kerr *err)
{
    const snapshot *snap = vis->snap;
    xid_status st;
    int rc;

    *fate = HEAP_LIVE;
    /* The inserter: committed, running or own counts as inserted. */
    if (xmin != XID_FROZEN && !is_own(snap, xmin)) {
        if (xmin < XID_FIRST_NORMAL) {
            *fate = HEAP_GONE; /* no transaction's: never visible */
            return KEEL_OK;
        }
        rc = xid_status_of(vis, xmin, &st, err);
        if (rc != KEEL_OK)
            return rc;
        if (st == XID_STATUS_ABORTED) {
            *fate = HEAP_DEAD;
            return KEEL_OK;
        }
        if (st == XID_STATUS_IN_PROGRESS && xmax == xmin) {
            *fate = HEAP_GONE; /* dead once it ends, but it has not */
            return KEEL_OK;
        }
    }
    /* The deleter. */
    if (xmax == XID_INVALID)
        return KEEL_OK;
    if (is_own(snap, xmax)) {
        *fate = HEAP_GONE;
        return KEEL_OK;
    }
    rc = xid_status_of(vis, xmax, &st, err);
    if (rc != KEEL_OK)
        return rc;
    if (st == XID_STATUS_COMMITTED)
        *fate = HEAP_DEAD;
    return KEEL_OK;
}

/* ------------------------------------------------------------------ */
/* Forming and placing tuples                                         */
/* ------------------------------------------------------------------ */

static int form_size(const heap_rel *rel, const keel_value *vals, size_t *total,
                     bool *has_nulls, kerr *err)
{
    size_t data;
    int rc = tuple_size(rel->desc, vals, &data, has_nulls, err);

    if (rc != KEEL_OK)
        return rc;
    *total = HEAP_TUPLE_HOFF + data;
    if (*total > HEAP_MAX_TUPLE_SIZE)
        return kerr_set(err, KEEL_ETOOBIG,
                        "relation %u: row of %zu bytes is too big for a heap "
                        "page (at most %zu)",
                        rel->relnumber, *total, HEAP_MAX_TUPLE_SIZE);
    return KEEL_OK;
}

int heap_row_size(const heap_rel *rel, const keel_value *vals, size_t *size,
                  kerr *err)
{
    bool has_nulls;

    return form_size(rel, vals, size, &has_nulls, err);
}

/*
 * Forms the tuple for vals as a version of xid, written by its command
 * cid, in buf and returns its size in *len.  Its next tid is filled in
 * when it is placed.  Changes nothing on error (ETYPE, ETOOBIG, EINVAL).
 */
static int form_tuple(const heap_rel *rel, const keel_value *vals, xid_t xid,
                      cid_t cid, tuple_buf *buf, size_t *len, kerr *err)
{
    heap_tuple_header *h = (heap_tuple_header *)buf->b;
    bool has_nulls;
    int rc;

    if (xid != XID_FROZEN && xid < XID_FIRST_NORMAL)
        return kerr_set(err, KEEL_EINVAL,
                        "relation %u: cannot insert as invalid xid %u",
                        rel->relnumber, xid);
    rc = form_size(rel, vals, len, &has_nulls, err);
    if (rc != KEEL_OK)
        return rc;
    memset(h, 0, sizeof(*h));
    h->xmin = xid;
    h->xmax = XID_INVALID;
    h->cid = cid;
    h->flags = has_nulls ? HEAP_TUPLE_HAS_NULLS : 0;
    h->natts = rel->desc->natts;
    h->hoff = HEAP_TUPLE_HOFF;
    tuple_fill(rel->desc, vals, has_nulls, buf->b + HEAP_TUPLE_HOFF);
    return KEEL_OK;
}

/*
 * Pruning (README.md, "Pruning").  One pass over page (block blk of rel,
 * under its exclusive lock) with horizon: removes the versions that no
 * snapshot can see now or later, those whose deleter committed below the
 * horizon, and beside them the new version of an update that aborted (its
 * inserter is the old version's deleter); the old version's aborted claim
 * is cleared.  The removed items' line pointers become DEAD: index entries
 * may still name them, so the numbers are not reused.  PAGE_FLAG_PRUNABLE
 * stays only while a version still has a deleter.  An error of the oracle
 * leaves that version as it is.  *newer is the highest deleter at or above
 * the horizon other than vis's own (a newer horizon could remove its
 * version), or XID_INVALID.  The removed versions leave holes (nothing
 * moves); tup (len bytes) goes into one if one is large enough, and
 * *placed is its offset (else 0).  Returns whether the page changed.
 */
static bool prune_pass(heap_rel *rel, buf_session *s, const visibility *vis,
                       int32_t id, void *page, blocknum_t blk, xid_t horizon,
                       xid_t *newer, const void *tup, size_t len,
                       uint16_t *placed)
{
    page_header *ph = page;
    uint16_t n = heappage_nitems(page), ndead = 0, nkept = 0, kept = 0;
    uint16_t first = 1, last = n;
    uint16_t dead[HEAPPAGE_MAX_LINES];
    uint8_t gone[HEAPPAGE_MAX_LINES / 8] = {0};
    bool changed = false;

    *newer = XID_INVALID;
    *placed = 0;
    if (n > HEAPPAGE_MAX_LINES) /* a damaged page: more than one ever gets */
        return false;
    if (ph->am_hint >= 1 && ph->am_hint <= n)
        first = last = ph->am_hint; /* the only version with a deleter */
    for (uint16_t off = first; off <= last; off++) {
        size_t got = 0;
        heap_tuple_header *h, *nh;
        uint16_t next;
        xid_status st;

        if (heappage_lp_state_of(heappage_get_lp(page, off)) !=
                HEAPPAGE_LP_NORMAL ||
            (gone[(off - 1) / 8] & (1u << ((off - 1) % 8))))
            continue;
        h = heappage_get_item(page, off, &got);
        if (h == NULL || got < sizeof(*h) || h->xmax == XID_INVALID)
            continue;
        if (h->xmax >= horizon) {
            if (h->xmax > *newer && !is_own(vis->snap, h->xmax))
                *newer = h->xmax;
            nkept++;
            kept = off;
            continue;
        }
        if (xid_status_of(vis, h->xmax, &st, &s->err) != KEEL_OK ||
            st == XID_STATUS_IN_PROGRESS) {
            kerr_clear(&s->err);
            nkept++;
            kept = off;
            continue;
        }
        if (st == XID_STATUS_COMMITTED) {
            gone[(off - 1) / 8] |= (uint8_t)(1u << ((off - 1) % 8));
            dead[ndead++] = off;
            continue;
        }
        /* Its deleter aborted: the version stays, as if never deleted, and
         * the version that deleter's update put beside it never lived. */
        next = h->next_offset;
        if ((h->flags & HEAP_TUPLE_XMAX_UPDATE) && h->next_block == blk &&
            next != off && next >= 1 && next <= n &&
            !(gone[(next - 1) / 8] & (1u << ((next - 1) % 8))) &&
            (nh = heappage_get_item(page, next, &got)) != NULL &&
            got >= sizeof(*nh) && nh->xmin == h->xmax) {
            gone[(next - 1) / 8] |= (uint8_t)(1u << ((next - 1) % 8));
            dead[ndead++] = next;
        }
        h->xmax = XID_INVALID;
        h->flags &= (uint16_t)~HEAP_TUPLE_XMAX_UPDATE;
        if (h->cid & CID_COMBO) /* its inserter aborted too */
            h->cid = CID_FIRST;
        h->next_block = blk;
        h->next_offset = off;
        buf_mark_dirty_range(s, id, (uint32_t)((char *)h - (char *)page),
                             sizeof(*h));
        changed = true;
    }
    if (ndead > 0) {
        /* For the log: the removal, which redo repeats
         * (heap_redo_remove()); where tup went is the caller's to name. */
        buf_mark_dirty_op(s, id, BUF_OP_HEAP_REMOVE, dead,
                          (uint16_t)(ndead * sizeof(dead[0])));
        *placed = heappage_remove_items(page, dead, ndead, tup, len);
        atomic_fetch_add_explicit(&rel->pruned, ndead, memory_order_relaxed);
        changed = true;
    }
    if (nkept == 0) {
        ph->flags &= (uint16_t)~PAGE_FLAG_PRUNABLE;
        ph->am_hint = 0;
        changed = true;
    } else if (ph->am_hint != (nkept == 1 ? kept : HEAPPAGE_HINT_MANY)) {
        ph->am_hint = nkept == 1 ? kept : HEAPPAGE_HINT_MANY;
        changed = true;
    }
    return changed;
}

/* Records on page that the version at off has a deleter now (under the
 * page's exclusive lock): PAGE_FLAG_PRUNABLE and the hint. */
/* Redo of pruning's removal (BUF_OP_HEAP_REMOVE): the line numbers. */
static bool heap_redo_remove(void *page, const void *payload, uint16_t len)
{
    uint16_t offs[HEAPPAGE_MAX_LINES], n = (uint16_t)(len / sizeof(offs[0]));
    uint16_t nitems = heappage_nitems(page);

    if (len % sizeof(offs[0]) != 0 || n == 0 || n > HEAPPAGE_MAX_LINES)
        return false;
    memcpy(offs, payload, len);
    for (uint16_t i = 0; i < n; i++)
        if (offs[i] < 1 || offs[i] > nitems ||
            heappage_lp_state_of(heappage_get_lp(page, offs[i])) !=
                HEAPPAGE_LP_NORMAL)
            return false;
    (void)heappage_remove_items(page, offs, n, NULL, 0);
    return true;
}

void heap_log_register(void)
{
    buf_log_register_op(BUF_OP_HEAP_REMOVE, heap_redo_remove);
}

/* Marks buffer id dirty for a change of its page's header: from `flags`
 * on, since redo sets the LSN itself and a write the checksum. */
static void mark_page_header(buf_session *s, int32_t id)
{
    buf_mark_dirty_range(s, id, offsetof(page_header, flags),
                         PAGE_HEADER_SIZE - offsetof(page_header, flags));
}

/* Marks buffer id dirty for a change of the page's header and of the
 * tuple header h on it (a deleter's marks), for the log. */
static void mark_tuple_header(buf_session *s, int32_t id,
                              const heap_tuple_header *h)
{
    const char *page = buf_page(s->pool, id);

    mark_page_header(s, id);
    buf_mark_dirty_range(s, id, (uint32_t)((const char *)h - page),
                         sizeof(*h));
}

static void claim_noted(void *page, uint16_t off)
{
    page_header *ph = page;

    if (!(ph->flags & PAGE_FLAG_PRUNABLE)) {
        ph->flags |= PAGE_FLAG_PRUNABLE;
        ph->am_hint = off;
    } else if (ph->am_hint != off) {
        ph->am_hint = HEAPPAGE_HINT_MANY;
    }
}

/*
 * Makes room on a full page for tup (len bytes) by pruning it (as
 * prune_pass()), if PAGE_FLAG_PRUNABLE says some version has a deleter
 * (vis NULL or without a horizon: not), and puts tup there: where a pruned
 * version was if one was as large (nothing else moves), else wherever the
 * compacted page has room.  Returns its offset, or 0 if it still does not
 * fit; *changed says whether the page changed (the caller marks it dirty).
 */
static uint16_t prune_locked(heap_rel *rel, buf_session *s,
                             const visibility *vis, int32_t id, void *page,
                             blocknum_t blk, const void *tup, size_t len,
                             bool *changed)
{
    xid_t horizon, newer, again;
    uint16_t off;

    *changed = false;
    /* A page out of line pointers takes nothing, whatever goes. */
    if (!(((page_header *)page)->flags & PAGE_FLAG_PRUNABLE) || vis == NULL ||
        vis->horizon == NULL ||
        (heappage_nitems(page) >= HEAPPAGE_MAX_LINES &&
         !(((page_header *)page)->flags & PAGE_FLAG_HAS_FREE_LINES)))
        return 0;
    /* The last horizon computed first; a newer one (each costs a barrier
     * on every CPU: txn_horizon_recent() computes one at most so often)
     * only if that did not make room and a newer one may. */
    horizon = vis->horizon(vis->status_ctx, XID_INVALID);
    *changed =
        prune_pass(rel, s, vis, id, page, blk, horizon, &newer, tup, len, &off);
    if (off == 0 && *changed)
        off = heappage_add_item_in_place(page, tup, len);
    if (off != 0 || newer == XID_INVALID)
        return off;
    again = vis->horizon(vis->status_ctx, newer);
    if (again > horizon &&
        prune_pass(rel, s, vis, id, page, blk, again, &newer, tup, len, &off)) {
        *changed = true;
        if (off == 0)
            off = heappage_add_item_in_place(page, tup, len);
    }
    return off;
}

/* ECORRUPT for block blk of rel, whose page (ph) is not a heap page. */
static int not_heap_page(const heap_rel *rel, blocknum_t blk,
                         const page_header *ph, kerr *err)
{
    return kerr_set(err, KEEL_ECORRUPT,
                    "relation %u block %u is not a heap page (special "
                    "space at %u)",
                    rel->relnumber, blk, ph->special);
}

/*
 * Puts the tuple (len bytes) on buffer id, which holds block blk of rel and
 * is pinned and exclusively locked by s; a new (all-zero) page is
 * initialized first, and a full one pruned (prune_locked(), with vis; NULL:
 * not), whose compaction, if it needs one, moves the page's items.  *placed
 * says whether it fit; if it did, the buffer is marked dirty and *out is the
 * new tid.  ECORRUPT if the page is not a heap page.  Leaves the lock and pin
 * as they were.  like: the line of a version on this page that the tuple
 * is probably much like (its old version, which the log then spares
 * repeating), or 0.
 */
static int place_locked(heap_rel *rel, buf_session *s, const visibility *vis,
                        int32_t id, blocknum_t blk, const void *tup, size_t len,
                        uint16_t like, tid *out, bool *placed)
{
    void *page = buf_page(s->pool, id);
    page_header *ph = page;
    heap_tuple_header *h;
    uint16_t off;
    size_t got;
    bool moved = false, pruned = false; /* pruned: the header changed */

    *placed = false;
    s->log_info = WAL_INFO_HEAP_INSERT;
    if (ph->upper == 0 && page_is_new(page)) {
        heappage_init(page);
        buf_mark_dirty(s, id);
    }
    if (ph->special != BLOCK_SIZE)
        return not_heap_page(rel, blk, ph, &s->err);
    /* Nothing moves unless the page must be compacted to take the tuple:
     * then the log gets the whole page; otherwise the header, the line
     * pointers, what pruning named and the tuple. */
    off = heappage_add_item_in_place(page, tup, len);
    if (off == 0) {
        bool changed;
        off = prune_locked(rel, s, vis, id, page, blk, tup, len, &changed);
        pruned = changed;
    }
    if (off == 0) {
        off = heappage_add_item(page, tup, len);
        moved = off != 0;
    }
    if (off == 0) {
        /* No room even so; what pruning changed is for the log still. */
        if (pruned)
            mark_page_header(s, id);
        return KEEL_OK;
    }
    h = heappage_get_item(page, off, &got);
    assert(h != NULL && got == len);
    h->next_block = blk;
    h->next_offset = off;
    if (moved) {
        buf_mark_dirty(s, id);
    } else {
        const char *old = NULL;
        mark_page_header(s, id);
        buf_mark_dirty_range(s, id,
                             PAGE_HEADER_SIZE +
                                 (uint32_t)(off - 1) * HEAPPAGE_LP_SIZE,
                             HEAPPAGE_LP_SIZE);
        if (like != 0)
            old = heappage_get_item(page, like, &got);
        if (old != NULL)
            buf_mark_dirty_like(s, id, (uint32_t)((char *)h - (char *)page),
                                (uint32_t)len,
                                (uint32_t)(old - (const char *)page),
                                (uint32_t)got);
        else
            buf_mark_dirty_range(s, id, (uint32_t)((char *)h - (char *)page),
                                 (uint32_t)len);
    }
    out->block = blk;
    out->offset = off;
    *placed = true;
    return KEEL_OK;
}

static int rel_nblocks(heap_rel *rel, buf_session *s, blocknum_t *n)
{
    smgr_rel *r;
    int rc = smgr_rel_open(buf_pool_smgr(s->pool), rel->relnumber, &r, &s->err);

    if (rc != KEEL_OK)
        return rc;
    *n = smgr_nblocks(r);
    return KEEL_OK;
}

static void hint_set(heap_rel *rel, blocknum_t blk)
{
    /* Read first: the hint's line stays shared while it does not move. */
    if (atomic_load_relaxed(&rel->hint) != blk)
        atomic_store_relaxed(&rel->hint, blk);
}

/*
 * Finds room for the tuple (len bytes, formed) in rel and puts it there:
 * on target's page if a bulk insert holds one, else the hinted block, else
 * the relation's last block, else a new block, reading and extending
 * through strategy st (NULL: none).  With a target, the page used is left
 * pinned in it (a full one is released); without, nothing stays pinned.
 * Each page is locked exclusively only while it is tried.
 */
static int insert_tuple(heap_rel *rel, buf_session *s, const visibility *vis,
                        buf_strategy *st, insert_target *target,
                        const void *tup, size_t len, tid *out)
{
    blocknum_t blk, tried = HEAP_NO_BLOCK;
    bool placed = false;
    int32_t id;
    int rc;

    assert(len <= HEAP_MAX_TUPLE_SIZE);
    if (target != NULL && target->id != BUF_INVALID) {
        id = target->id;
        blk = target->blk;
        buf_lock(s, id, LW_EXCLUSIVE);
        rc = place_locked(rel, s, NULL, id, blk, tup, len, 0, out, &placed);
        buf_unlock(s, id);
        if (rc == KEEL_OK && placed)
            return KEEL_OK;
        buf_release(s, id);
        target->id = BUF_INVALID;
        if (rc != KEEL_OK)
            return rc;
        goto extend; /* a bulk load that filled its page goes on anew */
    }

    blk = atomic_load_relaxed(&rel->hint);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (attempt == 1) {
            blocknum_t n;
            rc = rel_nblocks(rel, s, &n);
            if (rc != KEEL_OK)
                return rc;
            if (n == 0 || n - 1 == tried)
                break;
            blk = n - 1;
        }
        if (blk == HEAP_NO_BLOCK)
            continue;
        rc = buf_read(s, rel->relnumber, blk, &(buf_read_opts){.strategy = st},
                      &id);
        if (rc == KEEL_EEOF)
            continue; /* a stale hint past the end */
        if (rc != KEEL_OK)
            return rc;
        tried = blk;
        buf_lock(s, id, LW_EXCLUSIVE);
        rc = place_locked(rel, s, vis, id, blk, tup, len, 0, out, &placed);
        buf_unlock(s, id);
        if (rc == KEEL_OK && placed)
            goto done;
        buf_release(s, id);
        if (rc != KEEL_OK)
            return rc;
    }

extend:
    /*
     * buf_extend() returns the new block empty and locked before anyone
     * else can use it, and a tuple of at most HEAP_MAX_TUPLE_SIZE fits an
     * empty page.
     */
    rc = buf_extend(s, rel->relnumber, 0, st, &id, &blk);
    if (rc != KEEL_OK)
        return rc;
    rc = place_locked(rel, s, NULL, id, blk, tup, len, 0, out, &placed);
    buf_unlock(s, id);
    if (rc == KEEL_OK && !placed)
        rc = kerr_set(&s->err, KEEL_ECORRUPT,
                      "a tuple of %zu bytes did not fit new block %u of "
                      "relation %u",
                      len, blk, rel->relnumber);
    if (rc != KEEL_OK) {
        buf_release(s, id);
        return rc;
    }

done:
    if (target != NULL) {
        target->id = id;
        target->blk = blk;
    } else {
        buf_release(s, id);
    }
    hint_set(rel, blk);
    return KEEL_OK;
}

int heap_insert(heap_rel *rel, buf_session *s, xid_t xid, cid_t cid,
                const keel_value *values, tid *out)
{
    tuple_buf buf;
    size_t len = 0; /* set by form_tuple() when it succeeds */
    int rc = form_tuple(rel, values, xid, cid, &buf, &len, &s->err);

    if (rc != KEEL_OK)
        return rc;
    return insert_tuple(rel, s, NULL, NULL, NULL, buf.b, len, out);
}

int heap_insert_pinned(heap_rel *rel, buf_session *s, xid_t xid, cid_t cid,
                       const keel_value *values, tid *out, int32_t *pinned)
{
    insert_target target = {BUF_INVALID, HEAP_NO_BLOCK};
    tuple_buf buf;
    size_t len = 0; /* set by form_tuple() when it succeeds */
    int rc = form_tuple(rel, values, xid, cid, &buf, &len, &s->err);

    if (rc == KEEL_OK)
        rc = insert_tuple(rel, s, NULL, NULL, &target, buf.b, len, out);
    *pinned = target.id;
    return rc;
}

/* ------------------------------------------------------------------ */
/* Bulk insert                                                        */
/* ------------------------------------------------------------------ */

int heap_bulk_begin(heap_rel *rel, buf_session *s, heap_bulk **out)
{
    heap_bulk *b = calloc(1, sizeof(*b));

    if (b != NULL)
        b->ring = buf_strategy_create(s->pool, BUF_STRATEGY_BULK_WRITE);
    if (b == NULL || b->ring == NULL) {
        free(b);
        return kerr_set(&s->err, KEEL_ENOMEM,
                        "out of memory for a bulk insert into relation %u",
                        rel->relnumber);
    }
    b->rel = rel;
    b->s = s;
    b->target.id = BUF_INVALID;
    *out = b;
    return KEEL_OK;
}

int heap_bulk_insert(heap_bulk *b, xid_t xid, const keel_value *values,
                     tid *out)
{
    tuple_buf buf;
    size_t len = 0; /* set by form_tuple() when it succeeds */
    int rc = form_tuple(b->rel, values, xid, CID_FIRST, &buf, &len, &b->s->err);

    if (rc != KEEL_OK)
        return rc;
    return insert_tuple(b->rel, b->s, NULL, b->ring, &b->target, buf.b, len,
                        out);
}

void heap_bulk_end(heap_bulk *b)
{
    if (b == NULL)
        return;
    if (b->target.id != BUF_INVALID)
        buf_release(b->s, b->target.id);
    buf_strategy_free(b->ring);
    free(b);
}

/* ------------------------------------------------------------------ */
/* Fetch                                                              */
/* ------------------------------------------------------------------ */

/*
 * The page offsets of the lines a reader of t's version needs, into lines
 * (BUF_PREFETCH_MAX entries); returns their number.  They are the header
 * (the item count), t's line pointer and, if rel's rows are one size
 * (rel->stride), where t's tuple sits on a page filled in tid order: each
 * tuple then lies stride bytes below the one before, from the page's end.
 */
static uint32_t fetch_lines(const heap_rel *rel, tid t, uint16_t *lines)
{
    size_t lp = PAGE_HEADER_SIZE + HEAPPAGE_LP_SIZE * (size_t)(t.offset - 1);
    size_t below = (size_t)t.offset * rel->stride;
    uint32_t n = 0;

    lines[n++] = 0;
    if (lp >= 64 && lp < BLOCK_SIZE)
        lines[n++] = (uint16_t)lp;
    if (rel->stride != 0 && below <= BLOCK_SIZE - PAGE_HEADER_SIZE) {
        size_t end = BLOCK_SIZE - below + rel->stride;
        for (size_t a = (BLOCK_SIZE - below) & ~(size_t)63;
             a < end && n < BUF_PREFETCH_MAX; a += 64)
            lines[n++] = (uint16_t)a;
    }
    return n;
}

bool heap_tid_guess(const heap_rel *rel, tid lo, tid hi, double f,
                    uint64_t max_rows, tid *out)
{
    uint64_t per_page = rel->per_page, first, last, at;

    if (per_page == 0 || !(f >= 0.0 && f <= 1.0) || !tid_valid(lo) ||
        !tid_valid(hi))
        return false;
    if (lo.offset > per_page || hi.offset > per_page)
        return false; /* not pages of full-width rows only */
    first = (uint64_t)lo.block * per_page + lo.offset - 1;
    last = (uint64_t)hi.block * per_page + hi.offset - 1;
    if (last < first || last - first > max_rows ||
        last - first > HEAP_GUESS_MAX_ROWS)
        return false;
    /* Rounded to nearest: with one row per key value f * (last - first)
     * is the whole number of rows from lo, up to rounding error. */
    at = first + (uint64_t)(f * (double)(last - first) + 0.5);
    out->block = (blocknum_t)(at / per_page);
    out->offset = (uint16_t)(at % per_page + 1);
    return true;
}

void heap_prefetch(const heap_rel *rel, buf_session *s, tid t)
{
    uint16_t lines[BUF_PREFETCH_MAX];

    if (tid_valid(t))
        buf_prefetch(s, rel->relnumber, t.block, lines,
                     fetch_lines(rel, t, lines), t.offset);
}

/* buf_read() for the block of t, turning "past the end" into ENOENT; the
 * lines fetch_lines() names are prefetched, unless heap_prefetch() of t
 * was the session's last prefetch: then its lines are the ones wanted.
 * With share the buffer comes back locked in shared mode too (release it
 * with buf_unlock_release()). */
static int read_tid_block(heap_rel *rel, buf_session *s, tid t, bool share,
                          int32_t *id)
{
    uint16_t lines[BUF_PREFETCH_MAX];
    int rc;

    if (!tid_valid(t))
        return kerr_set(&s->err, KEEL_ENOENT,
                        "relation %u: invalid tid (%u,%u)", rel->relnumber,
                        t.block, t.offset);
    if (buf_prefetch_pending(s, rel->relnumber, t.block, t.offset))
        rc = share
                 ? buf_read(s, rel->relnumber, t.block,
                            &(buf_read_opts){.flags = BUF_READ_PREFETCHED |
                                                      BUF_READ_SHARED},
                            id)
                 : buf_read(s, rel->relnumber, t.block,
                            &(buf_read_opts){.flags = BUF_READ_PREFETCHED}, id);
    else if (share)
        rc = buf_read(s, rel->relnumber, t.block,
                      &(buf_read_opts){.flags = BUF_READ_SHARED,
                                       .lines = lines,
                                       .nlines = fetch_lines(rel, t, lines)},
                      id);
    else
        rc = buf_read(s, rel->relnumber, t.block,
                      &(buf_read_opts){.lines = lines,
                                       .nlines = fetch_lines(rel, t, lines)},
                      id);
    if (rc == KEEL_EEOF)
        return kerr_set(&s->err, KEEL_ENOENT,
                        "relation %u: tid (%u,%u) is past the end",
                        rel->relnumber, t.block, t.offset);
    return rc;
}

/* A fetch's error for t when its page has no item there: ECORRUPT if
 * the line pointer points outside the page or is misaligned (damaged),
 * else ENOENT. */
static int no_item(const heap_rel *rel, tid t, bool damaged, kerr *err)
{
    if (damaged)
        return kerr_set(err, KEEL_ECORRUPT,
                        "relation %u: line pointer (%u,%u) points outside "
                        "its page's items or is misaligned",
                        rel->relnumber, t.block, t.offset);
    /* Expected where an index still names a version pruning removed: no
     * vsnprintf() (kerr_set_u()). */
    return kerr_set_u(err, KEEL_ENOENT, "relation %u: no row at (%u,%u)",
                      rel->relnumber, t.block, t.offset);
}

/* A fetch's end, after unlocking: KEEL_OK if the version copied into row
 * is visible to vis, ENOENT if not, or the status oracle's error. */
static int fetched_visible(const heap_rel *rel, const visibility *vis,
                           const heap_row *row, kerr *err)
{
    bool visible;
    int rc;

    /* A frozen row never deleted (every row keel_load_table() wrote, until
     * it changes) is visible to every snapshot: no call. */
    if (row->xmin == XID_FROZEN && row->xmax == XID_INVALID)
        return KEEL_OK;
    rc = version_visible(vis, true, row->xmin, row->xmax, row->cid, &visible,
                         err);
    if (rc != KEEL_OK)
        return rc;
    if (!visible)
        return kerr_set_u(err, KEEL_ENOENT,
                          "relation %u: row (%u,%u) is not visible to this "
                          "snapshot",
                          rel->relnumber, row->tid.block, row->tid.offset);
    return KEEL_OK;
}

int heap_fetch(heap_rel *rel, buf_session *s, const visibility *vis, tid t,
               heap_row *row)
{
    const void *item;
    size_t len = 0;
    bool damaged;
    int32_t id;
    int rc = read_tid_block(rel, s, t, true, &id);

    if (rc != KEEL_OK)
        return rc;
    item = heappage_get_item_const(buf_page(s->pool, id), t.offset, &len);
    if (item != NULL)
        memcpy(row->data, item, len);
    damaged =
        item == NULL && heappage_item_damaged(buf_page(s->pool, id), t.offset);
    buf_unlock_release(s, id);
    if (item == NULL)
        return no_item(rel, t, damaged, &s->err);
    rc = row_fill(rel, row, t, len, &s->err);
    if (rc != KEEL_OK)
        return rc;
    return fetched_visible(rel, vis, row, &s->err);
}

/* Whether the line pointer at offset is one pruning left (DEAD). */
static bool pruned_at(const void *page, uint16_t offset)
{
    return offset >= 1 && offset <= heappage_nitems(page) &&
           heappage_lp_state_of(heappage_get_lp(page, offset)) ==
               HEAPPAGE_LP_DEAD;
}

/* A chain longer than this is taken for a loop: corruption. */
#define FOLLOW_MAX_HOPS 100000

int heap_follow(heap_rel *rel, buf_session *s, const visibility *vis, tid t,
                bool stay, heap_row *row, tid *latest, xid_t *wait)
{
    *wait = XID_INVALID;
    for (uint32_t hops = 0;; hops++) {
        const heap_tuple_header *h;
        xid_status st = XID_STATUS_COMMITTED;
        size_t len = 0;
        bool damaged;
        int32_t id;
        int rc = read_tid_block(rel, s, t, true, &id);

        if (rc != KEEL_OK)
            return rc;
        if (hops == FOLLOW_MAX_HOPS) {
            buf_unlock_release(s, id);
            return kerr_set(&s->err, KEEL_ECORRUPT,
                            "relation %u: the update chain through (%u,%u) "
                            "does not end",
                            rel->relnumber, t.block, t.offset);
        }
        h = heappage_get_item_const(buf_page(s->pool, id), t.offset, &len);
        if (h == NULL || len < sizeof(*h)) {
            bool pruned = h == NULL && pruned_at(buf_page(s->pool, id), t.offset);
            damaged = h == NULL &&
                      heappage_item_damaged(buf_page(s->pool, id), t.offset);
            buf_unlock_release(s, id);
            if (pruned)
                return kerr_set(&s->err, KEEL_ENOENT,
                                "relation %u: the row at (%u,%u) is gone",
                                rel->relnumber, t.block, t.offset);
            return no_item(rel, t, damaged, &s->err);
        }
        if (stay) {
            memcpy(row->data, h, len);
            buf_unlock_release(s, id);
            *latest = t;
            return row_fill(rel, row, t, len, &s->err);
        }
        /* The inserter first: a version whose maker is still running is
         * waited for like a deleter (the chain's next link is its own). */
        rc = xid_status_of(vis, h->xmin, &st, &s->err);
        /* A maker committed but not yet out of the process array would
         * still run for the caller's next snapshot, which would then see
         * the version before this one as well as the caller's own new
         * one: it is waited for too. */
        if (rc == KEEL_OK && st == XID_STATUS_COMMITTED &&
            vis->in_array != NULL && h->xmin >= XID_FIRST_NORMAL &&
            vis->in_array(vis->status_ctx, h->xmin))
            st = XID_STATUS_IN_PROGRESS;
        if (rc == KEEL_OK && st == XID_STATUS_IN_PROGRESS) {
            *wait = h->xmin;
            *latest = t;
            buf_unlock_release(s, id);
            return KEEL_OK;
        }
        if (rc == KEEL_OK && st == XID_STATUS_ABORTED)
            rc = kerr_set(&s->err, KEEL_ENOENT,
                          "relation %u: the row at (%u,%u) was taken back",
                          rel->relnumber, t.block, t.offset);
        if (rc == KEEL_OK && h->xmax != XID_INVALID) {
            if (is_own(vis->snap, h->xmax))
                rc = kerr_set(&s->err, KEEL_ENOENT,
                              "relation %u: row (%u,%u) was changed by this "
                              "transaction already",
                              rel->relnumber, t.block, t.offset);
            else
                rc = xid_status_of(vis, h->xmax, &st, &s->err);
        } else {
            st = XID_STATUS_ABORTED; /* no deleter: the newest version */
        }
        if (rc != KEEL_OK) {
            buf_unlock_release(s, id);
            return rc;
        }
        if (st == XID_STATUS_ABORTED) {
            memcpy(row->data, h, len);
            buf_unlock_release(s, id);
            *latest = t;
            return row_fill(rel, row, t, len, &s->err);
        }
        if (st == XID_STATUS_IN_PROGRESS) {
            *wait = h->xmax;
            *latest = t;
            buf_unlock_release(s, id);
            return KEEL_OK;
        }
        if (!(h->flags & HEAP_TUPLE_XMAX_UPDATE)) {
            buf_unlock_release(s, id);
            return kerr_set(&s->err, KEEL_ENOENT,
                            "relation %u: the row at (%u,%u) was deleted by "
                            "transaction %u",
                            rel->relnumber, t.block, t.offset, h->xmax);
        }
        {
            tid next = {.block = h->next_block, .offset = h->next_offset};
            buf_unlock_release(s, id);
            if (tid_compare(next, t) == 0)
                return kerr_set(&s->err, KEEL_ECORRUPT,
                                "relation %u: row (%u,%u) was updated, but "
                                "names itself as its new version",
                                rel->relnumber, t.block, t.offset);
            t = next;
        }
    }
}


/* heap_fetch_fate(), with the version's xmin and xmax copied out
 * (XID_INVALID both for a pruned one). */
static int fetch_fate(heap_rel *rel, buf_session *s, const visibility *vis,
                      tid t, heap_fate *fate, xid_t *xmin, xid_t *xmax)
{
    const heap_tuple_header *h;
    size_t len = 0;
    bool damaged = false;
    int32_t id;
    int rc = read_tid_block(rel, s, t, true, &id);

    *fate = HEAP_LIVE;
    if (rc != KEEL_OK)
        return rc;
    h = heappage_get_item_const(buf_session_page(s, id), t.offset, &len);
    if (h == NULL && pruned_at(buf_session_page(s, id), t.offset)) {
        *fate = HEAP_DEAD; /* xmin and xmax stay XID_INVALID */
    } else if (h == NULL) {
        damaged = heappage_item_damaged(buf_session_page(s, id), t.offset);
        rc = no_item(rel, t, damaged, &s->err);
    } else if (len < sizeof(*h)) {
        rc = kerr_set(&s->err, KEEL_ECORRUPT,
                      "relation %u, row (%u,%u): tuple of %zu bytes is "
                      "shorter than its header",
                      rel->relnumber, t.block, t.offset, len);
    } else {
        /* Under the lock: an update that fails after claiming the version
         * puts its xmax back before it can commit, so a deleter read here
         * is still running if it is not to be the version's for good. */
        *xmin = h->xmin;
        *xmax = h->xmax;
        rc = heap_tuple_fate(vis, h->xmin, h->xmax, fate, &s->err);
    }
    buf_unlock_release(s, id);
    return rc;
}

int heap_fetch_fate(heap_rel *rel, buf_session *s, const visibility *vis, tid t,
                    heap_fate *fate)
{
    xid_t xmin, xmax;

    return fetch_fate(rel, s, vis, t, fate, &xmin, &xmax);
}

int heap_fetch_dead(heap_rel *rel, buf_session *s, const visibility *vis, tid t,
                    bool *dead, xid_t *deleter)
{
    heap_fate fate;
    xid_status st = XID_STATUS_COMMITTED;
    xid_t xmin = XID_INVALID, xmax = XID_INVALID;
    int rc = fetch_fate(rel, s, vis, t, &fate, &xmin, &xmax);

    *dead = false;
    *deleter = XID_INVALID;
    if (rc != KEEL_OK || fate != HEAP_DEAD)
        return rc;
    /* Dead: pruned, its inserter aborted, or its deleter committed; all
     * final, and xmin never changes, so this may be asked after the
     * unlock. */
    if (xmin == XID_INVALID && xmax == XID_INVALID)
        st = XID_STATUS_ABORTED; /* pruned: no deleter to wait for */
    else if (xmin >= XID_FIRST_NORMAL && !is_own(vis->snap, xmin))
        rc = xid_status_of(vis, xmin, &st, &s->err);
    if (rc == KEEL_OK) {
        *dead = true;
        *deleter = st == XID_STATUS_ABORTED ? XID_INVALID : xmax;
    }
    return rc;
}

/*
 * Copies the bytes of the string values among row->values[0..ncols) into
 * row's memory and points the values there.
 */
static void row_own_strings(const heap_rel *rel, heap_row *row, uint16_t ncols)
{
    char *data = row->data;
    size_t used = 0;

    for (uint16_t i = rel->plain_cols; i < ncols; i++) {
        keel_value *v = &row->values[i];

        if (v->isnull || !type_is_string(rel->desc->attrs[i].type))
            continue;
        /* The values came from one tuple, which fits in BLOCK_SIZE. */
        assert(used + v->v.s.len <= BLOCK_SIZE);
        memcpy(data + used, v->v.s.ptr, v->v.s.len);
        v->v.s.ptr = data + used;
        used += v->v.s.len;
    }
}

int heap_fetch_cols(heap_rel *rel, buf_session *s, const visibility *vis, tid t,
                    uint16_t ncols, heap_row *row)
{
    const heap_tuple_header *h;
    size_t len = 0;
    bool fits = false, ok = false, damaged = false;
    uint16_t natts = 0;
    int32_t id;
    int rc;

    if (ncols == 0 || ncols > rel->desc->natts)
        return kerr_set(&s->err, KEEL_EINVAL,
                        "relation %u: cannot fetch %u of its %u columns",
                        rel->relnumber, ncols, rel->desc->natts);
    rc = read_tid_block(rel, s, t, true, &id);
    if (rc != KEEL_OK)
        return rc;
    h = heappage_get_item_const(buf_session_page(s, id), t.offset, &len);
    if (h != NULL) {
        fits = header_fits(rel, row, h, len);
        natts = len >= sizeof(*h) ? h->natts : 0;
    } else {
        damaged = heappage_item_damaged(buf_session_page(s, id), t.offset);
    }
    if (fits) {
        row->tid = t;
        row->xmin = h->xmin;
        row->xmax = h->xmax;
        row->cid = h->cid;
        ok = tuple_deform_prefix(
            rel->desc, (const char *)h + h->hoff, len - h->hoff,
            (h->flags & HEAP_TUPLE_HAS_NULLS) != 0, ncols, row->values);
        if (!ok) /* said while the tuple is at hand */
            (void)row_damaged(rel, t, h, len, &s->err);
        else if (ncols > rel->plain_cols)
            row_own_strings(rel, row, ncols);
    }
    buf_unlock_release(s, id);
    if (h == NULL)
        return no_item(rel, t, damaged, &s->err);
    if (!fits)
        return row_mismatch(rel, t, len, natts, &s->err);
    if (!ok)
        return KEEL_ECORRUPT; /* row_damaged() said why */
    return fetched_visible(rel, vis, row, &s->err);
}

/* ------------------------------------------------------------------ */
/* Delete and update                                                  */
/* ------------------------------------------------------------------ */

static int check_writer(heap_rel *rel, buf_session *s, const visibility *vis,
                        xid_t xid)
{
    if (xid < XID_FIRST_NORMAL || xid != vis->snap->own_xid)
        return kerr_set(&s->err, KEEL_EINVAL,
                        "relation %u: writing transaction %u is not the "
                        "snapshot's own (%u)",
                        rel->relnumber, xid, vis->snap->own_xid);
    return KEEL_OK;
}

/*
 * h, the version at off of page (block blk, exclusively locked), has a
 * deleter that aborted, whose claim is about to be overwritten: if that
 * deleter's update left its new version on this page, the version never
 * lived (its inserter is the deleter) and the claim is the only link to
 * it, so it goes now, as pruning would have dropped it.  Nothing moves.
 */
static void drop_aborted_successor(heap_rel *rel, buf_session *s, int32_t id,
                                   void *page, blocknum_t blk, uint16_t off,
                                   const heap_tuple_header *h)
{
    uint16_t next = h->next_offset;
    const heap_tuple_header *nh;
    size_t got = 0;

    if (!(h->flags & HEAP_TUPLE_XMAX_UPDATE) || h->next_block != blk ||
        next == off)
        return;
    nh = heappage_get_item(page, next, &got);
    if (nh == NULL || got < sizeof(*nh) || nh->xmin != h->xmax)
        return;
    /* For the log: its storage, its line pointer, the header's flags. */
    buf_mark_dirty_range(s, id, (uint32_t)((const char *)nh - (char *)page),
                         (uint32_t)((got + 7) & ~(size_t)7));
    buf_mark_dirty_range(s, id,
                         PAGE_HEADER_SIZE +
                             (uint32_t)(next - 1) * HEAPPAGE_LP_SIZE,
                         HEAPPAGE_LP_SIZE);
    mark_page_header(s, id);
    (void)heappage_remove_items(page, &next, 1, NULL, 0);
    atomic_fetch_add_explicit(&rel->pruned, 1, memory_order_relaxed);
}

/*
 * Pins and exclusively locks the page of t and checks that the version
 * there may be deleted or updated by vis's transaction: it is visible to
 * the snapshot (ENOENT otherwise, which covers one this transaction has
 * deleted), and it has no xmax unless that transaction aborted
 * (ESERIALIZE otherwise: the deleter is running, or committed after the
 * snapshot, since the version is still visible).  ECORRUPT if the page is
 * not a heap page.  On success returns the buffer in *id, pinned and
 * locked, and the version's header in *out; on error holds nothing.
 */
static int lock_for_write_once(heap_rel *rel, buf_session *s,
                               const visibility *vis, tid t, const char *verb,
                               int32_t *idp, heap_tuple_header **out,
                               xid_t *running)
{
    heap_tuple_header *h;
    xid_status st = XID_STATUS_IN_PROGRESS;
    size_t len = 0;
    bool visible = false;
    int32_t id;
    int rc = read_tid_block(rel, s, t, false, &id);

    if (rc != KEEL_OK)
        return rc;
    buf_lock(s, id, LW_EXCLUSIVE);
    /* An update places its new version here first (place_locked()), after
     * claiming the old one: a page that cannot take it is refused now. */
    if (((const page_header *)buf_page(s->pool, id))->special != BLOCK_SIZE) {
        rc = not_heap_page(rel, t.block, buf_page(s->pool, id), &s->err);
        goto fail;
    }
    h = heappage_get_item(buf_page(s->pool, id), t.offset, &len);
    if (h == NULL || len < sizeof(*h)) {
        rc = kerr_set(&s->err, KEEL_ENOENT,
                      "relation %u: no row at (%u,%u) to %s", rel->relnumber,
                      t.block, t.offset, verb);
        goto fail;
    }
    /* The oracle may lock commit-log pages: heap page, then clog.  A
     * row's newest version, followed to (read committed), need only have
     * been committed. */
    if (vis->committed_ok) {
        xid_status xs = XID_STATUS_IN_PROGRESS;
        rc = xid_status_of(vis, h->xmin, &xs, &s->err);
        visible = xs == XID_STATUS_COMMITTED;
    } else {
        rc = heap_version_visible(vis, h, &visible, &s->err);
    }
    if (rc != KEEL_OK)
        goto fail;
    /* Still visible, though this transaction deleted it: by this very
     * command (an UPDATE that met the row again), which left it to the
     * command's own readers.  Nothing more to change. */
    if (visible && is_own(vis->snap, h->xmax)) {
        rc = kerr_set(&s->err, KEEL_ENOENT,
                      "relation %u: row (%u,%u) to %s was changed by this "
                      "command already",
                      rel->relnumber, t.block, t.offset, verb);
        goto fail;
    }
    if (!visible) {
        rc = kerr_set(&s->err, KEEL_ENOENT,
                      "relation %u: row (%u,%u) to %s is not visible to "
                      "transaction %u",
                      rel->relnumber, t.block, t.offset, verb,
                      vis->snap->own_xid);
        goto fail;
    }
    if (h->xmax != XID_INVALID) {
        rc = xid_status_of(vis, h->xmax, &st, &s->err);
        if (rc != KEEL_OK)
            goto fail;
        if (st != XID_STATUS_ABORTED) {
            /* Committed, it may still be in the array (its commit
             * record on its way to disk), where a new snapshot would
             * still not see it: the retry waits for it either way. */
            *running = h->xmax;
            if (vis->met != NULL)
                *vis->met = (write_conflict){
                    .xid = h->xmax,
                    .committed = st == XID_STATUS_COMMITTED,
                    .updated = (h->flags & HEAP_TUPLE_XMAX_UPDATE) != 0,
                    .next_block = h->next_block,
                    .next_offset = h->next_offset};
            rc = kerr_set(
                &s->err, KEEL_ESERIALIZE,
                "could not serialize access: relation %u row (%u,%u) was %s "
                "by transaction %u, which %s",
                rel->relnumber, t.block, t.offset,
                (h->flags & HEAP_TUPLE_XMAX_UPDATE) ? "updated" : "deleted",
                h->xmax,
                st == XID_STATUS_COMMITTED
                    ? "committed after this transaction's snapshot"
                    : "is still in progress");
            goto fail;
        }
        drop_aborted_successor(rel, s, id, buf_page(s->pool, id), t.block,
                               t.offset, h);
    }
    *idp = id;
    *out = h;
    return KEEL_OK;

fail:
    buf_unlock(s, id);
    buf_release(s, id);
    return rc;
}

/*
 * lock_for_write_once(); a version whose deleter is still running is
 * reported to the transaction layer (vis->conflict), which waits for that
 * transaction once this one has aborted (snapshot.h).
 */
static int lock_for_write(heap_rel *rel, buf_session *s, const visibility *vis,
                          tid t, const char *verb, int32_t *idp,
                          heap_tuple_header **out)
{
    xid_t running = XID_INVALID;
    int rc = lock_for_write_once(rel, s, vis, t, verb, idp, out, &running);

    if (rc == KEEL_ESERIALIZE && running != XID_INVALID &&
        vis->conflict != NULL && vis->met == NULL)
        vis->conflict(vis->status_ctx, running);
    return rc;
}

int heap_delete(heap_rel *rel, buf_session *s, const visibility *vis, xid_t xid,
                tid t)
{
    heap_tuple_header *h;
    cid_t cmd = vis->cids != NULL ? vis->cids->current : CID_FIRST;
    uint32_t word = 0;
    int32_t id;
    int rc = check_writer(rel, s, vis, xid);

    if (rc == KEEL_OK)
        rc = lock_for_write(rel, s, vis, t, "delete", &id, &h);
    if (rc != KEEL_OK)
        return rc;
    rc = cmax_word(vis, h, cmd, &word, &s->err);
    if (rc != KEEL_OK) {
        buf_unlock(s, id);
        buf_release(s, id);
        return rc;
    }
    (void)cid_stamp(vis->cids);
    h->xmax = xid;
    h->cid = word;
    h->flags &= (uint16_t)~HEAP_TUPLE_XMAX_UPDATE;
    h->next_block = t.block; /* an aborted updater may have left its own */
    h->next_offset = t.offset;
    claim_noted(buf_page(s->pool, id), t.offset);
    s->log_info = WAL_INFO_HEAP_DELETE;
    s->log_xid = xid;
    mark_tuple_header(s, id, h);
    buf_unlock(s, id);
    buf_release(s, id);
    return KEEL_OK;
}

/*
 * heap_update(), and with hold (heap_update_held()) the pages of both
 * versions left pinned in it.
 */
static int update_tuple(heap_rel *rel, buf_session *s, const visibility *vis,
                        xid_t xid, tid t, const keel_value *values,
                        tid *new_tid, heap_update_hold *hold)
{
    heap_tuple_header *h, saved;
    insert_target target = {BUF_INVALID, HEAP_NO_BLOCK};
    tuple_buf buf;
    cid_t cmd = vis->cids != NULL ? vis->cids->current : CID_FIRST;
    uint32_t word = 0;
    size_t len = 0, got; /* len: set by form_tuple() */
    bool placed = false;
    tid nt = TID_INVALID;
    int32_t id;
    int rc;

    rc = check_writer(rel, s, vis, xid);
    if (rc == KEEL_OK)
        rc = form_tuple(rel, values, xid, cmd, &buf, &len, &s->err);
    if (rc == KEEL_OK)
        rc = lock_for_write(rel, s, vis, t, "update", &id, &h);
    if (rc != KEEL_OK)
        return rc;
    rc = cmax_word(vis, h, cmd, &word, &s->err);
    if (rc != KEEL_OK) {
        buf_unlock(s, id);
        buf_release(s, id);
        return rc;
    }
    (void)cid_stamp(vis->cids);

    /* Claim the old version, and try to put the new one beside it. */
    saved = *h;
    h->xmax = xid;
    h->cid = word;
    h->flags |= HEAP_TUPLE_XMAX_UPDATE;
    h->next_block = t.block;
    h->next_offset = t.offset;
    rc = place_locked(rel, s, vis, id, t.block, buf.b, len, t.offset, &nt,
                      &placed);
    assert(rc == KEEL_OK); /* the page was a heap page a moment ago */
    /* Set after placing: pruning for this update has nothing to gain from
     * its own claim, and would pass over a page of untouched rows for it. */
    claim_noted(buf_page(s->pool, id), t.offset);
    if (placed) {
        /* Pruning may have moved it (never removed it: its deleter runs). */
        h = heappage_get_item(buf_page(s->pool, id), t.offset, &got);
        assert(h != NULL && h->xmax == xid);
        h->next_offset = nt.offset;
        mark_tuple_header(s, id, h);
        s->log_info = WAL_INFO_HEAP_UPDATE;
        s->log_xid = xid;
        buf_unlock(s, id);
        if (hold != NULL) {
            (void)buf_pin(s, id); /* one for each version (held already:
                                     cannot fail) */
            *hold = (heap_update_hold){id, id, t, nt, saved.cid};
        } else {
            buf_release(s, id);
        }
        *new_tid = nt;
        return KEEL_OK;
    }
    h = heappage_get_item(buf_page(s->pool, id), t.offset, &got);
    mark_tuple_header(s, id, h);
    s->log_info = WAL_INFO_HEAP_UPDATE;
    s->log_xid = xid;
    buf_unlock(s, id);

    /*
     * No room here: place it elsewhere with no lock held (one heap page
     * lock at a time), then come back.  Our running xid in the old
     * version's xmax keeps every other writer off it meanwhile.
     */
    rc = insert_tuple(rel, s, vis, NULL, hold != NULL ? &target : NULL, buf.b,
                      len, &nt);
    buf_lock(s, id, LW_EXCLUSIVE);
    h = heappage_get_item(buf_page(s->pool, id), t.offset, &got);
    assert(h != NULL && h->xmax == xid);
    if (rc == KEEL_OK) {
        h->next_block = nt.block;
        h->next_offset = nt.offset;
    } else {
        h->xmax = saved.xmax;
        h->cid = saved.cid;
        h->flags = saved.flags;
        h->next_block = saved.next_block;
        h->next_offset = saved.next_offset;
    }
    mark_tuple_header(s, id, h);
    s->log_info = WAL_INFO_HEAP_UPDATE;
    s->log_xid = xid;
    buf_unlock(s, id);
    if (rc == KEEL_OK && hold != NULL)
        *hold = (heap_update_hold){id, target.id, t, nt, saved.cid};
    else
        buf_release(s, id);
    if (rc == KEEL_OK)
        *new_tid = nt;
    return rc;
}

int heap_update(heap_rel *rel, buf_session *s, const visibility *vis, xid_t xid,
                tid t, const keel_value *values, tid *new_tid)
{
    return update_tuple(rel, s, vis, xid, t, values, new_tid, NULL);
}

int heap_update_held(heap_rel *rel, buf_session *s, const visibility *vis,
                     xid_t xid, tid t, const keel_value *values, tid *new_tid,
                     heap_update_hold *hold)
{
    return update_tuple(rel, s, vis, xid, t, values, new_tid, hold);
}

void heap_update_release(buf_session *s, heap_update_hold *hold)
{
    buf_release(s, hold->new_id);
    buf_release(s, hold->old_id);
}

void heap_update_undo(buf_session *s, xid_t xid, heap_update_hold *hold)
{
    heap_tuple_header *h;
    size_t got;

    /* The new version: deleted by its own inserter, seen by nobody; its
     * command id, the update's, serves as cmax too. */
    buf_lock(s, hold->new_id, LW_EXCLUSIVE);
    h = heappage_get_item(buf_page(s->pool, hold->new_id), hold->new_tid.offset,
                          &got);
    assert(h != NULL && h->xmin == xid && h->xmax == XID_INVALID);
    h->xmax = xid;
    buf_mark_dirty(s, hold->new_id);
    buf_unlock(s, hold->new_id);
    /* The old one: no deleter, as before (an aborted one's claim, which
     * the update replaced, means the same). */
    buf_lock(s, hold->old_id, LW_EXCLUSIVE);
    h = heappage_get_item(buf_page(s->pool, hold->old_id), hold->old_tid.offset,
                          &got);
    assert(h != NULL && h->xmax == xid);
    h->xmax = XID_INVALID;
    h->cid = hold->old_cid;
    h->flags &= (uint16_t)~HEAP_TUPLE_XMAX_UPDATE;
    h->next_block = hold->old_tid.block;
    h->next_offset = hold->old_tid.offset;
    buf_mark_dirty(s, hold->old_id);
    buf_unlock(s, hold->old_id);
    heap_update_release(s, hold);
}

/* ------------------------------------------------------------------ */
/* Sequential scan                                                    */
/* ------------------------------------------------------------------ */

int heap_scan_begin(heap_rel *rel, buf_session *s, const visibility *vis,
                    heap_scan **out)
{
    heap_scan *sc;
    blocknum_t n;
    int rc = rel_nblocks(rel, s, &n);

    if (rc != KEEL_OK)
        return rc;
    sc = malloc(sizeof(*sc));
    if (sc != NULL)
        sc->ring = buf_strategy_create(s->pool, BUF_STRATEGY_BULK_READ);
    if (sc == NULL || sc->ring == NULL) {
        free(sc);
        return kerr_set(&s->err, KEEL_ENOMEM,
                        "out of memory for a scan of relation %u",
                        rel->relnumber);
    }
    sc->rel = rel;
    sc->s = s;
    sc->vis = vis;
    sc->nblocks = n;
    sc->blk = HEAP_NO_BLOCK;
    sc->count_newer = false;
    sc->newer = 0;
    sc->nitems = 0;
    sc->next_off = 1;
    sc->have_page = false;
    *out = sc;
    return KEEL_OK;
}

/* Copies the scan's next block into sc->page; *end at the scan's end. */
static int scan_next_page(heap_scan *sc, bool *end)
{
    blocknum_t blk = sc->blk == HEAP_NO_BLOCK ? 0 : sc->blk + 1;
    int32_t id;
    int rc;

    *end = blk >= sc->nblocks;
    if (*end)
        return KEEL_OK;
    rc = buf_read(sc->s, sc->rel->relnumber, blk,
                  &(buf_read_opts){.strategy = sc->ring}, &id);
    if (rc != KEEL_OK)
        return rc;
    buf_lock(sc->s, id, LW_SHARED);
    memcpy(sc->page.b, buf_page(sc->s->pool, id), BLOCK_SIZE);
    buf_unlock(sc->s, id);
    buf_release(sc->s, id);
    sc->blk = blk;
    sc->nitems = heappage_nitems(sc->page.b);
    sc->next_off = 1;
    sc->have_page = true;
    return KEEL_OK;
}

/* Counts an invisible version in sc->newer if its inserter is hidden from
 * the snapshot (running, or committed after it) and did not abort. */
static int count_newer(heap_scan *sc, xid_t xmin, kerr *err)
{
    heap_fate fate;
    bool seen;
    int rc = heap_tuple_visible(sc->vis, xmin, XID_INVALID, &seen, err);

    if (rc == KEEL_OK && !seen)
        rc = heap_tuple_fate(sc->vis, xmin, XID_INVALID, &fate, err);
    if (rc == KEEL_OK && !seen && fate != HEAP_DEAD)
        sc->newer++;
    return rc;
}

int heap_scan_next(heap_scan *sc, heap_row *row, bool *found)
{
    kerr *err = &sc->s->err;
    int rc;

    *found = false;
    sc->bad_row = false;
    for (;;) {
        while (sc->have_page && sc->next_off <= sc->nitems) {
            uint16_t off = sc->next_off;
            const heap_tuple_header *h;
            size_t len = 0;
            bool visible;

            h = heappage_get_item_const(sc->page.b, off, &len);
            if (h == NULL) {
                sc->next_off++;
                continue;
            }
            if (len < sizeof(*h)) {
                sc->bad_row = true;
                return kerr_set(err, KEEL_ECORRUPT,
                                "relation %u, row (%u,%u): item of %zu bytes "
                                "is shorter than a tuple header",
                                sc->rel->relnumber, sc->blk, off, len);
            }
            rc = heap_version_visible(sc->vis, h, &visible, err);
            if (rc != KEEL_OK)
                return rc;
            if (visible) {
                tid t = {.block = sc->blk, .offset = off};
                memcpy(row->data, h, len);
                rc = row_fill(sc->rel, row, t, len, err);
                if (rc != KEEL_OK) {
                    sc->bad_row = true;
                    return rc;
                }
                sc->next_off++;
                *found = true;
                return KEEL_OK;
            }
            if (sc->count_newer) {
                rc = count_newer(sc, h->xmin, err);
                if (rc != KEEL_OK)
                    return rc;
            }
            sc->next_off++;
        }
        bool end;
        rc = scan_next_page(sc, &end);
        if (rc != KEEL_OK || end)
            return rc;
    }
}

bool heap_scan_skip(heap_scan *sc)
{
    if (!sc->bad_row)
        return false;
    sc->bad_row = false;
    sc->next_off++;
    return true;
}

void heap_scan_count_newer(heap_scan *sc)
{
    sc->count_newer = true;
}

uint64_t heap_scan_newer(const heap_scan *sc)
{
    return sc->newer;
}

void heap_scan_end(heap_scan *sc)
{
    if (sc == NULL)
        return;
    buf_strategy_free(sc->ring);
    free(sc);
}
