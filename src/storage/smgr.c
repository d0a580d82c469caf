/*
 * smgr.c: the storage manager: one file per relation, 8 KiB blocks.
 *
 * struct smgr owns the database directory (held open, so that files are
 * opened relative to it and the directory itself can be fsynced after a
 * create or unlink) and a chained hash table of open relations keyed by
 * relation number.  The table is protected by one mutex: it is consulted
 * when a relation is first opened, created or dropped, never per page.
 *
 * Each smgr_rel holds its file descriptor, shared by all threads, and the
 * relation's size in blocks in an atomic.  Reads and writes of existing
 * blocks take no lock (pread and pwrite carry their own offsets); extension
 * and truncation take the relation's extend_lock, which is what makes
 * concurrent extensions hand out distinct block numbers.  nblocks is
 * written only under extend_lock, with release ordering after the block is
 * in the file, so a reader that sees block n counted can read it.
 *
 * A file whose size is not a whole number of blocks: a crash (or a failed
 * rollback of a failed extension) can leave a partial block at the end.
 * The relation's size is the number of whole blocks, so the partial block
 * is invisible; the next extension writes a whole block at that offset,
 * overwriting it, and a failed extension or a truncation cuts the file back
 * to a whole number of blocks.  Nothing in a partial block can have been
 * acknowledged to anyone, so ignoring it loses nothing, and refusing to
 * open the relation instead would turn a harmless crash artifact into an
 * outage.  (PostgreSQL's md.c behaves the same way.)
 *
 * Fault injection: every pread, pwrite and fsync of a relation file goes
 * through one wrapper below that first asks fault_next(), so an injected
 * fault takes exactly the code path a real one would.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strerror_r returning the message, not an int */
#endif

#include "storage/smgr.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "port/atomics.h"
#include "port/hash.h"
#include "storage/fault.h"
#include "storage/powerloss.h"

#define SMGR_INITIAL_BUCKETS 64

/* Room for a relation number in decimal and its NUL. */
#define REL_NAME_MAX 11

/* A registered page check (smgr_rel_set_check()); immutable once
 * published.  Replaced ones stay on the retired list until the relation
 * is freed, since a reader may still hold one. */
typedef struct smgr_check_entry {
    smgr_check_fn fn;
    size_t len;
    struct smgr_check_entry *retired;
    _Alignas(8) unsigned char arg[];
} smgr_check_entry;

struct smgr_rel {
    /* Read on every I/O. */
    int fd;
    relnumber_t relnumber;
    bool read_only;
    atomic_u32 nblocks; /* whole blocks in the file; see the file comment */
    /* Read on every page read from disk. */
    _Atomic(smgr_check_entry *) check;

    /* Used on extension, truncation and lookup only. */
    pthread_mutex_t extend_lock; /* serializes extend and truncate */
    smgr_rel *next;              /* hash chain, under smgr.lock */
    char path[];                 /* "<dir>/<relnumber>", for messages */
};

struct smgr {
    pthread_mutex_t lock; /* protects table, nbuckets and count */
    smgr_rel **table;     /* nbuckets chains */
    size_t nbuckets;      /* a power of two */
    size_t count;
    bool read_only;
    int dir_fd; /* the directory, O_RDONLY, for openat and fsync */
    char dir[]; /* its path, without trailing slashes */
};

/* ---- system call wrappers ------------------------------------------- */

static const char *errno_str(int e, char *buf, size_t len)
{
    return strerror_r(e, buf, len);
}

/* The fsync of the directory after rel's file was created or removed. */
static int dir_fsync(const smgr *s, relnumber_t rel)
{
    int e = fault_errno(FAULT_OP_DIR_SYNC, rel, NULL);

    if (e != 0) {
        errno = e;
        return -1;
    }
    return fsync(s->dir_fd);
}

static ssize_t rel_pread(const smgr_rel *r, void *buf, size_t len, off_t off)
{
    int e = fault_errno(FAULT_OP_READ, r->relnumber, &len);
    ssize_t n;

    if (e != 0) {
        errno = e;
        return -1;
    }
    do
        n = pread(r->fd, buf, len, off);
    while (n < 0 && errno == EINTR);
    return n;
}

