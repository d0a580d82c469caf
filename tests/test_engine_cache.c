/*
 * test_engine_cache.c: the sessions' catalog caches seen through the
 * public API: repeated lookups are answered from the cache, DDL committed
 * by one session is seen by the next transaction of every other (no stale
 * positive or negative answer), a transaction's own uncommitted DDL is
 * seen by itself and forgotten at abort, a repeatable-read transaction
 * keeps the catalog it started with, cache options and statistics, and a
 * concurrent stress of lookups against DDL with an exactness invariant.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keel/keel.h"
#include "port/clock.h"

static const keel_column two_cols[] = {
    {"id", KEEL_INT4, 0, true},
    {"v", KEEL_INT4, 0, false},
};
static const keel_column three_cols[] = {
    {"id", KEEL_INT4, 0, true},
    {"v", KEEL_INT4, 0, false},
    {"w", KEEL_INT4, 0, false},
};
static const uint16_t pkey[] = {1};

typedef struct env {
    char *dir;
    keel_db *db;
    keel_session *a;
    keel_session *b;
} env;

static void env_open(env *e, uint32_t max_sessions)
{
    keel_db_options o;
    keel_error err;

    e->dir = tu_mkdtemp();
    keel_db_options_init(&o);
    o.dir = e->dir;
    o.pool_mb = 4;
    o.max_sessions = max_sessions;
    assert_int_equal(keel_db_create(&o, &err), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &e->db, &err), KEEL_OK);
    assert_int_equal(keel_session_begin(e->db, &e->a, &err), KEEL_OK);
    assert_int_equal(keel_session_begin(e->db, &e->b, &err), KEEL_OK);
}

static void env_close(env *e)
{
    keel_error err;

    keel_session_end(e->a);
    keel_session_end(e->b);
    assert_int_equal(keel_db_close(e->db, &err), KEEL_OK);
    tu_dir_remove(e->dir);
}

static keel_value vi4(int32_t x)
{
    keel_value v = {.isnull = false};
    v.v.i4 = x;
    return v;
}

/* Creates table name (two or three int4 columns) with row (1, 10). */
static void make_table(keel_session *s, const char *name, bool three)
{
    keel_value row[3] = {vi4(1), vi4(10), vi4(100)};

    assert_int_equal(keel_create_table(s, NULL, name,
                                       three ? three_cols : two_cols,
                                       three ? 3 : 2, pkey, 1),
                     KEEL_OK);
    assert_int_equal(keel_insert(s, NULL, name, row), KEEL_OK);
}

/* Looks up id 1 in name: KEEL_OK with *found, or the error. */
static int lookup1(keel_session *s, const char *name, bool *found)
{
    keel_value key = vi4(1), out[3];

    return keel_lookup(s, NULL, name, &key, out, found);
}

static void test_hits_after_first_lookup(void **state)
{
    env e;
    keel_cache_stats st0, st1;
    bool found;

    (void)state;
    env_open(&e, 4);
    make_table(e.a, "t", false);
    assert_int_equal(lookup1(e.a, "t", &found), KEEL_OK);
    assert_true(found);
    keel_session_cache_stats(e.a, &st0);
    assert_true(st0.bytes > 0);
    assert_true(st0.entries > 0);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(lookup1(e.a, "t", &found), KEEL_OK);
        assert_true(found);
    }
    keel_session_cache_stats(e.a, &st1);
    /* Every further lookup is answered from the cache. */
    assert_int_equal(st1.misses, st0.misses);
    assert_true(st1.hits >= st0.hits + 10 * 2);
    assert_int_equal(st1.positive_bytes + st1.negative_bytes + st1.list_bytes <=
                         st1.bytes,
                     true);
    env_close(&e);
}

static void test_negative_entry_then_create(void **state)
{
    env e;
    keel_cache_stats st0, st1;
    bool found;

    (void)state;
    env_open(&e, 4);
    assert_int_equal(lookup1(e.a, "late", &found), KEEL_ENOENT);
    assert_non_null(strstr(keel_session_error(e.a), "late"));
    keel_session_cache_stats(e.a, &st0);
    assert_true(st0.negative_entries >= 1);
    assert_true(st0.negative_bytes > 0);
    /* Answered by the negative entry: no catalog read. */
    assert_int_equal(lookup1(e.a, "late", &found), KEEL_ENOENT);
    keel_session_cache_stats(e.a, &st1);
    assert_int_equal(st1.misses, st0.misses);
    assert_true(st1.negative_hits > st0.negative_hits);
    /* Another session creates it: the next transaction of a sees it. */
    make_table(e.b, "late", false);
    assert_int_equal(lookup1(e.a, "late", &found), KEEL_OK);
    assert_true(found);
    keel_session_cache_stats(e.a, &st1);
    assert_true(st1.invalidations > st0.invalidations);
    env_close(&e);
}

