/*
 * testutil.c: helpers shared by keel's tests.
 */
#include "testutil.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/bufmgr.h"
#include "storage/page.h"
#include "storage/smgr.h"

#define TU_BODY_OFF PAGE_HEADER_SIZE
#define TU_TAIL_OFF (BLOCK_SIZE - sizeof(uint64_t))

char *tu_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    char *path = malloc(4096);
    assert_non_null(path);
    snprintf(path, 4096, "%s/keel-test-XXXXXX", base ? base : "/tmp");
    assert_non_null(mkdtemp(path));
    return path;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void tu_rmdir(const char *dir)
{
    if (dir != NULL)
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void tu_dir_remove(char *dir)
{
    tu_rmdir(dir);
    free(dir);
}

void tu_page_io(const char *dir, uint32_t rel, uint32_t blk, void *page,
                bool write)
{
    char path[512];
    int fd;

    snprintf(path, sizeof(path), "%s/%u", dir, rel);
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    if (write)
        assert_int_equal(pwrite(fd, page, BLOCK_SIZE, (off_t)blk * BLOCK_SIZE),
                         BLOCK_SIZE);
    else
        assert_int_equal(pread(fd, page, BLOCK_SIZE, (off_t)blk * BLOCK_SIZE),
                         BLOCK_SIZE);
    close(fd);
}

double tu_stress_seconds(double dflt)
{
    const char *s = getenv("KEEL_STRESS_SECONDS");
    if (s != NULL && atof(s) > 0)
        return atof(s);
    return dflt;
}

void tu_storage_open(char **dir, smgr **sm, kerr *err)
{
    *dir = tu_mkdtemp();
    if (smgr_open(*dir, sm, err) != KEEL_OK)
        fail_msg("smgr_open(%s): %s", *dir, err->msg);
}

void tu_storage_close(char *dir, smgr *sm)
{
    smgr_close(sm);
    tu_dir_remove(dir);
}

int tu_fixture_setup(void **state)
{
    tu_fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    tu_storage_open(&f->dir, &f->sm, &f->err);
    *state = f;
    return 0;
}

void tu_pool_open(smgr *sm, uint32_t nbuffers, buf_pool **pool, buf_session **s,
                  kerr *err)
{
    if (buf_pool_create(sm, nbuffers, pool, err) != KEEL_OK)
        fail_msg("buf_pool_create(%u): %s", nbuffers, err->msg);
    if (buf_session_create(*pool, s, err) != KEEL_OK)
        fail_msg("buf_session_create: %s", err->msg);
}

void tu_pool_close(buf_pool **pool, buf_session **s, kerr *err)
{
    buf_session_destroy(*s);
    *s = NULL;
    if (buf_pool_close(*pool, err) != KEEL_OK)
        fail_msg("buf_pool_close: %s", err->msg);
    *pool = NULL;
}

void tu_pool_drop(buf_pool *pool, buf_session *s, kerr *err)
{
    buf_session_destroy(s);
    if (pool != NULL && buf_pool_close(pool, err) != KEEL_OK)
        buf_pool_discard(pool);
}

void tu_flip_bit(const char *path, long offset, int bit)
{
    int fd = open(path, O_RDWR);
    unsigned char b;
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, &b, 1, offset), 1);
    b ^= (unsigned char)(1u << bit);
    assert_int_equal(pwrite(fd, &b, 1, offset), 1);
    close(fd);
}

void tu_body_write(void *page, uint32_t rel, uint32_t blk, uint64_t value)
{
    tu_page_body b = {.rel = rel, .blk = blk, .value = value};

    memcpy((char *)page + TU_BODY_OFF, &b, sizeof(b));
    memcpy((char *)page + TU_TAIL_OFF, &value, sizeof(value));
}

void tu_body_read(const void *page, tu_page_body *b, uint64_t *tail)
{
    memcpy(b, (const char *)page + TU_BODY_OFF, sizeof(*b));
    memcpy(tail, (const char *)page + TU_TAIL_OFF, sizeof(*tail));
}

smgr_rel *tu_body_rel_create(smgr *sm, uint32_t rel, uint32_t nblocks,
                             kerr *err)
{
    smgr_rel *r = NULL;
    union {
        unsigned char b[BLOCK_SIZE];
        uint64_t align;
    } page;

    assert_int_equal(smgr_create(sm, rel, &r, err), KEEL_OK);
    for (blocknum_t i = 0; i < nblocks; i++) {
        blocknum_t got = MAX_BLOCK_NUMBER;
        memset(page.b, 0, sizeof(page.b));
        page_init(page.b, 0);
        tu_body_write(page.b, rel, i, 0);
        assert_int_equal(smgr_extend(r, page.b, &got, err), KEEL_OK);
        assert_int_equal(got, i);
    }
    return r;
}

void tu_assert_pool_quiet(struct buf_pool *pool)
{
    buf_session *probe = NULL;
    kerr err;

    for (uint32_t i = 0; i < buf_pool_size(pool); i++) {
        uint64_t st = buf_state(pool, (int32_t)i);
        if (BUF_REFCOUNT(st) != 0)
            fail_msg("buffer %u still pinned (refcount %u)", i,
                     BUF_REFCOUNT(st));
        if (st & (BM_LOCKED | BM_IO_IN_PROGRESS | BUF_LOCK_MASK))
            fail_msg("buffer %u: state %#llx (header lock, content lock or "
                     "I/O left)",
                     i, (unsigned long long)st);
    }
    assert_int_equal(buf_session_create(pool, &probe, &err), KEEL_OK);
    for (uint32_t i = 0; i < buf_pool_size(pool); i++) {
        assert_int_equal(buf_pin(probe, (int32_t)i), KEEL_OK);
        if (!buf_try_lock(probe, (int32_t)i, LW_EXCLUSIVE))
            fail_msg("buffer %u: content lock still held", i);
        buf_unlock(probe, (int32_t)i);
        buf_release(probe, (int32_t)i);
    }
    buf_session_destroy(probe);
    for (uint32_t i = 0; i < buf_pool_size(pool); i++)
        assert_int_equal(BUF_REFCOUNT(buf_state(pool, (int32_t)i)), 0);
}

void tu_fail(tu_failures *f, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&f->lock);
    if (atomic_fetch_add(&f->count, 1) == 0) {
        va_start(ap, fmt);
        vsnprintf(f->first, sizeof(f->first), fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&f->lock);
}

void tu_failures_check(tu_failures *f)
{
    int n = atomic_load(&f->count);

    if (n != 0)
        fail_msg("%d failure(s) in worker threads, the first: %s", n, f->first);
}
