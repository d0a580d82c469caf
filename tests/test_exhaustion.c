/*
 * test_exhaustion.c: the engine when a pool runs out.  The buffer pool is
 * squeezed by a "hog", a session of the pool itself that pins pages of a
 * table of its own until no buffer is left unpinned and then gives back
 * a chosen few, so that a statement can pin at most that many pages at
 * once: it fails with KEEL_EEXHAUSTED wherever its need first passes
 * that, in the middle of a B-tree split or of a heap extension too.  Each
 * statement that fails must fail with that error, hold no pin afterwards
 * and take no effect (inside an explicit transaction: leave it usable
 * without the statement's effects, or doom it so that its commit fails);
 * every row holds the values of its last change that committed, through
 * the primary key, the other indexes and scans; and the check finds no
 * problem, also after the database is closed and opened again.  So also
 * when max_sessions, the object ids, or the buffers for a new page of the
 * commit log run out; when a statement's undo finds no buffer either
 * (it dooms its transaction); and in a scan, which goes on where it
 * stopped when called again.  And with several sessions at once while the
 * hog's grip comes and goes, with index builds and analyzes among them,
 * sessions attaching and detaching against max_sessions, and catalog
 * caches held to a memory target of one byte.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"
#include "keel/keel.h"
#include "port/clock.h"
#include "storage/bufmgr.h"
#include "storage/fault.h"
#include "check/dbinfo.h"

/* ---- the check ---------------------------------------------------------- */

static void print_problem(void *ctx, bool note, const char *line)
{
    (void)ctx;
    fprintf(stderr, "  %s: %s\n", note ? "note" : "problem", line);
}

/* The problems the check finds in dir (each printed); a note (a file no
 * relation owns) fails the test. */
static uint64_t check_problems(const char *dir)
{
    keel_error e = {0};
    uint64_t problems = 99, notes = 99;

    if (keel_check(dir, print_problem, NULL, &problems, &notes, &e) !=
        KEEL_OK)
        fail_msg("check of %s could not run: %s", dir, e.msg);
    assert_int_equal(notes, 0);
    return problems;
}

/* Ends s, closes db and asserts that the check finds no problem. */
static void close_and_check(keel_session *s, keel_db *db, const char *dir)
{
    keel_error e;

    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(check_problems(dir), 0);
}

/* ---- the hog ------------------------------------------------------------ */

/* Rows of the hog's table: 7 fill a page, 1200 fill 172 pages, more than
 * the 128 buffers of a 1 MiB pool. */
#define HOG_ROWS 1200
#define HOG_MAX  1024

typedef struct hog {
    buf_session *bs;
    relnumber_t rel;
    uint32_t nblocks;
    uint32_t n; /* pins held, their buffers in ids[] */
    int32_t ids[HOG_MAX];
} hog;

typedef struct hog_load {
    int32_t i;
    char pad[1000];
} hog_load;

static keel_status hog_next(void *ctx, keel_value *values, bool *done)
{
    hog_load *l = ctx;

    if (l->i == HOG_ROWS) {
        *done = true;
        return KEEL_OK;
    }
    memset(l->pad, 'h', sizeof(l->pad));
    values[0] = tu_vi4(l->i++);
    values[1] = (keel_value){.isnull = false, .v.s = {l->pad, 1000}};
    return KEEL_OK;
}

/* The relation number of relation name (through the catalogs). */
static relnumber_t relnumber_of(keel_session *s, const char *name)
{
    dbinfo_rel *r;
    relnumber_t rel = INVALID_RELNUMBER;
    size_t n;

    assert_int_equal(dbinfo_relations(s, &r, &n, NULL), KEEL_OK);
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].name, name) == 0)
            rel = r[i].relnumber;
    free(r);
    assert_int_not_equal(rel, INVALID_RELNUMBER);
    return rel;
}

/* Loads the hog's table (through s) and opens the hog on db's pool, for
 * use by one thread at a time. */
static void hog_open(hog *h, keel_db *db, keel_session *s)
{
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                       {"pad", KEEL_TEXT, 0, true}};
    hog_load ld = {0};
    keel_error e;
    kerr ke;
    smgr_rel *sr;

    memset(h, 0, sizeof(*h));
    assert_int_equal(
        keel_load_table(s, NULL, "hog", cols, 2, NULL, 0, hog_next, &ld, NULL),
        KEEL_OK);
    assert_int_equal(keel_checkpoint(db, &e), KEEL_OK);
    h->rel = relnumber_of(s, "hog");
    assert_int_equal(smgr_rel_open(db->smgr, h->rel, &sr, &ke), KEEL_OK);
    h->nblocks = smgr_nblocks(sr);
    assert_true(h->nblocks > buf_pool_size(db->pool));
    assert_int_equal(buf_session_create(db->pool, &h->bs, &ke), KEEL_OK);
}

static void hog_close(hog *h)
{
    buf_session_destroy(h->bs);
    h->bs = NULL;
}

/* Gives back pins until the hog holds keep. */
static void hog_release_to(hog *h, uint32_t keep)
{
    while (h->n > keep)
        buf_release(h->bs, h->ids[--h->n]);
}

/*
 * Pins the hog's blocks until no buffer is left (the read fails with
 * KEEL_EEXHAUSTED), then gives back `leave` of them.  If no other session
 * pins anything, exactly `leave` buffers are then unpinned, and no page
 * but the hog's is left in the pool.  Returns false (and pins nothing
 * more) on any other error, its message in the hog's session.
 */
static bool hog_squeeze(hog *h, uint32_t leave)
{
    for (uint32_t b = 0; h->n < HOG_MAX && b < h->nblocks; b++) {
        int32_t id;
        int rc = buf_read(h->bs, h->rel, b, NULL, &id);
        if (rc == KEEL_EEXHAUSTED)
            break;
        if (rc != KEEL_OK)
            return false;
        h->ids[h->n++] = id;
    }
    hog_release_to(h, h->n > leave ? h->n - leave : 0);
    return true;
}

/* ---- the table ---------------------------------------------------------- */

/*
 * t (k text primary key, n int4 unique): keys of 600 bytes, so that a leaf
 * holds 13 and the B-trees split every few inserts and grow three levels
 * high; a row fills a twelfth of a heap page.
 */
static const keel_column t_cols[] = {{"k", KEEL_TEXT, 0, true},
                                     {"n", KEEL_INT4, 0, true}};

static keel_value row_key(char *buf, int32_t i)
{
    snprintf(buf, 16, "%06d", (int)(((int64_t)i * 7919) % 1000000));
    memset(buf + 6, 'k', 594);
    return (keel_value){.isnull = false, .v.s = {buf, 600}};
}

