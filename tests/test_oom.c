/*
 * test_oom.c: the engine when memory runs out.  This program is linked
 * with the allocator's entry points wrapped (-Wl,--wrap=malloc and the
 * rest, see CMakeLists.txt), so that every allocation keel's code makes
 * passes through oom_alloc_fails(): armed with n, the n-th allocation from
 * then on fails, once, as malloc() fails (NULL, errno ENOMEM).
 *
 * The scenarios: a create; a workload of every kind of call, whose
 * one-time statements run in whichever run first reaches them; each of
 * those (loads, an index build over rows, analyze, drops, a schema made
 * in a transaction) alone, set up again before every run; the checker;
 * and two sessions at once, the failing allocation falling to either.  Each
 * scenario is run with n = 0, 1, 2, ... until a run makes fewer than n
 * allocations, so that every allocation it makes fails once in turn.  Each call
 * must succeed, or fail with KEEL_ENOMEM and take no effect; the session stays
 * usable after a failed statement; a failed open or create leaves nothing half
 * made; after each run the database opens, the check finds no problem, and its
 * rows are exactly those of the statements that succeeded.  The sanitizer
 * build's leak check fails the test if a failure path leaks what it had
 * allocated.
 */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "keel/keel.h"

/* ---- the wrapped allocator ---------------------------------------------- */

static atomic_long oom_countdown = -1; /* < 0: not armed */
static atomic_long oom_seen;           /* allocations since armed */
static atomic_long oom_injected;       /* failures delivered since armed */

/* Whether this allocation is the one to fail. */
static bool oom_alloc_fails(void)
{
    if (atomic_load(&oom_countdown) < 0)
        return false;
    atomic_fetch_add(&oom_seen, 1);
    if (atomic_fetch_sub(&oom_countdown, 1) != 0)
        return false;
    atomic_fetch_add(&oom_injected, 1);
    errno = ENOMEM;
    return true;
}

static void oom_arm(long n)
{
    atomic_store(&oom_seen, 0);
    atomic_store(&oom_injected, 0);
    atomic_store(&oom_countdown, n);
}

