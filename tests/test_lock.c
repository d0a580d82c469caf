/*
 * test_lock.c: table locks (src/storage/lmgr.c, src/engine/lock.c):
 * PostgreSQL's conflict table, waits that end with a commit or an abort,
 * lock timeouts, deadlocks, DROP TABLE against readers, the fast path's
 * transfer to a strong locker, and a stress test that checks, under a
 * checker of its own, that no two conflicting locks are ever held at once.
 */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "port/clock.h"
#include "testutil.h"

#define NMODES 8

/* PostgreSQL's table, written out here independently of lmgr.c:
 * expect_conflict[a][b] for modes a, b (1-based). */
static const char *const conflict_rows[NMODES + 1] = {
    NULL,
    /*       AS RS RE SUE S SRE E AE */
    /* AS */ "00000001",
    /* RS */ "00000011",
    /* RE */ "00001111",
    /* SUE*/ "00011111",
    /* S  */ "00110111",
    /* SRE*/ "00111111",
    /* E  */ "01111111",
    /* AE */ "11111111",
};

static bool expect_conflict(int a, int b)
{
    return conflict_rows[a][b - 1] == '1';
}

static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                   {"v", KEEL_INT4, 0, false}};

/* A database with tables t0..t(ntables-1), each (id int4 primary key, v
 * int4) holding rows 1..3. */
static void setup(char **dir, keel_db **db, keel_session **s, int ntables)
{
    keel_db_options o;
    keel_error e;
    uint16_t pk = 1;

    *dir = tu_mkdtemp();
    keel_db_options_init(&o);
    o.dir = *dir;
    o.pool_mb = 4;
    o.max_sessions = 16;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(*db, s, &e), KEEL_OK);
    for (int t = 0; t < ntables; t++) {
        char name[16];
        snprintf(name, sizeof(name), "t%d", t);
        assert_int_equal(keel_create_table(*s, NULL, name, cols, 2, &pk, 1),
                         KEEL_OK);
        for (int i = 1; i <= 3; i++) {
            keel_value v[2] = {tu_vi4(i), tu_vi4(10 * i)};
            assert_int_equal(keel_insert(*s, NULL, name, v), KEEL_OK);
        }
    }
}

static keel_session *session(keel_db *db, uint32_t timeout_ms)
{
    keel_session *s;
    keel_error e;

    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, timeout_ms);
    return s;
}

static void finish(char *dir, keel_db *db)
{
    keel_error e;

    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

static oid_t table_oid(keel_session *s, const char *name)
{
    keel_table_info info;
    keel_column_info ci[2];

    assert_int_equal(keel_table_describe(s, NULL, name, &info, ci, 2),
                     KEEL_OK);
    return info.oid;
}

static uint64_t ms_since(uint64_t start_ns)
{
    return (clock_now_ns() - start_ns) / 1000000u;
}

/* Every pair of modes, held by one transaction and asked for NOWAIT by
 * another: refused exactly where PostgreSQL's table says they conflict;
 * and the calls' own errors. */
static void test_conflict_table(void **state)
{
    char *dir;
    keel_db *db;
    keel_session *a, *b;

    (void)state;
    setup(&dir, &db, &a, 1);
    b = session(db, 0);
    for (int ma = 1; ma <= NMODES; ma++)
        for (int mb = 1; mb <= NMODES; mb++) {
            keel_status rc;
            assert_int_equal(keel_begin(a), KEEL_OK);
            assert_int_equal(keel_lock_table(a, NULL, "t0", ma, false),
                             KEEL_OK);
            assert_int_equal(keel_begin(b), KEEL_OK);
            rc = keel_lock_table(b, NULL, "t0", mb, true);
            if (expect_conflict(ma, mb)) {
                assert_int_equal(rc, KEEL_ELOCKTIMEOUT);
                assert_non_null(strstr(keel_session_error(b),
                                       "could not obtain lock on relation "
                                       "\"public.t0\""));
            } else {
                assert_int_equal(rc, KEEL_OK);
            }
            assert_int_equal(keel_commit(b), KEEL_OK);
            /* A transaction never conflicts with itself. */
            assert_int_equal(keel_lock_table(a, NULL, "t0", mb, true), KEEL_OK);
            assert_int_equal(keel_commit(a), KEEL_OK);
        }
    /* Outside a transaction, a bad mode, a table that is not there. */
    assert_int_equal(
        keel_lock_table(a, NULL, "t0", KEEL_LOCK_ACCESS_SHARE, false),
        KEEL_EINVAL);
    assert_non_null(strstr(keel_session_error(a), "transaction blocks"));
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_lock_table(a, NULL, "t0", 9, false), KEEL_EINVAL);
    assert_int_equal(keel_lock_table(a, NULL, "t0", 0, false), KEEL_EINVAL);
    assert_int_equal(
        keel_lock_table(a, NULL, "nope", KEEL_LOCK_ACCESS_SHARE, false),
        KEEL_ENOENT);
    assert_int_equal(
        keel_lock_table(a, NULL, "nope", KEEL_LOCK_ACCESS_SHARE, true),
        KEEL_ENOENT);
    assert_int_equal(keel_commit(a), KEEL_OK);
    keel_session_end(a);
    keel_session_end(b);
    finish(dir, db);
}