static void create_t(keel_session *s)
{
    uint16_t pk = 1, k2 = 2;

    assert_int_equal(keel_create_table(s, NULL, "t", t_cols, 2, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_create_index(s, NULL, "t", "t_n", &k2, 1, true),
                     KEEL_OK);
}

/* Whether rc and the session's message are an exhausted buffer pool. */
static bool is_pool_exhausted(keel_session *s, int rc)
{
    return rc == KEEL_EEXHAUSTED &&
           strstr(keel_session_error(s), "buffer pool exhausted") != NULL;
}

/* Fails the test unless call i (what) failed for want of a buffer, with
 * the pool's message. */
static void assert_exhausted(keel_session *s, const char *what, int32_t i,
                             int rc)
{
    if (!is_pool_exhausted(s, rc))
        fail_msg("%s %d: %s, \"%s\"", what, i, keel_status_str(rc),
                 keel_session_error(s));
}

static void assert_no_pins(keel_session *s, const char *what, int32_t i)
{
    if (buf_session_pinned(s->bs) != 0)
        fail_msg("%s %d: the session still pins %u buffers", what, i,
                 buf_session_pinned(s->bs));
}

/* The size in bytes of relation rel's file in dir. */
static off_t file_size(const char *dir, relnumber_t rel)
{
    char path[512];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%u", dir, rel);
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

/* Every row i in 0..rows-1 has n want[i] (-1: no row), through the primary
 * key and through a scan of t_n; returns the rows there are. */
static int32_t assert_rows(keel_session *s, const int32_t *want, int32_t rows,
                           int32_t nmax)
{
    keel_value key, out[2], lo = tu_vi4(INT32_MIN), hi = tu_vi4(nmax);
    keel_bound blo = {&lo, 1, true}, bhi = {&hi, 1, true};
    int32_t in = 0, seen = 0;
    keel_scan *sc;
    char buf[600];
    bool found;

    for (int32_t i = 0; i < rows; i++) {
        key = row_key(buf, i);
        assert_int_equal(keel_lookup(s, NULL, "t", &key, out, &found), KEEL_OK);
        if (found != (want[i] >= 0))
            fail_msg("row %d: %s, expected %s", i, found ? "found" : "absent",
                     want[i] >= 0 ? "there" : "gone");
        if (found && out[1].v.i4 != want[i])
            fail_msg("row %d: n %d, expected %d", i, out[1].v.i4, want[i]);
        in += found;
    }
    assert_int_equal(keel_scan_begin(s, NULL, "t", "t_n", &blo, &bhi, &sc),
                     KEEL_OK);
    while (keel_scan_next(sc, out, &found) == KEEL_OK && found) {
        int32_t i = out[1].v.i4 % rows;
        if (want[i] != out[1].v.i4)
            fail_msg("scan: row %d has n %d, expected %d", i, out[1].v.i4,
                     want[i]);
        seen++;
    }
    keel_scan_end(sc);
    assert_int_equal(seen, in);
    return in;
}

/*
 * One session, the pool squeezed before each statement to leave it 0..13
 * buffers: inserts (the second half in one explicit transaction), updates
 * and deletes, index builds, analyzes, lookups, scans and a commit.  What
 * each needs at once decides whether it fails, so the failures are the
 * same on every run.
 */
#define TIGHT_ROWS  900
#define TIGHT_LEAVE 14

static void test_changes_in_a_tight_pool(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o;
    static int32_t want[TIGHT_ROWS];
    static hog h;
    keel_session *s;
    keel_db *db;
    keel_error e;
    keel_value v[2], out[2];
    relnumber_t rels[3];
    char buf[600];
    int failed = 0, grew_heap = 0, grew_index = 0, changes_failed = 0,
        builds = 0, builds_failed = 0, analyzes = 0, analyzes_failed = 0,
        reads_failed = 0, in;
    uint32_t most_left = 0; /* most buffers left to an insert that failed */
    bool found;

    (void)state;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 1;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    hog_open(&h, db, s);
    create_t(s);
    rels[0] = relnumber_of(s, "t");
    rels[1] = relnumber_of(s, "t_pkey");
    rels[2] = relnumber_of(s, "t_n");

    /* Inserts. */
    for (int32_t i = 0; i < TIGHT_ROWS; i++) {
        off_t before[3];
        int rc;
        if (i == TIGHT_ROWS / 2)
            assert_int_equal(keel_begin(s), KEEL_OK);
        for (int r = 0; r < 3; r++)
            before[r] = file_size(dir, rels[r]);
        v[0] = row_key(buf, i);
        v[1] = tu_vi4(i);
        assert_true(hog_squeeze(&h, (uint32_t)(i % TIGHT_LEAVE)));
        rc = keel_insert(s, NULL, "t", v);
        hog_release_to(&h, 0);
        assert_no_pins(s, "insert", i);
        want[i] = rc == KEEL_OK ? i : -1;
        if (rc == KEEL_OK)
            continue;
        assert_exhausted(s, "insert", i, rc);
        failed++;
        if ((uint32_t)(i % TIGHT_LEAVE) > most_left)
            most_left = (uint32_t)(i % TIGHT_LEAVE);
        /* Failed after the heap, or an index (a split), had grown. */
        grew_heap += file_size(dir, rels[0]) != before[0];
        grew_index += file_size(dir, rels[1]) != before[1] ||
                      file_size(dir, rels[2]) != before[2];
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
    print_message("inserts in a pool left 0..%d buffers: %d of %d failed (the "
                  "last with %u left), %d after the heap grew, %d after an "
                  "index grew (a split)\n",
                  TIGHT_LEAVE - 1, failed, TIGHT_ROWS, most_left, grew_heap,
                  grew_index);
    assert_true(failed >= TIGHT_ROWS / TIGHT_LEAVE);
    assert_true(grew_heap >= 3 && grew_index >= 10);
    in = assert_rows(s, want, TIGHT_ROWS, 2 * TIGHT_ROWS);
    assert_true(in >= TIGHT_ROWS / 2);

    /* Updates (new entries in both indexes) and deletes. */
    for (int32_t i = 0; i < TIGHT_ROWS; i++) {
        keel_value key = row_key(buf, i);
        int rc;
        if (want[i] < 0 || i % 3 == 2)
            continue;
        v[0] = key;
        v[1] = tu_vi4(i + TIGHT_ROWS);
        assert_true(hog_squeeze(&h, (uint32_t)(i % TIGHT_LEAVE)));
        rc = i % 3 == 0 ? keel_update(s, NULL, "t", &key, v)
                        : keel_delete(s, NULL, "t", &key);
        hog_release_to(&h, 0);
        assert_no_pins(s, i % 3 == 0 ? "update" : "delete", i);
        if (rc == KEEL_OK) {
            want[i] = i % 3 == 0 ? i + TIGHT_ROWS : -1;
            continue;
        }
        assert_exhausted(s, i % 3 == 0 ? "update" : "delete", i, rc);
        changes_failed++;
    }
    print_message("updates and deletes: %d failed\n", changes_failed);
    assert_true(changes_failed >= 20);
    in = assert_rows(s, want, TIGHT_ROWS, 2 * TIGHT_ROWS);

    /* Index builds and analyzes. */
    for (uint32_t leave = 0; leave < 24; leave++) {
        uint16_t k2 = 2;
        double rows = -1, before = -1;
        char name[32];
        int rc;

        snprintf(name, sizeof(name), "t_b%u", leave);
        assert_true(hog_squeeze(&h, leave));
        rc = keel_create_index(s, NULL, "t", name, &k2, 1, leave % 2 == 0);
        hog_release_to(&h, 0);
        assert_no_pins(s, "index build", (int32_t)leave);
        if (rc == KEEL_OK) {
            keel_value lo = tu_vi4(INT32_MIN);
            keel_bound b = {&lo, 1, true};
            keel_scan *sc;
            int32_t n = 0;
            builds++;
            assert_int_equal(keel_scan_begin(s, NULL, "t", name, &b, NULL, &sc),
                             KEEL_OK);
            while (keel_scan_next(sc, out, &found) == KEEL_OK && found)
                n++;
            keel_scan_end(sc);
            assert_int_equal(n, in);
        } else {
            assert_exhausted(s, "index build", (int32_t)leave, rc);
            assert_int_equal(keel_relation_exists(s, NULL, name, &found),
                             KEEL_OK);
            assert_false(found);
            builds_failed++;
        }

        assert_int_equal(keel_table_rows(s, NULL, "t", &before), KEEL_OK);
        assert_true(hog_squeeze(&h, leave));
        rc = keel_analyze(s, NULL, "t");
        hog_release_to(&h, 0);
        assert_no_pins(s, "analyze", (int32_t)leave);
        if (rc != KEEL_OK)
            assert_exhausted(s, "analyze", (int32_t)leave, rc);
        assert_int_equal(keel_table_rows(s, NULL, "t", &rows), KEEL_OK);
        if (rc == KEEL_OK) {
            analyzes++;
            assert_true(rows == (double)in);
        } else {
            assert_true(rows == before);
            analyzes_failed++;
        }
        if (builds >= 8)
            break;
    }
    print_message("index builds: %d built, %d failed; analyzes: %d done, "
                  "%d failed\n",
                  builds, builds_failed, analyzes, analyzes_failed);
    assert_true(builds >= 1 && builds_failed >= 1);
    assert_true(analyzes >= 1 && analyzes_failed >= 1);

    /* Lookups and scans: right, or failed for want of a buffer. */
    for (int32_t i = 0; i < 3 * TIGHT_LEAVE; i++) {
        keel_value key = row_key(buf, i), lo = tu_vi4(INT32_MIN);
        keel_bound b = {&lo, 1, true};
        keel_scan *sc = NULL;
        int32_t n = 0;
        int rc;

        assert_true(hog_squeeze(&h, (uint32_t)(i % TIGHT_LEAVE)));
        rc = keel_lookup(s, NULL, "t", &key, out, &found);
        if (rc == KEEL_OK) {
            assert_true(found == (want[i] >= 0));
            if (found)
                assert_int_equal(out[1].v.i4, want[i]);
        } else {
            assert_exhausted(s, "lookup", i, rc);
            reads_failed++;
        }
        assert_no_pins(s, "lookup", i);
        rc = keel_scan_begin(s, NULL, "t", "t_n", &b, NULL, &sc);
        while (rc == KEEL_OK &&
               (rc = keel_scan_next(sc, out, &found)) == KEEL_OK && found) {
            assert_int_equal(want[out[1].v.i4 % TIGHT_ROWS], out[1].v.i4);
            n++;
        }
        keel_scan_end(sc);
        if (rc == KEEL_OK)
            assert_int_equal(n, in);
        else {
            assert_exhausted(s, "scan", i, rc);
            reads_failed++;
        }
        hog_release_to(&h, 0);
        assert_no_pins(s, "scan", i);
    }
    print_message("lookups and scans: %d failed\n", reads_failed);
    assert_true(reads_failed >= 4);

    /* A commit that finds no buffer for the commit log's page is rolled
     * back. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    v[0] = row_key(buf, TIGHT_ROWS + 1);
    v[1] = tu_vi4(-5);
    assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_OK);
    assert_true(hog_squeeze(&h, 0));
    {
        int rc = keel_commit(s);
        hog_release_to(&h, 0);
        assert_exhausted(s, "commit", 0, rc);
    }
    assert_no_pins(s, "commit", 0);
    assert_int_equal(keel_lookup(s, NULL, "t", &v[0], out, &found), KEEL_OK);
    assert_false(found);

    hog_close(&h);
    tu_assert_pool_quiet(db->pool);
    close_and_check(s, db, dir);

    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(assert_rows(s, want, TIGHT_ROWS, 2 * TIGHT_ROWS), in);
    close_and_check(s, db, dir);
    tu_dir_remove(dir);
}

/*
 * max_sessions sessions and no more: one more is refused with
 * KEEL_EEXHAUSTED, naming max_sessions; the close is refused while any is
 * open; a session that ends frees its slot.
 */
static void test_sessions_used_up(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o;
    keel_session *s[4], *more = (keel_session *)&o;
    keel_db *db;
    keel_error e;

    (void)state;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 1;
    o.max_sessions = 3;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 3; i++)
            assert_int_equal(keel_session_begin(db, &s[i], &e), KEEL_OK);
        assert_int_equal(keel_session_begin(db, &more, &e), KEEL_EEXHAUSTED);
        assert_int_equal(e.code, KEEL_EEXHAUSTED);
        assert_non_null(strstr(e.msg, "max_sessions"));
        assert_null(more);
        assert_int_equal(keel_db_close(db, &e), KEEL_EBUSY);
        keel_session_end(s[round]);
        assert_int_equal(keel_session_begin(db, &s[round], &e), KEEL_OK);
        for (int i = 0; i < 3; i++)
            keel_session_end(s[i]);
    }
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

/*
 * Object ids used up: a database with 9 left.  Tables with a primary key
 * take two each; the fifth gets its table's and not its index's, and
 * fails whole with KEEL_EEXHAUSTED, as every statement that needs one does
 * from then on, also after a reopen; the tables made are intact and the
 * check passes.
 */
static void test_oids_used_up(void **state)
{
    char *dir = tu_mkdtemp();
    static const keel_column cols[] = {{"k", KEEL_INT4, 0, true},
                                       {"v", KEEL_INT4, 0, false}};
    keel_db_options o;
    keel_session *s;
    keel_db *db;
    keel_error e;
    kerr ke;
    control_data c;
    uint16_t pk = 1, k2 = 2;
    int made = 0, rc = KEEL_OK;
    char name[32];
    bool found;

    (void)state;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 1;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    /* As if all but 9 had been handed out, 9 of them reserved. */
    pthread_mutex_lock(&db->control_lock);
    c = db->control;
    c.next_oid = UINT32_MAX - 1030;
    c.oid_limit = UINT32_MAX - 1021;
    assert_int_equal(control_write(dir, &c, &ke), KEEL_OK);
    db->control = c;
    db->next_oid = c.next_oid;
    pthread_mutex_unlock(&db->control_lock);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    while (rc == KEEL_OK) {
        snprintf(name, sizeof(name), "o%d", made);
        rc = keel_create_table(s, NULL, name, cols, 2, &pk, 1);
        made += rc == KEEL_OK;
    }
    assert_int_equal(made, 4);
    if (rc != KEEL_EEXHAUSTED ||
        strstr(keel_session_error(s), "object ids") == NULL)
        fail_msg("create table: %s, \"%s\"", keel_status_str(rc),
                 keel_session_error(s));
    assert_int_equal(keel_relation_exists(s, NULL, name, &found), KEEL_OK);
    assert_false(found);
    assert_int_equal(keel_create_schema(s, "more"), KEEL_EEXHAUSTED);
    assert_int_equal(keel_create_index(s, NULL, "o0", "o0_v", &k2, 1, false),
                     KEEL_EEXHAUSTED);
    assert_int_equal(keel_relation_exists(s, NULL, "o0_v", &found), KEEL_OK);
    assert_false(found);
    for (int i = 0; i < made; i++) {
        keel_value v[2] = {tu_vi4(i), tu_vi4(i)};
        snprintf(name, sizeof(name), "o%d", i);
        assert_int_equal(keel_insert(s, NULL, name, v), KEEL_OK);
    }
    close_and_check(s, db, dir);

    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_schema(s, "more"), KEEL_EEXHAUSTED);
    for (int i = 0; i < made; i++) {
        keel_value key = tu_vi4(i), out[2];
        snprintf(name, sizeof(name), "o%d", i);
        assert_int_equal(keel_lookup(s, NULL, name, &key, out, &found),
                         KEEL_OK);
        assert_true(found);
    }
    close_and_check(s, db, dir);
    tu_dir_remove(dir);
}

/*
 * The first transaction id of a new commit-log page: its writer adds the
 * page, here with no buffer to put it in.  That fails before the file
 * grows; the statement fails whole, the next writer adds the page, and the
 * check passes, also after a reopen.
 */
static void test_clog_page_without_a_buffer(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o;
    static hog h;
    keel_session *s;
    keel_db *db;
    keel_error e;
    kerr ke;
    control_data c;
    keel_value v[2], out[2];
    char buf[600];
    int32_t i = 0;
    bool found;
    int rc;

    (void)state;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 1;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    /* Ids start a few short of the second page. */
    assert_int_equal(control_read(dir, &c, &ke), KEEL_OK);
    c.xid_limit = CLOG_XIDS_PER_PAGE - 20;
    assert_int_equal(control_write(dir, &c, &ke), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    hog_open(&h, db, s);
    create_t(s);
    assert_int_equal(file_size(dir, CATALOG_CLOG_REL), BLOCK_SIZE);
    while (txn_mgr_next_xid(db->txn) < CLOG_XIDS_PER_PAGE) {
        v[0] = row_key(buf, i);
        v[1] = tu_vi4(i);
        assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_OK);
        i++;
    }
    v[0] = row_key(buf, i);
    v[1] = tu_vi4(i);
    assert_true(hog_squeeze(&h, 0));
    rc = keel_insert(s, NULL, "t", v);
    hog_release_to(&h, 0);
    assert_exhausted(s, "insert", i, rc);
    assert_no_pins(s, "insert", i);
    assert_int_equal(file_size(dir, CATALOG_CLOG_REL), BLOCK_SIZE);
    assert_int_equal(keel_lookup(s, NULL, "t", &v[0], out, &found), KEEL_OK);
    assert_false(found);
    assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_OK);
    assert_int_equal(file_size(dir, CATALOG_CLOG_REL), 2 * BLOCK_SIZE);
    assert_int_equal(keel_lookup(s, NULL, "t", &v[0], out, &found), KEEL_OK);
    assert_true(found);
    hog_close(&h);
    close_and_check(s, db, dir);

    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    for (int32_t j = 0; j <= i; j++) {
        v[0] = row_key(buf, j);
        assert_int_equal(keel_lookup(s, NULL, "t", &v[0], out, &found),
                         KEEL_OK);
        assert_true(found);
        assert_int_equal(out[1].v.i4, j);
    }
    close_and_check(s, db, dir);
    tu_dir_remove(dir);
}

/*
 * A scan that runs out of buffers in keel_scan_next(), after k rows: the
 * call fails with KEEL_EEXHAUSTED, whose message is still there after
 * keel_scan_end() (the pattern of a caller that ends the scan, then
 * reports); and, retried once buffers are free, the scan goes on where it
 * stopped: it returns every row once, in order, neither ending early nor
 * skipping the row it had been fetching.  Through the primary key (a leaf
 * holds 13 entries, so that some failures fall on reading the next leaf
 * and some on fetching a row) and in storage order.
 */
#define SCAN_ROWS 200

static void test_scan_after_exhaustion(void **state)
{
    char *dir = tu_mkdtemp();
    static const keel_column cols[] = {{"k", KEEL_INT4, 0, true},
                                       {"pad", KEEL_TEXT, 0, true}};
    keel_db_options o;
    static hog h;
    keel_session *s;
    keel_db *db;
    keel_error e;
    keel_value v[2], out[2];
    char buf[600];
    int failed = 0;

    (void)state;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 1;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    hog_open(&h, db, s);
    create_t(s);
    assert_int_equal(keel_create_table(s, NULL, "heap", cols, 2, NULL, 0),
                     KEEL_OK);
    memset(buf, 'p', sizeof(buf));
    for (int32_t i = 0; i < SCAN_ROWS; i++) {
        v[0] = row_key(buf, i);
        v[1] = tu_vi4(i);
        assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_OK);
        v[0] = tu_vi4(i);
        v[1] = (keel_value){.isnull = false, .v.s = {buf, 600}};
        assert_int_equal(keel_insert(s, NULL, "heap", v), KEEL_OK);
    }
    for (int heap = 0; heap < 2; heap++)
        for (int32_t k = 0; k < 60; k++) {
            static bool seen[SCAN_ROWS];
            keel_scan *sc;
            int32_t n = 0, last = INT32_MIN;
            bool found = true;
            int rc;

            memset(seen, 0, sizeof(seen));
            assert_int_equal(keel_scan_begin(s, NULL, heap ? "heap" : "t", NULL,
                                             NULL, NULL, &sc),
                             KEEL_OK);
            for (int32_t j = 0; j < k / 2; j++) {
                assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
                assert_true(found);
                last = heap ? out[0].v.i4 : out[1].v.i4;
                seen[last] = true;
                n++;
            }
            assert_true(hog_squeeze(&h, 0));
            rc = keel_scan_next(sc, out, &found);
            hog_release_to(&h, 0);
            assert_exhausted(s, "scan", k, rc);
            assert_false(found);
            assert_no_pins(s, "scan", k);
            failed++;
            if (k % 2 == 0) {
                /* Ended at once: the message stays. */
                keel_scan_end(sc);
                assert_exhausted(s, "scan ended", k, rc);
                continue;
            }
            while ((rc = keel_scan_next(sc, out, &found)) == KEEL_OK && found) {
                int32_t i = heap ? out[0].v.i4 : out[1].v.i4;
                if (seen[i])
                    fail_msg("k %d: row %d returned twice", k, i);
                seen[i] = true;
                if (heap && i < last)
                    fail_msg("k %d: row %d after %d", k, i, last);
                last = i;
                n++;
            }
            assert_int_equal(rc, KEEL_OK);
            keel_scan_end(sc);
            if (n != SCAN_ROWS)
                fail_msg("%s scan, failed after %d rows: %d rows of %d",
                         heap ? "storage order" : "primary key", k / 2, n,
                         SCAN_ROWS);
        }
    print_message("scans that ran out of buffers: %d, half of them ended "
                  "there, half went on\n",
                  failed);
    hog_close(&h);
    close_and_check(s, db, dir);
    tu_dir_remove(dir);
}

