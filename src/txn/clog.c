/*
 * clog.c: the commit status log: two bits per transaction id in the pages
 * of one relation, through the buffer pool.  The format and the rules are
 * in clog.h and src/txn/README.md.
 */
#include "txn/clog.h"

#include "storage/buf_log.h"
#include "wal/wal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "storage/smgr.h"

#define CLOG_BITS_MASK 3u

struct clog {
    buf_pool *pool;
    smgr_rel *srel; /* for the relation's size (an atomic in smgr) */
    relnumber_t rel;
    pthread_mutex_t extend_lock; /* serializes extension */
};

/* Copies the buffer pool session's last error into err; returns its code. */
static int clog_pool_error(buf_session *s, int rc, kerr *err)
{
    const kerr *e = buf_session_error(s);

    if (err != NULL && err != e) {
        if (e->code == rc)
            *err = *e;
        else
            kerr_set(err, rc, "commit log: %s", keel_status_str(rc));
    }
    return rc;
}

static blocknum_t clog_page_of(xid_t xid)
{
    return (blocknum_t)(xid / CLOG_XIDS_PER_PAGE);
}

/* Byte offset within the page, and shift within the byte, of xid. */
static void clog_position(xid_t xid, uint32_t *byte, uint32_t *shift)
{
    uint32_t idx = xid % CLOG_XIDS_PER_PAGE;

    *byte = PAGE_HEADER_SIZE + idx / 4;
    *shift = (idx % 4) * 2;
}

int clog_open(buf_pool *pool, relnumber_t rel, clog **out, kerr *err)
{
    clog *c;
    smgr_rel *r;
    int rc;

    *out = NULL;
    if (rel == INVALID_RELNUMBER)
        return kerr_set(err, KEEL_EINVAL, "commit log: invalid relation 0");
    rc = smgr_rel_open(buf_pool_smgr(pool), rel, &r, err);
    if (rc != KEEL_OK)
        return rc;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return kerr_set(err, KEEL_ENOMEM, "commit log: out of memory");
    c->pool = pool;
    c->srel = r;
    c->rel = rel;
    pthread_mutex_init(&c->extend_lock, NULL);
    *out = c;
    return KEEL_OK;
}

void clog_close(clog *c)
{
    if (c == NULL)
        return;
    pthread_mutex_destroy(&c->extend_lock);
    free(c);
}

relnumber_t clog_relnumber(const clog *c)
{
    return c->rel;
}

blocknum_t clog_npages(clog *c)
{
    return smgr_nblocks(c->srel);
}

int clog_ensure(clog *c, buf_session *s, xid_t xid, kerr *err)
{
    blocknum_t page = clog_page_of(xid);
    uint8_t info = s->log_info; /* the caller's next record's, kept */
    uint32_t info_xid = s->log_xid;
    int rc = KEEL_OK;

    if (page < smgr_nblocks(c->srel))
        return KEEL_OK;
    /*
     * Only the clog extends its relation, and only under this lock, so the
     * size re-read here cannot move except by our own extensions.
     */
    pthread_mutex_lock(&c->extend_lock);
    while (smgr_nblocks(c->srel) <= page) {
        int32_t id;
        blocknum_t blk;

        s->log_info = WAL_INFO_CLOG_EXTEND;
        rc = buf_extend(s, c->rel, 0, NULL, &id, &blk);
        if (rc != KEEL_OK) {
            rc = clog_pool_error(s, rc, err);
            break;
        }
        /* The new page is page_init()ed in its buffer (dirty; the file
         * has zeroes, which clog_get() reads the same way): all its
         * statuses read as in progress. */
        buf_unlock(s, id);
        buf_release(s, id);
    }
    pthread_mutex_unlock(&c->extend_lock);
    s->log_info = info;
    s->log_xid = info_xid;
    return rc;
}

int clog_get(clog *c, buf_session *s, xid_t xid, xid_status *status, kerr *err)
{
    blocknum_t page = clog_page_of(xid);
    uint32_t byte, shift, bits;
    int32_t id;
    int rc;

    if (xid < XID_FIRST_NORMAL) {
        *status = XID_STATUS_COMMITTED;
        return KEEL_OK;
    }
    if (page >= smgr_nblocks(c->srel)) {
        *status = XID_STATUS_IN_PROGRESS;
        return KEEL_OK;
    }
    rc = buf_read(s, c->rel, page, NULL, &id);
    if (rc != KEEL_OK)
        return clog_pool_error(s, rc, err);
    clog_position(xid, &byte, &shift);
    buf_lock(s, id, LW_SHARED);
    bits = ((const uint8_t *)buf_page(c->pool, id))[byte] >> shift;
    buf_unlock(s, id);
    buf_release(s, id);
    bits &= CLOG_BITS_MASK;
    if (bits == CLOG_BITS_MASK)
        return kerr_set(err, KEEL_ECORRUPT,
                        "commit log relation %u block %u: invalid status "
                        "bits for transaction %u",
                        c->rel, page, xid);
    *status = (xid_status)bits;
    return KEEL_OK;
}

/* The record info that says a transaction ended with status. */
static uint8_t end_info(xid_status status)
{
    return status == XID_STATUS_COMMITTED ? WAL_INFO_COMMIT
           : status == XID_STATUS_ABORTED ? WAL_INFO_ABORT
                                          : WAL_INFO_PAGE;
}

