/*
 * test_port.c: the port layer other than CRC-32C: futexes, spin-waiting,
 * the clock, aligned allocation, integer hashing and error contexts.
 *
 * Nothing here asserts that something was fast; the only timing checks
 * are lower bounds ("slept at least as long as asked").
 */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "port/atomics.h"
#include "port/clock.h"
#include "port/error.h"
#include "port/futex.h"
#include "port/hash.h"
#include "port/mem.h"
#include "port/spin.h"

#define MIB ((size_t)1 << 20)

/* ---- futex ---------------------------------------------------------- */

struct futex_waiter {
    atomic_u32 *word;
    atomic_u32 waits; /* futex_wait() calls made */
    atomic_u32 done;  /* set once the waiter saw the word change */
};

static void *futex_waiter_main(void *arg)
{
    struct futex_waiter *w = arg;

    while (atomic_load_acquire(w->word) == 0) {
        atomic_fetch_add(&w->waits, 1);
        futex_wait(w->word, 0);
    }
    atomic_store_release(&w->done, 1);
    return NULL;
}

static void test_futex_wait_value_differs(void **state)
{
    atomic_u32 word = 1;

    /* Must return at once (EAGAIN): were it to sleep, nobody would wake
     * it and the test would hang. */
    futex_wait(&word, 0);
    futex_wait(&word, 2);
    assert_int_equal(atomic_load(&word), 1);
}

static void test_futex_wake_without_waiters(void **state)
{
    atomic_u32 word = 0;

    assert_int_equal(futex_wake(&word, 1), 0);
    assert_int_equal(futex_wake(&word, INT32_MAX), 0);
}

static void test_futex_wait_wake(void **state)
{
    atomic_u32 word = 0;
    struct futex_waiter w = {.word = &word};
    pthread_t thread;
    int woken = 0;

    assert_int_equal(pthread_create(&thread, NULL, futex_waiter_main, &w), 0);

    /* Wake until a wake finds the waiter asleep in the kernel.  The word
     * is still 0, so the waiter goes back to sleep: only a changed word
     * may let it finish. */
    for (int tries = 0; tries < 10000 && woken == 0; tries++) {
        woken = futex_wake(&word, 1);
        if (woken == 0)
            clock_sleep_us(1000);
    }
    assert_int_equal(woken, 1);
    clock_sleep_us(1000);
    assert_int_equal(atomic_load_acquire(&w.done), 0);

    atomic_store_release(&word, 1);
    (void)futex_wake(&word, 1);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(atomic_load_acquire(&w.done), 1);
    assert_true(atomic_load(&w.waits) >= 1);
}

static void test_futex_wake_all(void **state)
{
    enum { WAITERS = 4 };
    atomic_u32 word = 0;
    struct futex_waiter w[WAITERS];
    pthread_t threads[WAITERS];

    for (int i = 0; i < WAITERS; i++) {
        w[i] = (struct futex_waiter){.word = &word};
        assert_int_equal(
            pthread_create(&threads[i], NULL, futex_waiter_main, &w[i]), 0);
    }
    /* Let the waiters block, then release them all with one call. */
    clock_sleep_us(10000);
    atomic_store_release(&word, 1);
    assert_true(futex_wake(&word, INT32_MAX) <= WAITERS);
    for (int i = 0; i < WAITERS; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        assert_int_equal(atomic_load(&w[i].done), 1);
    }
}

/* ---- spin_wait ------------------------------------------------------ */