static ssize_t rel_pwrite(const smgr_rel *r, const void *buf, size_t len,
                          off_t off)
{
    int e = fault_errno(FAULT_OP_WRITE, r->relnumber, &len);
    ssize_t n;

    if (e != 0) {
        errno = e;
        return -1;
    }
    powerloss_write(r->fd, len, off);
    do
        n = pwrite(r->fd, buf, len, off);
    while (n < 0 && errno == EINTR);
    return n;
}

static int rel_fsync(const smgr_rel *r)
{
    int rc, e = fault_errno(FAULT_OP_SYNC, r->relnumber, NULL);

    if (e != 0) {
        errno = e;
        return -1;
    }
    do
        rc = fsync(r->fd);
    while (rc < 0 && errno == EINTR);
    if (rc == 0)
        powerloss_sync(r->fd);
    return rc;
}

static int ftruncate_retry(int fd, off_t len)
{
    int rc;

    do
        rc = ftruncate(fd, len);
    while (rc < 0 && errno == EINTR);
    return rc;
}

static off_t block_offset(blocknum_t blk)
{
    return (off_t)blk * BLOCK_SIZE;
}

/* ---- the table of open relations (caller holds smgr.lock) ------------ */

static size_t table_bucket(const smgr *s, relnumber_t rel)
{
    return (size_t)hash_u64(rel) & (s->nbuckets - 1);
}

static smgr_rel *table_find(const smgr *s, relnumber_t rel)
{
    for (smgr_rel *r = s->table[table_bucket(s, rel)]; r != NULL; r = r->next)
        if (r->relnumber == rel)
            return r;
    return NULL;
}

/* Doubles the table when chains would average more than one entry.  If
 * memory for a bigger table cannot be had, chains simply grow longer. */
static void table_insert(smgr *s, smgr_rel *r)
{
    size_t b;

    if (s->count >= s->nbuckets) {
        size_t n = s->nbuckets * 2;
        smgr_rel **t = calloc(n, sizeof(*t));

        if (t != NULL) {
            for (size_t i = 0; i < s->nbuckets; i++) {
                smgr_rel *next;
                for (smgr_rel *e = s->table[i]; e != NULL; e = next) {
                    size_t nb = (size_t)hash_u64(e->relnumber) & (n - 1);
                    next = e->next;
                    e->next = t[nb];
                    t[nb] = e;
                }
            }
            free(s->table);
            s->table = t;
            s->nbuckets = n;
        }
    }
    b = table_bucket(s, r->relnumber);
    r->next = s->table[b];
    s->table[b] = r;
    s->count++;
}

static smgr_rel *table_remove(smgr *s, relnumber_t rel)
{
    for (smgr_rel **pp = &s->table[table_bucket(s, rel)]; *pp != NULL;
         pp = &(*pp)->next) {
        smgr_rel *r = *pp;
        if (r->relnumber == rel) {
            *pp = r->next;
            s->count--;
            return r;
        }
    }
    return NULL;
}

/* ---- relation handles ------------------------------------------------ */

static void rel_name(relnumber_t rel, char name[REL_NAME_MAX])
{
    snprintf(name, REL_NAME_MAX, "%" PRIu32, rel);
}

bool smgr_relnumber_of(const char *name, relnumber_t *out)
{
    uint64_t v = 0;

    if (name[0] < '1' || name[0] > '9')
        return false;
    for (const char *p = name; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX)
            return false;
    }
    *out = (relnumber_t)v;
    return true;
}

/* A handle with no file yet (fd -1); NULL if memory is exhausted. */
static smgr_rel *rel_alloc(const smgr *s, relnumber_t rel)
{
    size_t pathlen = strlen(s->dir) + 1 + REL_NAME_MAX;
    smgr_rel *r = malloc(sizeof(*r) + pathlen);

    if (r == NULL)
        return NULL;
    r->fd = -1;
    r->relnumber = rel;
    r->read_only = s->read_only;
    atomic_store_relaxed(&r->nblocks, 0);
    atomic_store_relaxed(&r->check, NULL);
    r->next = NULL;
    snprintf(r->path, pathlen, "%s/%" PRIu32, s->dir, rel);
    if (pthread_mutex_init(&r->extend_lock, NULL) != 0) {
        free(r);
        return NULL;
    }
    return r;
}

