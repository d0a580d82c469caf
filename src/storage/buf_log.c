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

/* Room for the block references, operation, range and copy tables of
 * one record, and its parts. */
#define HDR_ROOM                                                               \
    (2 + BUF_LOG_MAX_PAGES *                                                   \
             (BUF_LOG_BLOCK_BYTES + 4 + 4 + 4 * (BUF_LOG_MAX_RANGES + 1) +    \
              BUF_LOG_COPY_BYTES))
#define MAX_PARTS (1 + BUF_LOG_MAX_PAGES * (5 + BUF_LOG_MAX_RANGES))

/* A block reference as read from a record: where its parts lie. */
typedef struct parsed_block {
    buf_log_block b;
    const char *ops; /* with BUF_LOG_OPS */
    uint16_t op_bytes, op_count;
    const char *ranges; /* nranges (offset, length) pairs */
    buf_log_copy copy;  /* with BUF_LOG_COPY */
    const char *data;   /* the image, or the ranges' bytes then the copy's */
    uint32_t data_len;
} parsed_block;

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

bool buf_log_run_ops(void *page, uint32_t blk, const char *ops,
                     uint16_t bytes, uint16_t count)
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
            !buf_log_op_known(op) || !op_fns[op](page, blk, p + 4, len))
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

/* What the copy of pending entry e logs of page: the common prefix and
 * suffix of its range and its source, as buf_log_copy. */
static void copy_plan(const char *page, const buf_log_pending *e,
                      buf_log_copy *c)
{
    const char *a = page + e->copy_dst, *b = page + e->copy_src;
    uint16_t n = e->copy_len < e->copy_src_len ? e->copy_len : e->copy_src_len;
    uint16_t pre = 0, suf = 0;

    while (pre < n && a[pre] == b[pre])
        pre++;
    while (suf < n - pre &&
           a[e->copy_len - 1 - suf] == b[e->copy_src_len - 1 - suf])
        suf++;
    *c = (buf_log_copy){.dst = e->copy_dst,
                        .len = e->copy_len,
                        .src = e->copy_src,
                        .prefix = pre,
                        .tail = (uint16_t)(e->copy_src + e->copy_src_len - suf),
                        .suffix = suf};
}

void buf_log_copy_apply(void *page, const buf_log_copy *c, const char *middle)
{
    char *p = page;

    memcpy(p + c->dst, p + c->src, c->prefix);
    memcpy(p + c->dst + c->len - c->suffix, p + c->tail, c->suffix);
    memcpy(p + c->dst + c->prefix, middle,
           (size_t)(c->len - c->prefix - c->suffix));
}

/* Appends the n bytes at src to the header area at *h. */
static void put(char **h, const void *src, size_t n)
{
    memcpy(*h, src, n);
    *h += n;
}

/*
 * Builds the record of the pending pages against redo pointer redo, in
 * parts (pointing into hdrs and into the pages); returns the part count
 * and the body's length in *total, and in *fpi the whole images it
 * holds (for the log's counters: decided here, so counted here).  A copy
 * that would save less than its table costs becomes a plain range here,
 * if there is room for one.
 */