/*
 * Several sessions at once, the hog squeezing the pool for a moment to a
 * few buffers (0..9), letting go for a moment, and again:
 *  - writers insert, update and delete their own rows of t (alone or a few
 *    to a transaction), look them up (keel_lookup, keel_select_column),
 *    look up rows of u (whose integer key's lookups start from an index
 *    directory), scan t_n (a failed step retried), and every so often end
 *    their session and begin another; half of them with a catalog cache
 *    memory target of one byte, so that every miss evicts;
 *  - one session loads tables, indexes, analyzes (t too) and drops them,
 *    and checkpoints now and then;
 *  - two more begin a session, look a row up and end it, over and over,
 *    against a max_sessions that leaves one session free.
 * Every failure must be the pool's (or max_sessions'), with its message,
 * and leave the session no pin; a failed statement takes no effect, and
 * one inside a transaction leaves it usable.  At the end every
 * row holds the values of its last change that committed, every table and
 * index exists exactly if its statement succeeded, and the check passes,
 * also after a reopen.
 */
#define CW_WRITERS 4
#define CW_ROWS    300 /* per writer */
#define CW_ALL     (CW_WRITERS * CW_ROWS)
#define CW_MIN_OPS 150 /* per writer, however short the run */
#define CW_TABLES  256 /* the loader's rounds, at most */
#define CW_LOAD    150 /* rows of each loaded table */