/* A thread's call, timed: a lookup of key 2 in table, or a drop of it. */
typedef struct call {
    keel_session *s;
    const char *table;
    bool drop;
    keel_status rc;
    bool found;
    int32_t v;
    uint64_t ms;
    atomic_u32 done;
} call;

static void *call_main(void *arg)
{
    call *c = arg;
    uint64_t start = clock_now_ns();

    if (c->drop) {
        c->rc = keel_drop_table(c->s, NULL, c->table);
    } else {
        keel_value key = tu_vi4(2), out[2];
        c->rc = keel_lookup(c->s, NULL, c->table, &key, out, &c->found);
        if (c->rc == KEEL_OK && c->found)
            c->v = out[1].v.i4;
    }
    c->ms = ms_since(start);
    atomic_store_release(&c->done, 1);
    return NULL;
}

/* Waits (up to 10 s) until session s sleeps on a lock. */
static void see_waiting(keel_session *s)
{
    for (int i = 0; i < 10000 && atomic_load_acquire(&s->lp->wait_state) !=
                                      LMGR_WAIT_WAITING;
         i++)
        clock_sleep_us(1000);
    assert_int_equal(atomic_load_acquire(&s->lp->wait_state),
                     LMGR_WAIT_WAITING);
}

/* Starts c's call, sees it wait, and checks that it still waits after
 * ms. */
static void start_and_see_wait(pthread_t *th, call *c, uint32_t ms)
{
    atomic_init(&c->done, 0);
    assert_int_equal(pthread_create(th, NULL, call_main, c), 0);
    see_waiting(c->s);
    clock_sleep_us(ms * 1000);
    assert_int_equal(atomic_load_acquire(&c->done), 0);
}

/* A reader waits for ACCESS EXCLUSIVE, and goes on when its holder
 * commits or aborts; the reader sees what the holder committed. */
static void test_reader_waits_for_access_exclusive(void **state)
{
    char *dir;
    keel_db *db;
    keel_session *a, *b;
    pthread_t th;
    call c = {0};

    (void)state;
    setup(&dir, &db, &a, 1);
    b = session(db, 0);
    for (int round = 0; round < 2; round++) {
        bool commit = round == 0;
        keel_value key = tu_vi4(2), v[2] = {tu_vi4(2), tu_vi4(commit ? 7 : 8)};
        assert_int_equal(keel_begin(a), KEEL_OK);
        assert_int_equal(keel_lock_table(a, NULL, "t0",
                                         KEEL_LOCK_ACCESS_EXCLUSIVE, false),
                         KEEL_OK);
        assert_int_equal(keel_update(a, NULL, "t0", &key, v), KEEL_OK);
        c = (call){.s = b, .table = "t0"};
        start_and_see_wait(&th, &c, 100);
        assert_int_equal(commit ? keel_commit(a) : keel_abort(a), KEEL_OK);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_int_equal(c.rc, KEEL_OK);
        assert_true(c.found);
        /* Its snapshot was taken after the wait: the commit is seen. */
        assert_int_equal(c.v, 7);
        assert_true(c.ms >= 95);
    }
    keel_session_end(a);
    keel_session_end(b);
    finish(dir, db);
}