static void test_spin_wait_phases(void **state)
{
    spin_wait w;
    uint32_t prev_sleep = 0;
    uint32_t i;
    uint32_t sleeps = 0;
    const uint32_t spin_calls = SPIN_PAUSE_ITERATIONS + SPIN_YIELD_ITERATIONS;

    spin_wait_init(&w);
    assert_int_equal(w.iterations, 0);
    assert_int_equal(w.sleep_us, 0);

    /* Pause and yield phases: counted, but no sleep length yet. */
    for (i = 0; i < spin_calls; i++) {
        spin_wait_once(&w);
        assert_int_equal(w.iterations, i + 1);
        assert_int_equal(w.sleep_us, 0);
    }

    /* Sleep phase: the base length grows to the cap and stays there, and
     * each call sleeps at least half of it (the low end of the jitter). */
    for (; i < spin_calls + 16; i++) {
        uint64_t t0 = clock_now_ns();
        spin_wait_once(&w);
        uint64_t slept_ns = clock_now_ns() - t0;

        assert_int_equal(w.iterations, i + 1);
        assert_true(w.sleep_us > 0);
        assert_true(w.sleep_us <= SPIN_MAX_SLEEP_US);
        if (prev_sleep < SPIN_MAX_SLEEP_US)
            assert_true(w.sleep_us > prev_sleep);
        else
            assert_int_equal(w.sleep_us, SPIN_MAX_SLEEP_US);
        assert_true(slept_ns >= (uint64_t)(w.sleep_us / 2) * 1000);
        prev_sleep = w.sleep_us;
        sleeps++;
    }
    assert_int_equal(sleeps, 16);
    assert_int_equal(w.sleep_us, SPIN_MAX_SLEEP_US);
    assert_int_not_equal(w.rng, 0);

    /* A fresh start forgets the backoff. */
    spin_wait_init(&w);
    assert_int_equal(w.iterations, 0);
    assert_int_equal(w.sleep_us, 0);
}

struct spin_shared {
    atomic_u32 lock;  /* 0 free, 1 held */
    uint64_t counter; /* protected by lock */
    uint32_t per_thread;
};

static void spin_lock(struct spin_shared *s)
{
    spin_wait w;
    uint32_t expected = 0;

    if (atomic_compare_exchange_strong_explicit(
            &s->lock, &expected, 1, memory_order_acquire, memory_order_relaxed))
        return;
    spin_wait_init(&w);
    for (;;) {
        /* Test before test-and-set, so waiters spin on a shared line. */
        if (atomic_load_relaxed(&s->lock) == 0 &&
            atomic_exchange_explicit(&s->lock, 1, memory_order_acquire) == 0)
            break;
        spin_wait_once(&w);
    }
}

static void spin_unlock(struct spin_shared *s)
{
    atomic_store_release(&s->lock, 0);
}

static void *spin_worker(void *arg)
{
    struct spin_shared *s = arg;

    for (uint32_t i = 0; i < s->per_thread; i++) {
        spin_lock(s);
        /* A read-modify-write split in two, so a broken lock loses counts. */
        uint64_t v = s->counter;
        if ((i & 63) == 0)
            sched_yield(); /* get preempted while holding it, sometimes */
        s->counter = v + 1;
        spin_unlock(s);
    }
    return NULL;
}

static void test_spin_wait_lock_progress(void **state)
{
    enum { THREADS = 16 };
    struct spin_shared s = {.per_thread = 2000};
    pthread_t threads[THREADS];

    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, spin_worker, &s), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    assert_int_equal(s.counter, (uint64_t)THREADS * s.per_thread);
    assert_int_equal(atomic_load(&s.lock), 0);
}

/* ---- clock ---------------------------------------------------------- */

static void test_clock_monotonic(void **state)
{
    uint64_t prev = clock_now_ns();

    for (int i = 0; i < 100000; i++) {
        uint64_t now = clock_now_ns();
        assert_true(now >= prev);
        prev = now;
    }
}

static void test_clock_sleep_at_least(void **state)
{
    static const uint32_t waits_us[] = {0, 1, 50, 1000, 20000, 1000001};

    for (size_t i = 0; i < sizeof(waits_us) / sizeof(waits_us[0]); i++) {
        uint64_t t0 = clock_now_ns();
        clock_sleep_us(waits_us[i]);
        uint64_t elapsed = clock_now_ns() - t0;
        if (elapsed < (uint64_t)waits_us[i] * 1000)
            fail_msg("asked for %u us, slept %llu ns", waits_us[i],
                     (unsigned long long)elapsed);
    }
}

