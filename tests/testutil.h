/*
 * testutil.h: helpers shared by keel's tests (cmocka).
 */
#ifndef KEEL_TESTS_TESTUTIL_H
#define KEEL_TESTS_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* Creates a fresh empty directory under $TMPDIR (or /tmp) and returns its
 * path, malloc'd: the caller frees it after tu_rmdir(). */
char *tu_mkdtemp(void);

/* Removes a directory and everything in it. */
void tu_rmdir(const char *dir);

/* Seconds that stress tests run for: KEEL_STRESS_SECONDS if set, else
 * the given default. */
double tu_stress_seconds(double dflt);

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

/*
 * Asserts that a buffer pool is at rest: no buffer pinned, header-locked or
 * in I/O, and every content lock free (each is try-locked exclusively by a
 * probe session, which then leaves nothing pinned).
 */
void tu_assert_pool_quiet(struct buf_pool *pool);

#endif