/* A wait longer than the session's lock timeout fails with
 * KEEL_ELOCKTIMEOUT, naming the table, having changed nothing. */
static void test_lock_timeout(void **state)
{
    char *dir;
    keel_db *db;
    keel_session *a, *b;
    keel_value key = tu_vi4(1), out[2];
    bool found;
    uint64_t start;

    (void)state;
    setup(&dir, &db, &a, 1);
    b = session(db, 60);
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(
        keel_lock_table(a, NULL, "t0", KEEL_LOCK_ACCESS_EXCLUSIVE, false),
        KEEL_OK);
    start = clock_now_ns();
    assert_int_equal(keel_lookup(b, NULL, "t0", &key, out, &found),
                     KEEL_ELOCKTIMEOUT);
    assert_true(ms_since(start) >= 55);
    assert_non_null(strstr(keel_session_error(b), "lock timeout"));
    assert_non_null(strstr(keel_session_error(b), "\"public.t0\""));
    /* In an explicit transaction the failure leaves it usable. */
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_select_column(b, NULL, "t0", "v", &key, out, &found),
                     KEEL_ELOCKTIMEOUT);
    assert_int_equal(keel_lookup(b, NULL, "t1", &key, out, &found),
                     KEEL_ENOENT);
    assert_int_equal(keel_commit(a), KEEL_OK);
    assert_int_equal(keel_select_column(b, NULL, "t0", "v", &key, out, &found),
                     KEEL_OK);
    assert_true(found);
    assert_int_equal(out[0].v.i4, 10);
    assert_int_equal(keel_commit(b), KEEL_OK);
    keel_session_end(a);
    keel_session_end(b);
    finish(dir, db);
}

/* Two transactions, each holding one table and asking for the other's:
 * exactly one fails with KEEL_EDEADLOCK, and the other goes on. */
typedef struct dl_arg {
    keel_session *s;
    const char *first, *second;
    pthread_barrier_t *barrier;
    keel_status rc;
} dl_arg;

static void *dl_main(void *arg)
{
    dl_arg *d = arg;

    d->rc = keel_begin(d->s);
    if (d->rc == KEEL_OK)
        d->rc = keel_lock_table(d->s, NULL, d->first, KEEL_LOCK_ROW_EXCLUSIVE,
                                false);
    pthread_barrier_wait(d->barrier);
    if (d->rc == KEEL_OK)
        d->rc = keel_lock_table(d->s, NULL, d->second,
                                KEEL_LOCK_ACCESS_EXCLUSIVE, false);
    if (d->rc == KEEL_OK)
        d->rc = keel_commit(d->s);
    else
        keel_abort(d->s);
    return NULL;
}

