/*
 * buf_log.c: building the log records of page changes at unlock, and
 * replaying them in recovery.  The format and the rules are in
 * buf_log.h.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/buf_log.h"
#include "storage/buf_pool.h"
#include "storage/page.h"

/* Room for the block references, operation and range tables of one
 * record, and its parts. */
#define HDR_ROOM                                                               \
    (4 + BUF_LOG_MAX_PAGES *                                                   \
             (sizeof(buf_log_block) + 4 + 4 * BUF_LOG_MAX_RANGES))
#define MAX_PARTS (1 + BUF_LOG_MAX_PAGES * (4 + BUF_LOG_MAX_RANGES))

static buf_log_op_fn op_fns[BUF_OP_COUNT];

void buf_log_register_op(uint8_t op, buf_log_op_fn fn)
{
    if (op > 0 && op < BUF_OP_COUNT)
        op_fns[op] = fn;
}

bool buf_log_op_known(uint8_t op)
{
    return op > 0 && op < BUF_OP_COUNT && op_fns[op] != NULL;
}

bool buf_log_run_ops(void *page, const char *ops, uint16_t bytes,
                     uint16_t count)
{
    const char *p = ops, *lim = ops + bytes;

    for (uint16_t i = 0; i < count; i++) {
        uint16_t len;
        uint8_t op;
        if (lim - p < 4)
            return false;
        op = (uint8_t)p[0];
        memcpy(&len, p + 2, 2);
        if (lim - p < 4 + (ptrdiff_t)((len + 1u) & ~1u) ||
            !buf_log_op_known(op) || !op_fns[op](page, p + 4, len))
            return false;
        p += 4 + ((len + 1u) & ~1u);
    }
    return p == lim;
}

/* The hole of a whole image: [lower, upper) if the header is sane, else
 * none. */
static void page_hole(const page_header *ph, uint16_t *lower, uint16_t *upper)
{
    if (ph->lower >= PAGE_HEADER_SIZE && ph->lower <= ph->upper &&
        ph->upper <= BLOCK_SIZE) {
        *lower = ph->lower;
        *upper = ph->upper;
    } else {
        *lower = BLOCK_SIZE;
        *upper = BLOCK_SIZE;
    }
}

/*
 * Builds the record of the pending pages against redo pointer redo, in
 * parts (pointing into hdrs and into the pages); returns the part count
 * and the body's length in *total.
 */
static int build(buf_session *s, uint64_t redo, char *hdrs, struct iovec *parts,
                 uint32_t *total)
{
    char *h = hdrs;
    int n = 0;
    uint16_t nblocks = (uint16_t)s->log_npending, zero = 0;

    *total = 0;
    memcpy(h, &nblocks, 2);
    memcpy(h + 2, &zero, 2);
    parts[n++] = (struct iovec){h, 4};
    h += 4;
    *total += 4;
    for (uint32_t i = 0; i < s->log_npending; i++) {
        buf_log_pending *e = &s->log_pending[i];
        char *page = buf_page(s->pool, e->id);
        const page_header *ph = (const page_header *)page;
        buf_log_block b;
        relnumber_t rel;
        blocknum_t blk;

        memset(&b, 0, sizeof(b));
        buf_block_of(s->pool, e->id, &rel, &blk);
        b.rel = rel;
        b.blk = blk;
        if (e->nranges == BUF_LOG_WHOLE || (e->nranges == 0 && e->nops == 0) ||
            ph->lsn <= redo) {
            b.flags = BUF_LOG_FULL;
            if (ph->upper == 0 && page_is_new(page))
                b.flags |= BUF_LOG_ZERO;
            else
                page_hole(ph, &b.lower, &b.upper);
            memcpy(h, &b, sizeof(b));
            parts[n++] = (struct iovec){h, sizeof(b)};
            h += sizeof(b);
            *total += sizeof(b);
            if (!(b.flags & BUF_LOG_ZERO)) {
                parts[n++] = (struct iovec){page, b.lower};
                parts[n++] = (struct iovec){page + b.upper,
                                            (size_t)(BLOCK_SIZE - b.upper)};
                *total += b.lower + (BLOCK_SIZE - b.upper);
            }
            continue;
        }
        b.nranges = e->nranges;
        if (e->nops > 0) {
            uint16_t nops = e->nops;
            b.flags = BUF_LOG_OPS;
            memcpy(h, &b, sizeof(b));
            memcpy(h + sizeof(b), &e->op_len, 2);
            memcpy(h + sizeof(b) + 2, &nops, 2);
            parts[n++] = (struct iovec){h, sizeof(b) + 4};
            parts[n++] = (struct iovec){s->log_opbuf + e->op_start, e->op_len};
            h += sizeof(b) + 4;
            *total += (uint32_t)sizeof(b) + 4u + e->op_len;
        } else {
            memcpy(h, &b, sizeof(b));
            parts[n++] = (struct iovec){h, sizeof(b)};
            h += sizeof(b);
            *total += (uint32_t)sizeof(b);
        }
        for (uint32_t k = 0; k < e->nranges; k++) {
            memcpy(h + 4 * k, &e->off[k], 2);
            memcpy(h + 4 * k + 2, &e->len[k], 2);
        }
        if (e->nranges > 0)
            parts[n++] = (struct iovec){h, 4u * e->nranges};
        h += 4u * e->nranges;
        *total += 4u * e->nranges;
        for (uint32_t k = 0; k < e->nranges; k++) {
            parts[n++] = (struct iovec){page + e->off[k], e->len[k]};
            *total += e->len[k];
        }
    }
    assert(h - hdrs <= (ptrdiff_t)HDR_ROOM);
    assert(n <= MAX_PARTS);
    return n;
}

