/*
 * wal.c: the write-ahead log's insertion, flushing (group commit),
 * segment files and log writer thread.  Reading is in wal_read.c.  The
 * protocol is in src/wal/README.md.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "port/clock.h"
#include "port/crc32c.h"
#include "port/futex.h"
#include "storage/fault.h"
#include "storage/powerloss.h"
#include "wal/wal.h"
#include "wal/wal_internal.h"

#define SLOT_FREE UINT64_MAX

/*
 * An insertion slot.  Its counters are written only by the slot's holder
 * (a plain load and store: the CAS that takes the slot and the store that
 * frees it order one holder's updates before the next's), on the line
 * it writes `at` to anyway, so counting adds no write to a line another
 * inserter writes; wal_stats_read() sums them over the slots.
 */
typedef struct wal_slot {
    alignas(64) atomic_u64 at; /* SLOT_FREE, or at most the position being
                                * copied by the slot's holder */
    atomic_u64 records;        /* inserted through this slot */
    atomic_u64 fpi;            /* whole page images in them */
    atomic_u64 fpi_bytes;
} wal_slot;

_Static_assert(sizeof(wal_slot) == 64, "an insertion slot is one line");

struct wal {
    /* Read by every insert; written once per checkpoint. */
    alignas(64) atomic_u64 redo; /* redo pointer, | 1 while one is chosen */
    atomic_u64 flushed; /* durable end (read by inserts, for the gap) */
    atomic_int failed;  /* keel_status of the failure, 0 while healthy */
    bool read_only;
    atomic_int synchronous;
    uint32_t buf_mask;
    char *buf;
    /* Written by every insert. */
    alignas(64) atomic_u64 insert_pos;
    alignas(64) wal_slot slots[WAL_INSERT_SLOTS];
    /* Under write_lock. */
    alignas(64) pthread_mutex_t write_lock;
    atomic_u32 flush_seq;     /* bumped at every release of write_lock */
    atomic_u32 flush_waiters; /* sessions waiting for it (wal_flush()) */
    atomic_u64 written; /* all bytes below it are in the files */
    /* Counters (wal_stats_read()): writes and syncs under write_lock,
     * buffers_full by an insert that waits for room (rare). */
    atomic_u64 n_writes, n_syncs, n_buffers_full;
    int fd;             /* the segment written last, or -1 */
    uint64_t fd_seg;
    pthread_mutex_t fail_lock; /* failed_msg */
    char failed_msg[KERR_MSG_MAX];
    /* The writer thread. */
    pthread_t writer;
    bool writer_running;
    pthread_mutex_t writer_lock;
    pthread_cond_t writer_cond;
    bool stop;
    wal_options opts;
    atomic_u64 last_checkpoint_ns; /* monotonic, when the redo last moved */
    uint64_t open_lsn;             /* the insert position at open */
    uint64_t open_realtime_ns;     /* CLOCK_REALTIME at open */
    char waldir[4200];
};


void wal_options_init(wal_options *o)
{
    memset(o, 0, sizeof(*o));
    o->synchronous_commit = true;
    o->writer_delay_ms = 10;
    o->buffer_size = WAL_BUFFER_SIZE;
    o->checkpoint_bytes = UINT64_C(1) << 30; /* PostgreSQL's max_wal_size */
    o->checkpoint_seconds = 300;
}

/* ---- segment files ------------------------------------------------- */

void wal_seg_path(const char *waldir, uint64_t seg, char *out, size_t len)
{
    snprintf(out, len, "%s/%016" PRIX64, waldir, seg);
}

static int sync_dir(const char *path, kerr *err)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY);

    if (fd < 0 || fsync(fd) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return kerr_set(err, kerr_from_errno(e), "cannot sync directory \"%s\": %s",
                        path, strerror(e));
    }
    close(fd);
    return KEEL_OK;
}