static int build(buf_session *s, uint64_t redo, char *hdrs, struct iovec *parts,
                 uint32_t *total, wal_fpi *fpi)
{
    char *h = hdrs;
    int n = 0;
    uint16_t nblocks = (uint16_t)s->log_npending;

    *total = 0;
    *fpi = (wal_fpi){0, 0};
    put(&h, &nblocks, 2);
    parts[n++] = (struct iovec){hdrs, 2};
    *total += 2;
    for (uint32_t i = 0; i < s->log_npending; i++) {
        buf_log_pending *e = &s->log_pending[i];
        char *page = buf_page(s->pool, e->id);
        const page_header *ph = (const page_header *)page;
        char *start = h;
        buf_log_copy c;
        relnumber_t rel;
        blocknum_t blk;
        uint32_t r32;
        uint8_t flags = 0, nranges = 0;

        buf_block_of(s->pool, e->id, &rel, &blk);
        r32 = rel;
        put(&h, &r32, 4);
        put(&h, &blk, 4);
        if (e->nranges == BUF_LOG_WHOLE || (e->nranges == 0 && e->nops == 0 &&
                                            e->copy_len == 0) ||
            ph->lsn <= redo) {
            uint16_t lower = BLOCK_SIZE, upper = BLOCK_SIZE;
            flags = BUF_LOG_FULL;
            if (ph->upper == 0 && page_is_new(page)) {
                flags |= BUF_LOG_ZERO;
                put(&h, &flags, 1);
                put(&h, &nranges, 1);
            } else {
                page_hole(ph, &lower, &upper);
                put(&h, &flags, 1);
                put(&h, &nranges, 1);
                put(&h, &lower, 2);
                put(&h, &upper, 2);
            }
            fpi->count++;
            if (!(flags & BUF_LOG_ZERO))
                fpi->bytes += lower + (uint32_t)(BLOCK_SIZE - upper);
            parts[n++] = (struct iovec){start, (size_t)(h - start)};
            *total += (uint32_t)(h - start);
            if (!(flags & BUF_LOG_ZERO)) {
                parts[n++] = (struct iovec){page, lower};
                parts[n++] =
                    (struct iovec){page + upper, (size_t)(BLOCK_SIZE - upper)};
                *total += lower + (uint32_t)(BLOCK_SIZE - upper);
            }
            continue;
        }
        if (e->copy_len > 0) {
            copy_plan(page, e, &c);
            if (c.prefix + c.suffix <= BUF_LOG_COPY_BYTES &&
                e->nranges < BUF_LOG_MAX_RANGES) {
                e->off[e->nranges] = e->copy_dst;
                e->len[e->nranges] = e->copy_len;
                e->nranges++;
                e->copy_len = 0;
            }
        }
        nranges = e->nranges;
        flags = (uint8_t)((e->nops > 0 ? BUF_LOG_OPS : 0) |
                          (e->copy_len > 0 ? BUF_LOG_COPY : 0));
        put(&h, &flags, 1);
        put(&h, &nranges, 1);
        if (e->nops > 0) {
            uint16_t nops = e->nops;
            put(&h, &e->op_len, 2);
            put(&h, &nops, 2);
        }
        parts[n++] = (struct iovec){start, (size_t)(h - start)};
        *total += (uint32_t)(h - start);
        if (e->nops > 0) {
            parts[n++] = (struct iovec){s->log_opbuf + e->op_start, e->op_len};
            *total += e->op_len;
        }
        start = h;
        for (uint32_t k = 0; k < e->nranges; k++) {
            put(&h, &e->off[k], 2);
            put(&h, &e->len[k], 2);
        }
        if (e->copy_len > 0)
            put(&h, &c, BUF_LOG_COPY_BYTES);
        if (h > start) {
            parts[n++] = (struct iovec){start, (size_t)(h - start)};
            *total += (uint32_t)(h - start);
        }
        for (uint32_t k = 0; k < e->nranges; k++) {
            parts[n++] = (struct iovec){page + e->off[k], e->len[k]};
            *total += e->len[k];
        }
        if (e->copy_len > 0 && c.len > c.prefix + c.suffix) {
            uint32_t mid = (uint32_t)(c.len - c.prefix - c.suffix);
            parts[n++] = (struct iovec){page + c.dst + c.prefix, mid};
            *total += mid;
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
            relnumber_t rel;
            blocknum_t blk;
            buf_block_of(p, e->id, &rel, &blk);
            if (e->nops > 0 &&
                !buf_log_run_ops(sh, blk, s->log_opbuf + e->op_start,
                                 e->op_len, e->nops)) {
                fprintf(stderr, "a logged operation fails on its own page\n");
                abort();
            }
            for (uint32_t k = 0; k < e->nranges; k++)
                memcpy(sh + e->off[k], page + e->off[k], e->len[k]);
            if (e->copy_len > 0) {
                /* As redo makes it: from the shadow's own source bytes. */
                buf_log_copy c;
                copy_plan(page, e, &c);
                buf_log_copy_apply(sh, &c, page + c.dst + c.prefix);
            }
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
    wal_fpi fpi;
    kerr e;
    int n, rc;

    if (s->log_npending == 0)
        return;
    redo = wal_redo_hint(w);
    do {
        n = build(s, redo, hdrs, parts, &total, &fpi);
        rc = wal_insert(w, (uint32_t)((uintptr_t)s >> 6), WAL_PAGES,
                        s->log_info, s->log_xid, parts, n, total, &fpi, &redo,
                        &end, &e);
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
                      WAL_FILE_CREATE, 0, 0, &part, 1, sizeof(f), NULL, NULL,
                      &end, &s->err);
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

/* Takes n bytes from *p into dst, if lim allows. */
static bool take(const char **p, const char *lim, void *dst, size_t n)
{
    if (lim - *p < (ptrdiff_t)n)
        return false;
    memcpy(dst, *p, n);
    *p += n;
    return true;
}

/* A copy that stays on the page, leaves its middle to the record, and
 * reads nothing it writes. */
static bool copy_sane(const buf_log_copy *c)
{
    uint32_t end = (uint32_t)c->dst + c->len;

    return end <= BLOCK_SIZE && (uint32_t)c->prefix + c->suffix <= c->len &&
           (uint32_t)c->src + c->prefix <= BLOCK_SIZE &&
           (uint32_t)c->tail + c->suffix <= BLOCK_SIZE &&
           (c->prefix == 0 || c->src + c->prefix <= c->dst || c->src >= end) &&
           (c->suffix == 0 || c->tail + c->suffix <= c->dst || c->tail >= end);
}

/* Reads the block reference at *p (before lim) into *out and moves *p
 * past its data; false if it is malformed. */
static bool parse_block(const char **p, const char *lim, parsed_block *out)
{
    buf_log_block *b = &out->b;

    memset(out, 0, sizeof(*out));
    if (!take(p, lim, &b->rel, 4) || !take(p, lim, &b->blk, 4) ||
        !take(p, lim, &b->flags, 1) || !take(p, lim, &b->nranges, 1))
        return false;
    if (b->flags & BUF_LOG_FULL) {
        if (!(b->flags & BUF_LOG_ZERO)) {
            if (!take(p, lim, &b->lower, 2) || !take(p, lim, &b->upper, 2) ||
                b->lower > b->upper || b->upper > BLOCK_SIZE)
                return false;
            out->data_len = b->lower + (uint32_t)(BLOCK_SIZE - b->upper);
        }
    } else {
        if (b->flags & BUF_LOG_OPS) {
            if (!take(p, lim, &out->op_bytes, 2) ||
                !take(p, lim, &out->op_count, 2) ||
                lim - *p < (ptrdiff_t)out->op_bytes)
                return false;
            out->ops = *p;
            *p += out->op_bytes;
        }
        if (b->nranges > BUF_LOG_MAX_RANGES ||
            lim - *p < (ptrdiff_t)(4u * b->nranges))
            return false;
        out->ranges = *p;
        for (uint32_t k = 0; k < b->nranges; k++) {
            uint16_t off, len;
            memcpy(&off, *p + 4 * k, 2);
            memcpy(&len, *p + 4 * k + 2, 2);
            if ((uint32_t)off + len > BLOCK_SIZE)
                return false;
            out->data_len += len;
        }
        *p += 4u * b->nranges;
        if (b->flags & BUF_LOG_COPY) {
            if (!take(p, lim, &out->copy, BUF_LOG_COPY_BYTES) ||
                !copy_sane(&out->copy))
                return false;
            out->data_len +=
                (uint32_t)(out->copy.len - out->copy.prefix - out->copy.suffix);
        }
    }
    if (lim - *p < (ptrdiff_t)out->data_len)
        return false;
    out->data = *p;
    *p += out->data_len;
    return true;
}

static int malformed(buf_session *s, const wal_record *h)
{
    return kerr_set(&s->err, KEEL_ECORRUPT,
                    "log record at LSN %" PRIu64 " is malformed", h->lsn);
}

/* Writes block pb's change onto page (not an image). */
static bool redo_change(void *page, const parsed_block *pb)
{
    const char *d = pb->data;

    if (pb->op_count > 0 &&
        !buf_log_run_ops(page, pb->b.blk, pb->ops, pb->op_bytes,
                         pb->op_count))
        return false;
    for (uint32_t k = 0; k < pb->b.nranges; k++) {
        uint16_t off, len;
        memcpy(&off, pb->ranges + 4 * k, 2);
        memcpy(&len, pb->ranges + 4 * k + 2, 2);
        memcpy((char *)page + off, d, len);
        d += len;
    }
    if (pb->b.flags & BUF_LOG_COPY)
        buf_log_copy_apply(page, &pb->copy, d);
    return true;
}

int buf_log_redo(buf_session *s, const wal_record *h, const char *body)
{
    uint64_t end = h->lsn + wal_align(h->len);
    const char *p = body, *lim = body + h->body_len;
    uint16_t nblocks;
    int rc = KEEL_OK;

    assert(s->log_off);
    if (!take(&p, lim, &nblocks, 2))
        return malformed(s, h);
    for (uint16_t i = 0; i < nblocks && rc == KEEL_OK; i++) {
        parsed_block pb;
        const buf_log_block *b = &pb.b;
        bool full;
        char *page;
        int32_t id;

        if (!parse_block(&p, lim, &pb))
            return malformed(s, h);
        full = (b->flags & BUF_LOG_FULL) != 0;
        rc = redo_read(s, b->rel, b->blk, full, &id);
        if (rc != KEEL_OK)
            break;
        buf_lock(s, id, LW_EXCLUSIVE);
        page = buf_page(s->pool, id);
        if (full) {
            if (b->flags & BUF_LOG_ZERO) {
                memset(page, 0, BLOCK_SIZE);
            } else {
                memcpy(page, pb.data, b->lower);
                memset(page + b->lower, 0, (size_t)(b->upper - b->lower));
                memcpy(page + b->upper, pb.data + b->lower,
                       (size_t)(BLOCK_SIZE - b->upper));
            }
        } else if (((page_header *)page)->lsn < end) {
            if (!redo_change(page, &pb)) {
                buf_unlock_release(s, id);
                return kerr_set(&s->err, KEEL_ECORRUPT,
                                "log record at LSN %" PRIu64 ": an operation "
                                "on relation %u block %u cannot be redone",
                                h->lsn, b->rel, b->blk);
            }
        } else {
            buf_unlock_release(s, id); /* the page has the change */
            continue;
        }
        if (!(full && (b->flags & BUF_LOG_ZERO)))
            ((page_header *)page)->lsn = end;
        buf_mark_dirty(s, id);
        buf_unlock_release(s, id);
    }
    return rc;
}

int buf_log_redo_bare(buf_session *s, const wal_record *h, relnumber_t rel,
                      blocknum_t blk, buf_log_bare_fn fn)
{
    uint64_t end = h->lsn + wal_align(h->len);
    page_header *ph;
    int32_t id;
    int rc;

    assert(s->log_off);
    rc = redo_read(s, rel, blk, false, &id);
    if (rc != KEEL_OK)
        return rc;
    buf_lock(s, id, LW_EXCLUSIVE);
    ph = buf_page(s->pool, id);
    if (ph->lsn < end) {
        if (!fn(ph, h->info, h->xid)) {
            buf_unlock_release(s, id);
            return kerr_set(&s->err, KEEL_ECORRUPT,
                            "log record at LSN %" PRIu64 " (%s of "
                            "transaction %u) cannot be redone on relation "
                            "%u block %u",
                            h->lsn, wal_info_name(h->info), h->xid, rel, blk);
        }
        ph->lsn = end;
        buf_mark_dirty(s, id);
    }
    buf_unlock_release(s, id);
    return KEEL_OK;
}

int buf_log_blocks(const wal_record *h, const char *body,
                   void (*fn)(void *arg, const buf_log_block *b,
                              uint32_t data_len),
                   void *arg, kerr *err)
{
    const char *p = body, *lim = body + h->body_len;
    uint16_t nblocks;

    if (!take(&p, lim, &nblocks, 2))
        goto bad;
    for (uint16_t i = 0; i < nblocks; i++) {
        parsed_block pb;
        if (!parse_block(&p, lim, &pb))
            goto bad;
        fn(arg, &pb.b,
           pb.data_len + (pb.op_count > 0 ? 4u + pb.op_bytes : 0) +
               ((pb.b.flags & BUF_LOG_COPY) ? BUF_LOG_COPY_BYTES : 0));
    }
    return KEEL_OK;
bad:
    return kerr_set(err, KEEL_ECORRUPT, "log record at LSN %" PRIu64
                                        " is malformed",
                    h->lsn);
}