static void rel_free(smgr_rel *r)
{
    smgr_check_entry *c = atomic_load_relaxed(&r->check), *next;

    for (; c != NULL; c = next) {
        next = c->retired;
        free(c);
    }
    if (r->fd >= 0)
        close(r->fd);
    pthread_mutex_destroy(&r->extend_lock);
    free(r);
}

/* Learns the relation's size from its open file: the number of whole
 * blocks, a trailing partial block ignored (see the file comment). */
static int rel_load_size(smgr_rel *r, kerr *err)
{
    struct stat st;
    char ebuf[128];
    off_t blocks;

    if (fstat(r->fd, &st) != 0) {
        int e = errno;
        return kerr_set(err, kerr_from_errno(e),
                        "could not stat file \"%s\": %s", r->path,
                        errno_str(e, ebuf, sizeof(ebuf)));
    }
    /* A read-only open's O_RDONLY opens a directory, as O_RDWR does not;
     * a FIFO or a device opens either way, and its reads would block or
     * read what is not a relation. */
    if (S_ISDIR(st.st_mode))
        return kerr_set(err, KEEL_EIO, "could not open file \"%s\": %s",
                        r->path, errno_str(EISDIR, ebuf, sizeof(ebuf)));
    if (!S_ISREG(st.st_mode))
        return kerr_set(err, KEEL_EIO,
                        "could not open file \"%s\": not a regular file",
                        r->path);
    blocks = st.st_size / BLOCK_SIZE;
    if (blocks > (off_t)MAX_BLOCK_NUMBER + 1)
        return kerr_set(err, KEEL_ECORRUPT,
                        "file \"%s\" is too large for a relation (%lld bytes)",
                        r->path, (long long)st.st_size);
    atomic_store_relaxed(&r->nblocks, (uint32_t)blocks);
    return KEEL_OK;
}

/* ---- the storage manager --------------------------------------------- */

static int smgr_open_mode(const char *dir, bool read_only, smgr **out,
                          kerr *err)
{
    size_t len = strlen(dir);
    char ebuf[128];
    smgr *s;
    int fd;

    *out = NULL;
    /* Trailing slashes would double up in every path we print. */
    while (len > 1 && dir[len - 1] == '/')
        len--;

    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        int code = e == ENOTDIR ? KEEL_EINVAL : kerr_from_errno(e);
        return kerr_set(err, code,
                        "could not open database directory \"%s\": %s", dir,
                        errno_str(e, ebuf, sizeof(ebuf)));
    }

    s = calloc(1, sizeof(*s) + len + 1);
    if (s != NULL)
        s->table = calloc(SMGR_INITIAL_BUCKETS, sizeof(*s->table));
    if (s == NULL || s->table == NULL ||
        pthread_mutex_init(&s->lock, NULL) != 0) {
        if (s != NULL)
            free(s->table);
        free(s);
        close(fd);
        return kerr_set(err, KEEL_ENOMEM,
                        "out of memory opening database directory \"%s\"", dir);
    }
    s->nbuckets = SMGR_INITIAL_BUCKETS;
    s->read_only = read_only;
    s->dir_fd = fd;
    memcpy(s->dir, dir, len);
    s->dir[len] = '\0';
    *out = s;
    return KEEL_OK;
}

int smgr_open(const char *dir, smgr **out, kerr *err)
{
    return smgr_open_mode(dir, false, out, err);
}

int smgr_open_read_only(const char *dir, smgr **out, kerr *err)
{
    return smgr_open_mode(dir, true, out, err);
}

static int refuse(const smgr_rel *r, const char *what, kerr *err)
{
    return kerr_set(err, KEEL_EREADONLY,
                    "could not %s file \"%s\": database opened read-only", what,
                    r->path);
}

void smgr_close(smgr *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        smgr_rel *next;
        for (smgr_rel *r = s->table[i]; r != NULL; r = next) {
            next = r->next;
            rel_free(r);
        }
    }
    free(s->table);
    pthread_mutex_destroy(&s->lock);
    close(s->dir_fd);
    free(s);
}

const char *smgr_dir(const smgr *s)
{
    return s->dir;
}

/*
 * Holds smgr.lock across the directory fsync: creation is rare, and holding
 * it means nobody can open the file between its creation and our removing
 * it again if the fsync fails.
 */