/*
 * Makes segment seg in waldir, all zeroes and synced, unless it exists
 * (then KEEL_OK: whoever made it finished, since it appears only by a
 * link of a complete file).  Zeroes, not a hole: an fdatasync of a
 * written block of a file whose size and blocks are already on disk
 * writes no metadata.
 */
int wal_seg_make(const char *waldir, uint64_t seg, kerr *err)
{
    char path[4300], tmp[4320];
    static const char zero[65536];
    int fd, rc = KEEL_OK;

    wal_seg_path(waldir, seg, path, sizeof(path));
    if (access(path, F_OK) == 0)
        return KEEL_OK;
    snprintf(tmp, sizeof(tmp), "%s.%lx.tmp", path, (unsigned long)pthread_self());
    fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return kerr_set(err, kerr_from_errno(errno),
                        "cannot create log segment \"%s\": %s", tmp,
                        strerror(errno));
    for (uint64_t off = 0; off < WAL_SEG_SIZE && rc == KEEL_OK;
         off += sizeof(zero)) {
        ssize_t n = pwrite(fd, zero, sizeof(zero), (off_t)off);
        if (n != (ssize_t)sizeof(zero))
            rc = kerr_set(err, n < 0 ? kerr_from_errno(errno) : KEEL_ENOSPC,
                          "cannot write log segment \"%s\": %s", tmp,
                          n < 0 ? strerror(errno) : "short write");
    }
    if (rc == KEEL_OK && fsync(fd) != 0)
        rc = kerr_set(err, kerr_from_errno(errno),
                      "cannot sync log segment \"%s\": %s", tmp,
                      strerror(errno));
    close(fd);
    if (rc == KEEL_OK && link(tmp, path) != 0 && errno != EEXIST)
        rc = kerr_set(err, kerr_from_errno(errno),
                      "cannot name log segment \"%s\": %s", path,
                      strerror(errno));
    unlink(tmp);
    if (rc == KEEL_OK)
        rc = sync_dir(waldir, err);
    return rc;
}

int wal_create(const char *dir, kerr *err)
{
    char waldir[4200];

    snprintf(waldir, sizeof(waldir), "%s/%s", dir, WAL_DIR_NAME);
    if (mkdir(waldir, 0700) != 0 && errno != EEXIST)
        return kerr_set(err, kerr_from_errno(errno),
                        "cannot create log directory \"%s\": %s", waldir,
                        strerror(errno));
    return wal_seg_make(waldir, WAL_FIRST_LSN / WAL_SEG_SIZE, err);
}

/* Marks the log failed with rc (the first failure's message is kept:
 * written under fail_lock before `failed` says so). */
static int wal_fail(wal *w, int rc, const char *msg)
{
    pthread_mutex_lock(&w->fail_lock);
    if (atomic_load(&w->failed) == 0) {
        snprintf(w->failed_msg, sizeof(w->failed_msg), "%s", msg);
        atomic_store(&w->failed, rc);
    }
    pthread_mutex_unlock(&w->fail_lock);
    return rc;
}

static int failed_error(wal *w, kerr *err)
{
    int rc;

    pthread_mutex_lock(&w->fail_lock);
    rc = atomic_load(&w->failed);
    kerr_set(err, rc,
             "the write-ahead log failed (%s): the database refuses "
             "writes until it is reopened",
             w->failed_msg);
    pthread_mutex_unlock(&w->fail_lock);
    return rc;
}

static int sync_fd(wal *w, kerr *err);

