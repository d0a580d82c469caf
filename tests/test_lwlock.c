/*
 * test_lwlock.c: shared/exclusive locks: mutual exclusion, concurrent
 * shared holders, conflicts seen by try_acquire, wake-up of sleeping
 * waiters, and a reader/writer stress that checks an invariant the lock
 * protects.
 *
 * Threads never call cmocka's assertions (they longjmp on the main
 * thread's stack); they record what they saw and the main thread checks.
 * Waits that could hang if the lock were broken are bounded by generous
 * deadlines that only ever turn a hang into a failure; no assertion
 * depends on how fast anything runs.
 */
#include "testutil.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "storage/lwlock.h"

/* How long a rendezvous may take before the test calls it a hang. */
#define HANG_SECONDS 30.0

static double now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint32_t lock_word(lwlock *l)
{
    return atomic_load(&l->word);
}

/* Waits until *v >= target; false if that took longer than HANG_SECONDS. */
static bool wait_at_least(atomic_int *v, int target)
{
    double deadline = now_seconds() + HANG_SECONDS;

    while (atomic_load(v) < target) {
        if (now_seconds() > deadline)
            return false;
        sched_yield();
    }
    return true;
}

/* Waits until some bit of mask is set in l's word (a waiter went to
 * sleep, or is about to); false on a hang. */
static bool wait_word_bits(lwlock *l, uint32_t mask)
{
    double deadline = now_seconds() + HANG_SECONDS;

    while (!(lock_word(l) & mask)) {
        if (now_seconds() > deadline)
            return false;
        sched_yield();
    }
    return true;
}

/*
 * Joins n threads (their results in rets, if not NULL), failing the test
 * instead of hanging if they do not all finish within HANG_SECONDS.  A
 * thread left behind keeps using its context, so contexts shared with
 * threads are allocated and freed only once every thread has been joined.
 */
static void join_all_or_fail(pthread_t *t, int n, void **rets)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)HANG_SECONDS;
    for (int i = 0; i < n; i++)
        if (pthread_timedjoin_np(t[i], rets ? &rets[i] : NULL, &ts) != 0)
            fail_msg("thread %d of %d did not finish: stuck on the lock", i, n);
}

/* ---- single-threaded state -------------------------------------------- */

static void test_held_and_try_acquire(void **state)
{
    lwlock l;

    (void)state;
    lwlock_init(&l);
    assert_false(lwlock_held(&l));
    assert_false(lwlock_held_exclusive(&l));

    /* Exclusive excludes everything. */
    assert_true(lwlock_try_acquire(&l, LW_EXCLUSIVE));
    assert_true(lwlock_held(&l));
    assert_true(lwlock_held_exclusive(&l));
    assert_false(lwlock_try_acquire(&l, LW_SHARED));
    assert_false(lwlock_try_acquire(&l, LW_EXCLUSIVE));
    assert_int_equal(lock_word(&l), LW_EXCLUSIVE_BIT);
    lwlock_release(&l);
    assert_false(lwlock_held(&l));
    assert_false(lwlock_held_exclusive(&l));
    assert_int_equal(lock_word(&l), 0);

    /* Shared admits shared and excludes exclusive. */
    lwlock_acquire(&l, LW_SHARED);
    assert_true(lwlock_held(&l));
    assert_false(lwlock_held_exclusive(&l));
    assert_false(lwlock_try_acquire(&l, LW_EXCLUSIVE));
    assert_true(lwlock_try_acquire(&l, LW_SHARED));
    assert_true(lwlock_try_acquire(&l, LW_SHARED));
    assert_int_equal(lock_word(&l) & LW_SHARED_MASK, 3);
    lwlock_release(&l);
    lwlock_release(&l);
    assert_true(lwlock_held(&l));
    assert_false(lwlock_try_acquire(&l, LW_EXCLUSIVE));
    lwlock_release(&l);
    assert_false(lwlock_held(&l));
    assert_int_equal(lock_word(&l), 0);

    /* Free again: exclusive is available, through acquire too. */
    lwlock_acquire(&l, LW_EXCLUSIVE);
    assert_true(lwlock_held_exclusive(&l));
    lwlock_release(&l);
    assert_int_equal(lock_word(&l), 0);
}

