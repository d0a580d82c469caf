/*
 * testutil.h: helpers shared by keel's tests (cmocka).
 */
#ifndef KEEL_TESTS_TESTUTIL_H
#define KEEL_TESTS_TESTUTIL_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "keel/keel.h"
#include "port/error.h"

/* Creates a fresh empty directory under $TMPDIR (or /tmp) and returns its
 * path, malloc'd: tu_dir_remove() undoes both (or tu_rmdir(), then free). */
char *tu_mkdtemp(void);

/* Removes a directory and everything in it. */
void tu_rmdir(const char *dir);

/* Removes a directory made by tu_mkdtemp() and everything in it, then frees
 * the path.  NULL is fine; never fails the test. */
void tu_dir_remove(char *dir);

/* Reads (write false) or writes block blk of relation file rel in dir,
 * BLOCK_SIZE bytes at page, straight from or to the file. */
void tu_page_io(const char *dir, uint32_t rel, uint32_t blk, void *page,
                bool write);

/* Seconds that stress tests run for: KEEL_STRESS_SECONDS if set, else
 * the given default. */
double tu_stress_seconds(double dflt);

/* A non-null int4 value, and a non-null string value of s's bytes (the
 * NUL excluded; s must outlive the value). */
static inline keel_value tu_vi4(int32_t x)
{
    keel_value v = {.isnull = false};
    v.v.i4 = x;
    return v;
}

static inline keel_value tu_vstr(const char *s)
{
    keel_value v = {.isnull = false};
    v.v.s.ptr = s;
    v.v.s.len = (uint32_t)strlen(s);
    return v;
}

/* A small fast PRNG (xorshift64*) for tests; state must be non-zero. */
static inline uint64_t tu_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

/*
 * What went wrong in a test's worker threads: how many things did, and
 * the first one's text.  Workers record with tu_fail() (thread-safe) and
 * may poll tu_failed() to stop early; the test, after joining them, calls
 * tu_failures_check(), which fails it with the first text.  Initialise
 * with TU_FAILURES_INIT.
 */
typedef struct tu_failures {
    atomic_int count;
    pthread_mutex_t lock;
    char first[512];
} tu_failures;

#define TU_FAILURES_INIT                                                       \
    {                                                                          \
        .lock = PTHREAD_MUTEX_INITIALIZER                                      \
    }

void tu_fail(tu_failures *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static inline bool tu_failed(tu_failures *f)
{
    return atomic_load(&f->count) != 0;
}

void tu_failures_check(tu_failures *f);

/* Flips one bit of byte `offset` of the file at path. */
void tu_flip_bit(const char *path, long offset, int bit);

/*
 * What the buffer pool tests store in a page after its header: the block's
 * identity and a value, the value repeated in the page's last 8 bytes so
 * that a page assembled from two different writes is caught.
 */
typedef struct tu_page_body {
    uint32_t rel;
    uint32_t blk;
    uint64_t value;
} tu_page_body;

void tu_body_write(void *page, uint32_t rel, uint32_t blk, uint64_t value);

/* Reads the body and the copy of its value at the end of the page. */
void tu_body_read(const void *page, tu_page_body *b, uint64_t *tail);

struct buf_pool;
struct buf_session;
struct smgr;
struct smgr_rel;

/*
 * Creates relation rel in sm with nblocks blocks, written directly through
 * the storage manager (not synced): block i is an initialised page holding
 * the body (rel, i, value 0) of tu_body_write() and zeros elsewhere.  Fails
 * the test on any error; returns the open relation (the caller may sync it).
 */
struct smgr_rel *tu_body_rel_create(struct smgr *sm, uint32_t rel,
                                    uint32_t nblocks, kerr *err);

/* ---- fixtures: a temporary database directory and a buffer pool -------- */

/*
 * Creates a fresh directory (as tu_mkdtemp) and opens a storage manager on
 * it, failing the test if either fails.  On return *dir is malloc'd and *sm
 * open; tu_storage_close() undoes both.
 */
void tu_storage_open(char **dir, struct smgr **sm, kerr *err);

/*
 * Closes sm (NULL is fine), removes dir and everything in it, and frees
 * dir (NULL is fine).  For teardown: it never fails the test.
 */
void tu_storage_close(char *dir, struct smgr *sm);

/*
 * Creates a pool of nbuffers over sm and one session on it, failing the
 * test unless both succeed.  tu_pool_close() or tu_pool_drop() undoes it.
 */
void tu_pool_open(struct smgr *sm, uint32_t nbuffers, struct buf_pool **pool,
                  struct buf_session **s, kerr *err);

/*
 * Destroys *s, then closes *pool cleanly (writing back what is dirty),
 * failing the test with the error's message if that close fails.  Sets
 * both to NULL.
 */
void tu_pool_close(struct buf_pool **pool, struct buf_session **s, kerr *err);

/*
 * For teardown, after a test that may have failed half-way: destroys s
 * (NULL is fine), then closes pool (NULL is fine), discarding it instead
 * if the clean close fails.  Never fails the test.
 */
void tu_pool_drop(struct buf_pool *pool, struct buf_session *s, kerr *err);

/*
 * The fixture of tests that need a database directory, its storage manager
 * and, while a test has one open, a buffer pool with one session.
 */
typedef struct tu_fixture {
    char *dir;
    struct smgr *sm;
    struct buf_pool *pool; /* NULL while no pool is open */
    struct buf_session *s;
    kerr err;
} tu_fixture;

/*
 * A cmocka setup: stores in *state a zeroed tu_fixture (malloc'd) with a
 * fresh directory and its storage manager open (tu_storage_open), no pool.
 * Fails the test if any of it fails.
 */
int tu_fixture_setup(void **state);

/*
 * Fails the test unless call returns KEEL_OK, naming the call, the status
 * and the message of buffer session s (the call's error goes there).
 * Needs storage/bufmgr.h.
 */
#define TU_SESSION_OK(s, call)                                                 \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != KEEL_OK)                                                    \
            fail_msg("%s: %s (%s)", #call, keel_status_str(rc_),               \
                     buf_session_error((s))->msg);                             \
    } while (0)

/*
 * Asserts that a buffer pool is at rest: no buffer pinned, header-locked or
 * in I/O, and every content lock free (each is try-locked exclusively by a
 * probe session, which then leaves nothing pinned).
 */
void tu_assert_pool_quiet(struct buf_pool *pool);

#endif