static atomic_u32 signals_seen;
static atomic_u32 stop_signalling;

static void count_signal(int sig)
{
    atomic_fetch_add(&signals_seen, 1);
}

static void *signaller_main(void *arg)
{
    pthread_t target = *(pthread_t *)arg;

    while (!atomic_load(&stop_signalling)) {
        pthread_kill(target, SIGUSR1);
        clock_sleep_us(500);
    }
    return NULL;
}

/* A signal cuts nanosleep() short; clock_sleep_us() must sleep the rest. */
static void test_clock_sleep_restarts_after_signal(void **state)
{
    struct sigaction sa, old;
    pthread_t self = pthread_self(), signaller;
    const uint32_t us = 20000;
    bool interrupted = false;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = count_signal;
    sa.sa_flags = 0; /* no SA_RESTART: the sleep must see EINTR */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    atomic_store(&stop_signalling, 0);
    assert_int_equal(pthread_create(&signaller, NULL, signaller_main, &self),
                     0);

    for (int tries = 0; tries < 50 && !interrupted; tries++) {
        uint32_t before = atomic_load(&signals_seen);
        uint64_t t0 = clock_now_ns();
        clock_sleep_us(us);
        uint64_t elapsed = clock_now_ns() - t0;
        assert_true(elapsed >= (uint64_t)us * 1000);
        interrupted = atomic_load(&signals_seen) != before;
    }

    atomic_store(&stop_signalling, 1);
    assert_int_equal(pthread_join(signaller, NULL), 0);
    assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
    assert_true(interrupted);
}

/* ---- mem ------------------------------------------------------------ */

static void test_mem_alloc_aligned(void **state)
{
    static const size_t sizes[] = {0, 1, 63, 64, 65, 1000, 4096, MIB + 3};

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i] ? sizes[i] : 1;
        /* Dirty a block of the same size first, so that a reused block
         * shows whether the allocator really zeroes. */
        unsigned char *dirty = mem_alloc_aligned(sizes[i]);
        assert_non_null(dirty);
        memset(dirty, 0xA5, n);
        mem_free_aligned(dirty);

        unsigned char *p = mem_alloc_aligned(sizes[i]);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % CACHE_LINE_SIZE, 0);
        for (size_t j = 0; j < n; j++)
            if (p[j] != 0)
                fail_msg("size %zu: byte %zu is %u", sizes[i], j, p[j]);
        memset(p, 0xFF, n);
        mem_free_aligned(p);
    }
    mem_free_aligned(NULL);
}

/* mem_alloc_lines(), mem_alloc_line_start() and mem_alloc_start() on a
 * page: on a line (a page), and every byte asked for writable (the
 * address sanitizer checks the bounds). */
static void test_mem_alloc_lines(void **state)
{
    static const size_t sizes[] = {1, 15, 63, 64, 65, 1000, 8200};

    (void)state;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned char *p = mem_alloc_lines(sizes[i]);
        char *block[8];

        assert_non_null(p);
        assert_int_equal((uintptr_t)p % CACHE_LINE_SIZE, 0);
        /* Padded to whole lines: nothing else on its last line. */
        memset(p, 0x5A, ALIGN_UP(sizes[i], CACHE_LINE_SIZE));
        mem_free_aligned(p);

        /* Several at once, at the offsets the allocator gives them. */
        for (int k = 0; k < 8; k++) {
            void *start = NULL;
            block[k] = mem_alloc_line_start(sizes[i], &start);
            assert_non_null(block[k]);
            assert_int_equal((uintptr_t)start % CACHE_LINE_SIZE, 0);
            assert_true((char *)start >= block[k]);
            assert_true((size_t)((char *)start - block[k]) <=
                        MEM_LINE_START_SLACK);
            memset(start, 0xA5, sizes[i]);
        }
        for (int k = 0; k < 8; k++)
            free(block[k]);
        for (int k = 0; k < 8; k++) {
            void *start = NULL;
            block[k] = mem_alloc_start(sizes[i], 4096, &start);
            assert_non_null(block[k]);
            assert_int_equal((uintptr_t)start % 4096, 0);
            assert_true((char *)start >= block[k]);
            assert_true((size_t)((char *)start - block[k]) <=
                        MEM_START_SLACK(4096));
            memset(start, 0xA5, sizes[i]);
        }
        for (int k = 0; k < 8; k++)
            free(block[k]);
    }
    assert_int_equal(MEM_START_SLACK(1), 0);
}

