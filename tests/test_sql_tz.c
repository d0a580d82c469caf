/*
 * test_sql_tz.c: time zones (sql_tz.c).
 *
 * A zone file's transitions and the POSIX rule its zone follows must
 * agree wherever both speak; every local time must read back as itself
 * but for those a change of offset skips, and a repeated one must be the
 * later instant; POSIX TZ strings and names are read or refused as
 * PostgreSQL reads them; and a damaged or truncated zone file is refused
 * without reading past its end (AddressSanitizer watches that).
 */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "keel/keel.h"
#include "sql/sql_internal.h"

#define HOUR_US 3600000000LL
#define YEAR_US (365LL * 24 * HOUR_US)

typedef struct fixture {
    char *dir;
    keel_db *db;
    sql_session *s;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    keel_db_options o;
    sql_error err;

    f->dir = tu_mkdtemp();
    keel_db_options_init(&o);
    o.dir = f->dir;
    o.pool_mb = 16;
    assert_int_equal(keel_db_create(&o, NULL), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &f->db, NULL), KEEL_OK);
    assert_int_equal(sql_init(), KEEL_OK);
    assert_int_equal(sql_session_create(f->db, &f->s, &err), KEEL_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    sql_session_destroy(f->s);
    assert_int_equal(keel_db_close(f->db, NULL), KEEL_OK);
    tu_dir_remove(f->dir);
    free(f);
    return 0;
}

/* Microseconds since 2000-01-01 of a UTC (or local) date and hour. */
static int64_t at(int64_t y, int m, int d, int h)
{
    return (sql_days_from_date(y, m, d) - SQL_EPOCH_DAYS) * 86400000000LL +
           h * HOUR_US;
}

/* Zones whose rules have stood for years, with the POSIX rule of each. */
static const struct {
    const char *file, *rule;
} zones[] = {
    {"Europe/Paris", "CET-1CEST,M3.5.0,M10.5.0/3"},
    {"America/New_York", "EST5EDT,M3.2.0,M11.1.0"},
    {"Australia/Sydney", "AEST-10AEDT,M10.1.0,M4.1.0/3"},
    {"Australia/Lord_Howe", "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0"},
    {"Asia/Kolkata", "IST-5:30"},
};

static void test_rules_match_files(void **state)
{
    fixture *f = *state;

    for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
        sql_tz file, rule;
        int changes = 0;
        assert_true(sql_tz_load(f->s, zones[i].file, &file));
        assert_true(sql_tz_load(f->s, zones[i].rule, &rule));
        assert_string_equal(file.name, zones[i].file);
        assert_string_equal(rule.name, zones[i].rule);
        /* every half hour of 2030..2036, where a file has transitions,
         * and of 2101, where it has its rule alone */
        for (int64_t t = at(2030, 1, 1, 0); t < at(2037, 1, 1, 0);
             t += HOUR_US / 2) {
            const char *fa, *ra;
            int32_t fo = sql_tz_offset(&file, t, &fa);
            int32_t ro = sql_tz_offset(&rule, t, &ra);
            assert_int_equal(fo, ro);
            assert_string_equal(fa, ra);
            changes += sql_tz_offset(&file, t - HOUR_US / 2, NULL) != fo;
        }
        /* two changes a year where the zone has summer time */
        assert_int_equal(changes, strchr(zones[i].rule, ',') != NULL ? 14 : 0);
        for (int64_t t = at(2101, 1, 1, 0); t < at(2102, 1, 1, 0); t += HOUR_US)
            assert_int_equal(sql_tz_offset(&file, t, NULL),
                             sql_tz_offset(&rule, t, NULL));
    }
}