/* WAL_XACT_END's change (buf_log_bare_fn): xid's status set on its page,
 * which must be a commit log page, logged before. */
static bool redo_end(void *page, uint8_t info, uint32_t xid)
{
    page_header *ph = page;
    uint32_t byte, shift;
    uint8_t *p = page;
    xid_status status = info == WAL_INFO_COMMIT  ? XID_STATUS_COMMITTED
                        : info == WAL_INFO_ABORT ? XID_STATUS_ABORTED
                                                 : XID_STATUS_IN_PROGRESS;

    if (status == XID_STATUS_IN_PROGRESS || xid < XID_FIRST_NORMAL ||
        ph->version == 0 || ph->lower != ph->upper)
        return false;
    clog_position(xid, &byte, &shift);
    p[byte] = (uint8_t)((p[byte] & ~(CLOG_BITS_MASK << shift)) |
                        ((uint32_t)status << shift));
    return true;
}

int clog_redo_end(buf_session *s, const wal_record *h, relnumber_t rel)
{
    return buf_log_redo_bare(s, h, rel, clog_page_of(h->xid), redo_end);
}

int clog_set(clog *c, buf_session *s, xid_t xid, xid_status status, kerr *err)
{
    blocknum_t page = clog_page_of(xid);
    uint32_t byte, shift;
    uint8_t *p;
    int32_t id;
    int rc;

    if (xid < XID_FIRST_NORMAL)
        return kerr_set(err, KEEL_EINVAL,
                        "commit log: transaction %u has a fixed status", xid);
    if (status != XID_STATUS_IN_PROGRESS && status != XID_STATUS_COMMITTED &&
        status != XID_STATUS_ABORTED)
        return kerr_set(err, KEEL_EINVAL, "commit log: invalid status %d",
                        (int)status);
    rc = clog_ensure(c, s, xid, err);
    if (rc != KEEL_OK)
        return rc;
    rc = buf_read(s, c->rel, page, NULL, &id);
    if (rc != KEEL_OK)
        return clog_pool_error(s, rc, err);
    clog_position(xid, &byte, &shift);
    buf_lock(s, id, LW_EXCLUSIVE);
    p = buf_page(c->pool, id);
    /* A page left all zeroes by a crash during extension: give it a header
     * before it stops being recognizably new. */
    if (((const page_header *)p)->version == 0 && page_is_new(p))
        page_init(p, 0);
    p[byte] = (uint8_t)((p[byte] & ~(CLOG_BITS_MASK << shift)) |
                        ((uint32_t)status << shift));
    if (((page_header *)p)->lower != ((page_header *)p)->upper) {
        /* The statuses fill the page: no free space, so that a whole
         * image in the log (storage/buf_log.h) leaves nothing out. */
        ((page_header *)p)->lower = ((page_header *)p)->upper;
        buf_mark_dirty(s, id);
    } else if (s->log_xid != xid || s->log_info != end_info(status) ||
               !buf_log_bare(s, id, WAL_XACT_END, redo_end)) {
        buf_mark_dirty_range(s, id, byte, 1);
    }
    buf_unlock(s, id);
    buf_release(s, id);
    return KEEL_OK;
}

int clog_last_ended(clog *c, buf_session *s, xid_t *out, kerr *err)
{
    blocknum_t n = smgr_nblocks(c->srel);

    *out = XID_INVALID;
    /* The last page may be one just added for the next id, with no end
     * recorded yet: the one before it then has the last. */
    for (blocknum_t page = n; page-- > 0 && n - page <= 2;) {
        const uint8_t *p;
        uint32_t byte = PAGE_HEADER_SIZE + CLOG_XIDS_PER_PAGE / 4;
        int32_t id;
        int rc = buf_read(s, c->rel, page, NULL, &id);

        if (rc != KEEL_OK)
            return clog_pool_error(s, rc, err);
        buf_lock(s, id, LW_SHARED);
        p = buf_page(c->pool, id);
        while (byte > PAGE_HEADER_SIZE && p[byte - 1] == 0)
            byte--;
        if (byte > PAGE_HEADER_SIZE) {
            uint32_t bits = p[byte - 1], k = 3;
            while (((bits >> (2 * k)) & CLOG_BITS_MASK) == 0)
                k--;
            *out = page * CLOG_XIDS_PER_PAGE +
                   (byte - 1 - PAGE_HEADER_SIZE) * 4 + k;
        }
        buf_unlock(s, id);
        buf_release(s, id);
        if (*out != XID_INVALID)
            break;
    }
    return KEEL_OK;
}

int clog_page_verify(const void *page, blocknum_t blk, kerr *err)
{
    const uint8_t *p = page;

    for (uint32_t i = 0; i < CLOG_XIDS_PER_PAGE / 4; i++) {
        uint32_t b = p[PAGE_HEADER_SIZE + i];
        uint32_t both = b & (b >> 1) & 0x55u; /* statuses with both bits */
        if (both != 0)
            return kerr_set(err, KEEL_ECORRUPT,
                            "commit log block %u: invalid status bits for "
                            "transaction %u",
                            blk,
                            blk * CLOG_XIDS_PER_PAGE + i * 4 +
                                (uint32_t)__builtin_ctz(both) / 2);
    }
    return KEEL_OK;
}