static void check_pages(size_t size, bool huge, size_t align)
{
    unsigned char *p = mem_alloc_pages(size, huge);

    assert_non_null(p);
    assert_int_equal((uintptr_t)p % align, 0);
    for (size_t i = 0; i < size; i++)
        if (p[i] != 0)
            fail_msg("size %zu: byte %zu is %u", size, i, p[i]);
    memset(p, 0x5A, size);
    assert_int_equal(p[0], 0x5A);
    assert_int_equal(p[size - 1], 0x5A);
    /* The whole range is mapped (msync fails with ENOMEM on a hole). */
    assert_int_equal(msync(p, size, MS_ASYNC), 0);
    mem_free_pages(p, size);
}

/* Linux 6.7 and later already place large anonymous mappings on 2 MiB
 * boundaries, so there the alignment checks below pass even without
 * mem.c's trimming; older kernels, and a fragmented address space, need
 * it. */
/* mem_strnlen(): strnlen()'s answers, reading nothing past the first
 * NUL or past max (the buffer below ends at either). */
static void test_mem_strnlen(void **state)
{
    char *p = malloc(8);

    (void)state;
    assert_non_null(p);
    memcpy(p, "keel\0xyz", 8);
    assert_int_equal(mem_strnlen(p, 8), 4);
    assert_int_equal(mem_strnlen(p, 4), 4);
    assert_int_equal(mem_strnlen(p, 2), 2);
    assert_int_equal(mem_strnlen(p, 0), 0);
    memcpy(p, "12345678", 8); /* no NUL: max */
    assert_int_equal(mem_strnlen(p, 8), 8);
    p[0] = '\0';
    assert_int_equal(mem_strnlen(p, 8), 0);
    free(p);
}

static void test_mem_alloc_pages(void **state)
{
    const size_t page = 4096;

    check_pages(4 * MIB, true, 2 * MIB);
    check_pages(2 * MIB, true, 2 * MIB);
    check_pages(3 * MIB + 5, true, 2 * MIB);
    check_pages(3 * MIB + 5, false, page);
    check_pages(100 * 1024, true, page);
    check_pages(1, false, page);
    mem_free_pages(NULL, 4 * MIB);

    /* Many rounds of alloc and free with the same size neither leak nor
     * unmap something else (ASan would notice the latter). */
    for (int i = 0; i < 64; i++) {
        void *a = mem_alloc_pages(5 * MIB, true);
        void *b = mem_alloc_pages(5 * MIB, false);
        assert_non_null(a);
        assert_non_null(b);
        mem_free_pages(a, 5 * MIB);
        mem_free_pages(b, 5 * MIB);
    }
    assert_null(mem_alloc_pages(SIZE_MAX - 4096, true));
}

/* ---- hash_u64 ------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void test_hash_distinct(void **state)
{
    enum { N = 100001 };
    uint64_t *h = malloc(N * sizeof(uint64_t));

    assert_non_null(h);
    for (uint64_t k = 0; k < N; k++)
        h[k] = hash_u64(k);
    qsort(h, N, sizeof(uint64_t), cmp_u64);
    for (size_t i = 1; i < N; i++)
        if (h[i] == h[i - 1])
            fail_msg("two keys hash to %016llx", (unsigned long long)h[i]);
    free(h);
}

static void test_hash_low_bits_uniform(void **state)
{
    enum { N = 100001, BUCKETS = 256 };
    uint32_t count[BUCKETS] = {0};
    double expected = (double)N / BUCKETS, chi2 = 0;

    for (uint64_t k = 0; k < N; k++)
        count[hash_u64(k) & (BUCKETS - 1)]++;
    for (int b = 0; b < BUCKETS; b++) {
        double d = count[b] - expected;
        chi2 += d * d / expected;
    }
    /* 255 degrees of freedom: mean 255, standard deviation about 23.  A
     * weak mixer (say, k itself: every bucket 390 or 391, chi2 near 0, or
     * k * odd constant) lands far outside in one direction or the other;
     * hash_u64 is deterministic, so this cannot flake. */
    if (chi2 < 150 || chi2 > 400)
        fail_msg("chi-square %.1f over %d buckets", chi2, BUCKETS);
}