static void test_drop_and_recreate_seen(void **state)
{
    env e;
    uint16_t ncols = 0;
    bool found;

    (void)state;
    env_open(&e, 4);
    make_table(e.b, "t", false);
    assert_int_equal(keel_table_columns(e.a, NULL, "t", &ncols), KEEL_OK);
    assert_int_equal(ncols, 2);
    assert_int_equal(lookup1(e.a, "t", &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(keel_drop_table(e.b, NULL, "t"), KEEL_OK);
    assert_int_equal(lookup1(e.a, "t", &found), KEEL_ENOENT);
    make_table(e.b, "t", true);
    assert_int_equal(keel_table_columns(e.a, NULL, "t", &ncols), KEEL_OK);
    assert_int_equal(ncols, 3);
    assert_int_equal(lookup1(e.a, "t", &found), KEEL_OK);
    assert_true(found);
    env_close(&e);
}

static void test_own_ddl_and_abort(void **state)
{
    env e;
    bool found;

    (void)state;
    env_open(&e, 4);
    assert_int_equal(keel_begin(e.a), KEEL_OK);
    assert_int_equal(lookup1(e.a, "mine", &found), KEEL_ENOENT);
    make_table(e.a, "mine", false);
    /* The transaction sees its own table despite the negative entry. */
    assert_int_equal(lookup1(e.a, "mine", &found), KEEL_OK);
    assert_true(found);
    /* b does not. */
    assert_int_equal(lookup1(e.b, "mine", &found), KEEL_ENOENT);
    /* Dropped again in the same transaction: the entry built from the
     * transaction's own row goes, though the change adds no new message
     * (the same keys are already in the transaction's list). */
    assert_int_equal(keel_drop_table(e.a, NULL, "mine"), KEEL_OK);
    assert_int_equal(lookup1(e.a, "mine", &found), KEEL_ENOENT);
    make_table(e.a, "mine", false);
    assert_int_equal(lookup1(e.a, "mine", &found), KEEL_OK);
    assert_true(found);
    keel_abort(e.a);
    /* Nothing built from the aborted rows survives. */
    assert_int_equal(lookup1(e.a, "mine", &found), KEEL_ENOENT);
    /* Dropped inside a transaction that aborts: still there. */
    make_table(e.b, "kept", false);
    assert_int_equal(lookup1(e.a, "kept", &found), KEEL_OK);
    assert_int_equal(keel_begin(e.a), KEEL_OK);
    assert_int_equal(keel_drop_table(e.a, NULL, "kept"), KEEL_OK);
    assert_int_equal(lookup1(e.a, "kept", &found), KEEL_ENOENT);
    keel_abort(e.a);
    assert_int_equal(lookup1(e.a, "kept", &found), KEEL_OK);
    assert_true(found);
    env_close(&e);
}

/*
 * A transaction that started before another session's DDL keeps the
 * catalog of its snapshot, and what it cached then must not outlive it:
 * the message arrived after it had read the queue.
 */
static void test_repeatable_read_then_fresh(void **state)
{
    env e;
    bool found;

    (void)state;
    env_open(&e, 4);
    make_table(e.b, "old", false);
    make_table(e.b, "keep", false);
    assert_int_equal(keel_begin(e.a), KEEL_OK);
    /* A lock on another table: the snapshot is a's for good. */
    assert_int_equal(lookup1(e.a, "keep", &found), KEEL_OK);
    make_table(e.b, "new", false);
    assert_int_equal(keel_drop_table(e.b, NULL, "old"), KEEL_OK);
    /* a's snapshot predates both; the drop committed before a locked
     * the table, which is gone all the same. */
    assert_int_equal(lookup1(e.a, "new", &found), KEEL_ENOENT);
    assert_int_equal(lookup1(e.a, "old", &found), KEEL_ENOENT);
    assert_non_null(strstr(keel_session_error(e.a), "dropped it committed"));
    assert_int_equal(keel_commit(e.a), KEEL_OK);
    /* The next transaction sees both changes. */
    assert_int_equal(lookup1(e.a, "new", &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(lookup1(e.a, "old", &found), KEEL_ENOENT);
    env_close(&e);
}

static void test_cache_options(void **state)
{
    env e;
    keel_cache_stats st;
    char name[32];
    bool found;

    (void)state;
    env_open(&e, 4);
    assert_int_equal(keel_session_set_cache_options(e.a, -2, 0), KEEL_EINVAL);
    /* A tiny target keeps a flood of misses small. */
    assert_int_equal(keel_session_set_cache_options(e.a, -1, 16384), KEEL_OK);
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof(name), "missing_%d", i);
        assert_int_equal(lookup1(e.a, name, &found), KEEL_ENOENT);
    }
    keel_session_cache_stats(e.a, &st);
    /* Every addition is followed by eviction back under the target, and
     * a one-off miss is always evictable. */
    assert_true(st.evictions > 0);
    assert_true(st.bytes <= 16384);
    assert_true(st.negative_entries < 2000);
    assert_int_equal(st.evictions + st.entries >= 2000, true);
    /* Without protection everything stays. */
    assert_int_equal(keel_session_set_cache_options(e.b, -1, 0), KEEL_OK);
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof(name), "missing_%d", i);
        assert_int_equal(lookup1(e.b, name, &found), KEEL_ENOENT);
    }
    keel_session_cache_stats(e.b, &st);
    assert_int_equal(st.evictions, 0);
    assert_true(st.negative_entries >= 2000);
    env_close(&e);
}