typedef struct cw_shared {
    keel_db *db;
    hog *h;
    uint64_t until_ns;
    atomic_bool stop; /* for the hog and the visitors */
    tu_failures log;
} cw_shared;

typedef struct cw_counts {
    int inserts, updates, deletes, reads, scans, commits; /* failed */
    int changes, attaches, refused;
    int retries; /* of keel_scan_next(), which then went on */
    uint64_t evictions;
} cw_counts;

typedef struct cw_writer {
    cw_shared *sh;
    int thread;
    int32_t want[CW_ROWS]; /* the row's n, or -1: none */
    int32_t gen[CW_ROWS];  /* updates so far: n = gen * CW_ALL + i */
    cw_counts c;
} cw_writer;

typedef struct cw_loader {
    cw_shared *sh;
    int rounds;
    bool table[CW_TABLES], index[CW_TABLES];
    int loads, builds, analyzes, drops; /* failed */
    int done;                           /* statements that succeeded */
} cw_loader;

typedef struct cw_visitor {
    cw_shared *sh;
    int thread;
    cw_counts c;
} cw_visitor;

static void cw_check_pins(cw_shared *sh, keel_session *s, const char *what)
{
    if (buf_session_pinned(s->bs) != 0)
        tu_fail(&sh->log, "%s: the session still pins %u buffers", what,
                buf_session_pinned(s->bs));
}