/* Flipping one input bit should flip about half of the output bits. */
static void test_hash_avalanche(void **state)
{
    uint64_t rng = 42;
    unsigned long flips = 0, trials = 0;

    for (int i = 0; i < 2000; i++) {
        uint64_t k = tu_rand(&rng);
        for (int bit = 0; bit < 64; bit++) {
            flips += (unsigned long)__builtin_popcountll(
                hash_u64(k) ^ hash_u64(k ^ (UINT64_C(1) << bit)));
            trials++;
        }
    }
    double mean = (double)flips / (double)trials;
    assert_true(mean > 31.0 && mean < 33.0);
}

/* ---- error contexts ------------------------------------------------- */

static void test_kerr_set_and_clear(void **state)
{
    kerr e;

    kerr_clear(&e);
    assert_int_equal(e.code, KEEL_OK);
    assert_string_equal(e.msg, "");

    assert_int_equal(kerr_set(&e, KEEL_EIO, "read of block %u in %s: %s", 7u,
                              "rel", "short"),
                     KEEL_EIO);
    assert_int_equal(e.code, KEEL_EIO);
    assert_string_equal(e.msg, "read of block 7 in rel: short");

    kerr_clear(&e);
    assert_int_equal(e.code, KEEL_OK);
    assert_string_equal(e.msg, "");

    /* A NULL context is allowed: the code still comes back. */
    assert_int_equal(kerr_set(NULL, KEEL_ENOSPC, "disk %s", "full"),
                     KEEL_ENOSPC);
    kerr_clear(NULL);
}

static void test_kerr_set_u(void **state)
{
    kerr e;
    char want[KERR_MSG_MAX];

    (void)state;
    assert_int_equal(kerr_set_u(&e, KEEL_ENOENT,
                                "relation %u: row (%u,%u) is %u%% gone", 16384u,
                                0u, 4294967295u, 100u),
                     KEEL_ENOENT);
    assert_int_equal(e.code, KEEL_ENOENT);
    snprintf(want, sizeof(want), "relation %u: row (%u,%u) is %u%% gone",
             16384u, 0u, 4294967295u, 100u);
    assert_string_equal(e.msg, want);
    assert_int_equal(kerr_set_u(NULL, KEEL_EIO, "x %u", 1u), KEEL_EIO);
}

/* A context with a guard after it, which shows any write past the message
 * buffer even without AddressSanitizer. */
typedef struct guarded_kerr {
    kerr e;
    unsigned char guard[64];
} guarded_kerr;

static void assert_full_and_guarded(const guarded_kerr *g)
{
    assert_int_equal(strlen(g->e.msg), KERR_MSG_MAX - 1);
    for (size_t i = 0; i < sizeof(g->guard); i++)
        assert_int_equal(g->guard[i], 0xEE);
}

