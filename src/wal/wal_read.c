/*
 * wal_read.c: reading the write-ahead log back, for recovery and for
 * `keel wal`: records in order from a start LSN, and where the valid log
 * ends.
 *
 * A record is valid if its header names its own position (the low 48 bits
 * of it: wal.h), its length and type are sane and its CRC matches.  The first
 * invalid one ends the log (a torn or zeroed tail: what a crash leaves of
 * writes that were never acknowledged), unless a valid record follows it whose
 * header says the log was already durable past it: then the invalid record was
 * once written and synced, and the log is corrupt.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "port/crc32c.h"
#include "wal/wal.h"
#include "wal/wal_internal.h"

struct wal_reader {
    uint64_t seg;     /* segment in seg_buf, or UINT64_MAX */
    uint64_t seg_len; /* bytes of it read (0: no such file) */
    char *seg_buf;    /* WAL_SEG_SIZE bytes */
    char *rec;        /* a record that crosses segments, assembled */
    uint64_t pos;     /* the next record's LSN */
    wal_record cur;   /* the last record returned, decoded */
    char waldir[4200];
};

int wal_reader_open(const char *dir, wal_lsn start, wal_reader **out,
                    kerr *err)
{
    wal_reader *r = calloc(1, sizeof(*r));

    *out = NULL;
    if (r == NULL || (r->seg_buf = malloc(WAL_SEG_SIZE)) == NULL ||
        (r->rec = malloc(WAL_MAX_RECORD)) == NULL) {
        if (r != NULL)
            free(r->seg_buf);
        free(r);
        return kerr_set(err, KEEL_ENOMEM, "out of memory to read the log");
    }
    snprintf(r->waldir, sizeof(r->waldir), "%s/%s", dir, WAL_DIR_NAME);
    r->seg = UINT64_MAX;
    r->pos = start;
    *out = r;
    return KEEL_OK;
}

void wal_reader_close(wal_reader *r)
{
    if (r == NULL)
        return;
    free(r->seg_buf);
    free(r->rec);
    free(r);
}

wal_lsn wal_reader_end(const wal_reader *r)
{
    return r->pos;
}

static int load_seg(wal_reader *r, uint64_t seg, kerr *err)
{
    char path[4300];
    int fd;

    if (r->seg == seg)
        return KEEL_OK;
    r->seg = seg;
    r->seg_len = 0;
    wal_seg_path(r->waldir, seg, path, sizeof(path));
    fd = open(path, O_RDONLY);
    if (fd < 0) {
        if (errno == ENOENT)
            return KEEL_OK; /* the log ends before it */
        r->seg = UINT64_MAX;
        return kerr_set(err, kerr_from_errno(errno),
                        "cannot open log segment \"%s\": %s", path,
                        strerror(errno));
    }
    while (r->seg_len < WAL_SEG_SIZE) {
        ssize_t n = pread(fd, r->seg_buf + r->seg_len,
                          (size_t)(WAL_SEG_SIZE - r->seg_len), (off_t)r->seg_len);
        if (n < 0) {
            int e = errno;
            close(fd);
            r->seg = UINT64_MAX;
            return kerr_set(err, kerr_from_errno(e),
                            "cannot read log segment \"%s\": %s", path,
                            strerror(e));
        }
        if (n == 0)
            break;
        r->seg_len += (uint64_t)n;
    }
    close(fd);
    return KEEL_OK;
}

/*
 * Points *p at n bytes of the log at lsn (n <= WAL_MAX_RECORD), in the
 * segment buffer or, when they cross segments, assembled in r->rec.
 * Sets *p to NULL if the log's files end first.
 */
static int get_bytes(wal_reader *r, uint64_t lsn, size_t n, const char **p,
                     kerr *err)
{
    uint64_t seg = lsn / WAL_SEG_SIZE, off = lsn % WAL_SEG_SIZE;
    size_t have = 0;
    int rc = load_seg(r, seg, err);

    *p = NULL;
    if (rc != KEEL_OK)
        return rc;
    if (off + n <= r->seg_len) {
        *p = r->seg_buf + off;
        return KEEL_OK;
    }
    while (have < n) {
        size_t k;
        rc = load_seg(r, seg, err);
        if (rc != KEEL_OK)
            return rc;
        if (off >= r->seg_len)
            return KEEL_OK; /* short */
        k = (size_t)(r->seg_len - off);
        if (k > n - have)
            k = n - have;
        memcpy(r->rec + have, r->seg_buf + off, k);
        have += k;
        if (r->seg_len < WAL_SEG_SIZE && have < n)
            return KEEL_OK;
        seg++;
        off = 0;
    }
    *p = r->rec;
    return KEEL_OK;
}

static bool header_sane(const wal_rec_hdr *h, uint64_t pos)
{
    return wal_hdr_at(h, pos) && h->len >= WAL_HDR_SIZE &&
           h->len <= WAL_MAX_RECORD && wal_hdr_type(h) < WAL_TYPE_COUNT;
}