/* A new session, retried while max_sessions are open (counted). */
static keel_session *cw_attach(cw_shared *sh, cw_counts *c, bool tiny_cache)
{
    keel_session *s = NULL;
    keel_error e;

    for (;;) {
        int rc = keel_session_begin(sh->db, &s, &e);
        if (rc == KEEL_OK)
            break;
        if (rc != KEEL_EEXHAUSTED || strstr(e.msg, "max_sessions") == NULL) {
            tu_fail(&sh->log, "session: %s, \"%s\"", keel_status_str(rc),
                    e.msg);
            return NULL;
        }
        c->refused++;
        usleep(50);
    }
    c->attaches++;
    if (tiny_cache && keel_session_set_cache_options(s, 0, 1) != KEEL_OK)
        tu_fail(&sh->log, "cache options: %s", keel_session_error(s));
    return s;
}

static void cw_detach(keel_session *s, cw_counts *c)
{
    keel_cache_stats st;

    keel_session_cache_stats(s, &st);
    c->evictions += st.evictions;
    keel_session_end(s);
}

static int32_t cw_row(const cw_writer *w, int32_t j)
{
    return j * CW_WRITERS + w->thread;
}

/*
 * Reads row j of writer w, which should hold n `expect` (-1: none), by
 * keel_lookup or keel_select_column.  Returns the status: KEEL_OK (and the
 * value checked), a failure of the pool, or another failure (recorded).
 */
static int cw_read(cw_writer *w, keel_session *s, int32_t j, int32_t expect,
                   bool select)
{
    keel_value key, out[2];
    char buf[600];
    bool found = false;
    int32_t i = cw_row(w, j);
    int rc;

    key = row_key(buf, i);
    rc = select ? keel_select_column(s, NULL, "t", "n", &key, &out[1], &found)
                : keel_lookup(s, NULL, "t", &key, out, &found);
    if (rc != KEEL_OK)
        return rc;
    if (found != (expect >= 0) || (found && out[1].v.i4 != expect))
        tu_fail(&w->sh->log, "row %d: %s n %d, expected %d", i,
                found ? "found" : "absent", found ? out[1].v.i4 : -1, expect);
    return KEEL_OK;
}

/* u (id int4 primary key, v int4): U_ROWS rows, v = 3 id, read by
 * writers through its primary key (whose lookups an index directory
 * starts: src/access/README.md). */
#define U_ROWS 3000

typedef struct u_src {
    int32_t i;
} u_src;

static keel_status u_next(void *ctx, keel_value *values, bool *done)
{
    u_src *l = ctx;

    if (l->i == U_ROWS) {
        *done = true;
        return KEEL_OK;
    }
    values[0] = tu_vi4(l->i);
    values[1] = tu_vi4(3 * l->i);
    l->i++;
    return KEEL_OK;
}

/* Reads row id of u: right, or the status of a failure. */
static int cw_read_u(cw_shared *sh, keel_session *s, int32_t id)
{
    keel_value key = tu_vi4(id), out;
    bool found = false;
    int rc = keel_select_column(s, NULL, "u", "v", &key, &out, &found);

    if (rc == KEEL_OK && (!found || out.v.i4 != 3 * id))
        tu_fail(&sh->log, "u row %d: %s v %d", id, found ? "found" : "absent",
                found ? out.v.i4 : -1);
    return rc;
}

/*
 * Scans t_n; each of w's rows must hold its n.  keel_scan_next() failing
 * for want of a buffer is called again, up to 20 times, and the scan must
 * then go on where it stopped; a failure (counted) must be the pool's, its
 * message still there after keel_scan_end().
 */
static void cw_scan(cw_writer *w, keel_session *s)
{
    keel_value lo = tu_vi4(INT32_MIN), out[2];
    keel_bound b = {&lo, 1, true};
    keel_scan *sc = NULL;
    int32_t mine = 0, rows = 0, retries = 0;
    bool found;
    int rc = keel_scan_begin(s, NULL, "t", "t_n", &b, NULL, &sc);

    while (rc == KEEL_OK) {
        rc = keel_scan_next(sc, out, &found);
        if (rc != KEEL_OK && is_pool_exhausted(s, rc) && retries < 20) {
            retries++;
            w->c.retries++;
            usleep(100);
            rc = KEEL_OK;
            continue;
        }
        if (rc != KEEL_OK || !found)
            break;
        int32_t i = out[1].v.i4 % CW_ALL;
        if (i % CW_WRITERS != w->thread)
            continue;
        mine++;
        if (w->want[i / CW_WRITERS] != out[1].v.i4)
            tu_fail(&w->sh->log, "scan: row %d has n %d, expected %d", i,
                    out[1].v.i4, w->want[i / CW_WRITERS]);
    }
    keel_scan_end(sc);
    cw_check_pins(w->sh, s, "a scan");
    if (rc != KEEL_OK) {
        if (!is_pool_exhausted(s, rc))
            tu_fail(&w->sh->log, "scan: %s, \"%s\"", keel_status_str(rc),
                    keel_session_error(s));
        w->c.scans++;
        return;
    }
    for (int32_t j = 0; j < CW_ROWS; j++)
        rows += w->want[j] >= 0;
    if (mine != rows)
        tu_fail(&w->sh->log, "scan: %d rows of writer %d, expected %d", mine,
                w->thread, rows);
}

/*
 * Changes row j (whose n is now cur): inserts it if absent, else updates
 * it (a new n) or deletes it.  *next gets the n it has if this succeeds.
 */