/* ---- mutual exclusion -------------------------------------------------- */

#define MUTEX_THREADS 8
#define MUTEX_ITERS   20000

typedef struct mutex_ctx {
    lwlock lock;
    long counter; /* plain: only the lock protects it */
    atomic_int start;
    atomic_int not_exclusive; /* times a holder saw the lock not exclusive */
} mutex_ctx;

static void *mutex_worker(void *arg)
{
    mutex_ctx *c = arg;

    while (!atomic_load(&c->start))
        sched_yield();
    for (int i = 0; i < MUTEX_ITERS; i++) {
        lwlock_acquire(&c->lock, LW_EXCLUSIVE);
        if (!lwlock_held_exclusive(&c->lock))
            atomic_fetch_add(&c->not_exclusive, 1);
        /* A read-modify-write spread out, so that overlap would lose it. */
        long v = c->counter;
        if ((i & 63) == 0)
            sched_yield();
        c->counter = v + 1;
        lwlock_release(&c->lock);
    }
    return NULL;
}

static void test_exclusive_mutual_exclusion(void **state)
{
    mutex_ctx *c = calloc(1, sizeof(*c));
    pthread_t t[MUTEX_THREADS];

    (void)state;
    assert_non_null(c);
    lwlock_init(&c->lock);
    c->counter = 0;
    atomic_init(&c->start, 0);
    atomic_init(&c->not_exclusive, 0);
    for (int i = 0; i < MUTEX_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, mutex_worker, c), 0);
    atomic_store(&c->start, 1);
    join_all_or_fail(t, MUTEX_THREADS, NULL);
    assert_int_equal(c->counter, (long)MUTEX_THREADS * MUTEX_ITERS);
    assert_int_equal(atomic_load(&c->not_exclusive), 0);
    assert_int_equal(lock_word(&c->lock), 0);
    free(c);
}

/* ---- concurrent shared holders ---------------------------------------- */

typedef struct shared_ctx {
    lwlock lock;
    atomic_int holding; /* threads holding the lock in shared mode */
    atomic_int release; /* main thread: you may release now */
    atomic_int met[2];  /* thread i saw both holders at once */
    struct shared_arg {
        struct shared_ctx *c;
        int i;
    } args[2];
} shared_ctx;

typedef struct shared_arg shared_arg;

static void *shared_holder(void *arg)
{
    shared_arg *a = arg;
    shared_ctx *c = a->c;

    lwlock_acquire(&c->lock, LW_SHARED);
    atomic_fetch_add(&c->holding, 1);
    /* Rendezvous: the other thread must get in while we still hold it. */
    atomic_store(&c->met[a->i], wait_at_least(&c->holding, 2));
    wait_at_least(&c->release, 1);
    lwlock_release(&c->lock);
    return NULL;
}

static void test_shared_concurrent_holders(void **state)
{
    shared_ctx *c = calloc(1, sizeof(*c));
    pthread_t t[2];

    (void)state;
    assert_non_null(c);
    lwlock_init(&c->lock);
    atomic_init(&c->holding, 0);
    atomic_init(&c->release, 0);
    for (int i = 0; i < 2; i++) {
        atomic_init(&c->met[i], 0);
        c->args[i].c = c;
        c->args[i].i = i;
        assert_int_equal(
            pthread_create(&t[i], NULL, shared_holder, &c->args[i]), 0);
    }
    if (!wait_at_least(&c->holding, 2))
        fail_msg("two threads could not hold the lock shared at once");

    /* Both hold it now; the word counts them, and exclusive is refused. */
    assert_int_equal(lock_word(&c->lock) & LW_SHARED_MASK, 2);
    assert_true(lwlock_held(&c->lock));
    assert_false(lwlock_held_exclusive(&c->lock));
    assert_false(lwlock_try_acquire(&c->lock, LW_EXCLUSIVE));
    assert_true(lwlock_try_acquire(&c->lock, LW_SHARED));
    assert_int_equal(lock_word(&c->lock) & LW_SHARED_MASK, 3);
    lwlock_release(&c->lock);

    atomic_store(&c->release, 1);
    join_all_or_fail(t, 2, NULL);
    assert_true(atomic_load(&c->met[0]));
    assert_true(atomic_load(&c->met[1]));
    assert_int_equal(lock_word(&c->lock), 0);
    free(c);
}