/* Under write_lock: the descriptor of segment seg, made if missing. */
static int seg_fd(wal *w, uint64_t seg, kerr *err)
{
    char path[4300];
    int rc;

    if (w->fd >= 0 && w->fd_seg == seg)
        return KEEL_OK;
    if (w->fd >= 0) {
        /* Leaving a segment: what was written to it must be durable
         * before a later flush, which syncs only the newest segment,
         * counts it so. */
        rc = sync_fd(w, err);
        if (rc != KEEL_OK)
            return rc;
        close(w->fd);
        w->fd = -1;
    }
    rc = wal_seg_make(w->waldir, seg, err);
    if (rc != KEEL_OK)
        return rc;
    wal_seg_path(w->waldir, seg, path, sizeof(path));
    w->fd = open(path, O_RDWR);
    if (w->fd < 0)
        return kerr_set(err, kerr_from_errno(errno),
                        "cannot open log segment \"%s\": %s", path,
                        strerror(errno));
    w->fd_seg = seg;
    return KEEL_OK;
}

/* Under write_lock: writes [written, upto) from the ring to the files. */
static int write_out(wal *w, uint64_t upto, kerr *err)
{
    uint64_t pos = atomic_load_relaxed(&w->written);
    uint64_t size = (uint64_t)w->buf_mask + 1;

    while (pos < upto) {
        uint64_t seg = pos / WAL_SEG_SIZE, off = pos % WAL_SEG_SIZE;
        uint64_t ring = pos & w->buf_mask;
        size_t n = (size_t)(upto - pos);
        ssize_t got;
        int rc, e;

        if (n > WAL_SEG_SIZE - off)
            n = (size_t)(WAL_SEG_SIZE - off);
        if (n > size - ring)
            n = (size_t)(size - ring);
        rc = seg_fd(w, seg, err);
        if (rc != KEEL_OK)
            return rc;
        e = fault_errno(FAULT_OP_WAL_WRITE, 0, &n);
        if (e == 0)
            powerloss_write(w->fd, n, (off_t)off);
        got = e != 0 ? -1 : pwrite(w->fd, w->buf + ring, n, (off_t)off);
        if (got < 0 && e == 0)
            e = errno;
        if (got < 0 || (size_t)got != n || e != 0)
            return kerr_set(err, got < 0 ? kerr_from_errno(e) : KEEL_ENOSPC,
                            "cannot write log segment %016" PRIX64
                            " at offset %" PRIu64 ": %s",
                            seg, off, got < 0 ? strerror(e) : "short write");
        pos += (uint64_t)got;
        atomic_store_relaxed(&w->n_writes,
                             atomic_load_relaxed(&w->n_writes) + 1);
        atomic_store_release(&w->written, pos);
    }
    return KEEL_OK;
}

/*
 * Where every insertion below is complete: the insert position, or the
 * lowest position an insertion slot is still copying at.  The slot holder
 * publishes a lower bound of its position before reserving (README.md),
 * so a reservation this scan misses lies at or past the position read.
 */
static uint64_t done_upto(wal *w)
{
    uint64_t end = atomic_load(&w->insert_pos);

    for (int i = 0; i < WAL_INSERT_SLOTS; i++) {
        uint64_t at = atomic_load(&w->slots[i].at);
        if (at < end)
            end = at;
    }
    return end;
}

/*
 * Under write_lock: waits until insertions below upto are complete, and
 * sets *done to how far the log is complete (at least upto).  Meanwhile
 * it writes out what is complete already: an insertion below upto may be
 * waiting for room in the ring (wait_room()), which only a write makes.
 */
static int wait_done(wal *w, uint64_t upto, uint64_t *done, kerr *err)
{
    int spins = 0;

    while ((*done = done_upto(w)) < upto) {
        if (*done > atomic_load_relaxed(&w->written)) {
            int rc = write_out(w, *done, err);
            if (rc != KEEL_OK)
                return rc;
        }
        if (++spins < 100)
            cpu_relax();
        else
            sched_yield();
    }
    return KEEL_OK;
}

static int sync_fd(wal *w, kerr *err)
{
    int e = fault_errno(FAULT_OP_WAL_SYNC, 0, NULL);

    if (w->fd < 0)
        return KEEL_OK;
    if (e == 0) {
        if (fdatasync(w->fd) != 0)
            e = errno;
        atomic_store_relaxed(&w->n_syncs, atomic_load_relaxed(&w->n_syncs) + 1);
    }
    if (e == 0)
        powerloss_sync(w->fd);
    if (e != 0)
        return kerr_set(err, kerr_from_errno(e),
                        "cannot sync log segment %016" PRIX64 ": %s", w->fd_seg,
                        strerror(e));
    return KEEL_OK;
}