static void test_deadlock(void **state)
{
    char *dir;
    keel_db *db;
    keel_session *s, *a, *b;
    pthread_barrier_t barrier;
    pthread_t ta, tb;

    (void)state;
    setup(&dir, &db, &s, 2);
    /* A timeout well past the deadlock search, so that a missed cycle
     * shows as ELOCKTIMEOUT rather than a hang. */
    a = session(db, 5000);
    b = session(db, 5000);
    for (int round = 0; round < 3; round++) {
        dl_arg da = {a, "t0", "t1", &barrier, KEEL_OK};
        dl_arg db_ = {b, "t1", "t0", &barrier, KEEL_OK};
        pthread_barrier_init(&barrier, NULL, 2);
        assert_int_equal(pthread_create(&ta, NULL, dl_main, &da), 0);
        assert_int_equal(pthread_create(&tb, NULL, dl_main, &db_), 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        pthread_barrier_destroy(&barrier);
        assert_true((da.rc == KEEL_EDEADLOCK && db_.rc == KEEL_OK) ||
                    (da.rc == KEEL_OK && db_.rc == KEEL_EDEADLOCK));
    }
    /* The message of the last one names the table it waited for. */
    assert_true(strstr(keel_session_error(a), "deadlock detected") != NULL ||
                strstr(keel_session_error(b), "deadlock detected") != NULL);
    keel_session_end(a);
    keel_session_end(b);
    keel_session_end(s);
    finish(dir, db);
}

/* DROP TABLE waits for a reader's transaction; a reader that waits for a
 * drop finds, once it commits, no table. */
static void test_drop_waits_for_reader(void **state)
{
    char *dir;
    keel_db *db;
    keel_session *a, *b;
    keel_value key = tu_vi4(1), out[2];
    bool found;
    pthread_t th;
    call c = {0};

    (void)state;
    setup(&dir, &db, &a, 2);
    b = session(db, 0);
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_lookup(a, NULL, "t0", &key, out, &found), KEEL_OK);
    c = (call){.s = b, .table = "t0", .drop = true};
    start_and_see_wait(&th, &c, 100);
    /* The reader goes on reading meanwhile. */
    assert_int_equal(keel_lookup(a, NULL, "t0", &key, out, &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(keel_commit(a), KEEL_OK);
    pthread_join(th, NULL);
    assert_int_equal(c.rc, KEEL_OK);
    assert_true(c.ms >= 95);
    assert_int_equal(keel_lookup(a, NULL, "t0", &key, out, &found),
                     KEEL_ENOENT);

    /* A reader waiting on the drop's ACCESS EXCLUSIVE. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_drop_table(a, NULL, "t1"), KEEL_OK);
    c = (call){.s = b, .table = "t1"};
    start_and_see_wait(&th, &c, 100);
    assert_int_equal(keel_commit(a), KEEL_OK);
    pthread_join(th, NULL);
    assert_int_equal(c.rc, KEEL_ENOENT);
    assert_non_null(strstr(keel_session_error(b), "t1"));
    keel_session_end(a);
    keel_session_end(b);
    finish(dir, db);
}

/* A weak lock taken on the fast path (in the session's own slots), then
 * a strong locker: it moves the entry into the shared table and waits
 * for it; later weak locks go to the shared table while the strong one
 * is wanted or held, and to the fast path again after. */
typedef struct lock_arg {
    keel_session *s;
    const char *table;
    keel_lock_mode mode;
    keel_status rc;
    uint64_t ms;
    atomic_u32 done;
} lock_arg;

static void *lock_main(void *arg)
{
    lock_arg *l = arg;
    uint64_t start = clock_now_ns();

    l->rc = keel_begin(l->s);
    if (l->rc == KEEL_OK)
        l->rc = keel_lock_table(l->s, NULL, l->table, l->mode, false);
    l->ms = ms_since(start);
    atomic_store_release(&l->done, 1);
    return NULL;
}

static void test_fast_path_transfer(void **state)
{
    char *dir;
    keel_db *db;
    keel_session *a, *b, *c;
    keel_value key = tu_vi4(1), out[2];
    bool found, fast;
    oid_t oid;
    pthread_t th;
    lock_arg l = {0};

    (void)state;
    setup(&dir, &db, &a, 1);
    b = session(db, 0);
    c = session(db, 0);
    oid = table_oid(a, "t0");
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_select_column(a, NULL, "t0", "v", &key, out, &found),
                     KEEL_OK);
    assert_true(lmgr_holds(a->lp, oid, KEEL_LOCK_ACCESS_SHARE, &fast));
    assert_true(fast);
    assert_false(a->lp->has_shared);
    /* NOWAIT sees it: the transfer moved it where conflicts are found. */
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(
        keel_lock_table(b, NULL, "t0", KEEL_LOCK_ACCESS_EXCLUSIVE, true),
        KEEL_ELOCKTIMEOUT);
    assert_int_equal(keel_commit(b), KEEL_OK);
    assert_true(lmgr_holds(a->lp, oid, KEEL_LOCK_ACCESS_SHARE, &fast));
    assert_false(fast);
    /* A strong locker waits for it. */
    l = (lock_arg){.s = b, .table = "t0", .mode = KEEL_LOCK_ACCESS_EXCLUSIVE};
    atomic_init(&l.done, 0);
    assert_int_equal(pthread_create(&th, NULL, lock_main, &l), 0);
    see_waiting(b);
    clock_sleep_us(50000);
    assert_int_equal(atomic_load_acquire(&l.done), 0);
    /* While it waits, a reader's weak lock goes to the shared table (the
     * partition's strong count is up) and queues behind it. */
    keel_session_set_lock_timeout(c, 50);
    assert_int_equal(keel_lookup(c, NULL, "t0", &key, out, &found),
                     KEEL_ELOCKTIMEOUT);
    assert_int_equal(keel_commit(a), KEEL_OK);
    pthread_join(th, NULL);
    assert_int_equal(l.rc, KEEL_OK);
    assert_true(l.ms >= 45);
    assert_true(lmgr_holds(b->lp, oid, KEEL_LOCK_ACCESS_EXCLUSIVE, &fast));
    assert_int_equal(keel_commit(b), KEEL_OK);
    /* No strong lock left: the fast path again. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_lookup(a, NULL, "t0", &key, out, &found), KEEL_OK);
    assert_true(lmgr_holds(a->lp, oid, KEEL_LOCK_ACCESS_SHARE, &fast));
    assert_true(fast);
    assert_int_equal(keel_commit(a), KEEL_OK);
    assert_true(lmgr_holds_none(a->lp));
    keel_session_end(a);
    keel_session_end(b);
    keel_session_end(c);
    finish(dir, db);
}

/* ---- stress ----------------------------------------------------------- */

#define STRESS_THREADS 4
#define STRESS_TABLES  3

/* What the checker knows: locks held per table and mode, by the threads'
 * own account, taken after each grant and given back before each end. */
typedef struct checker {
    pthread_mutex_t mutex;
    uint32_t held[STRESS_TABLES][NMODES + 1];
    uint64_t violations, grants, deadlocks, timeouts;
} checker;

typedef struct stress_arg {
    keel_session *s;
    checker *ck;
    uint64_t seed;
    uint64_t end_ns;
    uint32_t txns;
} stress_arg;

/* Counts mode on table t in, failing the check if a conflicting lock is
 * counted already, but for the thread's own (own[m] of mode m on t). */
static void check_in(checker *ck, int t, int mode, const uint32_t *own)
{
    pthread_mutex_lock(&ck->mutex);
    for (int m = 1; m <= NMODES; m++)
        if (ck->held[t][m] > own[m] && expect_conflict(mode, m))
            ck->violations++;
    ck->held[t][mode]++;
    ck->grants++;
    pthread_mutex_unlock(&ck->mutex);
}

static void check_out(checker *ck, int t, int mode)
{
    pthread_mutex_lock(&ck->mutex);
    ck->held[t][mode]--;
    pthread_mutex_unlock(&ck->mutex);
}

static void *stress_main(void *arg)
{
    stress_arg *a = arg;
    uint64_t rng = a->seed;

    while (clock_now_ns() < a->end_ns) {
        int t[2], m[2], n = 0;
        keel_status rc = keel_begin(a->s);
        int want = 1 + (int)(tu_rand(&rng) % 2);
        for (int i = 0; rc == KEEL_OK && i < want; i++) {
            char name[16];
            t[i] = (int)(tu_rand(&rng) % STRESS_TABLES);
            /* Weak modes most often, as queries take them. */
            m[i] = tu_rand(&rng) % 3 == 0 ? 1 + (int)(tu_rand(&rng) % NMODES)
                                          : 1 + (int)(tu_rand(&rng) % 3);
            snprintf(name, sizeof(name), "t%d", t[i]);
            rc = keel_lock_table(a->s, NULL, name, m[i], false);
            if (rc == KEEL_OK) {
                uint32_t own[NMODES + 1] = {0};
                for (int j = 0; j < n; j++)
                    if (t[j] == t[i])
                        own[m[j]]++;
                check_in(a->ck, t[i], m[i], own);
                n++;
                for (int y = (int)(tu_rand(&rng) % 3); y > 0; y--)
                    sched_yield();
            }
        }
        for (int i = 0; i < n; i++)
            check_out(a->ck, t[i], m[i]);
        pthread_mutex_lock(&a->ck->mutex);
        if (rc == KEEL_EDEADLOCK)
            a->ck->deadlocks++;
        else if (rc == KEEL_ELOCKTIMEOUT)
            a->ck->timeouts++;
        else if (rc != KEEL_OK)
            a->ck->violations += 1000; /* nothing else may fail */
        pthread_mutex_unlock(&a->ck->mutex);
        if (rc == KEEL_OK)
            rc = keel_commit(a->s);
        else
            keel_abort(a->s);
        a->txns++;
    }
    return NULL;
}

static void test_stress(void **state)
{
    char *dir;
    keel_db *db;
    keel_session *s;
    checker ck = {.mutex = PTHREAD_MUTEX_INITIALIZER};
    stress_arg args[STRESS_THREADS];
    pthread_t th[STRESS_THREADS];
    uint64_t end = clock_now_ns() + (uint64_t)(tu_stress_seconds(1.5) * 1e9);
    uint32_t txns = 0;

    (void)state;
    setup(&dir, &db, &s, STRESS_TABLES);
    for (int i = 0; i < STRESS_THREADS; i++) {
        args[i] = (stress_arg){.s = session(db, 2000),
                               .ck = &ck,
                               .seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1),
                               .end_ns = end};
        assert_int_equal(pthread_create(&th[i], NULL, stress_main, &args[i]),
                         0);
    }
    for (int i = 0; i < STRESS_THREADS; i++) {
        pthread_join(th[i], NULL);
        txns += args[i].txns;
        keel_session_end(args[i].s);
    }
    printf("stress: %u transactions, %llu grants, %llu deadlocks, %llu "
           "timeouts\n",
           txns, (unsigned long long)ck.grants,
           (unsigned long long)ck.deadlocks, (unsigned long long)ck.timeouts);
    assert_int_equal(ck.violations, 0);
    assert_true(ck.grants > 100);
    for (int t = 0; t < STRESS_TABLES; t++)
        for (int m = 1; m <= NMODES; m++)
            assert_int_equal(ck.held[t][m], 0);
    /* Nothing is left in the table: every mode can be had at once. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int t = 0; t < STRESS_TABLES; t++) {
        char name[16];
        snprintf(name, sizeof(name), "t%d", t);
        assert_int_equal(keel_lock_table(s, NULL, name,
                                         KEEL_LOCK_ACCESS_EXCLUSIVE, true),
                         KEEL_OK);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
    keel_session_end(s);
    finish(dir, db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conflict_table),
        cmocka_unit_test(test_reader_waits_for_access_exclusive),
        cmocka_unit_test(test_lock_timeout),
        cmocka_unit_test(test_deadlock),
        cmocka_unit_test(test_drop_waits_for_reader),
        cmocka_unit_test(test_fast_path_transfer),
        cmocka_unit_test(test_stress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