#ifndef NDEBUG
void buf_log_shadow_load(buf_pool *p, int32_t id, bool ok)
{
    if (p->log_shadow == NULL)
        return;
    if (ok)
        memcpy(p->log_shadow + (size_t)id * BLOCK_SIZE, buf_page(p, id),
               BLOCK_SIZE);
    p->log_shadow_ok[id] = ok;
}

/* The first byte past the LSN and checksum where a and b differ, or -1. */
static int shadow_diff(const char *a, const char *b)
{
    for (int i = 12; i < BLOCK_SIZE; i++)
        if (a[i] != b[i])
            return i;
    return -1;
}

void buf_log_shadow_check(buf_pool *p, int32_t id, const void *page)
{
    int at;

    if (p->log_shadow == NULL || !p->log_shadow_ok[id])
        return;
    at = shadow_diff(p->log_shadow + (size_t)id * BLOCK_SIZE, page);
    if (at >= 0) {
        relnumber_t rel;
        blocknum_t blk;
        buf_block_of(p, id, &rel, &blk);
        fprintf(stderr,
                "relation %u block %u changed at byte %d with no log record "
                "of it\n",
                rel, blk, at);
        abort();
    }
}

/* After a record: its changes applied to the shadows of its pages must
 * give the pages. */
static void shadow_apply(buf_session *s)
{
    buf_pool *p = s->pool;

    if (p->log_shadow == NULL)
        return;
    for (uint32_t i = 0; i < s->log_npending; i++) {
        buf_log_pending *e = &s->log_pending[i];
        char *sh = p->log_shadow + (size_t)e->id * BLOCK_SIZE;
        const char *page = buf_page(p, e->id);
        if (p->log_shadow_ok[e->id] && e->nranges != BUF_LOG_WHOLE) {
            if (e->nops > 0 &&
                !buf_log_run_ops(sh, s->log_opbuf + e->op_start, e->op_len,
                                 e->nops)) {
                fprintf(stderr, "a logged operation fails on its own page\n");
                abort();
            }
            for (uint32_t k = 0; k < e->nranges; k++)
                memcpy(sh + e->off[k], page + e->off[k], e->len[k]);
            buf_log_shadow_check(p, e->id, page);
        }
        buf_log_shadow_load(p, e->id, true);
    }
}
#endif