static void test_local_times(void **state)
{
    fixture *f = *state;

    for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
        sql_tz z;
        int skipped = 0, repeated = 0;
        assert_true(sql_tz_load(f->s, zones[i].file, &z));
        for (int64_t local = at(2024, 1, 1, 0); local < at(2025, 1, 1, 0);
             local += HOUR_US / 4) {
            int64_t utc = sql_tz_utc(&z, local);
            int64_t back = utc + sql_tz_offset(&z, utc, NULL) * 1000000LL;
            int32_t before = sql_tz_offset(&z, local - 86400000000LL, NULL);
            int32_t after = sql_tz_offset(&z, local + 86400000000LL, NULL);
            bool as_before =
                sql_tz_offset(&z, local - before * 1000000LL, NULL) == before;
            bool as_after =
                sql_tz_offset(&z, local - after * 1000000LL, NULL) == after;
            if (back != local) {
                /* skipped: read with the offset before, shown after */
                assert_true(!as_before && !as_after);
                assert_int_equal(utc, local - before * 1000000LL);
                assert_int_equal(back - local, (after - before) * 1000000LL);
                skipped++;
            } else if (before != after && as_before && as_after) {
                assert_int_equal(utc, local - after * 1000000LL); /* later */
                repeated++;
            }
        }
        /* a change of an hour (half an hour at Lord Howe) skips and
         * repeats that much, in quarter hours */
        if (strchr(zones[i].rule, ',') == NULL) {
            assert_int_equal(skipped, 0);
            assert_int_equal(repeated, 0);
        } else {
            int n = strstr(zones[i].file, "Lord_Howe") != NULL ? 2 : 4;
            assert_int_equal(skipped, n);
            assert_int_equal(repeated, n);
        }
    }
}

static void test_specs(void **state)
{
    fixture *f = *state;
    static const char *const bad[] = {
        "",          "Nowhere/Bogus", "Europe",   "../../etc/passwd",
        "/etc/passwd", "Europe/../UTC", "AB+3",   "UTC+25",
        "UTC",       /* valid: below */
        "CET-1CEST,M13.1.0,M10.5.0", "CET-1CEST,M3.5.7,M10.5.0",
        "CET-1CEST,M3.0.0,M10.5.0",  "CET-1CEST,M3.5.0",
        "CET-1CEST,M3.5.0,M10.5.0/200", "<+05>",  "<+05-5",
        "16",        "interval '1 day'", "interval '1 mon'",
    };
    sql_tz z;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (strcmp(bad[i], "UTC") != 0)
            assert_false(sql_tz_load(f->s, bad[i], &z));
    assert_true(sql_tz_load(f->s, "UTC", &z));
    assert_true(sql_tz_is_utc(&z));
    assert_true(sql_tz_load(f->s, "EUROPE/PARIS", &z));
    assert_string_equal(z.name, "Europe/Paris");
    assert_false(sql_tz_is_utc(&z));
    assert_true(sql_tz_load(f->s, "UTC+3", &z));
    assert_int_equal(sql_tz_offset(&z, 0, NULL), -3 * 3600);
    assert_true(sql_tz_load(f->s, "-7", &z));
    assert_string_equal(z.name, "<-07>+07");
    assert_int_equal(sql_tz_offset(&z, 0, NULL), -7 * 3600);
    assert_true(sql_tz_load(f->s, "5.75", &z));
    assert_string_equal(z.name, "<+05:45>-05:45");
    assert_true(sql_tz_load(f->s, "interval '-03:30'", &z));
    assert_string_equal(z.name, "<-03:30>+03:30");
    assert_int_equal(sql_tz_offset(&z, 0, NULL), -3 * 3600 - 1800);
    /* a DST name without a rule: the United States' */
    assert_true(sql_tz_load(f->s, "EST5EDT4", &z));
    assert_int_equal(sql_tz_offset(&z, at(2024, 7, 1, 12), NULL), -4 * 3600);
    assert_int_equal(sql_tz_offset(&z, at(2024, 1, 1, 12), NULL), -5 * 3600);
    /* J (February 29 not counted) and zero-based days: both March 1st
     * to October 27th, 02:00 local, in a leap year */
    {
        sql_tz j, n;
        assert_true(sql_tz_load(f->s, "XXX3YYY,J60,J300", &j));
        assert_true(sql_tz_load(f->s, "XXX3YYY,60,300", &n));
        for (int64_t t = at(2024, 1, 1, 0); t < at(2025, 1, 1, 0); t += HOUR_US)
            assert_int_equal(sql_tz_offset(&j, t, NULL),
                             sql_tz_offset(&n, t, NULL));
        /* 02:00 at -03 is 05:00 UTC */
        assert_int_equal(sql_tz_offset(&j, at(2024, 3, 1, 5), NULL), -2 * 3600);
        assert_int_equal(sql_tz_offset(&j, at(2024, 3, 1, 5) - 1, NULL),
                         -3 * 3600);
    }
    /* rule times past midnight and before it */
    /* (March 31st at -1:00 is March 30th, 23:00 at -02: 01:00 UTC) */
    assert_true(sql_tz_load(f->s, "<-02>2<-01>,M3.5.0/-1,M10.5.0/0", &z));
    assert_int_equal(sql_tz_offset(&z, at(2024, 3, 31, 1), NULL), -3600);
    assert_int_equal(sql_tz_offset(&z, at(2024, 3, 31, 1) - 1, NULL), -7200);
}