/* ---- waking sleepers --------------------------------------------------- */

#define MAX_WAITERS 4

typedef struct wait_ctx {
    lwlock lock;
    atomic_int started;
    atomic_int acquired; /* waiters that got the lock */
    atomic_int bad;      /* a waiter saw the lock in the wrong state */
    struct wait_arg {
        struct wait_ctx *c;
        lwlock_mode mode; /* the mode this waiter asks for */
        atomic_int tid;   /* its kernel thread id */
    } args[MAX_WAITERS];
} wait_ctx;

typedef struct wait_arg wait_arg;

static void *waiter(void *arg)
{
    wait_arg *a = arg;
    wait_ctx *c = a->c;

    atomic_store(&a->tid, (int)gettid());
    atomic_fetch_add(&c->started, 1);
    lwlock_acquire(&c->lock, a->mode);
    if (a->mode == LW_EXCLUSIVE
            ? !lwlock_held_exclusive(&c->lock)
            : (!lwlock_held(&c->lock) || lwlock_held_exclusive(&c->lock)))
        atomic_fetch_add(&c->bad, 1);
    atomic_fetch_add(&c->acquired, 1);
    lwlock_release(&c->lock);
    return NULL;
}

/*
 * Whether thread tid is blocked in futex(2) on addr, from what the kernel
 * shows in /proc: 1 yes, 0 no, -1 if this kernel does not tell.
 */
static int in_futex_on(int tid, const void *addr)
{
    char path[64];
    long nr = -1;
    unsigned long arg0 = 0;
    FILE *fp;
    int n;

    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
    fp = fopen(path, "r");
    if (fp == NULL)
        return -1;
    n = fscanf(fp, "%ld %lx", &nr, &arg0);
    fclose(fp);
    if (n < 1)
        return 0; /* "running": not in a system call */
    if (n == 2 && nr == SYS_futex && arg0 == (unsigned long)(uintptr_t)addr)
        return 1;
    return nr < 0 ? -1 : 0;
}

/*
 * Waits until all n waiters sleep in the kernel on the lock's word, so
 * that the release must wake them.  Where /proc does not show system
 * calls, settles for the waiters bit (at least one announced its sleep).
 */
static bool wait_waiters_asleep(wait_ctx *c, int n)
{
    double deadline = now_seconds() + HANG_SECONDS;

    if (!wait_word_bits(&c->lock, LW_WAITERS_BIT))
        return false;
    for (;;) {
        int asleep = 0;
        for (int i = 0; i < n; i++) {
            int r = in_futex_on(atomic_load(&c->args[i].tid), &c->lock.word);
            if (r < 0)
                return true;
            asleep += r;
        }
        if (asleep == n)
            return true;
        if (now_seconds() > deadline)
            return false;
        sched_yield();
    }
}

/*
 * The main thread holds the lock in held_mode (shared: twice, as two
 * holders would), starts n waiters asking for modes[i], waits until they
 * sleep in the kernel, then releases and checks that every waiter was
 * woken and got the lock.
 */