void buf_log_emit(buf_session *s)
{
    wal *w = s->pool->wal;
    char hdrs[HDR_ROOM];
    struct iovec parts[MAX_PARTS];
    uint64_t redo, end = 0;
    uint32_t total;
    kerr e;
    int n, rc;

    if (s->log_npending == 0)
        return;
    redo = wal_redo_hint(w);
    do {
        n = build(s, redo, hdrs, parts, &total);
        rc = wal_insert(w, (uint32_t)((uintptr_t)s >> 6), WAL_PAGES,
                        s->log_info, s->log_xid, parts, n, total, &redo, &end,
                        &e);
    } while (rc == KEEL_EBUSY);
    if (rc == KEEL_OK) {
#ifndef NDEBUG
        shadow_apply(s);
#endif
        for (uint32_t i = 0; i < s->log_npending; i++) {
            page_header *ph = buf_page(s->pool, s->log_pending[i].id);
            /* A page put back to zeroes stays recognizably new (no LSN):
             * only a page that was new before is zeroed (a split undone),
             * so writing it early loses nothing. */
            if (ph->version != 0)
                ph->lsn = end;
        }
        s->log_last = end;
    }
    /* A failed log refuses every later write (wal_flush() in the pool's
     * writes), so the pages' unlogged changes never reach disk. */
    s->log_npending = 0;
    s->log_opused = 0;
    s->log_info = WAL_INFO_PAGE;
    s->log_xid = 0;
}

int buf_log_file_create(buf_session *s, relnumber_t rel)
{
    wal_file_body f = {rel, 0};
    struct iovec part = {&f, sizeof(f)};
    uint64_t end;

    if (s->pool->wal == NULL || s->log_off)
        return KEEL_OK;
    return wal_insert(s->pool->wal, (uint32_t)((uintptr_t)s >> 6),
                      WAL_FILE_CREATE, 0, 0, &part, 1, sizeof(f), NULL, &end,
                      &s->err);
}

/* ---- redo ---------------------------------------------------------- */

/* Reads block blk of rel for redo, making the file and the blocks up to
 * it if a crash lost them; with zero, a miss reads nothing. */
static int redo_read(buf_session *s, relnumber_t rel, blocknum_t blk, bool zero,
                     int32_t *id)
{
    smgr *sm = buf_pool_smgr(s->pool);
    smgr_rel *r;
    int rc = KEEL_OK;

    if (!smgr_exists(sm, rel))
        rc = smgr_create(sm, rel, NULL, &s->err);
    if (rc == KEEL_OK)
        rc = smgr_rel_open(sm, rel, &r, &s->err);
    while (rc == KEEL_OK && smgr_nblocks(r) <= blk) {
        int32_t nid;
        blocknum_t nblk;
        rc = buf_extend(s, rel, 0, NULL, &nid, &nblk);
        if (rc == KEEL_OK) {
            memset(buf_page(s->pool, nid), 0, BLOCK_SIZE);
            buf_unlock_release(s, nid);
        }
    }
    if (rc != KEEL_OK)
        return rc;
    s->read_zero = zero;
    rc = buf_read(s, rel, blk, NULL, id);
    s->read_zero = false;
    return rc;
}

static int malformed(buf_session *s, const wal_rec_hdr *h)
{
    return kerr_set(&s->err, KEEL_ECORRUPT,
                    "log record at LSN %" PRIu64 " is malformed", h->lsn);
}