static int cw_change(cw_writer *w, keel_session *s, int32_t j, int32_t cur,
                     uint64_t x, int32_t *next, int **failed)
{
    int32_t i = cw_row(w, j);
    keel_value key, v[2];
    char buf[600];

    key = row_key(buf, i);
    v[0] = key;
    if (cur < 0) {
        *next = w->gen[j] * CW_ALL + i;
        *failed = &w->c.inserts;
        v[1] = tu_vi4(*next);
        return keel_insert(s, NULL, "t", v);
    }
    if (x % 3 != 0) {
        *next = (w->gen[j] + 1) * CW_ALL + i;
        *failed = &w->c.updates;
        v[1] = tu_vi4(*next);
        return keel_update(s, NULL, "t", &key, v);
    }
    *next = -1;
    *failed = &w->c.deletes;
    return keel_delete(s, NULL, "t", &key);
}

/* The n row j holds after a change to n next has committed. */
static void cw_apply(cw_writer *w, int32_t j, int32_t next)
{
    if (next >= 0 && w->want[j] >= 0)
        w->gen[j]++;
    w->want[j] = next;
    w->c.changes++;
}

/* Up to three changes in one transaction; applied only if it commits. */
static void cw_transaction(cw_writer *w, keel_session *s, uint64_t *rnd)
{
    int32_t js[3], nexts[3];
    bool ok[3] = {false, false, false};
    int n = 0, rc;

    if ((rc = keel_begin(s)) != KEEL_OK) {
        tu_fail(&w->sh->log, "begin: %s", keel_session_error(s));
        return;
    }
    for (int k = 0; k < 3; k++) {
        uint64_t x = tu_rand(rnd);
        int32_t j = (int32_t)(x % CW_ROWS), cur;
        int *failed;
        bool again = false;
        for (int m = 0; m < n; m++)
            again = again || js[m] == j;
        if (again)
            continue;
        cur = w->want[j];
        js[n] = j;
        rc = cw_change(w, s, j, cur, x >> 8, &nexts[n], &failed);
        cw_check_pins(w->sh, s, "a change in a transaction");
        if (rc == KEEL_OK) {
            ok[n++] = true;
            continue;
        }
        n++;
        if (!is_pool_exhausted(s, rc)) {
            tu_fail(&w->sh->log, "row %d in a transaction: %s, \"%s\"",
                    cw_row(w, j), keel_status_str(rc), keel_session_error(s));
            keel_abort(s);
            return;
        }
        (*failed)++;
        /* Its effects are absent, and the transaction goes on (an insert's
         * or update's pages stay pinned until its index entries are in:
         * taking it back needs no buffer). */
        rc = cw_read(w, s, j, cur, false);
        if (rc != KEEL_OK && !is_pool_exhausted(s, rc))
            tu_fail(&w->sh->log, "read in a transaction: %s, \"%s\"",
                    keel_status_str(rc), keel_session_error(s));
        else if (rc != KEEL_OK)
            w->c.reads++;
    }
    rc = keel_commit(s);
    cw_check_pins(w->sh, s, "commit");
    if (rc == KEEL_OK) {
        for (int m = 0; m < n; m++)
            if (ok[m])
                cw_apply(w, js[m], nexts[m]);
        return;
    }
    if (!is_pool_exhausted(s, rc))
        tu_fail(&w->sh->log, "commit: %s, \"%s\"", keel_status_str(rc),
                keel_session_error(s));
    w->c.commits++;
}

static void *cw_write(void *arg)
{
    cw_writer *w = arg;
    cw_shared *sh = w->sh;
    uint64_t rnd = (uint64_t)w->thread * 7919 + 17;
    bool tiny = w->thread % 2 == 1;
    keel_session *s = cw_attach(sh, &w->c, tiny);

    for (int32_t j = 0; j < CW_ROWS; j++)
        w->want[j] = -1;
    for (int ops = 0; s != NULL && !tu_failed(&sh->log) &&
                      (ops < CW_MIN_OPS || clock_now_ns() < sh->until_ns);
         ops++) {
        uint64_t x = tu_rand(&rnd);
        int32_t j = (int32_t)((x >> 8) % CW_ROWS), next;
        int *failed, rc;

        if (ops % 64 == 63) {
            cw_detach(s, &w->c);
            if ((s = cw_attach(sh, &w->c, tiny)) == NULL)
                break;
        }
        switch (x % 16) {
        case 0:
            cw_transaction(w, s, &rnd);
            continue;
        case 1:
            cw_scan(w, s);
            continue;
        case 2:
        case 3:
            rc = cw_read(w, s, j, w->want[j], x % 16 == 2);
            failed = &w->c.reads;
            break;
        case 4:
            rc = cw_read_u(sh, s, (int32_t)((x >> 8) % U_ROWS));
            failed = &w->c.reads;
            break;
        default:
            rc = cw_change(w, s, j, w->want[j], x >> 20, &next, &failed);
            if (rc == KEEL_OK)
                cw_apply(w, j, next);
            break;
        }
        cw_check_pins(sh, s, "a statement");
        if (rc == KEEL_OK)
            continue;
        if (!is_pool_exhausted(s, rc))
            tu_fail(&sh->log, "writer %d, op %d: %s, \"%s\"", w->thread,
                    (int)(x % 16), keel_status_str(rc), keel_session_error(s));
        (*failed)++;
    }
    if (s != NULL)
        cw_detach(s, &w->c);
    return NULL;
}

typedef struct cw_load_src {
    int32_t i;
    char text[300];
} cw_load_src;

static keel_status cw_load_next(void *ctx, keel_value *values, bool *done)
{
    cw_load_src *l = ctx;

    if (l->i == CW_LOAD) {
        *done = true;
        return KEEL_OK;
    }
    snprintf(l->text, sizeof(l->text), "%05d", (l->i * 7919) % CW_LOAD);
    memset(l->text + 5, 'v', sizeof(l->text) - 5);
    values[0] = tu_vi4(l->i);
    values[1] = (keel_value){.isnull = false, .v.s = {l->text, 300}};
    l->i++;
    return KEEL_OK;
}

/* One statement of the loader: counts it, or its failure in *failed. */
static bool cw_loader_ok(cw_loader *ld, keel_session *s, int rc,
                         const char *what, int *failed)
{
    cw_check_pins(ld->sh, s, what);
    if (rc == KEEL_OK) {
        ld->done++;
        return true;
    }
    if (!is_pool_exhausted(s, rc))
        tu_fail(&ld->sh->log, "%s: %s, \"%s\"", what, keel_status_str(rc),
                keel_session_error(s));
    (*failed)++;
    return false;
}