static void oom_disarm(void)
{
    atomic_store(&oom_countdown, -1);
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
char *__real_strdup(const char *s);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
char *__wrap_strdup(const char *s);

void *__wrap_malloc(size_t n)
{
    return oom_alloc_fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return oom_alloc_fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return oom_alloc_fails() ? NULL : __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
    return oom_alloc_fails() ? NULL : __real_aligned_alloc(align, n);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
    return oom_alloc_fails() ? ENOMEM : __real_posix_memalign(p, align, n);
}

char *__wrap_strdup(const char *s)
{
    return oom_alloc_fails() ? NULL : __real_strdup(s);
}

/* ---- the model ---------------------------------------------------------- */

#define OOM_ROWS 12

#define OOM_LOAD 50

/* What the statements that succeeded left: rows id 0..OOM_ROWS-1 of t. */
typedef struct model {
    bool present[OOM_ROWS];
    int32_t v[OOM_ROWS];
    bool table_made; /* t exists */
    bool index_made; /* t_v exists */
    bool loaded;     /* l exists, rows 0..OOM_LOAD-1 */
    bool gone_left;  /* a drop of "gone" failed: it exists */
} model;

/* A row source for keel_load_table(): ids 0..n-1, v = 2 * id. */
typedef struct load_src {
    int32_t pos, n;
} load_src;

static keel_status load_next(void *ctx, keel_value *v, bool *done)
{
    load_src *ls = ctx;

    if (ls->pos >= ls->n) {
        *done = true;
        return KEEL_OK;
    }
    v[0] = tu_vi4(ls->pos);
    v[1] = tu_vi4(2 * ls->pos);
    v[2] = tu_vstr("loaded");
    ls->pos++;
    return KEEL_OK;
}

/* Fails the test unless rc is success or a failure for want of memory. */
static bool step_ok(keel_session *s, const char *what, long n, int rc)
{
    if (rc == KEEL_OK)
        return true;
    if (rc != KEEL_ENOMEM)
        fail_msg("allocation %ld failing: %s returned %s: %s", n, what,
                 keel_status_str(rc), s ? keel_session_error(s) : "");
    return false;
}

/* step_ok() for a statement on t, which may fail with KEEL_ENOENT as long
 * as no create of t has succeeded (and only then). */
static bool t_step_ok(keel_session *s, const model *m, const char *what, long n,
                      int rc)
{
    if (rc == KEEL_ENOENT && !m->table_made)
        return false;
    return step_ok(s, what, n, rc);
}

static keel_db_options opts_for(const char *dir)
{
    keel_db_options o;

    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 1;
    o.max_sessions = 4;
    return o;
}

static const keel_column t_cols[] = {{"id", KEEL_INT4, 0, true},
                                     {"v", KEEL_INT4, 0, false},
                                     {"note", KEEL_TEXT, 0, false}};

/*
 * One run of the workload against the database in dir, allocation n
 * failing (armed here, disarmed before returning): an open, a session,
 * DDL, changes in their own transactions and in an explicit one, reads
 * of every kind, an analyze, a checkpoint and a clean close.  Statements
 * after a failed one go on in the same session.  Returns whether an
 * allocation failed.
 */
static bool run_workload(const char *dir, model *m, long n)
{
    keel_db_options o = opts_for(dir);
    keel_db *db = NULL;
    keel_session *s = NULL;
    keel_error e;
    keel_value row[3], key, out[3];
    bool found, injected;
    uint16_t pk = 1, k2 = 2;
    char note[32];
    int rc;

    oom_arm(n);
    rc = keel_db_open(&o, &db, &e);
    if (!step_ok(NULL, "open", n, rc))
        goto out;
    rc = keel_session_begin(db, &s, &e);
    if (!step_ok(NULL, "session", n, rc))
        goto close;

    rc = keel_relation_exists(s, NULL, "t", &found);
    if (step_ok(s, "exists", n, rc)) {
        assert_int_equal(found, m->table_made);
        if (!found) {
            rc = keel_create_table(s, NULL, "t", t_cols, 3, &pk, 1);
            m->table_made = step_ok(s, "create table", n, rc);
        }
    }
    if (!m->index_made) {
        rc = keel_create_index(s, NULL, "t", "t_v", &k2, 1, false);
        m->index_made = t_step_ok(s, m, "create index", n, rc);
    }
    for (int32_t i = 0; i < OOM_ROWS; i++) {
        snprintf(note, sizeof(note), "note %d", (int)i);
        row[0] = tu_vi4(i);
        row[1] = tu_vi4(i * 10 + (int32_t)(n % 7));
        row[2] = tu_vstr(note);
        if (m->present[i]) {
            key = row[0];
            rc = keel_update(s, NULL, "t", &key, row);
        } else {
            rc = keel_insert(s, NULL, "t", row);
        }
        if (t_step_ok(s, m, "insert or update", n, rc)) {
            m->present[i] = true;
            m->v[i] = row[1].v.i4;
        }
    }
    key = tu_vi4(3);
    rc = keel_delete(s, NULL, "t", &key);
    if (rc == KEEL_ENOENT && m->table_made)
        assert_false(m->present[3]); /* no row 3 to delete */
    else if (t_step_ok(s, m, "delete", n, rc))
        m->present[3] = false;

    /* An explicit transaction: both rows or neither. */
    rc = keel_begin(s);
    if (step_ok(s, "begin", n, rc)) {
        bool ok = true;
        for (int32_t i = 4; i < 6 && ok; i++) {
            row[0] = tu_vi4(i);
            row[1] = tu_vi4(-i);
            row[2] = tu_vstr("txn");
            key = row[0];
            rc = m->present[i] ? keel_update(s, NULL, "t", &key, row)
                               : keel_insert(s, NULL, "t", row);
            ok = t_step_ok(s, m, "change in a transaction", n, rc);
        }
        if (!ok)
            keel_abort(s);
        else if (step_ok(s, "commit", n, keel_commit(s)))
            for (int32_t i = 4; i < 6; i++) {
                m->present[i] = true;
                m->v[i] = -i;
            }
    }

    /* Reads: what they return must be the model's. */
    for (int32_t i = 0; i < OOM_ROWS; i += 5) {
        key = tu_vi4(i);
        rc = keel_lookup(s, NULL, "t", &key, out, &found);
        if (t_step_ok(s, m, "lookup", n, rc)) {
            assert_int_equal(found, m->present[i]);
            if (found)
                assert_int_equal(out[1].v.i4, m->v[i]);
        }
        rc = keel_select_column(s, NULL, "t", "v", &key, out, &found);
        if (t_step_ok(s, m, "select", n, rc)) {
            assert_int_equal(found, m->present[i]);
            if (found)
                assert_int_equal(out[0].v.i4, m->v[i]);
        }
    }
    {
        keel_scan *sc = NULL;
        rc = keel_scan_begin(s, NULL, "t", NULL, NULL, NULL, &sc);
        if (t_step_ok(s, m, "scan", n, rc)) {
            int32_t cnt = 0, want = 0;
            while ((rc = keel_scan_next(sc, out, &found)) == KEEL_OK && found) {
                assert_true(out[0].v.i4 >= 0 && out[0].v.i4 < OOM_ROWS);
                assert_true(m->present[out[0].v.i4]);
                cnt++;
            }
            for (int32_t i = 0; i < OOM_ROWS; i++)
                want += m->present[i];
            if (rc != KEEL_OK)
                step_ok(s, "scan next", n, rc);
            else
                assert_int_equal(cnt, want);
            keel_scan_end(sc);
        }
    }
    rc = keel_analyze(s, NULL, "t");
    t_step_ok(s, m, "analyze", n, rc);

    /* A load (a table made and filled in one statement), a table made
     * and dropped again, and a second session that reads what the first
     * changed, its catalog cache told of the DDL. */
    if (!m->loaded) {
        load_src ls = {0, OOM_LOAD};
        rc = keel_load_table(s, NULL, "l", t_cols, 3, &pk, 1, load_next, &ls,
                             NULL);
        if (step_ok(s, "load", n, rc))
            m->loaded = true;
    }
    rc = keel_create_table(s, NULL, "gone", t_cols, 3, &pk, 1);
    if (step_ok(s, "create table gone", n, rc)) {
        rc = keel_drop_table(s, NULL, "gone");
        if (!step_ok(s, "drop table", n, rc))
            m->gone_left = true;
    }
    if (m->gone_left && keel_drop_table(s, NULL, "gone") == KEEL_OK)
        m->gone_left = false;
    {
        keel_session *s2 = NULL;
        rc = keel_session_begin(db, &s2, &e);
        if (step_ok(NULL, "second session", n, rc)) {
            key = tu_vi4(OOM_LOAD - 1);
            rc = keel_lookup(s2, NULL, "l", &key, out, &found);
            if (rc == KEEL_OK)
                assert_int_equal(found, m->loaded);
            else if (rc != KEEL_ENOENT || m->loaded)
                step_ok(s2, "lookup in l", n, rc);
            rc = keel_relation_exists(s2, NULL, "gone", &found);
            if (step_ok(s2, "exists", n, rc))
                assert_int_equal(found, m->gone_left);
            keel_session_end(s2);
        }
    }
    keel_session_end(s);
    rc = keel_checkpoint(db, &e);
    step_ok(NULL, "checkpoint", n, rc);
close:
    rc = keel_db_close(db, &e);
    /* A checkpoint that failed leaves db open: the close is retried. */
    if (rc == KEEL_ENOMEM)
        rc = keel_db_close(db, &e);
    if (rc != KEEL_OK)
        fail_msg("allocation %ld failing: close returned %s: %s", n,
                 keel_status_str(rc), e.msg);
out:
    injected = atomic_load(&oom_injected) > 0;
    oom_disarm();
    return injected;
}

static void print_problem(void *ctx, bool note, const char *line)
{
    (void)ctx;
    fprintf(stderr, "  %s: %s\n", note ? "note" : "problem", line);
}

/* With nothing failing: the database checks clean, and t holds exactly
 * the model's rows. */
static void verify(const char *dir, const model *m, long n)
{
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_session *s;
    keel_error e = {0};
    keel_value key, out[3];
    uint64_t problems = 99, notes = 99;
    bool found;

    if (keel_check(dir, print_problem, NULL, &problems, &notes, &e) !=
        KEEL_OK)
        fail_msg("after allocation %ld failed: the check could not run: %s", n,
                 e.msg);
    /* Not even a note: a failed open leaves the database shut down as it
     * found it, not looking as if it had crashed. */
    if (problems != 0 || notes != 0)
        fail_msg("after allocation %ld failed: %llu problems, %llu notes", n,
                 (unsigned long long)problems, (unsigned long long)notes);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    for (int32_t i = 0; i < OOM_ROWS; i++) {
        int rc;
        key = tu_vi4(i);
        rc = keel_lookup(s, NULL, "t", &key, out, &found);
        if (rc == KEEL_ENOENT) { /* no table: no row either */
            assert_false(m->table_made);
            assert_false(m->present[i]);
            continue;
        }
        assert_int_equal(rc, KEEL_OK);
        if (found != m->present[i] || (found && out[1].v.i4 != m->v[i]))
            fail_msg("after allocation %ld failed: row %d found %d (want "
                     "%d), v %d (want %d)",
                     n, (int)i, found, m->present[i], found ? out[1].v.i4 : 0,
                     m->v[i]);
    }
    for (int32_t i = 0; i < OOM_LOAD; i += 7) {
        key = tu_vi4(i);
        assert_int_equal(keel_lookup(s, NULL, "l", &key, out, &found),
                         m->loaded ? KEEL_OK : KEEL_ENOENT);
        if (m->loaded) {
            assert_true(found);
            assert_int_equal(out[1].v.i4, 2 * i);
        }
    }
    assert_int_equal(keel_relation_exists(s, NULL, "gone", &found), KEEL_OK);
    assert_int_equal(found, m->gone_left);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
}

/* The workload with each of its allocations failing in turn. */
static void test_workload(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    model m = {0};
    long n;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    for (n = 0;; n++) {
        bool injected = run_workload(dir, &m, n);
        verify(dir, &m, n);
        if (!injected)
            break;
    }
    print_message("workload: %ld allocations, each failed once\n", n);
    assert_true(n > 100);
    tu_dir_remove(dir);
}

/* ---- one statement at a time ------------------------------------------ */

/* Rows of the tables made whole for each statement: enough for several
 * heap pages and several leaves of an index on their text. */
#define ONE_ROWS 160

/* A row source for keel_load_table(): ONE_ROWS rows in descending order
 * of their key, so that the load sorts them; with text_key, the key is
 * the text column (column 1), else the integer id (column 1, the text
 * column 3).  Text "row NNNNN" padded to 60 bytes. */
typedef struct desc_src {
    int32_t left;
    bool text_key;
    char text[80];
} desc_src;

static void row_text(char *buf, size_t len, int32_t id)
{
    snprintf(buf, len, "row %05d %046d", (int)(id % 100000), (int)id);
}

static keel_status desc_next(void *ctx, keel_value *v, bool *done)
{
    desc_src *ds = ctx;
    int32_t id;

    if (ds->left == 0) {
        *done = true;
        return KEEL_OK;
    }
    id = --ds->left;
    row_text(ds->text, sizeof(ds->text), id);
    if (ds->text_key) {
        v[0] = tu_vstr(ds->text);
        v[1] = tu_vi4(id);
    } else {
        v[0] = tu_vi4(id);
        v[1] = tu_vi4(2 * id);
        v[2] = tu_vstr(ds->text);
    }
    return KEEL_OK;
}

static const keel_column g_cols[] = {{"name", KEEL_TEXT, 0, true},
                                     {"v", KEEL_INT4, 0, false}};

/* Loads f (t's columns, ids 0..ONE_ROWS-1, keys out of order) or g (a
 * text primary key), as the statement under test or to set one up. */
static int load_f(keel_session *s)
{
    desc_src ds = {.left = ONE_ROWS};
    uint16_t pk = 1;

    return keel_load_table(s, NULL, "f", t_cols, 3, &pk, 1, desc_next, &ds,
                           NULL);
}

static int load_g(keel_session *s)
{
    desc_src ds = {.left = ONE_ROWS, .text_key = true};
    uint16_t pk = 1;

    return keel_load_table(s, NULL, "g", g_cols, 2, &pk, 1, desc_next, &ds,
                           NULL);
}

static int index_f(keel_session *s)
{
    uint16_t k = 3;

    return keel_create_index(s, NULL, "f", "f_note", &k, 1, true);
}

/* Drops name if it exists; nothing failing. */
static void drop_if_there(keel_session *s, const char *name)
{
    bool found;

    assert_int_equal(keel_relation_exists(s, NULL, name, &found), KEEL_OK);
    if (found)
        assert_int_equal(keel_drop_table(s, NULL, name), KEEL_OK);
}

/* Whether name exists. */
static bool there(keel_session *s, const char *name)
{
    bool found;

    assert_int_equal(keel_relation_exists(s, NULL, name, &found), KEEL_OK);
    return found;
}

/* Reads table in the order of index (NULL: its primary key) and fails the
 * test unless it holds exactly the ONE_ROWS rows of desc_next(), in order
 * (by id, or by text: the same order, the text leading with the id). */
static void expect_rows(keel_session *s, const char *table, const char *index,
                        bool text_key)
{
    keel_scan *sc = NULL;
    keel_value out[3];
    char want[80];
    bool found;
    int32_t id = 0;
    int rc;

    assert_int_equal(keel_scan_begin(s, NULL, table, index, NULL, NULL, &sc),
                     KEEL_OK);
    while ((rc = keel_scan_next(sc, out, &found)) == KEEL_OK && found) {
        const keel_value *t = text_key ? &out[0] : &out[2];
        row_text(want, sizeof(want), id);
        assert_true(id < ONE_ROWS);
        assert_int_equal(text_key ? out[1].v.i4 : out[0].v.i4, id);
        assert_int_equal(t->v.s.len, strlen(want));
        assert_memory_equal(t->v.s.ptr, want, t->v.s.len);
        id++;
    }
    assert_int_equal(rc, KEEL_OK);
    assert_int_equal(id, ONE_ROWS);
    keel_scan_end(sc);
}

/* A schema and a table in it, in one explicit transaction. */
static int schema_and_table(keel_session *s)
{
    uint16_t pk = 1;
    int rc = keel_begin(s);

    if (rc != KEEL_OK)
        return rc;
    rc = keel_create_schema(s, "sch");
    if (rc == KEEL_OK)
        rc = keel_create_table(s, "sch", "x", t_cols, 3, &pk, 1);
    if (rc == KEEL_OK)
        return keel_commit(s);
    keel_abort(s);
    return rc;
}

static int drop_f(keel_session *s)
{
    return keel_drop_table(s, NULL, "f");
}

static int analyze_f(keel_session *s)
{
    return keel_analyze(s, NULL, "f");
}

/*
 * A statement run with one allocation failing: setup() makes what it
 * needs whole with nothing failing; after it, with nothing failing,
 * check() asserts that the statement took its whole effect (done) or
 * none, and leaves the session as it found it.
 */
typedef struct one_stmt {
    const char *what;
    void (*setup)(keel_session *s);
    int (*run)(keel_session *s);
    void (*check)(keel_session *s, bool done);
    /* Each run in an open of its own, begun after the setup, so that the
     * statement makes the open's first note of a file to remove at close
     * (engine_note_file()); the database checks clean before each run. */
    bool new_open;
} one_stmt;

static void setup_none_f(keel_session *s)
{
    drop_if_there(s, "f");
}

static void setup_none_g(keel_session *s)
{
    drop_if_there(s, "g");
}

static void setup_f(keel_session *s)
{
    drop_if_there(s, "f");
    assert_int_equal(load_f(s), KEEL_OK);
}

static void setup_f_indexed(keel_session *s)
{
    setup_f(s);
    assert_int_equal(index_f(s), KEEL_OK);
}

static void setup_no_schema(keel_session *s)
{
    int rc = keel_drop_table(s, "sch", "x");

    assert_true(rc == KEEL_OK || rc == KEEL_ENOENT);
    rc = keel_drop_schema(s, "sch");
    assert_true(rc == KEEL_OK || rc == KEEL_ENOENT);
}

static void check_load_f(keel_session *s, bool done)
{
    assert_int_equal(there(s, "f"), done);
    assert_int_equal(there(s, "f_pkey"), done);
    if (done)
        expect_rows(s, "f", NULL, false);
}

static void check_load_g(keel_session *s, bool done)
{
    assert_int_equal(there(s, "g"), done);
    if (done)
        expect_rows(s, "g", NULL, true);
}

static void check_index_f(keel_session *s, bool done)
{
    assert_int_equal(there(s, "f_note"), done);
    if (done)
        expect_rows(s, "f", "f_note", false);
    expect_rows(s, "f", NULL, false);
}

static void check_drop_f(keel_session *s, bool done)
{
    assert_int_equal(there(s, "f"), !done);
    assert_int_equal(there(s, "f_note"), !done);
    if (!done)
        expect_rows(s, "f", "f_note", false);
}

static void check_analyze_f(keel_session *s, bool done)
{
    double rows = -1;

    assert_int_equal(keel_table_rows(s, NULL, "f", &rows), KEEL_OK);
    if (done)
        assert_true(rows == ONE_ROWS);
    expect_rows(s, "f", NULL, false);
}

static void check_schema(keel_session *s, bool done)
{
    bool found;
    int rc = keel_relation_exists(s, "sch", "x", &found);

    if (done) {
        assert_int_equal(rc, KEEL_OK);
        assert_true(found);
    } else {
        assert_int_equal(rc, KEEL_ENOENT); /* no schema sch */
    }
}

static const one_stmt one_stmts[] = {
    {"load with an integer key", setup_none_f, load_f, check_load_f, false},
    {"load with a text key", setup_none_g, load_g, check_load_g, false},
    {"create index on a filled table", setup_f, index_f, check_index_f, false},
    {"analyze", setup_f, analyze_f, check_analyze_f, false},
    {"drop table", setup_f_indexed, drop_f, check_drop_f, false},
    {"create schema and table", setup_no_schema, schema_and_table, check_schema,
     false},
    /* A drop that commits without its note would leave the file behind
     * for good; a create fails before its file exists. */
    {"drop table in a new open", setup_f_indexed, drop_f, check_drop_f, true},
    {"create schema and table in a new open", setup_no_schema, schema_and_table,
     check_schema, true},
};

/* The database's check, with nothing failing: no problem, no note. */
static void check_clean(const char *dir, const char *what)
{
    uint64_t problems = 99, notes = 99;
    keel_error e = {0};

    if (keel_check(dir, print_problem, NULL, &problems, &notes, &e) !=
        KEEL_OK)
        fail_msg("after %s: the check could not run: %s", what, e.msg);
    if (problems != 0 || notes != 0)
        fail_msg("after %s: %llu problems, %llu notes", what,
                 (unsigned long long)problems, (unsigned long long)notes);
}

/* Each statement of one_stmts with each of its allocations failing in
 * turn, in one session kept across the runs (or an open of its own for
 * each run); the database checks clean after each statement's last run. */
static void test_statements(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_session *s;
    keel_error e;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    for (size_t c = 0; c < sizeof(one_stmts) / sizeof(one_stmts[0]); c++) {
        const one_stmt *st = &one_stmts[c];
        long n;

        assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
        assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
        for (n = 0;; n++) {
            bool injected;
            int rc;
            st->setup(s);
            if (st->new_open) {
                keel_session_end(s);
                assert_int_equal(keel_db_close(db, &e), KEEL_OK);
                check_clean(dir, st->what);
                assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
                assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
            }
            oom_arm(n);
            rc = st->run(s);
            injected = atomic_load(&oom_injected) > 0;
            oom_disarm();
            if (rc != KEEL_OK &&
                (rc != KEEL_ENOMEM || !injected ||
                 strstr(keel_session_error(s), "memory") == NULL))
                fail_msg("%s, allocation %ld failing: %s: %s", st->what, n,
                         keel_status_str(rc), keel_session_error(s));
            st->check(s, rc == KEEL_OK);
            if (!injected)
                break;
        }
        print_message("%s: %ld allocations, each failed once\n", st->what, n);
        assert_true(n > 0);
        keel_session_end(s);
        assert_int_equal(keel_db_close(db, &e), KEEL_OK);
        check_clean(dir, st->what);
    }
    tu_dir_remove(dir);
}

/* Counts the check's lines (problems and notes), printing them. */
static void count_problem(void *ctx, bool note, const char *line)
{
    (*(int *)ctx)++;
    print_problem(NULL, note, line);
}

/* The check itself with each of its allocations failing in turn, on a
 * database with tables, indexes (one on text) and statistics: it runs
 * and finds nothing, or fails with KEEL_ENOMEM saying so, having
 * reported nothing: never a problem or note that is not there. */
static void test_check(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_session *s;
    keel_error e;
    long n;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    setup_f_indexed(s);
    assert_int_equal(load_g(s), KEEL_OK);
    assert_int_equal(analyze_f(s), KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    for (n = 0;; n++) {
        uint64_t problems = 99, notes = 99;
        int lines;
        bool injected;
        int rc;
        memset(&e, 0, sizeof(e));
        oom_arm(n);
        lines = 0;
        rc = keel_check(dir, count_problem, &lines, &problems, &notes, &e);
        injected = atomic_load(&oom_injected) > 0;
        oom_disarm();
        if (rc == KEEL_OK && (problems != 0 || notes != 0))
            fail_msg("allocation %ld failing: the check found %llu problems, "
                     "%llu notes",
                     n, (unsigned long long)problems,
                     (unsigned long long)notes);
        if (lines != 0)
            fail_msg("allocation %ld failing: the check reported %d lines "
                     "(%s)",
                     n, lines, keel_status_str(rc));
        if (rc != KEEL_OK &&
            (rc != KEEL_ENOMEM || !injected || strstr(e.msg, "memory") == NULL))
            fail_msg("allocation %ld failing: the check returned %s: %s", n,
                     keel_status_str(rc), e.msg);
        if (!injected)
            break;
    }
    print_message("check: %ld allocations, each failed once\n", n);
    assert_true(n > 10);
    check_clean(dir, "the check's runs");
    tu_dir_remove(dir);
}

/* ---- two sessions at once --------------------------------------------- */

#define CONC_ROWS 8

/* One of two sessions changing their own rows of t at once (ids
 * CONC_BASE * w + 0..CONC_ROWS-1) and making and dropping a table of
 * their own, while the n-th allocation of either fails; the model is
 * what its statements that succeeded left. */
#define CONC_BASE 1000

typedef struct conc_worker {
    keel_db *db;
    int w;
    long n;
    tu_failures *fails;
    pthread_barrier_t *start; /* both begin together */
    bool present[CONC_ROWS];
    int32_t v[CONC_ROWS];
    bool gone_left; /* a drop of its table failed: it exists */
} conc_worker;

/* Whether rc is success; records a failure unless it is KEEL_ENOMEM. */
static bool conc_ok(conc_worker *cw, keel_session *s, const char *what, int rc)
{
    if (rc == KEEL_OK)
        return true;
    if (rc != KEEL_ENOMEM)
        tu_fail(cw->fails, "session %d, allocation %ld failing: %s: %s: %s",
                cw->w, cw->n, what, keel_status_str(rc),
                s ? keel_session_error(s) : "");
    return false;
}

static void *conc_run(void *arg)
{
    conc_worker *cw = arg;
    keel_session *s = NULL;
    keel_value row[3], key, out[3];
    keel_error e;
    char gone[8], note[32];
    uint16_t pk = 1;
    bool found;
    int rc;

    pthread_barrier_wait(cw->start);
    rc = keel_session_begin(cw->db, &s, &e);
    if (!conc_ok(cw, NULL, "session", rc))
        return NULL;
    snprintf(gone, sizeof(gone), "g%d", cw->w);
    for (int32_t i = 0; i < CONC_ROWS; i++) {
        snprintf(note, sizeof(note), "session %d", cw->w);
        row[0] = tu_vi4(CONC_BASE * cw->w + i);
        row[1] = tu_vi4(i + (int32_t)cw->n);
        row[2] = tu_vstr(note);
        key = row[0];
        rc = cw->present[i] ? keel_update(s, NULL, "t", &key, row)
                            : keel_insert(s, NULL, "t", row);
        if (conc_ok(cw, s, "insert or update", rc)) {
            cw->present[i] = true;
            cw->v[i] = row[1].v.i4;
        }
    }
    key = tu_vi4(CONC_BASE * cw->w + 3);
    rc = keel_delete(s, NULL, "t", &key);
    if (rc == KEEL_ENOENT && !cw->present[3])
        rc = KEEL_OK;
    if (conc_ok(cw, s, "delete", rc))
        cw->present[3] = false;
    /* Two rows in one transaction: both or neither. */
    if (conc_ok(cw, s, "begin", keel_begin(s))) {
        bool ok = true;
        for (int32_t i = 4; i < 6 && ok; i++) {
            row[0] = tu_vi4(CONC_BASE * cw->w + i);
            row[1] = tu_vi4(-i - (int32_t)cw->n);
            row[2] = tu_vstr("txn");
            key = row[0];
            rc = cw->present[i] ? keel_update(s, NULL, "t", &key, row)
                                : keel_insert(s, NULL, "t", row);
            ok = conc_ok(cw, s, "change in a transaction", rc);
        }
        if (!ok)
            keel_abort(s);
        else if (conc_ok(cw, s, "commit", keel_commit(s)))
            for (int32_t i = 4; i < 6; i++) {
                cw->present[i] = true;
                cw->v[i] = -i - (int32_t)cw->n;
            }
    }
    for (int32_t i = 0; i < CONC_ROWS && !tu_failed(cw->fails); i++) {
        key = tu_vi4(CONC_BASE * cw->w + i);
        rc = keel_lookup(s, NULL, "t", &key, out, &found);
        if (conc_ok(cw, s, "lookup", rc) &&
            (found != cw->present[i] || (found && out[1].v.i4 != cw->v[i])))
            tu_fail(cw->fails,
                    "session %d, allocation %ld failing: row %d found %d "
                    "(want %d)",
                    cw->w, cw->n, (int)i, found, cw->present[i]);
    }
    rc = keel_create_table(s, NULL, gone, t_cols, 3, &pk, 1);
    if (rc == KEEL_EEXIST && cw->gone_left)
        rc = KEEL_OK;
    if (conc_ok(cw, s, "create table", rc)) {
        cw->gone_left = true;
        if (conc_ok(cw, s, "drop table", keel_drop_table(s, NULL, gone)))
            cw->gone_left = false;
    }
    keel_session_end(s);
    return NULL;
}

/* With nothing failing, in a session of db: t holds exactly the rows of
 * both models, and each worker's table exists only if its drop failed. */
static void conc_verify(keel_db *db, const conc_worker *cw, long n)
{
    keel_session *s;
    keel_value key, out[3];
    keel_error e;
    char gone[8];
    bool found;

    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    for (int w = 0; w < 2; w++) {
        for (int32_t i = 0; i < CONC_ROWS; i++) {
            key = tu_vi4(CONC_BASE * w + i);
            assert_int_equal(keel_lookup(s, NULL, "t", &key, out, &found),
                             KEEL_OK);
            if (found != cw[w].present[i] ||
                (found && out[1].v.i4 != cw[w].v[i]))
                fail_msg("after allocation %ld failed: session %d's row %d "
                         "found %d (want %d), v %d (want %d)",
                         n, w, (int)i, found, cw[w].present[i],
                         found ? out[1].v.i4 : 0, cw[w].v[i]);
        }
        snprintf(gone, sizeof(gone), "g%d", w);
        assert_int_equal(keel_relation_exists(s, NULL, gone, &found), KEEL_OK);
        assert_int_equal(found, cw[w].gone_left);
    }
    keel_session_end(s);
}

/* Two sessions at once, the n-th allocation of either failing, for each
 * n in turn until a run has none to fail (which session an allocation
 * falls to varies from run to run); after each run the database checks
 * clean and holds exactly what both sessions' successes left. */
static void test_two_sessions(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    conc_worker cw[2] = {{.w = 0}, {.w = 1}};
    keel_session *s;
    keel_db *db;
    keel_error e;
    uint16_t pk = 1;
    long n;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "t", t_cols, 3, &pk, 1),
                     KEEL_OK);
    keel_session_end(s);
    for (n = 0;; n++) {
        tu_failures fails = TU_FAILURES_INIT;
        pthread_barrier_t start;
        pthread_t th[2];
        bool injected;
        assert_int_equal(pthread_barrier_init(&start, NULL, 2), 0);
        for (int w = 0; w < 2; w++) {
            cw[w].db = db;
            cw[w].n = n;
            cw[w].fails = &fails;
            cw[w].start = &start;
        }
        oom_arm(n);
        for (int w = 0; w < 2; w++)
            assert_int_equal(pthread_create(&th[w], NULL, conc_run, &cw[w]), 0);
        for (int w = 0; w < 2; w++)
            pthread_join(th[w], NULL);
        injected = atomic_load(&oom_injected) > 0;
        oom_disarm();
        pthread_barrier_destroy(&start);
        tu_failures_check(&fails);
        conc_verify(db, cw, n);
        if (!injected)
            break;
        if (n % 16 == 15) { /* and now and then closed, and checked */
            assert_int_equal(keel_db_close(db, &e), KEEL_OK);
            check_clean(dir, "two sessions");
            assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
        }
    }
    print_message("two sessions: %ld allocations, each failed once\n", n);
    assert_true(n > 50);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    check_clean(dir, "two sessions");
    tu_dir_remove(dir);
}