/* ------------------------------------------------------------------ */
/* Stress: lookups against concurrent DDL                             */
/* ------------------------------------------------------------------ */

#define STRESS_TABLES  4
#define STRESS_READERS 3

/* Per table: its generation, odd while a DDL on it is running, even when
 * settled; generation / 2 even: absent, odd: present. */
typedef struct stress {
    keel_db *db;
    _Atomic uint32_t gen[STRESS_TABLES];
    atomic_bool stop;
    atomic_ulong checked;
    atomic_int failures;
} stress;

static void *stress_ddl(void *arg)
{
    stress *st = arg;
    keel_session *s;
    keel_error err;
    uint64_t rng = 42;
    char name[16];

    if (keel_session_begin(st->db, &s, &err) != KEEL_OK) {
        atomic_fetch_add(&st->failures, 1);
        return NULL;
    }
    while (!atomic_load(&st->stop)) {
        int k = (int)(tu_rand(&rng) % STRESS_TABLES);
        uint32_t g = atomic_load(&st->gen[k]);
        bool present = (g / 2) % 2 == 1;
        int rc;

        snprintf(name, sizeof(name), "s%d", k);
        atomic_store(&st->gen[k], g + 1); /* changing */
        if (present) {
            rc = keel_drop_table(s, NULL, name);
        } else {
            keel_value row[2] = {vi4(1), vi4(k)};
            rc = keel_create_table(s, NULL, name, two_cols, 2, pkey, 1);
            if (rc == KEEL_OK)
                rc = keel_insert(s, NULL, name, row);
        }
        if (rc != KEEL_OK) {
            fprintf(stderr, "ddl on %s: %s\n", name, keel_session_error(s));
            atomic_fetch_add(&st->failures, 1);
            break;
        }
        atomic_store(&st->gen[k], g + 2); /* settled: committed */
    }
    keel_session_end(s);
    return NULL;
}

static void *stress_reader(void *arg)
{
    stress *st = arg;
    keel_session *s;
    keel_error err;
    uint64_t rng = (uint64_t)(uintptr_t)&s;
    char name[16];

    if (keel_session_begin(st->db, &s, &err) != KEEL_OK) {
        atomic_fetch_add(&st->failures, 1);
        return NULL;
    }
    while (!atomic_load(&st->stop)) {
        int k = (int)(tu_rand(&rng) % STRESS_TABLES);
        uint32_t g1 = atomic_load(&st->gen[k]), g2;
        bool found = false;
        int rc;

        snprintf(name, sizeof(name), "s%d", k);
        rc = lookup1(s, name, &found);
        g2 = atomic_load(&st->gen[k]);
        if (g1 != g2 || g1 % 2 == 1)
            continue; /* a DDL overlapped: either answer is right */
        /* The DDL that made g1 committed before this lookup began. */
        if ((g1 / 2) % 2 == 1) {
            if (rc != KEEL_OK || !found) {
                fprintf(stderr, "%s exists but lookup said %d (%s)\n", name,
                        rc, keel_session_error(s));
                atomic_fetch_add(&st->failures, 1);
            }
        } else if (rc != KEEL_ENOENT) {
            fprintf(stderr, "%s is dropped but lookup said %d\n", name, rc);
            atomic_fetch_add(&st->failures, 1);
        }
        atomic_fetch_add(&st->checked, 1);
    }
    keel_session_end(s);
    return NULL;
}

static void test_stress_lookups_against_ddl(void **state)
{
    env e;
    stress st;
    pthread_t ddl, readers[STRESS_READERS];
    double secs = tu_stress_seconds(1.5);

    (void)state;
    env_open(&e, 8);
    memset(&st, 0, sizeof(st));
    st.db = e.db;
    assert_int_equal(pthread_create(&ddl, NULL, stress_ddl, &st), 0);
    for (int i = 0; i < STRESS_READERS; i++)
        assert_int_equal(
            pthread_create(&readers[i], NULL, stress_reader, &st), 0);
    clock_sleep_us((uint32_t)(secs * 1e6));
    atomic_store(&st.stop, true);
    pthread_join(ddl, NULL);
    for (int i = 0; i < STRESS_READERS; i++)
        pthread_join(readers[i], NULL);
    assert_int_equal(atomic_load(&st.failures), 0);
    assert_true(atomic_load(&st.checked) > 0);
    env_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hits_after_first_lookup),
        cmocka_unit_test(test_negative_entry_then_create),
        cmocka_unit_test(test_drop_and_recreate_seen),
        cmocka_unit_test(test_own_ddl_and_abort),
        cmocka_unit_test(test_repeatable_read_then_fresh),
        cmocka_unit_test(test_cache_options),
        cmocka_unit_test(test_stress_lookups_against_ddl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