static void *cw_load(void *arg)
{
    static const keel_column cols[] = {{"k", KEEL_INT4, 0, true},
                                       {"v", KEEL_TEXT, 0, true}};
    cw_loader *ld = arg;
    cw_shared *sh = ld->sh;
    cw_counts c = {0};
    keel_session *s = cw_attach(sh, &c, false);
    uint16_t pk = 1, k2 = 2;

    for (int r = 0; s != NULL && !tu_failed(&sh->log) && r < CW_TABLES &&
                    (r < 8 || clock_now_ns() < sh->until_ns);
         r++) {
        char name[32], iname[32];
        cw_load_src src = {0};
        int rc;

        ld->rounds = r + 1;
        snprintf(name, sizeof(name), "d%d", r);
        snprintf(iname, sizeof(iname), "d%d_v", r);
        rc = keel_load_table(s, NULL, name, cols, 2, &pk, 1, cw_load_next, &src,
                             NULL);
        ld->table[r] = cw_loader_ok(ld, s, rc, "load", &ld->loads);
        if (ld->table[r]) {
            rc = keel_create_index(s, NULL, name, iname, &k2, 1, r % 2 == 0);
            ld->index[r] = cw_loader_ok(ld, s, rc, "index", &ld->builds);
            rc = keel_analyze(s, NULL, name);
            cw_loader_ok(ld, s, rc, "analyze", &ld->analyzes);
        }
        rc = keel_analyze(s, NULL, "t");
        cw_loader_ok(ld, s, rc, "analyze", &ld->analyzes);
        if (r % 4 == 3) {
            keel_error e;
            if (keel_checkpoint(sh->db, &e) != KEEL_OK)
                tu_fail(&sh->log, "checkpoint: %s", e.msg);
        }
        if (r >= 2 && ld->table[r - 2]) {
            snprintf(name, sizeof(name), "d%d", r - 2);
            rc = keel_drop_table(s, NULL, name);
            if (cw_loader_ok(ld, s, rc, "drop", &ld->drops))
                ld->table[r - 2] = ld->index[r - 2] = false;
        }
    }
    if (s != NULL)
        keel_session_end(s);
    return NULL;
}

/* Begins a session, looks a row up, ends it; again and again. */
static void *cw_visit(void *arg)
{
    cw_visitor *v = arg;
    cw_shared *sh = v->sh;
    uint64_t rnd = (uint64_t)v->thread * 31 + 5;

    while (!atomic_load(&sh->stop) && !tu_failed(&sh->log)) {
        keel_session *s;
        keel_error e;
        keel_value key, out[2];
        char buf[600];
        bool found;
        int rc = keel_session_begin(sh->db, &s, &e);

        if (rc != KEEL_OK) {
            if (rc != KEEL_EEXHAUSTED || strstr(e.msg, "max_sessions") == NULL)
                tu_fail(&sh->log, "visitor's session: %s, \"%s\"",
                        keel_status_str(rc), e.msg);
            v->c.refused++;
            usleep(20);
            continue;
        }
        v->c.attaches++;
        key = row_key(buf, (int32_t)(tu_rand(&rnd) % CW_ALL));
        rc = keel_lookup(s, NULL, "t", &key, out, &found);
        if (rc != KEEL_OK && !is_pool_exhausted(s, rc))
            tu_fail(&sh->log, "visitor's lookup: %s, \"%s\"",
                    keel_status_str(rc), keel_session_error(s));
        v->c.reads += rc != KEEL_OK;
        cw_check_pins(sh, s, "a visitor's lookup");
        keel_session_end(s);
    }
    return NULL;
}

/* Squeezes the pool to 0..9 free buffers for a moment, lets go for a
 * moment, and again, until told to stop. */
static void *cw_squeeze(void *arg)
{
    cw_shared *sh = arg;
    uint64_t rnd = 99;

    while (!atomic_load(&sh->stop)) {
        if (!hog_squeeze(sh->h, (uint32_t)(tu_rand(&rnd) % 10)))
            tu_fail(&sh->log, "hog: %s", buf_session_error(sh->h->bs)->msg);
        usleep(300);
        hog_release_to(sh->h, 0);
        usleep(300);
    }
    return NULL;
}

/* What the loader made exists, and nothing else of its. */
static void cw_assert_loaded(keel_session *s, const cw_loader *ld)
{
    for (int r = 0; r < ld->rounds; r++) {
        char name[32], iname[32];
        bool found;

        snprintf(name, sizeof(name), "d%d", r);
        snprintf(iname, sizeof(iname), "d%d_v", r);
        assert_int_equal(keel_relation_exists(s, NULL, name, &found), KEEL_OK);
        if (found != ld->table[r])
            fail_msg("table %s: %s", name, found ? "there" : "missing");
        assert_int_equal(keel_relation_exists(s, NULL, iname, &found), KEEL_OK);
        if (found != ld->index[r])
            fail_msg("index %s: %s", iname, found ? "there" : "missing");
        if (ld->table[r]) {
            keel_value out[2];
            keel_scan *sc;
            int n = 0;
            assert_int_equal(keel_scan_begin(s, NULL, name,
                                             ld->index[r] ? iname : NULL, NULL,
                                             NULL, &sc),
                             KEEL_OK);
            while (keel_scan_next(sc, out, &found) == KEEL_OK && found)
                n++;
            keel_scan_end(sc);
            assert_int_equal(n, CW_LOAD);
        }
    }
}

static void cw_assert_rows(keel_session *s, const cw_writer *w)
{
    static int32_t want[CW_ALL];

    for (int t = 0; t < CW_WRITERS; t++)
        for (int32_t j = 0; j < CW_ROWS; j++)
            want[j * CW_WRITERS + t] = w[t].want[j];
    assert_rows(s, want, CW_ALL, INT32_MAX);
}

static void test_concurrent_changes_in_a_tight_pool(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o;
    static cw_writer w[CW_WRITERS];
    static cw_loader ld;
    static cw_visitor vis[2];
    static hog h;
    static cw_shared sh;
    pthread_t tw[CW_WRITERS], tl, tv[2], th;
    cw_counts sum = {0};
    keel_session *s;
    keel_error e;

    (void)state;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 1;
    /* The writers and the loader, and one more. */
    o.max_sessions = CW_WRITERS + 2;
    memset(&sh, 0, sizeof(sh));
    sh.log = (tu_failures)TU_FAILURES_INIT;
    sh.h = &h;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &sh.db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(sh.db, &s, &e), KEEL_OK);
    hog_open(&h, sh.db, s);
    create_t(s);
    {
        static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                           {"v", KEEL_INT4, 0, true}};
        uint16_t pk = 1;
        u_src src = {0};
        assert_int_equal(
            keel_load_table(s, NULL, "u", cols, 2, &pk, 1, u_next, &src, NULL),
            KEEL_OK);
    }
    keel_session_end(s);

    sh.until_ns = clock_now_ns() + (uint64_t)(tu_stress_seconds(2) * 1e9);
    memset(&ld, 0, sizeof(ld));
    ld.sh = &sh;
    assert_int_equal(pthread_create(&th, NULL, cw_squeeze, &sh), 0);
    for (int t = 0; t < CW_WRITERS; t++) {
        memset(&w[t], 0, sizeof(w[t]));
        w[t].sh = &sh;
        w[t].thread = t;
        assert_int_equal(pthread_create(&tw[t], NULL, cw_write, &w[t]), 0);
    }
    assert_int_equal(pthread_create(&tl, NULL, cw_load, &ld), 0);
    for (int t = 0; t < 2; t++) {
        memset(&vis[t], 0, sizeof(vis[t]));
        vis[t].sh = &sh;
        vis[t].thread = t;
        assert_int_equal(pthread_create(&tv[t], NULL, cw_visit, &vis[t]), 0);
    }
    for (int t = 0; t < CW_WRITERS; t++)
        pthread_join(tw[t], NULL);
    pthread_join(tl, NULL);
    atomic_store(&sh.stop, true);
    for (int t = 0; t < 2; t++)
        pthread_join(tv[t], NULL);
    pthread_join(th, NULL);
    tu_failures_check(&sh.log);
    hog_close(&h);
    tu_assert_pool_quiet(sh.db->pool);

    for (int t = 0; t < CW_WRITERS + 2; t++) {
        const cw_counts *c = t < CW_WRITERS ? &w[t].c : &vis[t - CW_WRITERS].c;
        sum.inserts += c->inserts;
        sum.updates += c->updates;
        sum.deletes += c->deletes;
        sum.reads += c->reads;
        sum.scans += c->scans;
        sum.commits += c->commits;
        sum.changes += c->changes;
        sum.attaches += c->attaches;
        sum.refused += c->refused;
        sum.retries += c->retries;
        sum.evictions += c->evictions;
    }
    print_message("in a pool squeezed to 0..9 buffers: %d changes made; "
                  "failed: %d inserts, %d updates, %d deletes, %d reads, "
                  "%d scans, %d commits; %d scan steps failed and were "
                  "retried\n",
                  sum.changes, sum.inserts, sum.updates, sum.deletes, sum.reads,
                  sum.scans, sum.commits, sum.retries);
    print_message("loader: %d statements done; failed: %d loads, %d index "
                  "builds, %d analyzes, %d drops\n",
                  ld.done, ld.loads, ld.builds, ld.analyzes, ld.drops);
    print_message("sessions: %d begun, %d refused (max_sessions %u); "
                  "catalog cache evictions at a 1-byte target: %llu\n",
                  sum.attaches, sum.refused, o.max_sessions,
                  (unsigned long long)sum.evictions);
    assert_true(sum.inserts + sum.updates + sum.deletes >= 10);
    assert_true(sum.reads + sum.scans >= 5);
    assert_true(ld.loads + ld.builds + ld.analyzes + ld.drops >= 1);
    assert_true(sum.refused >= 1);
    assert_true(sum.evictions >= 100);

    assert_int_equal(keel_session_begin(sh.db, &s, &e), KEEL_OK);
    cw_assert_rows(s, w);
    cw_assert_loaded(s, &ld);
    close_and_check(s, sh.db, dir);
    assert_int_equal(keel_db_open(&o, &sh.db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(sh.db, &s, &e), KEEL_OK);
    cw_assert_rows(s, w);
    cw_assert_loaded(s, &ld);
    close_and_check(s, sh.db, dir);
    tu_dir_remove(dir);
}

