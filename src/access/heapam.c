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
#include "txn/rowlock.h"
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
    blocknum_t roots_blk; /* the block root[] was made for, or none */
    uint16_t root[HEAPPAGE_MAX_LINES + 1]; /* each line's chain root */
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
    atomic_init(&rel->hot_updates, 0);
    atomic_init(&rel->apart, 0);
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

/* What pruning makes of a line (prune_state.cls). */
enum {
    PRUNE_UNSEEN = 0, /* not classified yet */
    PRUNE_OTHER,      /* no NORMAL tuple here (or a damaged one) */
    PRUNE_LIVE,       /* no deleter (or an aborted one's claim, cleared) */
    PRUNE_KEEP,       /* a deleter that may still matter */
    PRUNE_GONE,       /* its deleter committed below the horizon */
    PRUNE_NEVER,      /* made by an update that aborted: never lived */
};

/* One pruning pass's working state (prune_pass()). */
typedef struct prune_state {
    heap_rel *rel;
    buf_session *s;
    const visibility *vis;
    void *page;
    blocknum_t blk;
    xid_t horizon, newer;
    uint16_t n, nkept, kept;
    uint16_t nr, nd, nu, ncl;
    uint8_t cls[HEAPPAGE_MAX_LINES + 1];
    uint8_t reached[HEAPPAGE_MAX_LINES + 1];
    uint16_t rfrom[HEAPPAGE_MAX_LINES], rto[HEAPPAGE_MAX_LINES];
    uint16_t dead[HEAPPAGE_MAX_LINES], unused[HEAPPAGE_MAX_LINES];
    uint16_t clear[HEAPPAGE_MAX_LINES];
} prune_state;

/* The tuple header at off on page if off names a NORMAL item long enough
 * for one, else NULL. */
static heap_tuple_header *tuple_at(void *page, uint16_t n, uint16_t off)
{
    heap_tuple_header *h;
    size_t got = 0;

    if (off < 1 || off > n)
        return NULL;
    h = heappage_get_item(page, off, &got);
    return h != NULL && got >= sizeof(*h) ? h : NULL;
}

/* The line of the heap-only version that h (at off of page blk, n lines)
 * was updated to, if the link holds (README.md, "Heap-only updates"):
 * h is HOT_UPDATED, and the line names a NORMAL heap-only version that
 * h's updater inserted.  Else 0. */
static uint16_t hot_next(const void *page, uint16_t n, blocknum_t blk,
                         uint16_t off, const heap_tuple_header *h)
{
    const heap_tuple_header *nh;
    uint16_t next = h->next_offset;

    if (!(h->flags & HEAP_TUPLE_HOT_UPDATED) || h->next_block != blk ||
        next == off)
        return 0;
    nh = tuple_at((void *)page, n, next);
    if (nh == NULL || !(nh->flags & HEAP_TUPLE_HEAP_ONLY) ||
        nh->xmin != h->xmax)
        return 0;
    return next;
}

/* A claim's clear: the version as if its aborted deleter never came (do
 * and redo alike).  next_block, which means nothing without
 * HEAP_TUPLE_XMAX_UPDATE, is left as it is (redo does not know the
 * block). */
static void clear_claim(heap_tuple_header *h, uint16_t off)
{
    h->xmax = XID_INVALID;
    h->flags &= (uint16_t) ~(HEAP_TUPLE_XMAX_UPDATE | HEAP_TUPLE_HOT_UPDATED);
    if (h->cid & CID_COMBO) /* its inserter aborted too */
        h->cid = CID_FIRST;
    h->next_offset = off;
}

/* Classifies line off (once): see the PRUNE_* states.  An aborted
 * deleter's claim is cleared here, and the version its update put on
 * this page marked PRUNE_NEVER. */
static uint8_t prune_classify(prune_state *p, uint16_t off)
{
    heap_tuple_header *h, *nh;
    xid_status st;
    uint16_t next;

    if (p->cls[off] != PRUNE_UNSEEN)
        return p->cls[off];
    h = tuple_at(p->page, p->n, off);
    if (h == NULL)
        return p->cls[off] = PRUNE_OTHER;
    if (h->xmax == XID_INVALID)
        return p->cls[off] = PRUNE_LIVE;
    if (h->xmax >= p->horizon) {
        if (h->xmax > p->newer && !is_own(p->vis->snap, h->xmax))
            p->newer = h->xmax;
        p->nkept++;
        p->kept = off;
        return p->cls[off] = PRUNE_KEEP;
    }
    if (xid_status_of(p->vis, h->xmax, &st, &p->s->err) != KEEL_OK ||
        st == XID_STATUS_IN_PROGRESS) {
        kerr_clear(&p->s->err);
        p->nkept++;
        p->kept = off;
        return p->cls[off] = PRUNE_KEEP;
    }
    if (st == XID_STATUS_COMMITTED)
        return p->cls[off] = PRUNE_GONE;
    /* Its deleter aborted: the version stays, as if never deleted, and
     * the version that deleter's update put beside it never lived. */
    next = h->next_offset;
    if ((h->flags & HEAP_TUPLE_XMAX_UPDATE) && h->next_block == p->blk &&
        next != off && (nh = tuple_at(p->page, p->n, next)) != NULL &&
        nh->xmin == h->xmax)
        p->cls[next] = PRUNE_NEVER;
    clear_claim(h, off);
    p->clear[p->ncl++] = off;
    return p->cls[off] = PRUNE_LIVE;
}

/* Whether line off goes in this pass. */
static bool prune_goes(prune_state *p, uint16_t off)
{
    uint8_t c = prune_classify(p, off);
    return c == PRUNE_GONE || c == PRUNE_NEVER;
}

/*
 * The chain from root (a NORMAL indexed version, or a REDIRECT, whose
 * first member is first): its members that go are the leading ones whose
 * deleters committed below the horizon (or never lived); a heap-only one
 * becomes UNUSED, and the root a REDIRECT to the first member that stays,
 * or DEAD if none does.  A member that stays keeps every later one (an
 * oracle error may keep an earlier member than the horizon would), so no
 * link is left dangling.  Every member is marked reached.
 */
static void prune_chain(prune_state *p, uint16_t root, uint16_t first,
                        bool root_is_tuple)
{
    uint16_t cur = first, survivor = 0;
    bool removing = true;

    for (uint16_t hops = 0; cur != 0 && hops < p->n; hops++) {
        heap_tuple_header *h = tuple_at(p->page, p->n, cur);

        if (h == NULL || p->reached[cur])
            break; /* damaged, or a loop: stop */
        p->reached[cur] = 1;
        if (removing && prune_goes(p, cur)) {
            if (cur != root)
                p->unused[p->nu++] = cur;
            /* What a version that never lived was updated to never
             * lived either: its only updater was its own inserter. */
            if (p->cls[cur] == PRUNE_NEVER) {
                uint16_t next = hot_next(p->page, p->n, p->blk, cur, h);
                if (next != 0)
                    p->cls[next] = PRUNE_NEVER;
            }
        } else if (removing) {
            removing = false;
            survivor = cur;
        }
        cur = hot_next(p->page, p->n, p->blk, cur, h);
    }
    if (survivor == first && !root_is_tuple)
        return; /* the redirect stands */
    if (survivor == root)
        return; /* the root tuple stays */
    if (survivor != 0) {
        p->rfrom[p->nr] = root;
        p->rto[p->nr++] = survivor;
    } else {
        p->dead[p->nd++] = root;
    }
}

/* The REDIRECT line naming off, or 0. */
static uint16_t redirect_to(const void *page, uint16_t n, uint16_t off)
{
    for (uint16_t i = 1; i <= n; i++) {
        heappage_lp lp = heappage_get_lp(page, i);
        if (heappage_lp_state_of(lp) == HEAPPAGE_LP_REDIRECT &&
            heappage_lp_off(lp) == off)
            return i;
    }
    return 0;
}

/* Every chain of the page, and the heap-only versions none reaches (an
 * update taken back, or one whose claim was just cleared). */
static void prune_all(prune_state *p)
{
    for (uint16_t off = 1; off <= p->n; off++)
        (void)prune_classify(p, off);
    for (uint16_t off = 1; off <= p->n; off++) {
        heappage_lp lp = heappage_get_lp(p->page, off);
        heap_tuple_header *h;

        if (heappage_lp_state_of(lp) == HEAPPAGE_LP_REDIRECT) {
            uint16_t to = heappage_lp_off(lp);
            heap_tuple_header *t = tuple_at(p->page, p->n, to);
            if (t != NULL && (t->flags & HEAP_TUPLE_HEAP_ONLY))
                prune_chain(p, off, to, false);
        } else if ((h = tuple_at(p->page, p->n, off)) != NULL &&
                   !(h->flags & HEAP_TUPLE_HEAP_ONLY)) {
            prune_chain(p, off, off, true);
        }
    }
    for (uint16_t off = 1; off <= p->n; off++) {
        heap_tuple_header *h;
        if (p->reached[off] || (h = tuple_at(p->page, p->n, off)) == NULL ||
            !(h->flags & HEAP_TUPLE_HEAP_ONLY))
            continue;
        if (prune_goes(p, off))
            p->unused[p->nu++] = off;
    }
}

/* Only line x has had a deleter since the page's flag was set (its
 * hint): x's chain alone.  False if that cannot be told from x (a
 * heap-only x no redirect names): then the whole page. */