/*
 * Releases the write lock, and wakes whoever waits for what its holder
 * did (wal_flush()): the sequence moves before the unlock, the waiters
 * are counted before they read it, both sequentially consistent, so a
 * waiter either sees the new sequence (and the new durable end stored
 * before it) or is counted and woken.
 */
static void write_unlock(wal *w)
{
    atomic_fetch_add(&w->flush_seq, 1);
    pthread_mutex_unlock(&w->write_lock);
    if (atomic_load(&w->flush_waiters) != 0)
        futex_wake(&w->flush_seq, INT32_MAX);
}

int wal_flush(wal *w, wal_lsn upto, kerr *err)
{
    uint64_t target;
    int rc;

    if (atomic_load_acquire(&w->flushed) >= upto)
        return KEEL_OK;
    if (w->read_only)
        return KEEL_OK; /* recovery's pages: their log is on disk */
    /*
     * Group commit: whoever holds the write lock is writing, and what it
     * makes durable may cover us.  So rather than queue on the lock (and
     * be woken one by one, each to find its record durable already), wait
     * for the holder to finish, all together, and look again.
     */
    for (;;) {
        uint32_t seq;

        if (atomic_load(&w->failed) != 0)
            return failed_error(w, err);
        if (pthread_mutex_trylock(&w->write_lock) == 0)
            break;
        atomic_fetch_add(&w->flush_waiters, 1);
        seq = atomic_load(&w->flush_seq);
        if (atomic_load(&w->flushed) < upto &&
            atomic_load(&w->failed) == 0)
            futex_wait_timeout(&w->flush_seq, seq, 10u * 1000000u);
        atomic_fetch_sub(&w->flush_waiters, 1);
        if (atomic_load_acquire(&w->flushed) >= upto)
            return KEEL_OK;
    }
    if (atomic_load(&w->failed) != 0) {
        write_unlock(w);
        return failed_error(w, err);
    }
    if (atomic_load_relaxed(&w->flushed) >= upto) {
        write_unlock(w);
        return KEEL_OK;
    }
    rc = wait_done(w, upto, &target, err);
    if (rc == KEEL_OK)
        rc = write_out(w, target, err);
    if (rc == KEEL_OK)
        rc = sync_fd(w, err);
    if (rc == KEEL_OK)
        atomic_store_release(&w->flushed, target);
    else
        wal_fail(w, rc, err->msg);
    write_unlock(w);
    return rc;
}

/*
 * An insert's wait for room in the ring: the bytes below need (its end
 * less the ring's size) must have been written out.  It writes them
 * itself if the write lock is free; a holder is writing (wait_done()).
 */
static int wait_room(wal *w, uint64_t need, kerr *err)
{
    if (atomic_load_acquire(&w->written) < need)
        atomic_fetch_add_explicit(&w->n_buffers_full, 1, memory_order_relaxed);
    while (atomic_load_acquire(&w->written) < need) {
        if (atomic_load(&w->failed) != 0)
            return failed_error(w, err);
        if (pthread_mutex_trylock(&w->write_lock) == 0) {
            uint64_t done = done_upto(w);
            if (done > atomic_load_relaxed(&w->written) &&
                atomic_load(&w->failed) == 0) {
                int rc = write_out(w, done, err);
                if (rc != KEEL_OK)
                    wal_fail(w, rc, err->msg);
            }
            write_unlock(w);
        }
        if (atomic_load_acquire(&w->written) < need)
            sched_yield();
    }
    return KEEL_OK;
}