static bool crc_ok(const char *rec)
{
    const wal_rec_hdr *h = (const wal_rec_hdr *)rec;

    return wal_hdr_crc(h, crc32c_extend(0, rec + WAL_HDR_SIZE,
                                        h->len - WAL_HDR_SIZE)) == h->crc;
}

/* Reads the record at pos: *rec NULL if it is not a valid one. */
static int read_record(wal_reader *r, uint64_t pos, const char **rec,
                       kerr *err)
{
    const char *p;
    wal_rec_hdr h;
    int rc = get_bytes(r, pos, sizeof(h), &p, err);

    *rec = NULL;
    if (rc != KEEL_OK || p == NULL)
        return rc;
    memcpy(&h, p, sizeof(h));
    if (!header_sane(&h, pos))
        return KEEL_OK;
    rc = get_bytes(r, pos, h.len, &p, err);
    if (rc == KEEL_OK && p != NULL && crc_ok(p))
        *rec = p;
    return rc;
}

/* Zeros compared a block at a time by skip_zeros(). */
#define ZERO_BLOCK 4096
static const char zero_block[ZERO_BLOCK];

/*
 * The first position at or after y (a multiple of WAL_ALIGN) whose header
 * may hold a byte that is not zero, as far as the segment in r's buffer
 * shows; y itself if r holds another segment or none of y's bytes.  A
 * header of zeros names LSN 0, never its own position, so check_tail()
 * need not read those before it: the zeroed tail of a segment (most of it,
 * after every open) is passed over in blocks, not 8 bytes at a time.
 */
static uint64_t skip_zeros(const wal_reader *r, uint64_t y)
{
    uint64_t off = y % WAL_SEG_SIZE, z = off;

    if (r->seg != y / WAL_SEG_SIZE || off >= r->seg_len)
        return y;
    while (z + ZERO_BLOCK <= r->seg_len &&
           memcmp(r->seg_buf + z, zero_block, ZERO_BLOCK) == 0)
        z += ZERO_BLOCK;
    while (z < r->seg_len && r->seg_buf[z] == 0)
        z++;
    /* [off, z) is zeros: so is every header that ends by z. */
    if (z < off + sizeof(wal_rec_hdr))
        return y;
    return y - off + wal_align(z + 1 - sizeof(wal_rec_hdr));
}

/*
 * The log's record at bad is invalid: ECORRUPT if a valid record within
 * the next two segments says the log was durable past bad; else KEEL_EEOF.
 * A record's claim is its LSN less its header's durable gap; a gap too
 * large for the header claims nothing (wal_hdr_durable()), and loses
 * nothing here: it would put the durable end over 4 GiB before the
 * record, and so before bad, which is less than two segments before it.
 */
static int check_tail(wal_reader *r, uint64_t bad, kerr *err)
{
    uint64_t limit = (bad / WAL_SEG_SIZE + 2) * WAL_SEG_SIZE;

    for (uint64_t y = bad + WAL_ALIGN; y < limit; y += WAL_ALIGN) {
        const char *p;
        wal_rec_hdr h;
        int rc;

        y = skip_zeros(r, y);
        if (y >= limit)
            break;
        rc = get_bytes(r, y, sizeof(h), &p, err);

        if (rc != KEEL_OK)
            return rc;
        if (p == NULL)
            break; /* the files end */
        memcpy(&h, p, sizeof(h));
        if (!header_sane(&h, y) || wal_hdr_durable(&h, y) <= bad)
            continue;
        rc = read_record(r, y, &p, err);
        if (rc != KEEL_OK)
            return rc;
        if (p != NULL)
            return kerr_set(err, KEEL_ECORRUPT,
                            "the write-ahead log is corrupt: log segment "
                            "%016" PRIX64 " at offset %" PRIu64
                            " holds a damaged record, which the record at "
                            "LSN %" PRIu64 " says was durable",
                            bad / WAL_SEG_SIZE, bad % WAL_SEG_SIZE, y);
    }
    return KEEL_EEOF;
}

int wal_reader_next(wal_reader *r, const wal_record **rec, const char **body,
                    kerr *err)
{
    const char *p;
    int rc = read_record(r, r->pos, &p, err);

    *rec = NULL;
    *body = NULL;
    if (rc != KEEL_OK)
        return rc;
    if (p == NULL)
        return check_tail(r, r->pos, err);
    wal_hdr_decode((const wal_rec_hdr *)p, r->pos, &r->cur);
    *rec = &r->cur;
    *body = p + WAL_HDR_SIZE;
    r->pos += wal_align(r->cur.len);
    return KEEL_OK;
}

int wal_find_end(const char *dir, wal_lsn start, wal_lsn *end, kerr *err)
{
    wal_reader *r;
    const wal_record *h;
    const char *b;
    int rc = wal_reader_open(dir, start, &r, err);

    if (rc != KEEL_OK)
        return rc;
    while ((rc = wal_reader_next(r, &h, &b, err)) == KEEL_OK)
        ;
    *end = wal_reader_end(r);
    wal_reader_close(r);
    return rc == KEEL_EEOF ? KEEL_OK : rc;
}