static bool prune_hinted(prune_state *p, uint16_t x)
{
    heap_tuple_header *h = tuple_at(p->page, p->n, x);
    uint8_t c;
    uint16_t root;

    if (h == NULL)
        return true;
    c = prune_classify(p, x);
    if (c == PRUNE_GONE) {
        if (!(h->flags & HEAP_TUPLE_HEAP_ONLY)) {
            prune_chain(p, x, x, true);
            return true;
        }
        root = redirect_to(p->page, p->n, x);
        if (root == 0)
            return false;
        prune_chain(p, root, x, false);
        return true;
    }
    if (c == PRUNE_LIVE && p->ncl > 0) {
        /* Its claim was cleared: the version its update made goes. */
        for (uint16_t off = 1; off <= p->n; off++) {
            heap_tuple_header *nh;
            if (p->cls[off] != PRUNE_NEVER ||
                (nh = tuple_at(p->page, p->n, off)) == NULL)
                continue;
            if (nh->flags & HEAP_TUPLE_HEAP_ONLY)
                p->unused[p->nu++] = off;
            else
                p->dead[p->nd++] = off;
        }
    }
    return true;
}

/* The payload of BUF_OP_HEAP_PRUNE: u16 counts of redirects, dead,
 * unused and cleared lines, then the redirects as (from, to) pairs and the
 * three lists.  Returns its length. */
static uint16_t prune_payload(const prune_state *p, uint16_t *out)
{
    uint16_t k = 0;

    out[k++] = p->nr;
    out[k++] = p->nd;
    out[k++] = p->nu;
    out[k++] = p->ncl;
    for (uint16_t i = 0; i < p->nr; i++) {
        out[k++] = p->rfrom[i];
        out[k++] = p->rto[i];
    }
    memcpy(out + k, p->dead, p->nd * sizeof(out[0]));
    k = (uint16_t)(k + p->nd);
    memcpy(out + k, p->unused, p->nu * sizeof(out[0]));
    k = (uint16_t)(k + p->nu);
    memcpy(out + k, p->clear, p->ncl * sizeof(out[0]));
    k = (uint16_t)(k + p->ncl);
    return (uint16_t)(k * sizeof(out[0]));
}

/*
 * Pruning (README.md, "Pruning").  One pass over page (block blk of rel,
 * under its exclusive lock) with horizon: removes the versions that no
 * snapshot can see now or later, those whose deleter committed below the
 * horizon, and beside them the new version of an update that aborted (its
 * inserter is the old version's deleter); the old version's aborted claim
 * is cleared.  A removed version's line pointer becomes DEAD if an index
 * entry may name it (the numbers are not reused), UNUSED if it was
 * heap-only, and a REDIRECT if it began a chain that goes on
 * (prune_chain()).  PAGE_FLAG_PRUNABLE stays only while a version still
 * has a deleter.  An error of the oracle leaves that version as it is.
 * *newer is the highest deleter at or above the horizon other than vis's
 * own (a newer horizon could remove its version), or XID_INVALID.  The
 * removed versions leave holes (nothing moves); tup (len bytes) goes into
 * one if one is large enough, and *placed is its offset (else 0).
 * Returns whether the page changed.
 */
static bool prune_pass(heap_rel *rel, buf_session *s, const visibility *vis,
                       int32_t id, void *page, blocknum_t blk, xid_t horizon,
                       xid_t *newer, const void *tup, size_t len,
                       uint16_t *placed)
{
    page_header *ph = page;
    prune_state state, *p = &state;
    uint16_t payload[4 + 5 * HEAPPAGE_MAX_LINES];
    uint16_t n = heappage_nitems(page), removed;
    bool changed = false;

    *newer = XID_INVALID;
    *placed = 0;
    if (n > HEAPPAGE_MAX_LINES) /* a damaged page: more than one ever gets */
        return false;
    p->rel = rel;
    p->s = s;
    p->vis = vis;
    p->page = page;
    p->blk = blk;
    p->horizon = horizon;
    p->newer = XID_INVALID;
    p->n = n;
    p->nkept = p->kept = p->nr = p->nd = p->nu = p->ncl = 0;
    memset(p->cls, 0, (size_t)n + 1);
    memset(p->reached, 0, (size_t)n + 1);
    /* The hinted line alone if the hint says it is the only one with a
     * deleter; the whole page if not, or if that line cannot tell (what
     * it classified stays classified). */
    if (!(ph->am_hint >= 1 && ph->am_hint <= n &&
          prune_hinted(p, ph->am_hint)))
        prune_all(p);
    *newer = p->newer;
    removed = (uint16_t)(p->nr + p->nd + p->nu);
    if (removed > 0 || p->ncl > 0) {
        /* For the log: the pruning, which redo repeats (heap_redo_prune());
         * where tup went is the caller's to name. */
        buf_mark_dirty_op(s, id, BUF_OP_HEAP_PRUNE, payload,
                          prune_payload(p, payload));
        *placed = heappage_prune_items(page, p->rfrom, p->rto, p->nr, p->dead,
                                       p->nd, p->unused, p->nu, tup, len);
        atomic_fetch_add_explicit(&rel->pruned, removed, memory_order_relaxed);
        changed = true;
    }
    if (p->nkept == 0) {
        ph->flags &= (uint16_t)~PAGE_FLAG_PRUNABLE;
        ph->am_hint = 0;
        changed = true;
    } else if (ph->am_hint != (p->nkept == 1 ? p->kept : HEAPPAGE_HINT_MANY)) {
        ph->am_hint = p->nkept == 1 ? p->kept : HEAPPAGE_HINT_MANY;
        changed = true;
    }
    return changed;
}

/* Redo of a compaction (BUF_OP_HEAP_COMPACT): heappage_compact() of the
 * page as it was, which must leave the tuples from the u16 upper on. */
static bool heap_redo_compact(void *page, uint32_t blk, const void *payload,
                              uint16_t len)
{
    page_header *ph = page;
    uint16_t upper;

    (void)blk;
    if (len != sizeof(upper) || ph->special != BLOCK_SIZE ||
        ph->lower < PAGE_HEADER_SIZE || ph->lower > ph->upper ||
        !heappage_compact(page))
        return false;
    memcpy(&upper, payload, sizeof(upper));
    return ph->upper == upper;
}