/* Copies n bytes to the ring at LSN pos, wrapping around its end. */
static void ring_copy(wal *w, uint64_t pos, const void *src, size_t n)
{
    uint64_t ring = pos & w->buf_mask;
    size_t first = (size_t)((uint64_t)w->buf_mask + 1 - ring);

    if (first >= n) {
        memcpy(w->buf + ring, src, n);
    } else {
        memcpy(w->buf + ring, src, first);
        memcpy(w->buf, (const char *)src + first, n - first);
    }
}

/* Zeroes n bytes of the ring at LSN pos: a record's padding, or a
 * filler's whole body. */
static void ring_zero(wal *w, uint64_t pos, size_t n)
{
    static const char zero[512];

    while (n > 0) {
        size_t k = n < sizeof(zero) ? n : sizeof(zero);
        ring_copy(w, pos, zero, k);
        pos += k;
        n -= k;
    }
}

int wal_insert(wal *w, uint32_t hint, uint8_t type, uint8_t info, uint32_t xid,
               const struct iovec *parts, int n, uint32_t total,
               const wal_fpi *fpi, wal_lsn *redo, wal_lsn *end, kerr *err)
{
    wal_rec_hdr h;
    uint32_t len = (uint32_t)sizeof(h) + total, crc = 0;
    uint64_t alen = wal_align(len), pos, lb, at, durable;
    wal_slot *slot;
    uint32_t i = hint % WAL_INSERT_SLOTS;
    bool gave_up = false;
    int rc;

    if (w->read_only)
        return kerr_set(err, KEEL_EREADONLY, "the log is open read-only");
    if (atomic_load_relaxed(&w->failed) != 0)
        return failed_error(w, err);
    if (total > WAL_MAX_RECORD - sizeof(h))
        return kerr_set(err, KEEL_ETOOBIG, "a log record of %u bytes is too big",
                        total);
    for (int k = 0; k < n; k++)
        crc = crc32c_extend(crc, parts[k].iov_base, parts[k].iov_len);

    /* A slot, publishing a lower bound of the position we will get. */
    for (;;) {
        at = SLOT_FREE;
        lb = atomic_load_relaxed(&w->insert_pos);
        slot = &w->slots[i];
        if (atomic_load_relaxed(&slot->at) == SLOT_FREE &&
            atomic_compare_exchange_strong(&slot->at, &at, lb))
            break;
        i = (i + 1) % WAL_INSERT_SLOTS;
        cpu_relax();
    }
    pos = atomic_fetch_add(&w->insert_pos, alen);
    atomic_store(&slot->at, pos); /* exact now: see wait_room() */

    if (redo != NULL) {
        uint64_t r;
        while ((r = atomic_load(&w->redo)) & 1)
            cpu_relax(); /* a checkpoint is choosing it: a few steps */
        if (r != *redo && pos >= r) {
            /* Built against an older redo pointer: give the space to a
             * filler, and the caller builds the record again. */
            *redo = r;
            gave_up = true;
            type = WAL_NOOP;
            info = 0;
            xid = 0;
            n = 0;
            fpi = NULL;
            len = (uint32_t)alen;
            crc = 0;
            for (uint64_t z = sizeof(h); z < alen; z += WAL_ALIGN)
                crc = crc32c_extend(crc, "\0\0\0\0\0\0\0\0", WAL_ALIGN);
        }
    }
    rc = wait_room(w, pos + alen - ((uint64_t)w->buf_mask + 1), err);
    if (rc != KEEL_OK) {
        atomic_store(&slot->at, SLOT_FREE);
        return rc;
    }
    /* The durable end is at most pos: a flush stops at done_upto(), which
     * our slot holds at or below pos until the copy is done. */
    durable = atomic_load_relaxed(&w->flushed);
    assert(durable <= pos);
    wal_hdr_make(&h, len, pos, durable, xid, type, info);
    wal_hdr_seal(&h, crc);
    ring_copy(w, pos, &h, sizeof(h));
    {
        uint64_t p = pos + sizeof(h);
        for (int k = 0; k < n; k++) {
            ring_copy(w, p, parts[k].iov_base, parts[k].iov_len);
            p += parts[k].iov_len;
        }
        if (p < pos + alen)
            ring_zero(w, p, (size_t)(pos + alen - p));
    }
    /* The slot's own counters: only its holder writes them. */
    atomic_store_relaxed(&slot->records, atomic_load_relaxed(&slot->records) + 1);
    if (fpi != NULL && fpi->count > 0) {
        atomic_store_relaxed(&slot->fpi,
                             atomic_load_relaxed(&slot->fpi) + fpi->count);
        atomic_store_relaxed(&slot->fpi_bytes,
                             atomic_load_relaxed(&slot->fpi_bytes) + fpi->bytes);
    }
    atomic_store(&slot->at, SLOT_FREE);
    *end = pos + alen;
    if (gave_up)
        return kerr_set(err, KEEL_EBUSY, "the redo pointer moved");
    return KEEL_OK;
}