static void test_damaged_files(void **state)
{
    FILE *fp = fopen("/usr/share/zoneinfo/Europe/Paris", "rb");
    uint8_t *b = malloc(1 << 16), *c;
    size_t n;
    uint64_t x = 88172645463325252ULL;

    (void)state;
    assert_non_null(fp);
    n = fread(b, 1, 1 << 16, fp);
    fclose(fp);
    assert_true(n > 44 && n < (1 << 16));
    assert_true(sql_tz_tzif_ok(b, n));
    /* every truncation: each read within it (AddressSanitizer) */
    for (size_t len = 0; len < n; len++) {
        c = malloc(len + 1);
        memcpy(c, b, len);
        (void)sql_tz_tzif_ok(c, len);
        free(c);
    }
    assert_false(sql_tz_tzif_ok(b, 43));
    assert_false(sql_tz_tzif_ok(b, n / 2));
    /* damaged bytes: refused or read, never past the end */
    c = malloc(n);
    for (int k = 0; k < 3000; k++) {
        memcpy(c, b, n);
        for (int j = 0; j < 1 + k % 4; j++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            c[x % n] = (uint8_t)(x >> 32);
        }
        (void)sql_tz_tzif_ok(c, n);
    }
    free(c);
    free(b);
}

/* Sessions load zones at once: each file is read into the shared list
 * once, and every load sees the whole of it (ThreadSanitizer watches). */
static const char *const shared_zones[] = {
    "Asia/Tokyo",   "america/chicago",   "Europe/London",
    "Africa/Cairo", "America/Sao_Paulo", "Pacific/Auckland",
};

static void *loader(void *arg)
{
    uintptr_t id = (uintptr_t)arg;

    for (int k = 0; k < 300; k++) {
        const char *name = shared_zones[(id + (uintptr_t)k) % 6];
        sql_tz z;
        if (!sql_tz_load(NULL, name, &z) || z.ntypes == 0 ||
            strcasecmp(z.name, name) != 0 ||
            sql_tz_offset(&z, 0, NULL) == 12345)
            return (void *)1;
    }
    return NULL;
}

static void test_concurrent_loads(void **state)
{
    pthread_t th[4];
    sql_tz a, b;

    (void)state;
    for (uintptr_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, loader, (void *)i), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        assert_int_equal(pthread_join(th[i], &r), 0);
        assert_null(r);
    }
    /* one copy of each file */
    assert_true(sql_tz_load(NULL, "ASIA/TOKYO", &a));
    assert_true(sql_tz_load(NULL, "Asia/Tokyo", &b));
    assert_ptr_equal(a.trans, b.trans);
    assert_string_equal(a.name, "Asia/Tokyo");
    assert_int_equal(sql_tz_offset(&a, at(2024, 7, 1, 0), NULL), 9 * 3600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_loads),
        cmocka_unit_test_setup_teardown(test_rules_match_files, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_local_times, setup, teardown),
        cmocka_unit_test_setup_teardown(test_specs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_files, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