static void run_waiters(lwlock_mode held_mode, const lwlock_mode *modes, int n)
{
    wait_ctx *c = calloc(1, sizeof(*c));
    pthread_t t[MAX_WAITERS];

    assert_non_null(c);
    assert_true(n <= MAX_WAITERS);
    lwlock_init(&c->lock);
    atomic_init(&c->started, 0);
    atomic_init(&c->acquired, 0);
    atomic_init(&c->bad, 0);

    lwlock_acquire(&c->lock, held_mode);
    if (held_mode == LW_SHARED)
        lwlock_acquire(&c->lock, LW_SHARED);
    for (int i = 0; i < n; i++) {
        c->args[i].c = c;
        c->args[i].mode = modes[i];
        assert_int_equal(pthread_create(&t[i], NULL, waiter, &c->args[i]), 0);
    }
    if (!wait_at_least(&c->started, n))
        fail_msg("waiter threads did not start");
    if (!wait_waiters_asleep(c, n))
        fail_msg("the waiters did not go to sleep on the held lock");
    /* Nobody can have the lock while we hold it in a conflicting mode. */
    assert_int_equal(atomic_load(&c->acquired), 0);

    if (held_mode == LW_SHARED) {
        /* One holder leaves: the lock is still held, the writers wait. */
        lwlock_release(&c->lock);
        assert_true(lwlock_held(&c->lock));
        assert_false(lwlock_held_exclusive(&c->lock));
        assert_int_equal(lock_word(&c->lock) & LW_SHARED_MASK, 1);
        assert_int_equal(atomic_load(&c->acquired), 0);
    }
    lwlock_release(&c->lock);
    join_all_or_fail(t, n, NULL);
    assert_int_equal(atomic_load(&c->acquired), n);
    assert_int_equal(atomic_load(&c->bad), 0);
    /* The last release cleared the waiters bit. */
    assert_int_equal(lock_word(&c->lock), 0);
    free(c);
}

static void test_exclusive_waiter_woken(void **state)
{
    const lwlock_mode modes[] = {LW_EXCLUSIVE};

    (void)state;
    run_waiters(LW_EXCLUSIVE, modes, 1);
}

static void test_shared_waiters_woken(void **state)
{
    const lwlock_mode modes[] = {LW_SHARED, LW_SHARED, LW_SHARED};

    (void)state;
    run_waiters(LW_EXCLUSIVE, modes, 3);
}

static void test_exclusive_waiters_on_shared_woken(void **state)
{
    const lwlock_mode modes[] = {LW_EXCLUSIVE, LW_EXCLUSIVE};

    (void)state;
    run_waiters(LW_SHARED, modes, 2);
}

static void test_mixed_waiters_woken(void **state)
{
    /* Readers and writers queue behind a writer: each gets its turn. */
    const lwlock_mode modes[] = {LW_EXCLUSIVE, LW_SHARED, LW_EXCLUSIVE,
                                 LW_SHARED};

    (void)state;
    run_waiters(LW_EXCLUSIVE, modes, 4);
}

/* ---- reader/writer stress ---------------------------------------------- */

#define STRESS_WRITERS 3
#define STRESS_READERS 3
#define STRESS_MIN_OPS 2000 /* per side, so that both sides really ran */

typedef struct stress_ctx {
    lwlock lock;
    /* Writers keep a == b whenever the lock is free; plain fields. */
    long a;
    long b;
    atomic_int stop;
    atomic_long writes;
    atomic_long reads;
    atomic_long torn;     /* a reader (or writer) saw a != b */
    atomic_long bad_mode; /* held flags disagreed with the mode held */
    struct stress_arg {
        struct stress_ctx *c;
        uint64_t seed;
    } args[STRESS_WRITERS + STRESS_READERS];
} stress_ctx;

typedef struct stress_arg stress_arg;

static void stress_pause(uint64_t *rng)
{
    uint64_t r = tu_rand(rng);

    if ((r & 255) == 0)
        sched_yield();
    else
        for (uint64_t i = 0; i < (r & 7); i++)
            cpu_relax();
}

static void *stress_writer(void *arg)
{
    stress_arg *a = arg;
    stress_ctx *c = a->c;
    uint64_t rng = a->seed;
    long mine = 0;

    while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
        if ((tu_rand(&rng) & 3) == 0) {
            if (!lwlock_try_acquire(&c->lock, LW_EXCLUSIVE)) {
                sched_yield();
                continue;
            }
        } else {
            lwlock_acquire(&c->lock, LW_EXCLUSIVE);
        }
        if (!lwlock_held_exclusive(&c->lock))
            atomic_fetch_add(&c->bad_mode, 1);
        if (c->a != c->b)
            atomic_fetch_add(&c->torn, 1);
        c->a++;
        stress_pause(&rng);
        c->b++;
        lwlock_release(&c->lock);
        mine++;
        atomic_fetch_add_explicit(&c->writes, 1, memory_order_relaxed);
        stress_pause(&rng);
    }
    return (void *)mine;
}

