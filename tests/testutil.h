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

#endif