#ifdef KEEL_FAULT_INJECTION
/* A squeeze at the first extension of relation rel (0: none) in buf_extend,
 * after the file grew and before the extender has a buffer for the block. */
typedef struct squeeze_at {
    hog *h;
    relnumber_t rel[2];
    int fired;
} squeeze_at;

static void squeeze_now(void *ctx, uint32_t rel, uint32_t blk)
{
    squeeze_at *q = ctx;

    if (q->fired == 0 && (rel == q->rel[0] || rel == q->rel[1])) {
        q->fired++;
        /* The index's pages first, the page being split among them, so
         * that what the failed split gives back is still taken. */
        for (uint32_t b = 0; b < blk; b++) {
            int32_t id;
            assert_int_equal(buf_read(q->h->bs, rel, b, NULL, &id), KEEL_OK);
            q->h->ids[q->h->n++] = id;
        }
        assert_true(hog_squeeze(q->h, 0));
    }
}

/*
 * Rows (and then schemas) added in an explicit transaction until one's
 * index entry splits a page, at which moment every buffer is taken: the
 * new page finds none, and neither do the statement's undos of the index
 * entries it made.  The row's own page stays pinned from its insert to
 * its undo, so deleting the row again needs no buffer.  The statement
 * fails with KEEL_EEXHAUSTED, and the transaction goes on and commits
 * without the failed row.  Nothing half made may stay: no row without its
 * index entries, no entry for a row that failed.
 */
static void test_undo_without_a_buffer(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o;
    static int32_t want[4000];
    static hog h;
    squeeze_at q = {&h, {0, 0}, 0};
    keel_session *s;
    keel_db *db;
    keel_error e;
    keel_value v[2];
    char buf[600];
    int32_t next = 0;

    (void)state;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 1;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    hog_open(&h, db, s);
    create_t(s);
    for (int32_t i = 0; i < 4000; i++)
        want[i] = -1;
    fault_point_set(FAULT_POINT_EXTENDED, squeeze_now, &q);
    /* First the primary key's split, then t_n's (after the primary key's
     * entry went in). */
    for (int round = 0; round < 2; round++) {
        int32_t first = next;
        int rc = KEEL_OK;
        q.rel[0] = relnumber_of(s, round == 0 ? "t_pkey" : "t_n");
        q.fired = 0;
        assert_int_equal(keel_begin(s), KEEL_OK);
        while (rc == KEEL_OK && next < 2000) {
            v[0] = row_key(buf, next);
            v[1] = tu_vi4(next);
            rc = keel_insert(s, NULL, "t", v);
            hog_release_to(&h, 0);
            want[next] = rc == KEEL_OK ? next : -1;
            next++;
        }
        assert_int_equal(q.fired, 1);
        assert_exhausted(s, "insert", next - 1, rc);
        assert_no_pins(s, "insert", next - 1);
        q.rel[0] = 0;
        rc = keel_commit(s);
        if (rc != KEEL_OK)
            fail_msg("round %d (rows %d to %d): commit: %s, \"%s\"", round,
                     first, next - 1, keel_status_str(rc),
                     keel_session_error(s));
        assert_rows(s, want, next, 2000);
    }

    /* A schema whose catalog index entry finds no buffer. */
    {
        int32_t made = 0, i;
        int rc = KEEL_OK;
        char name[32];

        q.rel[0] = CATALOG_NAMESPACE_OID_IDX;
        q.rel[1] = CATALOG_NAMESPACE_NAME_IDX;
        q.fired = 0;
        assert_int_equal(keel_begin(s), KEEL_OK);
        for (i = 0; rc == KEEL_OK && i < 2000; i++) {
            snprintf(name, sizeof(name), "schema_%d", i);
            rc = keel_create_schema(s, name);
            hog_release_to(&h, 0);
            made += rc == KEEL_OK;
        }
        assert_int_equal(q.fired, 1);
        assert_exhausted(s, "schema", i - 1, rc);
        assert_no_pins(s, "schema", i - 1);
        q.rel[0] = q.rel[1] = 0;
        rc = keel_commit(s);
        if (rc != KEEL_OK)
            fail_msg("schemas: commit: %s, \"%s\"", keel_status_str(rc),
                     keel_session_error(s));
        for (int32_t j = 0; j < i; j++) {
            snprintf(name, sizeof(name), "schema_%d", j);
            rc = keel_create_schema(s, name);
            if (rc != (j < made ? KEEL_EEXIST : KEEL_OK))
                fail_msg("schema %d: %s, \"%s\"", j, keel_status_str(rc),
                         keel_session_error(s));
        }
    }
    fault_point_set(FAULT_POINT_EXTENDED, NULL, NULL);
    hog_close(&h);
    tu_assert_pool_quiet(db->pool);
    close_and_check(s, db, dir);
    tu_dir_remove(dir);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_changes_in_a_tight_pool),
        cmocka_unit_test(test_sessions_used_up),
        cmocka_unit_test(test_oids_used_up),
        cmocka_unit_test(test_clog_page_without_a_buffer),
        cmocka_unit_test(test_scan_after_exhaustion),
        cmocka_unit_test(test_concurrent_changes_in_a_tight_pool),
#ifdef KEEL_FAULT_INJECTION
        cmocka_unit_test(test_undo_without_a_buffer),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