/* Redo of pruning's removal (BUF_OP_HEAP_REMOVE): the line numbers. */
static bool heap_redo_remove(void *page, uint32_t blk, const void *payload,
                             uint16_t len)
{
    uint16_t offs[HEAPPAGE_MAX_LINES], n = (uint16_t)(len / sizeof(offs[0]));
    uint16_t nitems = heappage_nitems(page);

    (void)blk;
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

/* Whether line off of page (n lines) is in state a or b. */
static bool lp_in(const void *page, uint16_t n, uint16_t off,
                  heappage_lp_state a, heappage_lp_state b)
{
    heappage_lp_state st;

    if (off < 1 || off > n)
        return false;
    st = heappage_lp_state_of(heappage_get_lp(page, off));
    return st == a || st == b;
}

/* Redo of a pruning pass (BUF_OP_HEAP_PRUNE, prune_payload()): the claims
 * cleared, then the line pointers changed, as prune_pass() did. */
static bool heap_redo_prune(void *page, uint32_t blk, const void *payload,
                            uint16_t len)
{
    uint16_t w[4 + 5 * HEAPPAGE_MAX_LINES], n = heappage_nitems(page);
    uint16_t nr, nd, nu, ncl, rfrom[HEAPPAGE_MAX_LINES],
        rto[HEAPPAGE_MAX_LINES];
    const uint16_t *dead, *unused, *clear;
    size_t words = len / sizeof(w[0]);

    (void)blk;
    if (len % sizeof(w[0]) != 0 || words < 4 || words > sizeof(w) / 2)
        return false;
    memcpy(w, payload, len);
    nr = w[0];
    nd = w[1];
    nu = w[2];
    ncl = w[3];
    if ((size_t)4 + 2u * nr + nd + nu + ncl != words || nr > HEAPPAGE_MAX_LINES)
        return false;
    for (uint16_t i = 0; i < nr; i++) {
        rfrom[i] = w[4 + 2 * i];
        rto[i] = w[5 + 2 * i];
        if (!lp_in(page, n, rfrom[i], HEAPPAGE_LP_NORMAL,
                   HEAPPAGE_LP_REDIRECT) ||
            !lp_in(page, n, rto[i], HEAPPAGE_LP_NORMAL, HEAPPAGE_LP_NORMAL))
            return false;
    }
    dead = w + 4 + 2 * nr;
    unused = dead + nd;
    clear = unused + nu;
    for (uint16_t i = 0; i < nd; i++)
        if (!lp_in(page, n, dead[i], HEAPPAGE_LP_NORMAL, HEAPPAGE_LP_REDIRECT))
            return false;
    for (uint16_t i = 0; i < nu; i++)
        if (!lp_in(page, n, unused[i], HEAPPAGE_LP_NORMAL, HEAPPAGE_LP_NORMAL))
            return false;
    for (uint16_t i = 0; i < ncl; i++) {
        heap_tuple_header *h = tuple_at(page, n, clear[i]);
        if (h == NULL)
            return false;
        clear_claim(h, clear[i]);
    }
    (void)heappage_prune_items(page, rfrom, rto, nr, dead, nd, unused, nu, NULL,
                               0);
    return true;
}

/*
 * BUF_OP_HEAP_UPDATE's fixed part: an update whose new version went
 * beside the old one with nothing else on the page moving.  The new
 * version is logged against the old one as redo can foresee it
 * (update_template()): its header as the update makes it, the old one's
 * data; only the bytes between their common prefix and suffix follow.
 * For a row whose one column changed, that is the column.
 */
typedef struct heap_update_op {
    uint16_t old_off, new_off;
    xid_t xid;          /* the updater: the old version's xmax, new's xmin */
    uint32_t old_cid;   /* the old version's command id word after it */
    uint32_t new_cid;   /* the new version's */
    uint16_t new_flags; /* the new version's (HEAP_ONLY: so is the update) */
    uint16_t new_len;   /* the new version's length */
    uint16_t prefix;    /* bytes it shares with the template's start */
    uint16_t hint;      /* the page header's am_hint after it */
} heap_update_op;

_Static_assert(sizeof(heap_update_op) == 24, "heap_update_op is 24 bytes");

/* The largest changed part an update logs this way; a larger one is
 * logged as byte ranges. */
#define HEAP_UPDATE_OP_MAX_MIDDLE 1024

/* In new_len: the new version went into a hole pruning left, at the
 * position the u16 after the fixed part gives (heappage_place_in_hole()),
 * not where heappage_add_item_in_place() puts one. */
#define HEAP_UPDATE_IN_HOLE 0x8000u

/* What redo can foresee of a new version: dst (old_len bytes) is the old
 * version (at old, block blk) with the header the update gives the new
 * one. */
static void update_template(char *dst, const void *old, size_t old_len,
                            const heap_update_op *u, blocknum_t blk)
{
    heap_tuple_header h;

    memcpy(dst, old, old_len);
    memcpy(&h, dst, sizeof(h));
    h.xmin = u->xid;
    h.xmax = XID_INVALID;
    h.next_block = blk;
    h.next_offset = u->new_off;
    h.flags = u->new_flags;
    h.cid = u->new_cid;
    memcpy(dst, &h, sizeof(h));
}

/*
 * Logs the update of buffer id (block blk) that put the new version at
 * new_off beside the old one at old_off, both as they now are, with no
 * range noted: BUF_OP_HEAP_UPDATE, or false (nothing noted) if the
 * versions differ in more than HEAP_UPDATE_OP_MAX_MIDDLE bytes.
 */
static bool log_update_op(buf_session *s, int32_t id, blocknum_t blk,
                          uint16_t old_off, uint16_t new_off, uint16_t hole,
                          xid_t xid)
{
    char *page = buf_page(s->pool, id);
    size_t old_len = 0, new_len = 0, lim, prefix = 0, suffix = 0, middle;
    const heap_tuple_header *oh = heappage_get_item(page, old_off, &old_len);
    const heap_tuple_header *nh = heappage_get_item(page, new_off, &new_len);
    _Alignas(8) char tmpl[BLOCK_SIZE];
    _Alignas(8) char payload[sizeof(heap_update_op) + 2 +
                             HEAP_UPDATE_OP_MAX_MIDDLE];
    size_t fixed = sizeof(heap_update_op) + (hole != 0 ? 2 : 0);
    heap_update_op u;
    const char *nb = (const char *)nh;

    assert(oh != NULL && nh != NULL);
    u = (heap_update_op){.old_off = old_off,
                         .new_off = new_off,
                         .xid = xid,
                         .old_cid = oh->cid,
                         .new_cid = nh->cid,
                         .new_flags = nh->flags,
                         .new_len = (uint16_t)new_len,
                         .hint = ((const page_header *)page)->am_hint};
    update_template(tmpl, oh, old_len, &u, blk);
    lim = old_len < new_len ? old_len : new_len;
    while (prefix < lim && tmpl[prefix] == nb[prefix])
        prefix++;
    while (suffix < lim - prefix &&
           tmpl[old_len - 1 - suffix] == nb[new_len - 1 - suffix])
        suffix++;
    middle = new_len - prefix - suffix;
    if (middle > HEAP_UPDATE_OP_MAX_MIDDLE)
        return false;
    u.prefix = (uint16_t)prefix;
    if (hole != 0)
        u.new_len |= HEAP_UPDATE_IN_HOLE;
    memcpy(payload, &u, sizeof(u));
    memcpy(payload + sizeof(u), &hole, 2); /* overwritten if no hole */
    memcpy(payload + fixed, nb + prefix, middle);
    buf_mark_dirty_op(s, id, BUF_OP_HEAP_UPDATE, payload,
                      (uint16_t)(fixed + middle));
    return true;
}

/* Redo of BUF_OP_HEAP_UPDATE: the new version rebuilt and added as the
 * update added it, then the old one claimed and the page marked as
 * update_tuple() did (the header's flags and hint as pruning, if it ran
 * first, and the claim left them). */
static bool heap_redo_update(void *page, uint32_t blk, const void *payload,
                             uint16_t len)
{
    heap_update_op u;
    _Alignas(8) char tmpl[BLOCK_SIZE], nv[BLOCK_SIZE];
    heap_tuple_header *h;
    size_t old_len = 0, middle, suffix, fixed = sizeof(u);
    uint16_t hole = 0, off;

    if (len < sizeof(u))
        return false;
    memcpy(&u, payload, sizeof(u));
    if (u.new_len & HEAP_UPDATE_IN_HOLE) {
        fixed += 2;
        if (len < fixed)
            return false;
        memcpy(&hole, (const char *)payload + sizeof(u), 2);
        u.new_len &= (uint16_t)~HEAP_UPDATE_IN_HOLE;
    }
    middle = len - fixed;
    h = u.old_off >= 1 && u.old_off <= heappage_nitems(page)
            ? heappage_get_item(page, u.old_off, &old_len)
            : NULL;
    if (h == NULL || old_len < sizeof(*h) || u.new_len < sizeof(*h) ||
        u.new_len > HEAP_MAX_TUPLE_SIZE || u.prefix > old_len ||
        (size_t)u.prefix + middle > u.new_len)
        return false;
    suffix = u.new_len - u.prefix - middle;
    if (suffix > old_len - u.prefix)
        return false;
    update_template(tmpl, h, old_len, &u, blk);
    memcpy(nv, tmpl, u.prefix);
    memcpy(nv + u.prefix, (const char *)payload + fixed, middle);
    memcpy(nv + u.prefix + middle, tmpl + old_len - suffix, suffix);
    off = hole != 0 ? heappage_place_in_hole(page, hole, nv, u.new_len)
                    : heappage_add_item_in_place(page, nv, u.new_len);
    if (off != u.new_off)
        return false;
    h = heappage_get_item(page, u.old_off, &old_len);
    h->xmax = u.xid;
    h->cid = u.old_cid;
    h->flags = (uint16_t)((h->flags & ~HEAP_TUPLE_HOT_UPDATED) |
                          HEAP_TUPLE_XMAX_UPDATE |
                          ((u.new_flags & HEAP_TUPLE_HEAP_ONLY)
                               ? HEAP_TUPLE_HOT_UPDATED
                               : 0));
    h->next_block = blk;
    h->next_offset = u.new_off;
    ((page_header *)page)->flags |= PAGE_FLAG_PRUNABLE;
    ((page_header *)page)->am_hint = u.hint;
    return true;
}

/*
 * BUF_OP_HEAP_INSERT's fixed part: a version added to a page with nothing
 * else moving (into free space, or into a hole pruning for it left), the
 * page's prunable flag and hint as they are after it, and its header but
 * for the next tid, which is its own; its data follows.
 */
typedef struct heap_insert_op {
    xid_t xmin, xmax;
    uint32_t cid;
    uint16_t off;        /* the line the add gives it */
    uint16_t hole;       /* 0, or where pruning's hole put it */
    uint16_t hint;       /* the page header's am_hint after it */
    uint16_t prunable;   /* PAGE_FLAG_PRUNABLE set after it (1) or not */
    uint16_t flags, natts, hoff;
} heap_insert_op;

#define HEAP_INSERT_OP_FIXED (offsetof(heap_insert_op, hoff) + 2)
_Static_assert(HEAP_INSERT_OP_FIXED == 26, "heap_insert_op is 26 bytes");

/* The largest version an insert operation carries; a larger one is
 * logged as byte ranges. */
#define HEAP_INSERT_OP_MAX 1024

/*
 * Logs the version just added at off of buffer id (hole: the position of
 * the hole it went into, or 0) as BUF_OP_HEAP_INSERT; false (nothing
 * noted) for one larger than HEAP_INSERT_OP_MAX.
 */
static bool log_insert_op(buf_session *s, int32_t id, uint16_t off,
                          uint16_t hole)
{
    const char *page = buf_page(s->pool, id);
    const page_header *ph = (const page_header *)page;
    size_t len = 0;
    const heap_tuple_header *h = heappage_get_item((void *)page, off, &len);
    _Alignas(8) char payload[HEAP_INSERT_OP_FIXED + HEAP_INSERT_OP_MAX];
    heap_insert_op u;

    if (len > HEAP_INSERT_OP_MAX)
        return false;
    u = (heap_insert_op){.xmin = h->xmin,
                         .xmax = h->xmax,
                         .cid = h->cid,
                         .off = off,
                         .hole = hole,
                         .hint = ph->am_hint,
                         .prunable = (ph->flags & PAGE_FLAG_PRUNABLE) != 0,
                         .flags = h->flags,
                         .natts = h->natts,
                         .hoff = h->hoff};
    memcpy(payload, &u, HEAP_INSERT_OP_FIXED);
    memcpy(payload + HEAP_INSERT_OP_FIXED, (const char *)h + sizeof(*h),
           len - sizeof(*h));
    buf_mark_dirty_op(s, id, BUF_OP_HEAP_INSERT, payload,
                      (uint16_t)(HEAP_INSERT_OP_FIXED + len - sizeof(*h)));
    return true;
}

/* Redo of BUF_OP_HEAP_INSERT: the version rebuilt (its next tid its own)
 * and added where the insert added it; the page's flag and hint. */
static bool heap_redo_insert(void *page, uint32_t blk, const void *payload,
                             uint16_t len)
{
    heap_insert_op u = {0};
    heap_tuple_header h = {0};
    _Alignas(8) char tup[HEAP_INSERT_OP_MAX + sizeof(heap_tuple_header)];
    size_t data, tlen;
    uint16_t off;
    page_header *ph = page;

    if (len < HEAP_INSERT_OP_FIXED)
        return false;
    memcpy(&u, payload, HEAP_INSERT_OP_FIXED);
    data = len - HEAP_INSERT_OP_FIXED;
    tlen = sizeof(h) + data;
    if (data > HEAP_INSERT_OP_MAX || u.off == 0 || u.prunable > 1)
        return false;
    h.xmin = u.xmin;
    h.xmax = u.xmax;
    h.next_block = blk;
    h.next_offset = u.off;
    h.flags = u.flags;
    h.natts = u.natts;
    h.hoff = u.hoff;
    h.cid = u.cid;
    memcpy(tup, &h, sizeof(h));
    memcpy(tup + sizeof(h), (const char *)payload + HEAP_INSERT_OP_FIXED,
           data);
    off = u.hole != 0 ? heappage_place_in_hole(page, u.hole, tup, tlen)
                      : heappage_add_item_in_place(page, tup, tlen);
    if (off != u.off)
        return false;
    if (u.prunable)
        ph->flags |= PAGE_FLAG_PRUNABLE;
    else
        ph->flags &= (uint16_t)~PAGE_FLAG_PRUNABLE;
    ph->am_hint = u.hint;
    return true;
}

/*
 * BUF_OP_HEAP_CLAIM: a deleter's or an updater's mark on the version at
 * off (its xmax, command id and flags, its next tid its own for now), and
 * the page's prunable flag and hint after it.
 */
typedef struct heap_claim_op {
    xid_t xmax;
    uint32_t cid;
    uint16_t off, flags, hint, prunable;
} heap_claim_op;

_Static_assert(sizeof(heap_claim_op) == 16, "heap_claim_op is 16 bytes");

/* Logs the claim just made on the version at off of buffer id. */
static void log_claim_op(buf_session *s, int32_t id, uint16_t off)
{
    const char *page = buf_page(s->pool, id);
    const page_header *ph = (const page_header *)page;
    size_t len = 0;
    const heap_tuple_header *h = heappage_get_item((void *)page, off, &len);
    heap_claim_op u = {.xmax = h->xmax,
                       .cid = h->cid,
                       .off = off,
                       .flags = h->flags,
                       .hint = ph->am_hint,
                       .prunable = (ph->flags & PAGE_FLAG_PRUNABLE) != 0};

    buf_mark_dirty_op(s, id, BUF_OP_HEAP_CLAIM, &u, sizeof(u));
}

/* Redo of BUF_OP_HEAP_CLAIM. */
static bool heap_redo_claim(void *page, uint32_t blk, const void *payload,
                            uint16_t len)
{
    heap_claim_op u;
    heap_tuple_header *h;
    page_header *ph = page;
    size_t got = 0;

    if (len != sizeof(u))
        return false;
    memcpy(&u, payload, sizeof(u));
    h = u.off >= 1 && u.off <= heappage_nitems(page)
            ? heappage_get_item(page, u.off, &got)
            : NULL;
    if (h == NULL || got < sizeof(*h) || u.prunable > 1)
        return false;
    h->xmax = u.xmax;
    h->cid = u.cid;
    h->flags = u.flags;
    h->next_block = blk;
    h->next_offset = u.off;
    if (u.prunable)
        ph->flags |= PAGE_FLAG_PRUNABLE;
    else
        ph->flags &= (uint16_t)~PAGE_FLAG_PRUNABLE;
    ph->am_hint = u.hint;
    return true;
}

void heap_log_register(void)
{
    buf_log_register_op(BUF_OP_HEAP_REMOVE, heap_redo_remove);
    buf_log_register_op(BUF_OP_HEAP_PRUNE, heap_redo_prune);
    buf_log_register_op(BUF_OP_HEAP_UPDATE, heap_redo_update);
    buf_log_register_op(BUF_OP_HEAP_INSERT, heap_redo_insert);
    buf_log_register_op(BUF_OP_HEAP_CLAIM, heap_redo_claim);
    buf_log_register_op(BUF_OP_HEAP_COMPACT, heap_redo_compact);
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
                             bool *changed, bool *in_hole)
{
    xid_t horizon, newer, again;
    uint16_t off;

    *changed = false;
    *in_hole = false;
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
    *in_hole = off != 0;
    if (off == 0 && *changed)
        off = heappage_add_item_in_place(page, tup, len);
    if (off != 0 || newer == XID_INVALID)
        return off;
    again = vis->horizon(vis->status_ctx, newer);
    if (again > horizon &&
        prune_pass(rel, s, vis, id, page, blk, again, &newer, tup, len, &off)) {
        *changed = true;
        *in_hole = off != 0;
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
 * as they were.  The log gets the tuple as an insert operation
 * (log_insert_op()), after the compaction's if there was one; with hole
 * (an update's), the caller logs the tuple and the page header itself,
 * and *hole is the position of the hole pruning put it in, or 0.
 */
static int place_locked(heap_rel *rel, buf_session *s, const visibility *vis,
                        int32_t id, blocknum_t blk, const void *tup, size_t len,
                        tid *out, bool *placed, uint16_t *hole)
{
    void *page = buf_page(s->pool, id);
    page_header *ph = page;
    heap_tuple_header *h;
    uint16_t off;
    size_t got;
    bool pruned = false; /* the header changed */
    bool in_hole = false;

    *placed = false;
    if (hole != NULL)
        *hole = 0;
    s->log_info = WAL_INFO_HEAP_INSERT;
    if (ph->upper == 0 && page_is_new(page)) {
        heappage_init(page);
        buf_mark_dirty(s, id);
    }
    if (ph->special != BLOCK_SIZE)
        return not_heap_page(rel, blk, ph, &s->err);
    /* Nothing moves unless the page must be compacted to take the tuple,
     * which the log names as an operation that redo repeats; then the
     * tuple as if it had found the room, and what pruning named. */
    off = heappage_add_item_in_place(page, tup, len);
    if (off == 0) {
        bool changed;
        off = prune_locked(rel, s, vis, id, page, blk, tup, len, &changed,
                           &in_hole);
        pruned = changed;
    }
    if (off == 0 && (ph->flags & PAGE_FLAG_HAS_HOLES) &&
        heappage_fits(page, len) && heappage_compact(page)) {
        uint16_t upper = ph->upper;
        buf_mark_dirty_op(s, id, BUF_OP_HEAP_COMPACT, &upper, sizeof(upper));
        off = heappage_add_item_in_place(page, tup, len);
        assert(off != 0);
    }
    if (off == 0) {
        /* No room even so; what pruning changed is for the log still (an
         * update's claim operation, which follows, logs the header). */
        if (pruned && hole == NULL)
            mark_page_header(s, id);
        return KEEL_OK;
    }
    h = heappage_get_item(page, off, &got);
    assert(h != NULL && got == len);
    h->next_block = blk;
    h->next_offset = off;
    if (hole != NULL) {
        /* The caller logs the tuple and the header (an update's
         * operation, which a range before it would make a whole page). */
        if (in_hole)
            *hole = heappage_lp_off(heappage_get_lp(page, off));
    } else if (!log_insert_op(
                   s, id, off,
                   in_hole ? heappage_lp_off(heappage_get_lp(page, off)) : 0)) {
        mark_page_header(s, id);
        buf_mark_dirty_range(s, id,
                             PAGE_HEADER_SIZE +
                                 (uint32_t)(off - 1) * HEAPPAGE_LP_SIZE,
                             HEAPPAGE_LP_SIZE);
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

/* The block an insert tries first (attempt 0: the hint) and then (1: the
 * relation's last), or HEAP_NO_BLOCK for none. */
static int candidate_block(heap_rel *rel, buf_session *s, int attempt,
                           blocknum_t *blk)
{
    blocknum_t n = 0;
    int rc;

    if (attempt == 0) {
        *blk = atomic_load_relaxed(&rel->hint);
        return KEEL_OK;
    }
    rc = rel_nblocks(rel, s, &n);
    *blk = n > 0 ? n - 1 : HEAP_NO_BLOCK;
    return rc;
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
        rc = place_locked(rel, s, NULL, id, blk, tup, len, out, &placed,
                          NULL);
        buf_unlock(s, id);
        if (rc == KEEL_OK && placed)
            return KEEL_OK;
        buf_release(s, id);
        target->id = BUF_INVALID;
        if (rc != KEEL_OK)
            return rc;
        goto extend; /* a bulk load that filled its page goes on anew */
    }

    for (int attempt = 0; attempt < 2; attempt++) {
        rc = candidate_block(rel, s, attempt, &blk);
        if (rc != KEEL_OK)
            return rc;
        if (blk == HEAP_NO_BLOCK || (attempt == 1 && blk == tried))
            continue;
        rc = buf_read(s, rel->relnumber, blk, &(buf_read_opts){.strategy = st},
                      &id);
        if (rc == KEEL_EEOF)
            continue; /* a stale hint past the end */
        if (rc != KEEL_OK)
            return rc;
        tried = blk;
        buf_lock(s, id, LW_EXCLUSIVE);
        rc = place_locked(rel, s, vis, id, blk, tup, len, out, &placed,
                          NULL);
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
    rc = place_locked(rel, s, NULL, id, blk, tup, len, out, &placed,
                          NULL);
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

/*
 * insert_tuple() for an update whose old version's page, block old_blk,
 * s holds exclusively locked and has no room: the new version goes on the
 * hinted block, else the last, else a new one, whose lock is taken while
 * the old page's is held, so that the update is one log record.  Heap
 * pages are locked two at a time only here, and in block order: a later
 * block is waited for, an earlier one taken only if it is free at once
 * (else *id is BUF_INVALID and nothing is placed: the caller places the
 * version with the old page unlocked).  On success *id is the new page's
 * buffer, pinned and locked, with the version at *out.
 */
static int place_beside(heap_rel *rel, buf_session *s, const visibility *vis,
                        blocknum_t old_blk, const void *tup, size_t len,
                        tid *out, int32_t *idp)
{
    blocknum_t blk, tried = old_blk;
    bool placed = false;
    int32_t id;
    int rc;

    *idp = BUF_INVALID;
    for (int attempt = 0; attempt < 2; attempt++) {
        rc = candidate_block(rel, s, attempt, &blk);
        if (rc != KEEL_OK)
            return rc;
        if (blk == HEAP_NO_BLOCK || blk == old_blk || blk == tried)
            continue;
        rc = buf_read(s, rel->relnumber, blk, NULL, &id);
        if (rc == KEEL_EEOF)
            continue; /* a stale hint past the end */
        if (rc != KEEL_OK)
            return rc;
        tried = blk;
        if (blk > old_blk) {
            buf_lock(s, id, LW_EXCLUSIVE);
        } else if (!buf_try_lock(s, id, LW_EXCLUSIVE)) {
            buf_release(s, id);
            return KEEL_OK;
        }
        rc = place_locked(rel, s, vis, id, blk, tup, len, out, &placed,
                          NULL);
        if (rc == KEEL_OK && placed)
            goto done;
        /* What pruning there changed is logged with the old page's claim:
         * a record of its own, the update's next. */
        s->log_info = WAL_INFO_HEAP_UPDATE;
        buf_unlock(s, id);
        buf_release(s, id);
        if (rc != KEEL_OK)
            return rc;
    }
    /* A new block is past every other: buf_extend() returns it locked. */
    rc = buf_extend(s, rel->relnumber, 0, NULL, &id, &blk);
    if (rc != KEEL_OK)
        return rc;
    rc = place_locked(rel, s, NULL, id, blk, tup, len, out, &placed, NULL);
    if (rc == KEEL_OK && !placed)
        rc = kerr_set(&s->err, KEEL_ECORRUPT,
                      "a tuple of %zu bytes did not fit new block %u of "
                      "relation %u",
                      len, blk, rel->relnumber);
    if (rc != KEEL_OK) {
        s->log_info = WAL_INFO_HEAP_UPDATE;
        buf_unlock(s, id);
        buf_release(s, id);
        return rc;
    }

done:
    hint_set(rel, blk);
    *idp = id;
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

/* Line off of page, or the line its REDIRECT names: where a row's chain
 * starts (heap_page.h, "Heap-only updates"). */
static inline uint16_t chain_start(const void *page, uint16_t off)
{
    heappage_lp lp;

    if (off < 1 || off > heappage_nitems(page))
        return off;
    lp = heappage_get_lp(page, off);
    return heappage_lp_state_of(lp) == HEAPPAGE_LP_REDIRECT
               ? heappage_lp_off(lp)
               : off;
}

/* Whether xmax, a version's deleter, committed before vis's snapshot was
 * taken (not the reader's own: its commands decide, in the full check). */
static int deleted_for(const visibility *vis, xid_t xmax, bool *gone,
                       kerr *err)
{
    xid_status st;
    int rc;

    *gone = false;
    if (xmax == XID_INVALID || is_own(vis->snap, xmax) ||
        snapshot_running(vis->snap, xmax))
        return KEEL_OK;
    rc = xid_status_of(vis, xmax, &st, err);
    *gone = rc == KEEL_OK && st == XID_STATUS_COMMITTED;
    return rc;
}

/* A chain's members' headers, oldest first (chain_pick()). */
static inline const heap_tuple_header *
member_at(const void *page, uint16_t n, const uint16_t *offs, uint16_t i)
{
    return tuple_at((void *)page, n, offs[i]);
}

/*
 * Under the share lock on page (block blk): the line of the version of
 * the chain at off that a fetch reads, when off is a REDIRECT or a
 * heap-only updated version (README.md, "Heap-only updates"), judged here
 * (heap page, then commit log: the documented order), which sets
 * *judged; if the snapshot sees none, the last one, for the judgement
 * after the unlock to refuse.  A line that is neither comes back as it is.
 *
 * A snapshot sees at most one version of a row, and along a chain "its
 * deleter committed before the snapshot" holds for a prefix of the
 * versions (each updater committed after the one before it), so the
 * version seen is the first one past that prefix: the newest is tried
 * first (a reader with a new snapshot pays one look-up), then a binary
 * search, and the one found is checked in full; should that fail (the
 * reader's own changes, a damaged chain), every version is judged in
 * turn.  ECORRUPT for a chain that does not end; the oracle's errors.
 */
static int chain_pick(heap_rel *rel, buf_session *s, const visibility *vis,
                      const void *page, blocknum_t blk, uint16_t off,
                      uint16_t *out, bool *judged)
{
    uint16_t n = heappage_nitems(page), offs[HEAPPAGE_MAX_LINES], k = 0;
    uint16_t lo = 0, hi;
    const heap_tuple_header *h;
    bool gone = false, visible = false;
    int rc;

    *judged = false;
    *out = off = chain_start(page, off);
    h = tuple_at((void *)page, n, off);
    if (h == NULL || n > HEAPPAGE_MAX_LINES)
        return KEEL_OK;
    offs[0] = off;
    for (uint16_t next; (next = hot_next(page, n, blk, offs[k], h)) != 0;) {
        if (k + 1 >= n)
            return kerr_set(&s->err, KEEL_ECORRUPT,
                            "relation %u: the heap-only chain through "
                            "(%u,%u) does not end",
                            rel->relnumber, blk, off);
        offs[++k] = next;
        h = tuple_at((void *)page, n, next);
    }
    /* The first version whose deleter the snapshot does not see
     * committed: the newest one's predecessor first. */
    hi = k;
    if (k > 0) {
        rc = deleted_for(vis, member_at(page, n, offs, k - 1)->xmax, &gone,
                         &s->err);
        if (rc != KEEL_OK)
            return rc;
        if (gone)
            lo = k;
        else
            hi = k - 1;
    }
    while (lo < hi) {
        uint16_t mid = (uint16_t)((lo + hi) / 2);
        rc = deleted_for(vis, member_at(page, n, offs, mid)->xmax, &gone,
                         &s->err);
        if (rc != KEEL_OK)
            return rc;
        if (gone)
            lo = (uint16_t)(mid + 1);
        else
            hi = mid;
    }
    /* The version found, judged in full; where the reader's own changes
     * are in play (command ids decide), every version in turn. */
    for (int32_t i = -1; i <= (int32_t)k; i++) {
        uint16_t at = i < 0 ? lo : (uint16_t)i;
        h = member_at(page, n, offs, at);
        *out = offs[at];
        rc = version_visible(vis, true, h->xmin, h->xmax, h->cid, &visible,
                             &s->err);
        if (rc != KEEL_OK)
            return rc;
        if (visible) {
            *judged = true;
            break;
        }
        /* Not seen, and not for the reader's own changes: then no
         * version is (an earlier one's deleter, a later one's inserter,
         * is seen committed only if this one's is). */
        if (i < 0 && !is_own(vis->snap, h->xmin) &&
            !is_own(vis->snap, h->xmax))
            break;
    }
    return KEEL_OK;
}

/* Whether the fetch of line off of page must walk a chain (chain_pick()):
 * item (len bytes) is what heappage_get_item_const() found there.  A
 * damaged item too short for a header is not read: the fetch refuses it. */
static inline bool chain_needed(const void *page, uint16_t off,
                                const void *item, size_t len)
{
    if (item != NULL)
        return len >= sizeof(heap_tuple_header) &&
               (((const heap_tuple_header *)item)->flags &
                HEAP_TUPLE_HOT_UPDATED) != 0;
    return chain_start(page, off) != off;
}

int heap_fetch(heap_rel *rel, buf_session *s, const visibility *vis, tid t,
               heap_row *row)
{
    const void *item, *page;
    size_t len = 0;
    bool damaged, judged = false;
    int32_t id;
    int rc = read_tid_block(rel, s, t, true, &id);

    if (rc != KEEL_OK)
        return rc;
    page = buf_page(s->pool, id);
    item = heappage_get_item_const(page, t.offset, &len);
    if (__builtin_expect(chain_needed(page, t.offset, item, len), 0)) {
        rc = chain_pick(rel, s, vis, page, t.block, t.offset, &t.offset,
                        &judged);
        if (rc != KEEL_OK) {
            buf_unlock_release(s, id);
            return rc;
        }
        item = heappage_get_item_const(page, t.offset, &len);
    }
    if (item != NULL)
        memcpy(row->data, item, len);
    damaged = item == NULL && heappage_item_damaged(page, t.offset);
    buf_unlock_release(s, id);
    if (item == NULL)
        return no_item(rel, t, damaged, &s->err);
    rc = row_fill(rel, row, t, len, &s->err);
    if (rc != KEEL_OK || judged)
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
                xid_t *xminp, bool stay, heap_row *row, tid *latest,
                xid_t *wait)
{
    xid_t xmin = *xminp;

    *wait = XID_INVALID;
    for (uint32_t hops = 0;; hops++) {
        const heap_tuple_header *h;
        const void *page;
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
        page = buf_page(s->pool, id);
        t.offset = chain_start(page, t.offset);
        h = heappage_get_item_const(page, t.offset, &len);
        /* Each version must be the one its predecessor's updater made:
         * a heap-only version's line is reused once it is pruned. */
        if (h != NULL && len >= sizeof(*h) && xmin != XID_INVALID &&
            h->xmin != xmin) {
            buf_unlock_release(s, id);
            return kerr_set(&s->err, KEEL_ENOENT,
                            "relation %u: the row at (%u,%u) is gone",
                            rel->relnumber, t.block, t.offset);
        }
        if (h != NULL && len >= sizeof(*h))
            *xminp = h->xmin; /* the version *latest will name */
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
            xmin = h->xmax;
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


/* heap_fetch_fate(), with the row's first version's xmin and the largest
 * xmax of its chain copied out (XID_INVALID both for a pruned one).  A
 * chain (README.md, "Heap-only updates") is judged whole: LIVE if a
 * version is, else GONE if one is, else DEAD. */
static int fetch_fate(heap_rel *rel, buf_session *s, const visibility *vis,
                      tid t, heap_fate *fate, xid_t *xmin, xid_t *xmax)
{
    const heap_tuple_header *h;
    const void *page;
    size_t len = 0;
    bool damaged = false;
    int32_t id;
    uint16_t off = t.offset, n;
    int rc = read_tid_block(rel, s, t, true, &id);

    *fate = HEAP_LIVE;
    if (rc != KEEL_OK)
        return rc;
    page = buf_session_page(s, id);
    n = heappage_nitems(page);
    off = chain_start(page, off);
    h = heappage_get_item_const(page, off, &len);
    if (h == NULL && pruned_at(page, off)) {
        *fate = HEAP_DEAD; /* xmin and xmax stay XID_INVALID */
    } else if (h == NULL) {
        damaged = heappage_item_damaged(page, off);
        rc = no_item(rel, (tid){t.block, off}, damaged, &s->err);
    } else if (len < sizeof(*h)) {
        rc = kerr_set(&s->err, KEEL_ECORRUPT,
                      "relation %u, row (%u,%u): tuple of %zu bytes is "
                      "shorter than its header",
                      rel->relnumber, t.block, off, len);
    } else {
        /* Under the lock: an update that fails after claiming the version
         * puts its xmax back before it can commit, so a deleter read here
         * is still running if it is not to be the version's for good. */
        bool gone = false;
        *xmin = h->xmin;
        *xmax = XID_INVALID;
        for (uint16_t hops = 0;; hops++) {
            heap_fate f;
            uint16_t next;
            if (hops == n) {
                rc = kerr_set(&s->err, KEEL_ECORRUPT,
                              "relation %u: the heap-only chain through "
                              "(%u,%u) does not end",
                              rel->relnumber, t.block, off);
                break;
            }
            if (h->xmax > *xmax)
                *xmax = h->xmax;
            rc = heap_tuple_fate(vis, h->xmin, h->xmax, &f, &s->err);
            if (rc != KEEL_OK || f == HEAP_LIVE) {
                *fate = HEAP_LIVE; /* its xids, for heap_fetch_running() */
                *xmin = h->xmin;
                *xmax = h->xmax;
                break;
            }
            gone |= f == HEAP_GONE;
            *fate = gone ? HEAP_GONE : HEAP_DEAD;
            next = hot_next(page, n, t.block, off, h);
            if (next == 0)
                break;
            off = next;
            h = tuple_at((void *)page, n, off);
        }
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

int heap_fetch_running(heap_rel *rel, buf_session *s, const visibility *vis,
                       tid t, heap_fate *fate, xid_t *running)
{
    xid_t xmin = XID_INVALID, xmax = XID_INVALID;
    xid_status st = XID_STATUS_COMMITTED;
    int rc = fetch_fate(rel, s, vis, t, fate, &xmin, &xmax);

    *running = XID_INVALID;
    if (rc != KEEL_OK || *fate != HEAP_LIVE)
        return rc;
    /* Still in the process array, though the commit log may say it
     * committed already: no snapshot sees its end yet. */
    if (xmin >= XID_FIRST_NORMAL && !is_own(vis->snap, xmin) &&
        (vis->in_array != NULL ? vis->in_array(vis->status_ctx, xmin)
                               : (rc = xid_status_of(vis, xmin, &st,
                                                     &s->err)) == KEEL_OK &&
                                     st == XID_STATUS_IN_PROGRESS)) {
        *running = xmin;
        return KEEL_OK;
    }
    if (rc == KEEL_OK && xmax >= XID_FIRST_NORMAL && !is_own(vis->snap, xmax) &&
        (vis->in_array != NULL ? vis->in_array(vis->status_ctx, xmax)
                               : (rc = xid_status_of(vis, xmax, &st,
                                                     &s->err)) == KEEL_OK &&
                                     st == XID_STATUS_IN_PROGRESS))
        *running = xmax;
    return rc;
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
    bool fits = false, ok = false, damaged = false, judged = false;
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
    if (__builtin_expect(
            chain_needed(buf_session_page(s, id), t.offset, h, len), 0)) {
        rc = chain_pick(rel, s, vis, buf_session_page(s, id), t.block,
                        t.offset, &t.offset, &judged);
        if (rc != KEEL_OK) {
            buf_unlock_release(s, id);
            return rc;
        }
        h = heappage_get_item_const(buf_session_page(s, id), t.offset, &len);
    }
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
    if (judged)
        return KEEL_OK;
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
    if (nh->flags & HEAP_TUPLE_HEAP_ONLY) /* nothing else names it */
        (void)heappage_prune_items(page, NULL, NULL, 0, NULL, 0, &next, 1,
                                   NULL, 0);
    else
        (void)heappage_remove_items(page, &next, 1, NULL, 0);
    atomic_fetch_add_explicit(&rel->pruned, 1, memory_order_relaxed);
}

/*
 * Pins and exclusively locks the page of t and checks that the version
 * there may be deleted or updated by vis's transaction: it is visible to
 * the snapshot (ENOENT otherwise, which covers one this transaction has
 * deleted), it has no xmax unless that transaction aborted (ESERIALIZE
 * otherwise: the deleter is running, or committed after the snapshot,
 * since the version is still visible), and no other running transaction
 * holds a row lock of mode conflict or stronger on it (ESERIALIZE,
 * the holder in *vis->locker: txn/rowlock.h).  With conflict 0 (a row
 * lock to take, heap_lock_row()) the page is locked shared and holders
 * are left to rowlock_add().
 * ECORRUPT if the page is not a heap page.  On success returns the buffer
 * in *id, pinned and locked, and the version's header in *out; on error
 * holds nothing.
 */
static int lock_for_write_once(heap_rel *rel, buf_session *s,
                               const visibility *vis, tid t, const char *verb,
                               int conflict, int32_t *idp,
                               heap_tuple_header **out, xid_t *running)
{
    /* conflict: 0 to take a shared lock, else the weakest row lock
     * (rowlock_mode) that holds this write off */
    bool share = conflict == 0;
    heap_tuple_header *h;
    xid_status st = XID_STATUS_IN_PROGRESS;
    size_t len = 0;
    bool visible = false;
    int32_t id;
    int rc = read_tid_block(rel, s, t, false, &id);

    if (rc != KEEL_OK)
        return rc;
    buf_lock(s, id, share ? LW_SHARED : LW_EXCLUSIVE);
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
    }
    /* A writer waits for the running holders of shared locks on the
     * version (txn/rowlock.h), found under this exclusive lock as they
     * added themselves under a shared one. */
    if (!share && vis->rowlocks != NULL) {
        xid_t holder = rowlock_holder(vis->rowlocks, rel->relnumber, t.block,
                                      t.offset, vis->snap->own_xid,
                                      (rowlock_mode)conflict);
        if (holder != XID_INVALID) {
            if (vis->locker != NULL)
                *vis->locker = holder;
            else
                *running = holder;
            if (vis->locker == NULL && vis->met != NULL)
                *vis->met = (write_conflict){.xid = holder};
            rc = kerr_set(&s->err, KEEL_ESERIALIZE,
                          "could not serialize access: relation %u row "
                          "(%u,%u) is locked by transaction %u, which is "
                          "still in progress",
                          rel->relnumber, t.block, t.offset, holder);
            goto fail;
        }
    }
    if (!share && h->xmax != XID_INVALID)
        drop_aborted_successor(rel, s, id, buf_page(s->pool, id), t.block,
                               t.offset, h);
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
                          tid t, const char *verb, int conflict, int32_t *idp,
                          heap_tuple_header **out)
{
    xid_t running = XID_INVALID;
    int rc =
        lock_for_write_once(rel, s, vis, t, verb, conflict, idp, out, &running);

    if (rc == KEEL_ESERIALIZE && running != XID_INVALID &&
        vis->conflict != NULL && vis->met == NULL)
        vis->conflict(vis->status_ctx, running);
    return rc;
}

int heap_lock_row(heap_rel *rel, buf_session *s, const visibility *vis,
                  xid_t xid, tid t, rowlock_mode mode)
{
    heap_tuple_header *h;
    xid_t holder = XID_INVALID;
    int32_t id;
    int rc = check_writer(rel, s, vis, xid);

    if (rc == KEEL_OK && vis->rowlocks == NULL)
        rc = kerr_set(&s->err, KEEL_EINVAL,
                      "relation %u: no table of row locks to lock (%u,%u) in",
                      rel->relnumber, t.block, t.offset);
    if (rc == KEEL_OK)
        rc = lock_for_write(rel, s, vis, t, "lock", 0, &id, &h);
    if (rc != KEEL_OK)
        return rc;
    rc = rowlock_add(vis->rowlocks, vis->rowlock_owner, rel->relnumber,
                     t.block, t.offset, xid, mode, &holder, &s->err);
    buf_unlock(s, id);
    buf_release(s, id);
    if (rc == KEEL_EBUSY) {
        /* a conflicting lock: its holder is waited for as a writer is */
        rc = kerr_set(&s->err, KEEL_ESERIALIZE,
                      "could not serialize access: relation %u row (%u,%u) "
                      "is locked by transaction %u, which is still in "
                      "progress",
                      rel->relnumber, t.block, t.offset, (unsigned)holder);
        if (vis->locker != NULL)
            *vis->locker = holder;
        else if (vis->met != NULL)
            *vis->met = (write_conflict){.xid = holder};
        else if (vis->conflict != NULL)
            vis->conflict(vis->status_ctx, holder);
    }
    return rc;
}

int heap_delete(heap_rel *rel, buf_session *s, const visibility *vis, xid_t xid,
                tid t)
{
    return heap_delete_cid(rel, s, vis, xid, t, NULL);
}

int heap_delete_cid(heap_rel *rel, buf_session *s, const visibility *vis,
                    xid_t xid, tid t, uint32_t *old_cid)
{
    heap_tuple_header *h;
    cid_t cmd = vis->cids != NULL ? vis->cids->current : CID_FIRST;
    uint32_t word = 0;
    int32_t id;
    int rc = check_writer(rel, s, vis, xid);

    if (rc == KEEL_OK)
        rc = lock_for_write(rel, s, vis, t, "delete", ROWLOCK_KEY_SHARE, &id,
                            &h);
    if (rc != KEEL_OK)
        return rc;
    rc = cmax_word(vis, h, cmd, &word, &s->err);
    if (rc != KEEL_OK) {
        buf_unlock(s, id);
        buf_release(s, id);
        return rc;
    }
    (void)cid_stamp(vis->cids);
    if (old_cid != NULL)
        *old_cid = h->cid;
    h->xmax = xid;
    h->cid = word;
    h->flags &= (uint16_t) ~(HEAP_TUPLE_XMAX_UPDATE | HEAP_TUPLE_HOT_UPDATED);
    h->next_block = t.block; /* an aborted updater may have left its own */
    h->next_offset = t.offset;
    claim_noted(buf_page(s->pool, id), t.offset);
    s->log_info = WAL_INFO_HEAP_DELETE;
    s->log_xid = xid;
    log_claim_op(s, id, t.offset);
    buf_unlock(s, id);
    buf_release(s, id);
    return KEEL_OK;
}

/* An update's link to its new version is logged as these six bytes. */
_Static_assert(offsetof(heap_tuple_header, next_offset) ==
                   offsetof(heap_tuple_header, next_block) + sizeof(blocknum_t),
               "a version's next tid is one range");

/* Notes for the log the new version just added at off of buffer id with
 * nothing else moving, beside its old version at like: the page header,
 * its line pointer, and its bytes as a copy of the old one's
 * (buf_mark_dirty_like()). */
static void note_placed(buf_session *s, int32_t id, uint16_t off,
                        uint16_t like)
{
    const char *page = buf_page(s->pool, id);
    size_t len = 0, old_len = 0;
    const char *item = heappage_get_item((void *)page, off, &len);
    const char *old = heappage_get_item((void *)page, like, &old_len);

    mark_page_header(s, id);
    buf_mark_dirty_range(s, id,
                         PAGE_HEADER_SIZE + (uint32_t)(off - 1) * HEAPPAGE_LP_SIZE,
                         HEAPPAGE_LP_SIZE);
    buf_mark_dirty_like(s, id, (uint32_t)(item - page), (uint32_t)len,
                        (uint32_t)(old - page), (uint32_t)old_len);
}

/*
 * heap_update(), and with hold (heap_update_held()) the pages of both
 * versions left pinned in it.
 */
static int update_tuple(heap_rel *rel, buf_session *s, const visibility *vis,
                        xid_t xid, tid t, const keel_value *values,
                        bool hot_ok, tid *new_tid, heap_update_hold *hold)
{
    heap_tuple_header *h, saved;
    insert_target target = {BUF_INVALID, HEAP_NO_BLOCK};
    tuple_buf buf;
    cid_t cmd = vis->cids != NULL ? vis->cids->current : CID_FIRST;
    uint32_t word = 0;
    size_t len = 0, got; /* len: set by form_tuple() */
    bool placed = false;
    uint16_t hole = 0;
    tid nt = TID_INVALID;
    int32_t id;
    int rc;

    rc = check_writer(rel, s, vis, xid);
    if (rc == KEEL_OK)
        rc = form_tuple(rel, values, xid, cmd, &buf, &len, &s->err);
    if (rc == KEEL_OK)
        rc = lock_for_write(rel, s, vis, t, "update",
                            vis->keeps_key ? ROWLOCK_SHARE : ROWLOCK_KEY_SHARE,
                            &id, &h);
    if (rc != KEEL_OK)
        return rc;
    rc = cmax_word(vis, h, cmd, &word, &s->err);
    if (rc != KEEL_OK) {
        buf_unlock(s, id);
        buf_release(s, id);
        return rc;
    }
    (void)cid_stamp(vis->cids);

    /* Claim the old version, and try to put the new one beside it
     * (heap-only, if no index key changes). */
    saved = *h;
    h->xmax = xid;
    h->cid = word;
    h->flags |= HEAP_TUPLE_XMAX_UPDATE;
    h->flags &= (uint16_t)~HEAP_TUPLE_HOT_UPDATED; /* an aborted one's */
    h->next_block = t.block;
    h->next_offset = t.offset;
    if (hot_ok)
        ((heap_tuple_header *)buf.b)->flags |= HEAP_TUPLE_HEAP_ONLY;
    /* Room without pruning: nothing else on the page moves, and the log
     * takes the update as one operation (log_update_op()). */
    nt.offset = heappage_add_item_in_place(buf_page(s->pool, id), buf.b, len);
    if (nt.offset != 0) {
        heap_tuple_header *nh =
            heappage_get_item(buf_page(s->pool, id), nt.offset, &got);
        nh->next_block = nt.block = t.block;
        nh->next_offset = nt.offset;
        placed = true;
    } else {
        rc = place_locked(rel, s, vis, id, t.block, buf.b, len, &nt, &placed,
                          &hole);
        assert(rc == KEEL_OK); /* the page was a heap page a moment ago */
    }
    /* Set after placing: pruning for this update has nothing to gain from
     * its own claim, and would pass over a page of untouched rows for it. */
    claim_noted(buf_page(s->pool, id), t.offset);
    if (placed) {
        /* Pruning may have moved it (never removed it: its deleter runs). */
        h = heappage_get_item(buf_page(s->pool, id), t.offset, &got);
        assert(h != NULL && h->xmax == xid);
        h->next_offset = nt.offset;
        if (hot_ok) {
            h->flags |= HEAP_TUPLE_HOT_UPDATED;
            atomic_fetch_add_explicit(&rel->hot_updates, 1,
                                      memory_order_relaxed);
        }
        if (!log_update_op(s, id, t.block, t.offset, nt.offset, hole, xid)) {
            note_placed(s, id, nt.offset, t.offset);
            mark_tuple_header(s, id, h);
        }
        s->log_info = WAL_INFO_HEAP_UPDATE;
        s->log_xid = xid;
        buf_unlock(s, id);
        if (hold != NULL) {
            (void)buf_pin(s, id); /* one for each version (held already:
                                     cannot fail) */
            *hold = (heap_update_hold){id, id, t, nt, saved.cid, hot_ok};
        } else {
            buf_release(s, id);
        }
        *new_tid = nt;
        return KEEL_OK;
    }
    log_claim_op(s, id, t.offset);
    s->log_info = WAL_INFO_HEAP_UPDATE;
    s->log_xid = xid;
    ((heap_tuple_header *)buf.b)->flags &= (uint16_t)~HEAP_TUPLE_HEAP_ONLY;

    /* No room here: on another page locked beside this one, the claim,
     * the new version and the link are one record. */
    rc = place_beside(rel, s, vis, t.block, buf.b, len, &nt, &target.id);
    if (rc == KEEL_OK && target.id != BUF_INVALID) {
        h = heappage_get_item(buf_page(s->pool, id), t.offset, &got);
        assert(h != NULL && h->xmax == xid);
        h->next_block = nt.block;
        h->next_offset = nt.offset;
        buf_mark_dirty_range(
            s, id,
            (uint32_t)((char *)&h->next_block - (char *)buf_page(s->pool, id)),
            sizeof(h->next_block) + sizeof(h->next_offset));
        s->log_info = WAL_INFO_HEAP_UPDATE;
        s->log_xid = xid;
        buf_unlock(s, target.id); /* the record of both pages */
        buf_unlock(s, id);
        if (hold != NULL) {
            *hold = (heap_update_hold){id, target.id, t, nt, saved.cid, false};
        } else {
            buf_release(s, target.id);
            buf_release(s, id);
        }
        *new_tid = nt;
        return KEEL_OK;
    }
    if (rc == KEEL_OK) {
        s->log_info = WAL_INFO_HEAP_UPDATE;
        s->log_xid = xid;
        buf_unlock(s, id);
        atomic_fetch_add_explicit(&rel->apart, 1, memory_order_relaxed);
        /*
         * An earlier page that was busy: place it elsewhere with no lock
         * held, then come back.  Our running xid in the old version's
         * xmax keeps every other writer off it meanwhile.
         */
        rc = insert_tuple(rel, s, vis, NULL, hold != NULL ? &target : NULL,
                          buf.b, len, &nt);
    } else {
        s->log_info = WAL_INFO_HEAP_UPDATE;
        s->log_xid = xid;
        buf_unlock(s, id);
    }
    buf_lock(s, id, LW_EXCLUSIVE);
    h = heappage_get_item(buf_page(s->pool, id), t.offset, &got);
    assert(h != NULL && h->xmax == xid);
    if (rc == KEEL_OK) {
        /* The link alone: the claim, logged already, made the rest. */
        h->next_block = nt.block;
        h->next_offset = nt.offset;
        buf_mark_dirty_range(
            s, id,
            (uint32_t)((char *)&h->next_block - (char *)buf_page(s->pool, id)),
            sizeof(h->next_block) + sizeof(h->next_offset));
    } else {
        h->xmax = saved.xmax;
        h->cid = saved.cid;
        h->flags = saved.flags;
        h->next_block = saved.next_block;
        h->next_offset = saved.next_offset;
        mark_tuple_header(s, id, h);
    }
    s->log_info = WAL_INFO_HEAP_UPDATE;
    s->log_xid = xid;
    buf_unlock(s, id);
    if (rc == KEEL_OK && hold != NULL)
        *hold = (heap_update_hold){id, target.id, t, nt, saved.cid, false};
    else
        buf_release(s, id);
    if (rc == KEEL_OK)
        *new_tid = nt;
    return rc;
}

int heap_update(heap_rel *rel, buf_session *s, const visibility *vis, xid_t xid,
                tid t, const keel_value *values, tid *new_tid)
{
    return update_tuple(rel, s, vis, xid, t, values, false, new_tid, NULL);
}

int heap_update_held(heap_rel *rel, buf_session *s, const visibility *vis,
                     xid_t xid, tid t, const keel_value *values, bool hot_ok,
                     tid *new_tid, heap_update_hold *hold)
{
    return update_tuple(rel, s, vis, xid, t, values, hot_ok, new_tid, hold);
}

uint64_t heap_hot_updates(const heap_rel *rel)
{
    return atomic_load_explicit(&rel->hot_updates, memory_order_relaxed);
}

uint64_t heap_updates_apart(const heap_rel *rel)
{
    return atomic_load_explicit(&rel->apart, memory_order_relaxed);
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
    claim_noted(buf_page(s->pool, hold->new_id), hold->new_tid.offset);
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
    h->flags &= (uint16_t) ~(HEAP_TUPLE_XMAX_UPDATE | HEAP_TUPLE_HOT_UPDATED);
    h->next_block = hold->old_tid.block;
    h->next_offset = hold->old_tid.offset;
    buf_mark_dirty(s, hold->old_id);
    buf_unlock(s, hold->old_id);
    heap_update_release(s, hold);
}

/*
 * The version at t, under its page's exclusive lock, for taking back a
 * change transaction xid made to it: ECORRUPT unless it is there and
 * check (its inserter's, or its deleter's) is xid.
 */
static int undo_lock(heap_rel *rel, buf_session *s, xid_t xid, tid t,
                     bool by_inserter, int32_t *idp, heap_tuple_header **out)
{
    heap_tuple_header *h;
    size_t len = 0;
    int32_t id;
    int rc = read_tid_block(rel, s, t, false, &id);

    if (rc != KEEL_OK)
        return rc;
    buf_lock(s, id, LW_EXCLUSIVE);
    h = heappage_get_item(buf_page(s->pool, id), t.offset, &len);
    if (h == NULL || len < sizeof(*h) ||
        (by_inserter ? h->xmin : h->xmax) != xid ||
        (by_inserter && h->xmax != XID_INVALID)) {
        buf_unlock(s, id);
        buf_release(s, id);
        return kerr_set(&s->err, KEEL_ECORRUPT,
                        "relation %u: the row version at (%u,%u) is not as "
                        "transaction %u left it: its change cannot be taken "
                        "back",
                        rel->relnumber, t.block, t.offset, (unsigned)xid);
    }
    *idp = id;
    *out = h;
    return KEEL_OK;
}

/* Logs the version at off of buffer id as taken back, and lets it go. */
static void undo_done(buf_session *s, xid_t xid, int32_t id, uint16_t off)
{
    s->log_info = WAL_INFO_HEAP_UNDO;
    s->log_xid = xid;
    log_claim_op(s, id, off);
    buf_unlock(s, id);
    buf_release(s, id);
}

int heap_undo_insert(heap_rel *rel, buf_session *s, xid_t xid, tid t)
{
    heap_tuple_header *h;
    int32_t id;
    int rc = undo_lock(rel, s, xid, t, true, &id, &h);

    if (rc != KEEL_OK)
        return rc;
    /* Deleted by its inserter, its cmin serving as cmax: seen by none. */
    h->xmax = xid;
    h->flags &= (uint16_t) ~(HEAP_TUPLE_XMAX_UPDATE | HEAP_TUPLE_HOT_UPDATED);
    h->next_block = t.block;
    h->next_offset = t.offset;
    claim_noted(buf_page(s->pool, id), t.offset);
    undo_done(s, xid, id, t.offset);
    return KEEL_OK;
}

int heap_undo_claim(heap_rel *rel, buf_session *s, xid_t xid, tid t,
                    uint32_t old_cid)
{
    heap_tuple_header *h;
    int32_t id;
    int rc = undo_lock(rel, s, xid, t, false, &id, &h);

    if (rc != KEEL_OK)
        return rc;
    h->xmax = XID_INVALID;
    h->cid = old_cid;
    h->flags &= (uint16_t) ~(HEAP_TUPLE_XMAX_UPDATE | HEAP_TUPLE_HOT_UPDATED);
    h->next_block = t.block;
    h->next_offset = t.offset;
    undo_done(s, xid, id, t.offset);
    return KEEL_OK;
}

int heap_cas_int8(heap_rel *rel, buf_session *s, const visibility *vis,
                  tid t, xid_t xmin, uint16_t col, int64_t expect, int64_t set,
                  int64_t *actual)
{
    const tuple_attr *a = col < rel->desc->natts ? &rel->desc->attrs[col]
                                                 : NULL;
    heap_tuple_header *h;
    size_t len = 0;
    int64_t cur;
    char *page;
    int32_t id;
    int rc;

    if (a == NULL || a->type != KEEL_INT8 || a->fixed_off < 0 || !a->notnull)
        return kerr_set(&s->err, KEEL_EINVAL,
                        "relation %u: column %u is not an int8 NOT NULL at a "
                        "fixed place in the row",
                        rel->relnumber, (unsigned)col + 1);
    rc = read_tid_block(rel, s, t, false, &id);
    if (rc != KEEL_OK)
        return rc;
    buf_lock(s, id, LW_EXCLUSIVE);
    page = buf_page(s->pool, id);
    h = heappage_get_item(page, t.offset, &len);
    /* The version looked up, still there: pruning may have reused its
     * line since, for a version of another inserter. */
    if (h == NULL || len < sizeof(*h) || h->xmin != xmin ||
        (h->flags & HEAP_TUPLE_HAS_NULLS) ||
        (size_t)h->hoff + (size_t)a->fixed_off + sizeof(cur) > len) {
        buf_unlock(s, id);
        buf_release(s, id);
        return kerr_set(&s->err, KEEL_ENOENT,
                        "relation %u: the row at (%u,%u) is gone",
                        rel->relnumber, t.block, t.offset);
    }
    /* A version another transaction replaced (or is replacing) is no
     * longer the counter: its successor holds the value from then on. */
    if (h->xmax != XID_INVALID && !is_own(vis->snap, h->xmax)) {
        xid_status st = XID_STATUS_IN_PROGRESS;
        rc = xid_status_of(vis, h->xmax, &st, &s->err);
        if (rc == KEEL_OK && st != XID_STATUS_ABORTED)
            rc = kerr_set(&s->err, KEEL_ESERIALIZE,
                          "could not serialize access: relation %u row "
                          "(%u,%u) was changed by transaction %u, which %s",
                          rel->relnumber, t.block, t.offset, h->xmax,
                          st == XID_STATUS_COMMITTED
                              ? "committed after this transaction's snapshot"
                              : "is still in progress");
        if (rc != KEEL_OK) {
            buf_unlock(s, id);
            buf_release(s, id);
            return rc;
        }
    }
    memcpy(&cur, (char *)h + h->hoff + a->fixed_off, sizeof(cur));
    *actual = cur;
    if (cur == expect) {
        memcpy((char *)h + h->hoff + a->fixed_off, &set, sizeof(set));
        s->log_info = WAL_INFO_PAGE;
        s->log_xid = XID_INVALID;
        buf_mark_dirty_range(
            s, id, (uint32_t)((char *)h + h->hoff + a->fixed_off - page),
            sizeof(set));
    }
    buf_unlock(s, id);
    buf_release(s, id);
    return KEEL_OK;
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
    sc->roots_blk = HEAP_NO_BLOCK;
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
    sc->roots_blk = HEAP_NO_BLOCK;
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

/* sc->root[] for the page in sc->page: every chain walked from its root
 * (a NORMAL indexed version, or a REDIRECT), each member given the root's
 * line; 0 for a line no root reaches. */
static void scan_roots(heap_scan *sc)
{
    void *page = sc->page.b;
    uint16_t n = sc->nitems;

    memset(sc->root, 0, ((size_t)n + 1) * sizeof(sc->root[0]));
    for (uint16_t off = 1; off <= n; off++) {
        heappage_lp lp = heappage_get_lp(page, off);
        heap_tuple_header *h;
        uint16_t cur = off;

        if (heappage_lp_state_of(lp) == HEAPPAGE_LP_REDIRECT)
            cur = heappage_lp_off(lp);
        else if ((h = tuple_at(page, n, off)) == NULL ||
                 (h->flags & HEAP_TUPLE_HEAP_ONLY))
            continue;
        for (uint16_t hops = 0; cur != 0 && hops < n; hops++) {
            h = tuple_at(page, n, cur);
            if (h == NULL || sc->root[cur] != 0)
                break;
            sc->root[cur] = off;
            cur = hot_next(page, n, sc->blk, cur, h);
        }
    }
    sc->roots_blk = sc->blk;
}

int heap_scan_root(heap_scan *sc, tid t, tid *root)
{
    const heap_tuple_header *h;
    size_t len = 0;

    *root = t;
    if (!sc->have_page || t.block != sc->blk)
        return kerr_set(&sc->s->err, KEEL_EINVAL,
                        "relation %u: (%u,%u) is not on the scan's page",
                        sc->rel->relnumber, t.block, t.offset);
    h = heappage_get_item_const(sc->page.b, t.offset, &len);
    if (h == NULL || len < sizeof(*h) || !(h->flags & HEAP_TUPLE_HEAP_ONLY))
        return KEEL_OK;
    if (sc->roots_blk != sc->blk)
        scan_roots(sc);
    if (sc->root[t.offset] == 0)
        return kerr_set(&sc->s->err, KEEL_ECORRUPT,
                        "relation %u: heap-only version (%u,%u) is on no "
                        "chain from an indexed version",
                        sc->rel->relnumber, t.block, t.offset);
    root->offset = sc->root[t.offset];
    return KEEL_OK;
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