wal_lsn wal_insert_lsn(wal *w)
{
    return atomic_load(&w->insert_pos);
}

void wal_stats_read(wal *w, wal_stats *out)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < WAL_INSERT_SLOTS; i++) {
        out->records += atomic_load_relaxed(&w->slots[i].records);
        out->fpi += atomic_load_relaxed(&w->slots[i].fpi);
        out->fpi_bytes += atomic_load_relaxed(&w->slots[i].fpi_bytes);
    }
    out->insert_lsn = atomic_load(&w->insert_pos);
    out->bytes = out->insert_lsn - w->open_lsn;
    out->buffers_full = atomic_load_relaxed(&w->n_buffers_full);
    out->writes = atomic_load_relaxed(&w->n_writes);
    out->syncs = atomic_load_relaxed(&w->n_syncs);
    out->reset_ns = w->open_realtime_ns;
}

bool wal_failed(const wal *w)
{
    return atomic_load(&((wal *)w)->failed) != 0;
}

bool wal_synchronous(const wal *w)
{
    return atomic_load_relaxed(&((wal *)w)->synchronous) != 0;
}

wal_lsn wal_redo_hint(wal *w)
{
    return atomic_load_acquire(&w->redo) & ~(uint64_t)1;
}

wal_lsn wal_redo_begin(wal *w)
{
    uint64_t old = atomic_load(&w->redo), r;

    atomic_store(&w->redo, old | 1);
    r = atomic_load(&w->insert_pos);
    atomic_store(&w->redo, r);
    atomic_store_relaxed(&w->last_checkpoint_ns, clock_now_ns());
    return r;
}

bool wal_checkpoint_due(wal *w)
{
    uint64_t since = atomic_load_relaxed(&w->insert_pos) - wal_redo_hint(w);
    uint64_t age = clock_now_ns() - atomic_load_relaxed(&w->last_checkpoint_ns);

    if (w->read_only || atomic_load_relaxed(&w->failed) != 0)
        return false;
    return since >= w->opts.checkpoint_bytes ||
           (since > 0 &&
            age >= (uint64_t)w->opts.checkpoint_seconds * 1000000000u);
}

void wal_remove_old(wal *w, wal_lsn redo)
{
    uint64_t keep = redo / WAL_SEG_SIZE, spare = 0;
    uint64_t next = atomic_load(&w->insert_pos) / WAL_SEG_SIZE + 1;

    for (uint64_t seg = keep; seg-- > WAL_FIRST_LSN / WAL_SEG_SIZE;) {
        char path[4300], to[4300];
        wal_seg_path(w->waldir, seg, path, sizeof(path));
        if (access(path, F_OK) != 0)
            break; /* removed by an earlier checkpoint, with all below */
        /* Up to two old segments become future ones: their records carry
         * old LSNs, which no reader takes for the new ones'. */
        wal_seg_path(w->waldir, next + spare, to, sizeof(to));
        if (spare < 2 && access(to, F_OK) != 0 && link(path, to) == 0)
            spare++;
        unlink(path);
    }
    kerr e;
    (void)sync_dir(w->waldir, &e);
}