static void *stress_reader(void *arg)
{
    stress_arg *a = arg;
    stress_ctx *c = a->c;
    uint64_t rng = a->seed;

    while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
        long x, y;

        if ((tu_rand(&rng) & 3) == 0) {
            if (!lwlock_try_acquire(&c->lock, LW_SHARED)) {
                sched_yield();
                continue;
            }
        } else {
            lwlock_acquire(&c->lock, LW_SHARED);
        }
        if (!lwlock_held(&c->lock) || lwlock_held_exclusive(&c->lock))
            atomic_fetch_add(&c->bad_mode, 1);
        x = c->a;
        stress_pause(&rng);
        y = c->b;
        lwlock_release(&c->lock);
        if (x != y)
            atomic_fetch_add(&c->torn, 1);
        atomic_fetch_add_explicit(&c->reads, 1, memory_order_relaxed);
        stress_pause(&rng);
    }
    return NULL;
}

static void test_reader_writer_stress(void **state)
{
    enum { NTHREADS = STRESS_WRITERS + STRESS_READERS };
    stress_ctx *c = calloc(1, sizeof(*c));
    pthread_t t[NTHREADS];
    void *rets[NTHREADS];
    double start = now_seconds();
    double deadline = start + tu_stress_seconds(1.0);
    double give_up = deadline + 60.0;
    long total = 0;

    (void)state;
    assert_non_null(c);
    lwlock_init(&c->lock);
    c->a = c->b = 0;
    atomic_init(&c->stop, 0);
    atomic_init(&c->writes, 0);
    atomic_init(&c->reads, 0);
    atomic_init(&c->torn, 0);
    atomic_init(&c->bad_mode, 0);
    for (int i = 0; i < NTHREADS; i++) {
        c->args[i].c = c;
        c->args[i].seed = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
        assert_int_equal(
            pthread_create(&t[i], NULL,
                           i < STRESS_WRITERS ? stress_writer : stress_reader,
                           &c->args[i]),
            0);
    }
    /* Run for the stress time, and until both sides did real work. */
    for (;;) {
        double now = now_seconds();
        if (now >= deadline && atomic_load(&c->writes) >= STRESS_MIN_OPS &&
            atomic_load(&c->reads) >= STRESS_MIN_OPS)
            break;
        if (now >= give_up)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&c->stop, 1);
    join_all_or_fail(t, NTHREADS, rets);
    for (int i = 0; i < STRESS_WRITERS; i++)
        total += (long)rets[i];
    assert_int_equal(atomic_load(&c->torn), 0);
    assert_int_equal(atomic_load(&c->bad_mode), 0);
    if (atomic_load(&c->writes) < STRESS_MIN_OPS ||
        atomic_load(&c->reads) < STRESS_MIN_OPS)
        fail_msg("starved: %ld writes, %ld reads in %.0f s",
                 atomic_load(&c->writes), atomic_load(&c->reads),
                 now_seconds() - start);
    /* Every write happened exactly once. */
    assert_int_equal(c->a, total);
    assert_int_equal(c->b, total);
    assert_int_equal(atomic_load(&c->writes), total);
    assert_int_equal(lock_word(&c->lock), 0);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_held_and_try_acquire),
        cmocka_unit_test(test_exclusive_mutual_exclusion),
        cmocka_unit_test(test_shared_concurrent_holders),
        cmocka_unit_test(test_exclusive_waiter_woken),
        cmocka_unit_test(test_shared_waiters_woken),
        cmocka_unit_test(test_exclusive_waiters_on_shared_woken),
        cmocka_unit_test(test_mixed_waiters_woken),
        cmocka_unit_test(test_reader_writer_stress),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