int buf_log_redo(buf_session *s, const wal_rec_hdr *h, const char *body)
{
    uint64_t end = h->lsn + wal_align(h->len);
    const char *p = body, *lim = body + (h->len - sizeof(*h));
    uint16_t nblocks;
    int rc = KEEL_OK;

    assert(s->log_off);
    if (lim - p < 4)
        return malformed(s, h);
    memcpy(&nblocks, p, 2);
    p += 4;
    for (uint16_t i = 0; i < nblocks && rc == KEEL_OK; i++) {
        buf_log_block b;
        const char *ranges, *ops = NULL;
        uint16_t op_bytes = 0, op_count = 0;
        uint32_t data = 0;
        bool full;
        char *page;
        int32_t id;

        if (lim - p < (ptrdiff_t)sizeof(b))
            return malformed(s, h);
        memcpy(&b, p, sizeof(b));
        p += sizeof(b);
        full = (b.flags & BUF_LOG_FULL) != 0;
        ranges = p;
        if (full) {
            if (!(b.flags & BUF_LOG_ZERO)) {
                if (b.lower > b.upper || b.upper > BLOCK_SIZE)
                    return malformed(s, h);
                data = b.lower + (BLOCK_SIZE - b.upper);
            }
        } else {
            if (b.flags & BUF_LOG_OPS) {
                if (lim - p < 4)
                    return malformed(s, h);
                memcpy(&op_bytes, p, 2);
                memcpy(&op_count, p + 2, 2);
                ops = p + 4;
                if (lim - ops < (ptrdiff_t)op_bytes)
                    return malformed(s, h);
                p = ops + op_bytes;
            }
            ranges = p;
            if (b.nranges > BUF_LOG_MAX_RANGES ||
                lim - p < (ptrdiff_t)(4u * b.nranges))
                return malformed(s, h);
            for (uint32_t k = 0; k < b.nranges; k++) {
                uint16_t off, len;
                memcpy(&off, p + 4 * k, 2);
                memcpy(&len, p + 4 * k + 2, 2);
                if ((uint32_t)off + len > BLOCK_SIZE)
                    return malformed(s, h);
                data += len;
            }
            p += 4u * b.nranges;
        }
        if (lim - p < (ptrdiff_t)data)
            return malformed(s, h);
        rc = redo_read(s, b.rel, b.blk, full, &id);
        if (rc != KEEL_OK)
            break;
        buf_lock(s, id, LW_EXCLUSIVE);
        page = buf_page(s->pool, id);
        if (full) {
            if (b.flags & BUF_LOG_ZERO) {
                memset(page, 0, BLOCK_SIZE);
            } else {
                memcpy(page, p, b.lower);
                memset(page + b.lower, 0, (size_t)(b.upper - b.lower));
                memcpy(page + b.upper, p + b.lower,
                       (size_t)(BLOCK_SIZE - b.upper));
            }
        } else if (((page_header *)page)->lsn < end) {
            const char *d = p;
            if (op_count > 0 &&
                !buf_log_run_ops(page, ops, op_bytes, op_count)) {
                buf_unlock_release(s, id);
                return kerr_set(&s->err, KEEL_ECORRUPT,
                                "log record at LSN %" PRIu64 ": an operation "
                                "on relation %u block %u cannot be redone",
                                h->lsn, b.rel, b.blk);
            }
            for (uint32_t k = 0; k < b.nranges; k++) {
                uint16_t off, len;
                memcpy(&off, ranges + 4 * k, 2);
                memcpy(&len, ranges + 4 * k + 2, 2);
                memcpy(page + off, d, len);
                d += len;
            }
        } else {
            buf_unlock_release(s, id); /* the page has the change */
            p += data;
            continue;
        }
        if (!(full && (b.flags & BUF_LOG_ZERO)))
            ((page_header *)page)->lsn = end;
        buf_mark_dirty(s, id);
        buf_unlock_release(s, id);
        p += data;
    }
    return rc;
}

int buf_log_blocks(const wal_rec_hdr *h, const char *body,
                   void (*fn)(void *arg, const buf_log_block *b,
                              uint32_t data_len),
                   void *arg, kerr *err)
{
    const char *p = body, *lim = body + (h->len - sizeof(*h));
    uint16_t nblocks;

    if (lim - p < 4)
        goto bad;
    memcpy(&nblocks, p, 2);
    p += 4;
    for (uint16_t i = 0; i < nblocks; i++) {
        buf_log_block b;
        uint32_t data = 0, shown = 0;

        if (lim - p < (ptrdiff_t)sizeof(b))
            goto bad;
        memcpy(&b, p, sizeof(b));
        p += sizeof(b);
        if (b.flags & BUF_LOG_FULL) {
            if (!(b.flags & BUF_LOG_ZERO))
                data = b.lower + (BLOCK_SIZE - b.upper);
        } else {
            if (b.flags & BUF_LOG_OPS) {
                uint16_t op_bytes;
                if (lim - p < 4)
                    goto bad;
                memcpy(&op_bytes, p, 2);
                if (lim - p < 4 + (ptrdiff_t)op_bytes)
                    goto bad;
                p += 4 + op_bytes;
                shown += 4u + op_bytes;
            }
            if (lim - p < (ptrdiff_t)(4u * b.nranges))
                goto bad;
            for (uint32_t k = 0; k < b.nranges; k++) {
                uint16_t len;
                memcpy(&len, p + 4 * k + 2, 2);
                data += len;
            }
            p += 4u * b.nranges;
        }
        if (lim - p < (ptrdiff_t)data)
            goto bad;
        fn(arg, &b, data + shown);
        p += data;
    }
    return KEEL_OK;
bad:
    return kerr_set(err, KEEL_ECORRUPT, "log record at LSN %" PRIu64
                                        " is malformed",
                    h->lsn);
}
