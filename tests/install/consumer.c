/*
 * consumer.c: a program of an application's own, built against an
 * installed libkeel (keel.h alone): it creates a database, writes and
 * reads a row, closes it, checks it with keel_check(), and prints "ok".
 * With COLLIDE defined it also defines functions named as keel's
 * internal ones are, which must be the ones it calls: linking the static
 * library beside them must neither fail nor mix them up.
 *
 * usage: consumer DIR
 */
#include <stdio.h>
#include <string.h>

#include <keel/keel.h>

#if !defined(KEEL_VERSION_MAJOR) || !defined(KEEL_VERSION_MINOR) || \
    !defined(KEEL_VERSION_PATCH) || !defined(KEEL_VERSION_STRING)
#error "keel.h does not give its version"
#endif

#ifdef COLLIDE
/* Names keel uses inside the library, here with other meanings. */
#include <stdint.h>
int hash_bytes(const void *p, int n);
uint64_t clock_now_ns(void);
int value_compare(int a, int b);
void futex_wait(void);
const char *type_name(int t);
int hash_bytes(const void *p, int n)
{
    (void)p;
    return n * 3;
}
uint64_t clock_now_ns(void)
{
    return 42;
}
int value_compare(int a, int b)
{
    return a - b;
}
void futex_wait(void)
{
}
const char *type_name(int t)
{
    return t == 1 ? "mine" : "?";
}
#endif

static int fail(const char *what, keel_status rc, const char *msg)
{
    fprintf(stderr, "consumer: %s: %s (%s)\n", what, keel_status_str(rc),
            msg);
    return 1;
}

static void count_problem(void *ctx, bool note, const char *line)
{
    if (!note)
        ++*(int *)ctx;
    fprintf(stderr, "%s%s\n", note ? "note: " : "", line);
}

int main(int argc, char **argv)
{
    keel_db_options o;
    keel_error e = {0};
    keel_db *db;
    keel_session *s;
    keel_column cols[2] = {{.name = "id", .type = KEEL_INT4},
                           {.name = "v", .type = KEEL_TEXT}};
    uint16_t pkey = 1;
    keel_value row[2], key, out[2];
    bool found = false;
    uint64_t problems = 0, notes = 0;
    int lines = 0;
    keel_status rc;

    if (argc != 2)
        return 2;
    if (strcmp(keel_version(), KEEL_VERSION_STRING) != 0)
        return fail("version", KEEL_EVERSION, keel_version());
#ifdef COLLIDE
    if (hash_bytes("x", 2) != 6 || clock_now_ns() != 42 ||
        value_compare(5, 3) != 2 || strcmp(type_name(1), "mine") != 0)
        return fail("own functions", KEEL_EINVAL, "not the program's");
    futex_wait();
#endif
    keel_db_options_init(&o);
    o.dir = argv[1];
    o.pool_mb = 8;
    if ((rc = keel_db_create(&o, &e)) != KEEL_OK)
        return fail("create", rc, e.msg);
    if ((rc = keel_db_open(&o, &db, &e)) != KEEL_OK)
        return fail("open", rc, e.msg);
    if ((rc = keel_session_begin(db, &s, &e)) != KEEL_OK)
        return fail("session", rc, e.msg);
    rc = keel_create_table(s, NULL, "t", cols, 2, &pkey, 1);
    if (rc == KEEL_OK) {
        memset(row, 0, sizeof(row));
        row[0].v.i4 = 7;
        row[1].v.s.ptr = "seven";
        row[1].v.s.len = 5;
        rc = keel_insert(s, NULL, "t", row);
    }
    if (rc == KEEL_OK) {
        memset(&key, 0, sizeof(key));
        key.v.i4 = 7;
        rc = keel_lookup(s, NULL, "t", &key, out, &found);
    }
    if (rc != KEEL_OK)
        return fail("table", rc, keel_session_error(s));
    if (!found || out[1].v.s.len != 5 || memcmp(out[1].v.s.ptr, "seven", 5))
        return fail("lookup", KEEL_ENOENT, "row 7 is not as written");
    /* A second insert of the key: a status, not a crash. */
    rc = keel_insert(s, NULL, "t", row);
    if (rc != KEEL_EUNIQUE)
        return fail("duplicate", rc, keel_session_error(s));
    keel_session_end(s);
    if ((rc = keel_db_close(db, &e)) != KEEL_OK)
        return fail("close", rc, e.msg);
    rc = keel_check(argv[1], count_problem, &lines, &problems, &notes, &e);
    if (rc != KEEL_OK)
        return fail("check", rc, e.msg);
    if (problems != 0 || lines != 0)
        return fail("check", KEEL_ECORRUPT, "problems found");
    printf("ok %s\n", keel_version());
    return 0;
}