/* ---- the log writer ---------------------------------------------- */

/*
 * Every writer_delay_ms: makes whatever is complete durable (the bound on
 * what an asynchronous commit may lose), and makes the next segment ahead
 * of need, so that a commit never waits for 16 MiB of zeroes.
 */
static void *writer_main(void *arg)
{
    wal *w = arg;

    pthread_mutex_lock(&w->writer_lock);
    while (!w->stop) {
        struct timespec ts;
        uint64_t pos, ns;
        kerr e;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        ns = (uint64_t)ts.tv_nsec + (uint64_t)w->opts.writer_delay_ms * 1000000u;
        ts.tv_sec += (time_t)(ns / 1000000000u);
        ts.tv_nsec = (long)(ns % 1000000000u);
        pthread_cond_timedwait(&w->writer_cond, &w->writer_lock, &ts);
        if (w->stop)
            break;
        pthread_mutex_unlock(&w->writer_lock);
        pos = atomic_load(&w->insert_pos);
        if (atomic_load(&w->failed) == 0) {
            if (pos > atomic_load_acquire(&w->flushed))
                (void)wal_flush(w, done_upto(w), &e);
            if (pos % WAL_SEG_SIZE > WAL_SEG_SIZE / 2)
                (void)wal_seg_make(w->waldir, pos / WAL_SEG_SIZE + 1, &e);
        }
        pthread_mutex_lock(&w->writer_lock);
    }
    pthread_mutex_unlock(&w->writer_lock);
    return NULL;
}

/* ---- open and close ---------------------------------------------- */

/* After a crash: zeroes [end, end of its segment) and removes the later
 * segments, so that nothing a crash left past the end passes for a
 * record once new ones are written around it. */
static int zero_tail(wal *w, wal_lsn end, kerr *err)
{
    static const char zero[65536];
    uint64_t seg = end / WAL_SEG_SIZE, off = end % WAL_SEG_SIZE;
    int rc;

    pthread_mutex_lock(&w->write_lock);
    rc = seg_fd(w, seg, err);
    while (rc == KEEL_OK && off < WAL_SEG_SIZE) {
        size_t n = sizeof(zero);
        if (n > WAL_SEG_SIZE - off)
            n = (size_t)(WAL_SEG_SIZE - off);
        if (pwrite(w->fd, zero, n, (off_t)off) != (ssize_t)n)
            rc = kerr_set(err, KEEL_EIO, "cannot zero log segment %016" PRIX64
                                         ": %s",
                          seg, strerror(errno));
        off += n;
    }
    if (rc == KEEL_OK)
        rc = sync_fd(w, err);
    write_unlock(w);
    for (uint64_t s = seg + 1; rc == KEEL_OK; s++) {
        char path[4300];
        wal_seg_path(w->waldir, s, path, sizeof(path));
        if (unlink(path) != 0)
            break;
    }
    if (rc == KEEL_OK)
        rc = sync_dir(w->waldir, err);
    return rc;
}