int smgr_create(smgr *s, relnumber_t rel, smgr_rel **out, kerr *err)
{
    char name[REL_NAME_MAX];
    char ebuf[128];
    smgr_rel *r;
    int e;

    if (out != NULL)
        *out = NULL;
    if (rel == INVALID_RELNUMBER)
        return kerr_set(err, KEEL_EINVAL,
                        "could not create relation: invalid relation number 0");
    if (s->read_only)
        return kerr_set(err, KEEL_EREADONLY,
                        "could not create relation %u: database \"%s\" opened "
                        "read-only",
                        rel, s->dir);
    rel_name(rel, name);
    r = rel_alloc(s, rel);
    if (r == NULL)
        return kerr_set(err, KEEL_ENOMEM,
                        "out of memory creating file \"%s/%s\"", s->dir, name);

    pthread_mutex_lock(&s->lock);
    if (table_find(s, rel) != NULL) {
        pthread_mutex_unlock(&s->lock);
        rel_free(r);
        return kerr_set(err, KEEL_EEXIST,
                        "could not create file \"%s/%s\": file exists", s->dir,
                        name);
    }
    r->fd =
        openat(s->dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (r->fd < 0) {
        e = errno;
        pthread_mutex_unlock(&s->lock);
        rel_free(r);
        return kerr_set(err, kerr_from_errno(e),
                        "could not create file \"%s/%s\": %s", s->dir, name,
                        errno_str(e, ebuf, sizeof(ebuf)));
    }
    if (dir_fsync(s, rel) != 0) {
        /* The file's existence is not durable: undo it rather than hand
         * out a relation that may vanish in a crash. */
        e = errno;
        unlinkat(s->dir_fd, name, 0);
        pthread_mutex_unlock(&s->lock);
        rel_free(r);
        return kerr_set(err, KEEL_EIO,
                        "could not fsync directory \"%s\" after creating file "
                        "\"%s\": %s",
                        s->dir, name, errno_str(e, ebuf, sizeof(ebuf)));
    }
    table_insert(s, r);
    pthread_mutex_unlock(&s->lock);
    if (out != NULL)
        *out = r;
    return KEEL_OK;
}

int smgr_rel_open(smgr *s, relnumber_t rel, smgr_rel **out, kerr *err)
{
    char name[REL_NAME_MAX];
    char ebuf[128];
    smgr_rel *r;
    int rc, fl;

    *out = NULL;
    if (rel == INVALID_RELNUMBER)
        return kerr_set(err, KEEL_EINVAL,
                        "could not open relation: invalid relation number 0");

    pthread_mutex_lock(&s->lock);
    r = table_find(s, rel);
    if (r != NULL) {
        pthread_mutex_unlock(&s->lock);
        *out = r;
        return KEEL_OK;
    }

    rel_name(rel, name);
    r = rel_alloc(s, rel);
    if (r == NULL) {
        pthread_mutex_unlock(&s->lock);
        return kerr_set(err, KEEL_ENOMEM,
                        "out of memory opening file \"%s/%s\"", s->dir, name);
    }
    /* O_NONBLOCK: an O_RDONLY open of a FIFO would wait for a writer
     * (rel_load_size() then refuses it); it changes nothing for a
     * regular file. */
    r->fd = openat(s->dir_fd, name,
                   (s->read_only ? O_RDONLY | O_NONBLOCK : O_RDWR) | O_CLOEXEC);
    if (r->fd < 0) {
        int e = errno;
        pthread_mutex_unlock(&s->lock);
        rc = kerr_set(err, kerr_from_errno(e), "could not open file \"%s\": %s",
                      r->path, errno_str(e, ebuf, sizeof(ebuf)));
        rel_free(r);
        return rc;
    }
    rc = rel_load_size(r, err);
    /* A regular file, then: O_NONBLOCK has done its part (the open), and
     * is not left on the descriptor for the reads. */
    if (rc == KEEL_OK && s->read_only &&
        ((fl = fcntl(r->fd, F_GETFL)) < 0 ||
         fcntl(r->fd, F_SETFL, fl & ~O_NONBLOCK) != 0)) {
        int e = errno;
        rc = kerr_set(err, kerr_from_errno(e), "could not open file \"%s\": %s",
                      r->path, errno_str(e, ebuf, sizeof(ebuf)));
    }
    if (rc != KEEL_OK) {
        pthread_mutex_unlock(&s->lock);
        rel_free(r);
        return rc;
    }
    table_insert(s, r);
    pthread_mutex_unlock(&s->lock);
    *out = r;
    return KEEL_OK;
}

bool smgr_exists(smgr *s, relnumber_t rel)
{
    char name[REL_NAME_MAX];
    struct stat st;

    if (rel == INVALID_RELNUMBER)
        return false;
    rel_name(rel, name);
    return fstatat(s->dir_fd, name, &st, 0) == 0;
}

/*
 * Unlinks first and forgets the handle only once that has worked, so that a
 * failed unlink leaves the relation open and usable.  A failed directory
 * fsync is reported, but the file is gone from the namespace either way.
 */
int smgr_unlink(smgr *s, relnumber_t rel, kerr *err)
{
    char name[REL_NAME_MAX];
    char ebuf[128];
    smgr_rel *r;

    if (rel == INVALID_RELNUMBER)
        return kerr_set(err, KEEL_EINVAL,
                        "could not unlink relation: invalid relation number 0");
    if (s->read_only)
        return kerr_set(err, KEEL_EREADONLY,
                        "could not unlink relation %u: database \"%s\" opened "
                        "read-only",
                        rel, s->dir);
    rel_name(rel, name);

    pthread_mutex_lock(&s->lock);
    if (unlinkat(s->dir_fd, name, 0) != 0) {
        int e = errno;
        pthread_mutex_unlock(&s->lock);
        return kerr_set(err, kerr_from_errno(e),
                        "could not unlink file \"%s/%s\": %s", s->dir, name,
                        errno_str(e, ebuf, sizeof(ebuf)));
    }
    r = table_remove(s, rel);
    if (r != NULL)
        rel_free(r);
    if (dir_fsync(s, rel) != 0) {
        int e = errno;
        pthread_mutex_unlock(&s->lock);
        return kerr_set(err, KEEL_EIO,
                        "could not fsync directory \"%s\" after unlinking file "
                        "\"%s\": %s",
                        s->dir, name, errno_str(e, ebuf, sizeof(ebuf)));
    }
    pthread_mutex_unlock(&s->lock);
    return KEEL_OK;
}

relnumber_t smgr_rel_number(const smgr_rel *r)
{
    return r->relnumber;
}

const char *smgr_rel_path(const smgr_rel *r)
{
    return r->path;
}

blocknum_t smgr_nblocks(smgr_rel *r)
{
    return atomic_load_acquire(&r->nblocks);
}

/* ---- block I/O ------------------------------------------------------- */

/*
 * Sets the checksum of a page about to be written, except on an all-zero
 * page: that is written as is, so that it reads back as a new page rather
 * than as one with a checksum and no header (a buffer manager may extend a
 * relation with zeroes and initialize the page later, as PostgreSQL does).
 */
static void page_prepare_write(void *page)
{
    if (!page_is_new(page))
        page_set_checksum(page);
}

int smgr_read(smgr_rel *r, blocknum_t blk, void *buf, kerr *err)
{
    blocknum_t nblocks = atomic_load_acquire(&r->nblocks);
    uint32_t stored = 0, computed = 0;
    page_header h;
    char ebuf[128];
    ssize_t n;

    if (blk >= nblocks)
        return kerr_set(err, KEEL_EEOF,
                        "could not read block %" PRIu32 " of file \"%s\": "
                        "beyond end of relation (%" PRIu32 " blocks)",
                        blk, r->path, nblocks);

    n = rel_pread(r, buf, BLOCK_SIZE, block_offset(blk));
    if (n < 0) {
        int e = errno;
        return kerr_set(err, KEEL_EIO,
                        "could not read block %" PRIu32 " of file \"%s\": %s",
                        blk, r->path, errno_str(e, ebuf, sizeof(ebuf)));
    }
    if (n != BLOCK_SIZE)
        return kerr_set(err, KEEL_EIO,
                        "could not read block %" PRIu32 " of file \"%s\": "
                        "read only %zd of %d bytes",
                        blk, r->path, n, BLOCK_SIZE);

    switch (page_verify(buf, &stored, &computed)) {
    case PAGE_OK:
    case PAGE_NEW:
        return KEEL_OK;
    case PAGE_BAD_CHECKSUM:
        return kerr_set(err, KEEL_ECORRUPT,
                        "invalid page in block %" PRIu32 " of file \"%s\": "
                        "checksum mismatch (stored 0x%08" PRIx32
                        ", computed 0x%08" PRIx32 ")",
                        blk, r->path, stored, computed);
    case PAGE_BAD_VERSION:
        memcpy(&h, buf, sizeof(h));
        return kerr_set(err, KEEL_EVERSION,
                        "invalid page in block %" PRIu32 " of file \"%s\": "
                        "page layout version %u, expected %d",
                        blk, r->path, (unsigned)h.version, PAGE_LAYOUT_VERSION);
    case PAGE_BAD_HEADER:
        memcpy(&h, buf, sizeof(h));
        return kerr_set(err, KEEL_ECORRUPT,
                        "invalid page in block %" PRIu32 " of file \"%s\": "
                        "corrupt header (lower %u, upper %u, special %u)",
                        blk, r->path, (unsigned)h.lower, (unsigned)h.upper,
                        (unsigned)h.special);
    }
    return kerr_set(err, KEEL_ECORRUPT,
                    "invalid page in block %" PRIu32 " of file \"%s\"", blk,
                    r->path);
}

int smgr_rel_set_check(smgr_rel *r, smgr_check_fn fn, const void *arg,
                       size_t len, kerr *err)
{
    smgr_check_entry *old = atomic_load_acquire(&r->check), *c;

    for (;;) {
        if (old != NULL && old->fn == fn && old->len == len &&
            memcmp(old->arg, arg, len) == 0)
            return KEEL_OK;
        c = malloc(sizeof(*c) + len);
        if (c == NULL)
            return kerr_set(err, KEEL_ENOMEM,
                            "out of memory for the page check of file \"%s\"",
                            r->path);
        c->fn = fn;
        c->len = len;
        c->retired = old;
        memcpy(c->arg, arg, len);
        if (atomic_compare_exchange_strong_explicit(
                &r->check, &old, c, memory_order_acq_rel, memory_order_acquire))
            return KEEL_OK;
        free(c); /* another registration won: compare with it */
    }
}

int smgr_check(smgr_rel *r, blocknum_t blk, const void *page, kerr *err)
{
    const smgr_check_entry *c = atomic_load_acquire(&r->check);
    char why[KERR_MSG_MAX / 2];

    if (c == NULL || page_is_new(page) ||
        c->fn(page, blk, c->arg, why, sizeof(why)))
        return KEEL_OK;
    return kerr_set(err, KEEL_ECORRUPT,
                    "invalid page in block %" PRIu32 " of file \"%s\": %s", blk,
                    r->path, why);
}

/*
 * Turns a pwrite of a whole block that did not return BLOCK_SIZE into an
 * error.  what names the operation ("write block 7 of file ..."); e is the
 * errno when n < 0.  A short write means the disk is full, as in
 * PostgreSQL: the kernel writes less than asked only when it runs out of
 * room (or quota, or file size limit).
 */
static int write_failed(ssize_t n, int e, const char *what, kerr *err)
{
    char ebuf[128];

    if (n < 0)
        return kerr_set(err, kerr_from_errno(e), "could not %s: %s", what,
                        errno_str(e, ebuf, sizeof(ebuf)));
    return kerr_set(err, KEEL_ENOSPC,
                    "could not %s: wrote only %zd of %d bytes", what, n,
                    BLOCK_SIZE);
}

int smgr_write(smgr_rel *r, blocknum_t blk, void *page, kerr *err)
{
    blocknum_t nblocks = atomic_load_acquire(&r->nblocks);
    char what[KERR_MSG_MAX];
    ssize_t n;
    int e;

    if (r->read_only)
        return refuse(r, "write", err);
    if (blk >= nblocks)
        return kerr_set(err, KEEL_EEOF,
                        "could not write block %" PRIu32 " of file \"%s\": "
                        "beyond end of relation (%" PRIu32 " blocks)",
                        blk, r->path, nblocks);

    page_prepare_write(page);
    n = rel_pwrite(r, page, BLOCK_SIZE, block_offset(blk));
    if (n == BLOCK_SIZE)
        return KEEL_OK;
    e = errno;
    snprintf(what, sizeof(what), "write block %" PRIu32 " of file \"%s\"", blk,
             r->path);
    return write_failed(n, e, what, err);
}

/*
 * An extension holds extend_lock from smgr_extend_begin() to
 * smgr_extend_finish() (or smgr_extend_abort()), so the block number it
 * was given and the new nblocks cannot race with another extension or a
 * truncation.  On failure the file is cut back to its old whole-block
 * length (which also drops a partial block left from before), so a
 * half-written block is never counted and the next extension reuses the
 * same block number.
 */
int smgr_extend_begin(smgr_rel *r, blocknum_t *blk, kerr *err)
{
    blocknum_t old;

    if (r->read_only)
        return refuse(r, "extend", err);
    pthread_mutex_lock(&r->extend_lock);
    old = atomic_load_relaxed(&r->nblocks);
    if (old > MAX_BLOCK_NUMBER) {
        pthread_mutex_unlock(&r->extend_lock);
        return kerr_set(err, KEEL_ENOSPC,
                        "could not extend file \"%s\": it already has the "
                        "maximum of %" PRIu32 " blocks",
                        r->path, old);
    }
    *blk = old;
    return KEEL_OK;
}

void smgr_extend_abort(smgr_rel *r)
{
    pthread_mutex_unlock(&r->extend_lock);
}

int smgr_extend_finish(smgr_rel *r, void *page, kerr *err)
{
    blocknum_t old = atomic_load_relaxed(&r->nblocks);
    char what[KERR_MSG_MAX];
    char ebuf[128];
    ssize_t n;
    int rc, e;

    page_prepare_write(page);
    n = rel_pwrite(r, page, BLOCK_SIZE, block_offset(old));
    if (n == BLOCK_SIZE) {
        atomic_store_release(&r->nblocks, old + 1);
        pthread_mutex_unlock(&r->extend_lock);
        return KEEL_OK;
    }

    e = errno;
    snprintf(what, sizeof(what), "extend file \"%s\" with block %" PRIu32,
             r->path, old);
    rc = write_failed(n, e, what, err);
    if (ftruncate_retry(r->fd, block_offset(old)) != 0 && err != NULL) {
        /* A partial block may remain; it is invisible and will be
         * overwritten by the next extension, but say so. */
        size_t used = strlen(err->msg);
        e = errno;
        snprintf(err->msg + used, sizeof(err->msg) - used,
                 "; could not truncate it back to %" PRIu32 " blocks: %s", old,
                 errno_str(e, ebuf, sizeof(ebuf)));
    }
    pthread_mutex_unlock(&r->extend_lock);
    return rc;
}

int smgr_extend(smgr_rel *r, void *page, blocknum_t *blk, kerr *err)
{
    blocknum_t b = 0;
    int rc = smgr_extend_begin(r, &b, err);

    if (rc == KEEL_OK)
        rc = smgr_extend_finish(r, page, err);
    if (rc == KEEL_OK)
        *blk = b;
    return rc;
}

int smgr_truncate(smgr_rel *r, blocknum_t nblocks, kerr *err)
{
    char ebuf[128];
    blocknum_t cur;

    if (r->read_only)
        return refuse(r, "truncate", err);
    pthread_mutex_lock(&r->extend_lock);
    cur = atomic_load_relaxed(&r->nblocks);
    if (nblocks > cur) {
        pthread_mutex_unlock(&r->extend_lock);
        return kerr_set(err, KEEL_EINVAL,
                        "could not truncate file \"%s\" to %" PRIu32
                        " blocks: it has only %" PRIu32,
                        r->path, nblocks, cur);
    }
    if (ftruncate_retry(r->fd, block_offset(nblocks)) != 0) {
        int e = errno;
        pthread_mutex_unlock(&r->extend_lock);
        return kerr_set(err, kerr_from_errno(e),
                        "could not truncate file \"%s\" to %" PRIu32
                        " blocks: %s",
                        r->path, nblocks, errno_str(e, ebuf, sizeof(ebuf)));
    }
    atomic_store_release(&r->nblocks, nblocks);
    pthread_mutex_unlock(&r->extend_lock);
    return KEEL_OK;
}

int smgr_sync(smgr_rel *r, kerr *err)
{
    char ebuf[128];

    if (r->read_only)
        return refuse(r, "fsync", err);
    if (rel_fsync(r) != 0) {
        int e = errno;
        return kerr_set(err, KEEL_EIO, "could not fsync file \"%s\": %s",
                        r->path, errno_str(e, ebuf, sizeof(ebuf)));
    }
    return KEEL_OK;
}