static void test_kerr_truncates(void **state)
{
    guarded_kerr g;
    char long_msg[3 * KERR_MSG_MAX], want[KERR_MSG_MAX];

    (void)state;
    memset(&g, 0xEE, sizeof(g));
    memset(long_msg, 'x', sizeof(long_msg) - 1);
    long_msg[sizeof(long_msg) - 1] = '\0';
    assert_int_equal(kerr_set(&g.e, KEEL_ECORRUPT, "%s!", long_msg),
                     KEEL_ECORRUPT);
    assert_int_equal(g.e.code, KEEL_ECORRUPT);
    assert_int_equal(g.e.msg[KERR_MSG_MAX - 2], 'x');
    assert_full_and_guarded(&g);

    /* kerr_set_u() cut at the buffer's end, in the text or in a number,
     * as snprintf() cuts it. */
    for (size_t cut = 0; cut < 3; cut++) {
        memset(&g, 0xEE, sizeof(g));
        memset(long_msg, 'x', KERR_MSG_MAX - 3 + cut);
        strcpy(long_msg + KERR_MSG_MAX - 3 + cut, "%u tail");
        kerr_set_u(&g.e, KEEL_ECORRUPT, long_msg, 12345u);
        snprintf(want, sizeof(want), long_msg, 12345u);
        assert_string_equal(g.e.msg, want);
        assert_full_and_guarded(&g);
    }
}

static void test_kerr_from_errno(void **state)
{
    assert_int_equal(kerr_from_errno(0), KEEL_OK);
    assert_int_equal(kerr_from_errno(ENOSPC), KEEL_ENOSPC);
    assert_int_equal(kerr_from_errno(EDQUOT), KEEL_ENOSPC);
    assert_int_equal(kerr_from_errno(EFBIG), KEEL_ENOSPC);
    assert_int_equal(kerr_from_errno(ENOENT), KEEL_ENOENT);
    assert_int_equal(kerr_from_errno(EEXIST), KEEL_EEXIST);
    assert_int_equal(kerr_from_errno(ENOMEM), KEEL_ENOMEM);
    assert_int_equal(kerr_from_errno(EINVAL), KEEL_EINVAL);
    assert_int_equal(kerr_from_errno(EIO), KEEL_EIO);
    /* Anything unforeseen is reported as an I/O error, never as success. */
    assert_int_equal(kerr_from_errno(EACCES), KEEL_EIO);
    assert_int_equal(kerr_from_errno(EBADF), KEEL_EIO);
}

static void test_keel_status_str(void **state)
{
    for (int s = 0; s < KEEL_STATUS_COUNT; s++) {
        const char *name = keel_status_str(s);
        assert_non_null(name);
        assert_true(name[0] != '\0');
        assert_string_not_equal(name, "unknown status");
        for (int t = 0; t < s; t++)
            assert_string_not_equal(name, keel_status_str(t));
    }
    assert_string_equal(keel_status_str(KEEL_OK), "ok");
    assert_string_equal(keel_status_str(KEEL_ENOSPC),
                        "no space left on device");
    assert_string_equal(keel_status_str(KEEL_ECORRUPT), "corrupt data");
    assert_string_equal(keel_status_str(-1), "unknown status");
    assert_string_equal(keel_status_str(KEEL_STATUS_COUNT), "unknown status");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_futex_wait_value_differs),
        cmocka_unit_test(test_futex_wake_without_waiters),
        cmocka_unit_test(test_futex_wait_wake),
        cmocka_unit_test(test_futex_wake_all),
        cmocka_unit_test(test_spin_wait_phases),
        cmocka_unit_test(test_spin_wait_lock_progress),
        cmocka_unit_test(test_clock_monotonic),
        cmocka_unit_test(test_clock_sleep_at_least),
        cmocka_unit_test(test_clock_sleep_restarts_after_signal),
        cmocka_unit_test(test_mem_alloc_aligned),
        cmocka_unit_test(test_mem_alloc_lines),
        cmocka_unit_test(test_mem_alloc_pages),
        cmocka_unit_test(test_mem_strnlen),
        cmocka_unit_test(test_hash_distinct),
        cmocka_unit_test(test_hash_low_bits_uniform),
        cmocka_unit_test(test_hash_avalanche),
        cmocka_unit_test(test_kerr_set_and_clear),
        cmocka_unit_test(test_kerr_set_u),
        cmocka_unit_test(test_kerr_truncates),
        cmocka_unit_test(test_kerr_from_errno),
        cmocka_unit_test(test_keel_status_str),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