int wal_open(const char *dir, wal_lsn end, wal_lsn redo, bool read_only,
             bool zero, const wal_options *o, wal **out, kerr *err)
{
    wal *w;
    int rc = KEEL_OK;

    *out = NULL;
    if (o->buffer_size < (UINT32_C(1) << 20) ||
        (o->buffer_size & (o->buffer_size - 1)) != 0)
        return kerr_set(err, KEEL_EINVAL,
                        "log buffer of %u bytes: a power of two of at least "
                        "1 MiB is needed",
                        o->buffer_size);
    w = aligned_alloc(64, (sizeof(*w) + 63) & ~(size_t)63);
    if (w == NULL)
        return kerr_set(err, KEEL_ENOMEM, "out of memory");
    memset(w, 0, sizeof(*w));
    w->buf = read_only ? NULL : aligned_alloc(4096, o->buffer_size);
    if (!read_only && w->buf == NULL) {
        free(w);
        return kerr_set(err, KEEL_ENOMEM, "out of memory for the log buffer");
    }
    w->opts = *o;
    w->read_only = read_only;
    w->buf_mask = o->buffer_size - 1;
    w->fd = -1;
    snprintf(w->waldir, sizeof(w->waldir), "%s/%s", dir, WAL_DIR_NAME);
    atomic_init(&w->redo, redo);
    atomic_init(&w->flushed, end);
    atomic_init(&w->written, end);
    atomic_init(&w->insert_pos, end);
    atomic_init(&w->failed, 0);
    atomic_init(&w->synchronous, o->synchronous_commit ? 1 : 0);
    atomic_init(&w->last_checkpoint_ns, clock_now_ns());
    for (int i = 0; i < WAL_INSERT_SLOTS; i++) {
        atomic_init(&w->slots[i].at, SLOT_FREE);
        atomic_init(&w->slots[i].records, 0);
        atomic_init(&w->slots[i].fpi, 0);
        atomic_init(&w->slots[i].fpi_bytes, 0);
    }
    atomic_init(&w->n_writes, 0);
    atomic_init(&w->n_syncs, 0);
    atomic_init(&w->n_buffers_full, 0);
    w->open_lsn = end;
    {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        w->open_realtime_ns =
            (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
    atomic_init(&w->flush_seq, 0);
    atomic_init(&w->flush_waiters, 0);
    pthread_mutex_init(&w->write_lock, NULL);
    pthread_mutex_init(&w->writer_lock, NULL);
    pthread_mutex_init(&w->fail_lock, NULL);
    {
        /* The writer's deadlines are CLOCK_MONOTONIC (writer_main()). */
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&w->writer_cond, &ca);
        pthread_condattr_destroy(&ca);
    }
    if (!read_only && zero)
        rc = zero_tail(w, end, err);
    if (rc == KEEL_OK && !read_only) {
        if (pthread_create(&w->writer, NULL, writer_main, w) != 0)
            rc = kerr_set(err, KEEL_ENOMEM, "cannot start the log writer");
        else
            w->writer_running = true;
    }
    if (rc != KEEL_OK) {
        wal_close(w);
        return rc;
    }
    *out = w;
    return KEEL_OK;
}

void wal_close(wal *w)
{
    kerr e;

    if (w == NULL)
        return;
    if (w->writer_running) {
        pthread_mutex_lock(&w->writer_lock);
        w->stop = true;
        pthread_cond_signal(&w->writer_cond);
        pthread_mutex_unlock(&w->writer_lock);
        pthread_join(w->writer, NULL);
    }
    if (!w->read_only && atomic_load(&w->failed) == 0)
        (void)wal_flush(w, done_upto(w), &e);
    if (w->fd >= 0)
        close(w->fd);
    pthread_mutex_destroy(&w->write_lock);
    pthread_mutex_destroy(&w->writer_lock);
    pthread_mutex_destroy(&w->fail_lock);
    pthread_cond_destroy(&w->writer_cond);
    free(w->buf);
    free(w);
}

const char *wal_type_name(uint8_t type)
{
    static const char *const names[WAL_TYPE_COUNT] = {
        "noop", "pages", "checkpoint", "file_create", "xact_end"};

    return type < WAL_TYPE_COUNT ? names[type] : "unknown";
}

const char *wal_info_name(uint8_t info)
{
    static const char *const names[WAL_INFO_COUNT] = {
        "page",          "heap_insert",   "heap_delete", "heap_update",
        "btree_insert",  "btree_split",   "btree_newroot", "btree_dead",
        "btree_shed",    "commit",        "abort",       "clog_extend",
        "heap_undo"};

    return info < WAL_INFO_COUNT ? names[info] : "unknown";
}