/* A failed create leaves nothing: not even the directory it made. */
static void assert_no_dir(const char *dir, long n)
{
    struct stat st;

    if (stat(dir, &st) == 0)
        fail_msg("allocation %ld failing: the create left %s behind", n, dir);
}

/* keel_db_create() with each of its allocations failing in turn: a
 * failure leaves no directory behind; a success, a database that opens. */
static void test_create(void **state)
{
    char *parent = tu_mkdtemp();
    char dir[4200];
    keel_db_options o;
    keel_error e;
    long n;
    int rc;

    (void)state;
    snprintf(dir, sizeof(dir), "%s/db", parent);
    o = opts_for(dir);
    for (n = 0;; n++) {
        bool injected;
        oom_arm(n);
        rc = keel_db_create(&o, &e);
        injected = atomic_load(&oom_injected) > 0;
        oom_disarm();
        if (rc != KEEL_OK) {
            if (rc != KEEL_ENOMEM)
                fail_msg("allocation %ld failing: create returned %s: %s", n,
                         keel_status_str(rc), e.msg);
            assert_no_dir(dir, n);
            continue;
        }
        verify(dir, &(model){0}, n);
        tu_rmdir(dir);
        if (!injected)
            break;
    }
    print_message("create: %ld allocations, each failed once\n", n);
    assert_true(n > 10);
    tu_dir_remove(parent);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create),       cmocka_unit_test(test_workload),
        cmocka_unit_test(test_statements),   cmocka_unit_test(test_check),
        cmocka_unit_test(test_two_sessions),
    };
    const struct CMUnitTest threaded[] = {
        cmocka_unit_test(test_two_sessions),
    };

    /* Under ThreadSanitizer (KEEL_OOM_THREADED_ONLY, set by CMakeLists.txt)
     * only the scenario with two threads: the others are single-threaded,
     * which the normal and AddressSanitizer builds cover, and would take
     * minutes there. */
    if (getenv("KEEL_OOM_THREADED_ONLY") != NULL)
        return cmocka_run_group_tests(threaded, NULL, NULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
