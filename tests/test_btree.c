/*
 * test_btree.c: the B-tree through its API, single-threaded.
 *
 * A reference model (a sorted array of (key, tid)) checks random inserts,
 * deletes, point searches and range scans on int4, (name, int4) and text
 * keys, with small pools so that pages are evicted and trees grow to three
 * or more levels; the structural checker must find nothing wrong after
 * each run.  Then: unique indexes (KEEL_EUNIQUE, the is_live callback,
 * nulls), duplicates in tid order, prefix bounds, bulk build (100k
 * entries; unsorted and duplicate input rejected), btree_lookup()'s
 * integer path against btree_search() for every integer key type, from the
 * root and from a session's directory (btree_dir: leaf level or level 1,
 * stale after splits and appends, rebuilt, shared by two indexes),
 * persistence through a checkpoint and reopen, argument errors, the
 * checker catching keys put out of order and a page corrupted on disk, and
 * searches, scans and inserts refusing damaged links and item counts.
 */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access/btree.h"
#include "access/btree_page.h"
#include "access/tuple.h"
#include "storage/bufmgr.h"
#include "storage/fault.h"
#include "storage/smgr.h"

#define REL_IDX ((relnumber_t)20000)

typedef tu_fixture fixture;

static int setup(void **state)
{
    return tu_fixture_setup(state);
}

static void pool_open(fixture *f, uint32_t nbuffers)
{
    tu_pool_open(f->sm, nbuffers, &f->pool, &f->s, &f->err);
}

static void pool_close(fixture *f)
{
    tu_assert_pool_quiet(f->pool);
    tu_pool_close(&f->pool, &f->s, &f->err);
}

static int teardown(void **state)
{
    fixture *f = *state;

    if (f->pool != NULL) {
        buf_session_destroy(f->s);
        buf_pool_discard(f->pool);
    }
    tu_storage_close(f->dir, f->sm);
    free(f);
    return 0;
}

#define CHECK_OK(f, call) TU_SESSION_OK((f)->s, call)

/* ---- the checker, with problems collected ------------------------------ */

typedef struct check_result {
    uint64_t problems;
    uint64_t entries;
    uint64_t marked; /* entries a unique check marked dead */
    char first[512];
    bool named[64]; /* which of the first 64 blocks a problem named */
} check_result;

static void on_problem(void *ctx, const char *line)
{
    check_result *r = ctx;
    const char *p = line;

    if (r->first[0] == '\0')
        snprintf(r->first, sizeof(r->first), "%s", line);
    while ((p = strstr(p, "block ")) != NULL) {
        unsigned b;
        if (sscanf(p, "block %u", &b) == 1 && b < 64)
            r->named[b] = true;
        p += 6;
    }
}

static void on_entry(void *ctx, const keel_value *keys, tid t, bool unique_dead)
{
    (void)keys;
    (void)t;
    ((check_result *)ctx)->entries++;
    ((check_result *)ctx)->marked += unique_dead;
}

static check_result run_check(fixture *f, relnumber_t rel)
{
    check_result r;
    uint64_t problems = 0;

    memset(&r, 0, sizeof(r));
    CHECK_OK(f, btree_check(f->s, rel, on_problem, on_entry, &r, &problems));
    r.problems = problems;
    return r;
}

static void assert_check_clean(fixture *f, relnumber_t rel, uint64_t entries)
{
    check_result r = run_check(f, rel);

    if (r.problems != 0)
        fail_msg("checker: %llu problems, first: %s",
                 (unsigned long long)r.problems, r.first);
    assert_int_equal(r.entries, entries);
}

/* The root's level, from the meta page. */
static uint32_t root_level(fixture *f, relnumber_t rel)
{
    int32_t id;
    bt_meta m;

    CHECK_OK(f, buf_read(f->s, rel, 0, NULL, &id));
    buf_lock(f->s, id, LW_SHARED);
    memcpy(&m, (char *)buf_page(f->pool, id) + PAGE_HEADER_SIZE, sizeof(m));
    buf_unlock(f->s, id);
    buf_release(f->s, id);
    assert_int_equal(m.magic, BT_MAGIC);
    return m.level;
}

/* ---- key generators: key id -> key values ------------------------------- */

#define MAX_KEYLEN 1100

typedef struct keygen {
    const char *name;
    tuple_desc *desc;
    void (*gen)(uint32_t kid, keel_value *vals, char *buf);
} keygen;

static void gen_int4(uint32_t kid, keel_value *vals, char *buf)
{
    (void)buf;
    vals[0].isnull = false;
    vals[0].v.i4 = (int32_t)kid - 2500; /* negatives too */
}

/* (name, int4): 40 names, each with many numbers. */
static void gen_name_int4(uint32_t kid, keel_value *vals, char *buf)
{
    int n = snprintf(buf, 64, "nm%02u", (kid * 7) % 40);
    vals[0].isnull = false;
    vals[0].v.s.ptr = buf;
    vals[0].v.s.len = (uint32_t)n;
    vals[1].isnull = false;
    vals[1].v.i4 = (int32_t)(kid / 40) * ((kid & 1) ? 1 : -1);
}

/* Long text keys (100 to 1000 bytes), so that pages hold few and the tree
 * gets deep; a shared prefix makes comparisons look past it. */
static void gen_text(uint32_t kid, keel_value *vals, char *buf)
{
    uint32_t len = 100 + (kid * 2654435761u) % 900;
    uint64_t h = kid * 0x9E3779B97F4A7C15ull;
    int n = snprintf(buf, MAX_KEYLEN, "key-%08x-", (unsigned)(h >> 40));

    for (uint32_t i = (uint32_t)n; i < len; i++)
        buf[i] = (char)('a' + (kid + i) % 26);
    vals[0].isnull = false;
    vals[0].v.s.ptr = buf;
    vals[0].v.s.len = len;
}

static tuple_desc *desc_of(int n, const keel_type *types)
{
    tuple_desc *d = tupdesc_alloc((uint16_t)n);
    kerr e;

    assert_non_null(d);
    for (int i = 0; i < n; i++)
        assert_int_equal(tupdesc_set(d, (uint16_t)i, types[i], 0, false, &e),
                         KEEL_OK);
    return d;
}

/* ---- the model ---------------------------------------------------------- */

typedef struct ment {
    uint32_t kid;
    tid t;
} ment;

typedef struct model {
    const keygen *kg;
    ment *v;
    size_t n, cap;
} model;

static int keys_cmp(const tuple_desc *d, const keel_value *a,
                    const keel_value *b, uint16_t ncols)
{
    for (uint16_t i = 0; i < ncols; i++) {
        int c = value_compare(&d->attrs[i], &a[i], &b[i]);
        if (c != 0)
            return c;
    }
    return 0;
}

static int ment_cmp(const keygen *kg, const ment *a, const ment *b)
{
    keel_value va[BTREE_MAX_KEYS], vb[BTREE_MAX_KEYS];
    char ba[MAX_KEYLEN], bb[MAX_KEYLEN];
    int c;

    kg->gen(a->kid, va, ba);
    kg->gen(b->kid, vb, bb);
    c = keys_cmp(kg->desc, va, vb, kg->desc->natts);
    return c != 0 ? c : tid_compare(a->t, b->t);
}

/* Position of the first entry >= e. */
static size_t model_pos(const model *m, const ment *e)
{
    size_t lo = 0, hi = m->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ment_cmp(m->kg, &m->v[mid], e) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void model_insert(model *m, ment e)
{
    size_t p = model_pos(m, &e);

    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 1024;
        m->v = realloc(m->v, m->cap * sizeof(ment));
        assert_non_null(m->v);
    }
    memmove(&m->v[p + 1], &m->v[p], (m->n - p) * sizeof(ment));
    m->v[p] = e;
    m->n++;
}

static void model_remove(model *m, size_t p)
{
    memmove(&m->v[p], &m->v[p + 1], (m->n - p - 1) * sizeof(ment));
    m->n--;
}

/* Is entry e inside bound b (lower if is_lower)? */
static bool in_bound(const keygen *kg, const ment *e, const btree_bound *b,
                     bool is_lower)
{
    keel_value v[BTREE_MAX_KEYS];
    char buf[MAX_KEYLEN];
    int c;

    if (b == NULL)
        return true;
    kg->gen(e->kid, v, buf);
    c = keys_cmp(kg->desc, v, b->vals, b->ncols);
    if (c == 0)
        return b->inclusive;
    return is_lower ? c > 0 : c < 0;
}

/* Scans [lower, upper] and compares with the model, keys included. */
static void check_scan(fixture *f, btree *bt, const model *m,
                       const btree_bound *lower, const btree_bound *upper)
{
    btree_scan *sc = NULL;
    keel_value got[BTREE_MAX_KEYS], want[BTREE_MAX_KEYS];
    char buf[MAX_KEYLEN];
    size_t i = 0, n = 0;
    tid t;
    int rc;

    /* The expected range is contiguous in the model. */
    while (i < m->n && !in_bound(m->kg, &m->v[i], lower, true))
        i++;
    CHECK_OK(f, btree_scan_begin(bt, f->s, lower, upper, &sc));
    while ((rc = btree_scan_next(sc, &t, got)) == KEEL_OK) {
        if (i >= m->n || !in_bound(m->kg, &m->v[i], upper, false))
            fail_msg("scan returned more than the %zu expected entries", n);
        if (tid_compare(t, m->v[i].t) != 0)
            fail_msg("scan entry %zu: tid (%u,%u), expected (%u,%u)", n,
                     t.block, t.offset, m->v[i].t.block, m->v[i].t.offset);
        m->kg->gen(m->v[i].kid, want, buf);
        assert_int_equal(keys_cmp(m->kg->desc, got, want, m->kg->desc->natts),
                         0);
        i++;
        n++;
    }
    assert_int_equal(rc, KEEL_ENOENT);
    if (i < m->n && in_bound(m->kg, &m->v[i], upper, false))
        fail_msg("scan ended after %zu entries; the model has more", n);
    btree_scan_end(sc);
}

/* Point search of key kid against the model. */
static void check_search(fixture *f, btree *bt, const model *m, uint32_t kid)
{
    keel_value v[BTREE_MAX_KEYS];
    char buf[MAX_KEYLEN];
    tid tids[64], first;
    uint32_t count = 0;
    ment probe = {.kid = kid, .t = {0, 0}};
    size_t p = model_pos(m, &probe), k = 0;
    int rc;

    m->kg->gen(kid, v, buf);
    CHECK_OK(f, btree_search(bt, f->s, v, tids, 64, &count));
    while (p + k < m->n &&
           ment_cmp(m->kg, &m->v[p + k],
                    &(ment){.kid = kid, .t = {~0u, 0xFFFF}}) < 0)
        k++;
    assert_int_equal(count, k);
    for (uint32_t i = 0; i < count && i < 64; i++)
        assert_int_equal(tid_compare(tids[i], m->v[p + i].t), 0);
    rc = btree_lookup(bt, f->s, v, &first);
    if (k == 0) {
        assert_int_equal(rc, KEEL_ENOENT);
    } else {
        assert_int_equal(rc, KEEL_OK);
        assert_int_equal(tid_compare(first, m->v[p].t), 0);
    }
}

/*
 * Random operations against the model: mostly inserts (keys from
 * [0, keyspace), so duplicates happen in the non-unique index), deletes of
 * existing and missing entries, searches and scans.  Ends with a full scan
 * and the checker.
 */
static void run_model(fixture *f, const keygen *kg, uint32_t keyspace, int ops,
                      uint64_t seed, uint32_t min_level)
{
    model m = {.kg = kg};
    btree *bt = NULL;
    uint64_t rng = seed;
    uint32_t next_tid = 1;
    keel_value v[BTREE_MAX_KEYS], lv[BTREE_MAX_KEYS], uv[BTREE_MAX_KEYS];
    char buf[MAX_KEYLEN], lbuf[MAX_KEYLEN], ubuf[MAX_KEYLEN];

    CHECK_OK(f, btree_create(f->s, REL_IDX, kg->desc, false, &bt));
    for (int op = 0; op < ops; op++) {
        uint64_t r = tu_rand(&rng) % 100;

        if (r < 70 || m.n == 0) {
            ment e = {.kid = (uint32_t)(tu_rand(&rng) % keyspace),
                      .t = {.block = next_tid / 100,
                            .offset = (uint16_t)(next_tid % 100 + 1)}};
            next_tid++;
            kg->gen(e.kid, v, buf);
            CHECK_OK(f, btree_insert(bt, f->s, v, e.t, NULL, NULL));
            model_insert(&m, e);
        } else if (r < 85) {
            size_t p = (size_t)(tu_rand(&rng) % m.n);
            kg->gen(m.v[p].kid, v, buf);
            CHECK_OK(f, btree_delete(bt, f->s, v, m.v[p].t));
            /* Deleting it again finds nothing. */
            assert_int_equal(btree_delete(bt, f->s, v, m.v[p].t), KEEL_ENOENT);
            model_remove(&m, p);
        } else if (r < 95) {
            check_search(f, bt, &m, (uint32_t)(tu_rand(&rng) % keyspace));
        } else {
            btree_bound lo = {.vals = lv}, hi = {.vals = uv};
            uint32_t a = (uint32_t)(tu_rand(&rng) % keyspace);
            uint32_t b = (uint32_t)(tu_rand(&rng) % keyspace);
            uint64_t shape = tu_rand(&rng);

            kg->gen(a, lv, lbuf);
            kg->gen(b, uv, ubuf);
            lo.ncols = hi.ncols = kg->desc->natts;
            if (kg->desc->natts > 1 && (shape & 8))
                lo.ncols = hi.ncols = 1; /* prefix bounds */
            lo.inclusive = (shape & 1) != 0;
            hi.inclusive = (shape & 2) != 0;
            check_scan(f, bt, &m, (shape & 4) ? NULL : &lo,
                       (shape & 16) ? NULL : &hi);
        }
    }
    check_scan(f, bt, &m, NULL, NULL);
    assert_check_clean(f, REL_IDX, m.n);
    if (root_level(f, REL_IDX) < min_level)
        fail_msg("%s: root level %u, expected >= %u", kg->name,
                 root_level(f, REL_IDX), min_level);
    btree_close(bt);
    free(m.v);
}

static void test_model_int4(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_INT4};
    keygen kg = {"int4", desc_of(1, types), gen_int4};

    pool_open(f, 32);
    run_model(f, &kg, 5000, 30000, 0x1234567ull, 1);
    tupdesc_free(kg.desc);
    pool_close(f);
}

static void test_model_name_int4(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_NAME, KEEL_INT4};
    keygen kg = {"(name, int4)", desc_of(2, types), gen_name_int4};

    pool_open(f, 32);
    run_model(f, &kg, 20000, 20000, 0xabcdefull, 1);
    tupdesc_free(kg.desc);
    pool_close(f);
}

static void test_model_text_deep(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_TEXT};
    keygen kg = {"text", desc_of(1, types), gen_text};

    pool_open(f, 24);
    run_model(f, &kg, 1000000, 8000, 0x5eed5ull, 2);
    tupdesc_free(kg.desc);
    pool_close(f);
}

/* Ascending and descending inserts (the patterns the split heuristics
 * care about) keep the tree valid and complete. */
static void test_sequential_inserts(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_INT8};
    tuple_desc *d = desc_of(1, types);
    btree *up = NULL, *down = NULL;
    keel_value v = {.isnull = false};
    const int n = 60000;

    pool_open(f, 64);
    CHECK_OK(f, btree_create(f->s, REL_IDX, d, true, &up));
    CHECK_OK(f, btree_create(f->s, REL_IDX + 1, d, false, &down));
    for (int i = 0; i < n; i++) {
        tid t = {.block = (blocknum_t)i / 200 + 1,
                 .offset = (uint16_t)(i % 200 + 1)};
        v.v.i8 = (int64_t)i * 3;
        CHECK_OK(f, btree_insert(up, f->s, &v, t, NULL, NULL));
        v.v.i8 = (int64_t)(n - i);
        CHECK_OK(f, btree_insert(down, f->s, &v, t, NULL, NULL));
    }
    assert_check_clean(f, REL_IDX, (uint64_t)n);
    assert_check_clean(f, REL_IDX + 1, (uint64_t)n);
    for (int i = 0; i < n; i += 7) {
        tid t;
        v.v.i8 = (int64_t)i * 3;
        CHECK_OK(f, btree_lookup(up, f->s, &v, &t));
        assert_int_equal(t.block, (blocknum_t)i / 200 + 1);
        assert_int_equal(t.offset, i % 200 + 1);
        v.v.i8 = (int64_t)i * 3 + 1;
        assert_int_equal(btree_lookup(up, f->s, &v, &t), KEEL_ENOENT);
    }
    btree_close(up);
    btree_close(down);
    tupdesc_free(d);
    pool_close(f);
}

/* ---- unique indexes ------------------------------------------------------ */

typedef struct liveness {
    tid dead[8];
    int ndead;
    int calls;
} liveness;

static btree_row is_live(void *ctx, tid t)
{
    liveness *l = ctx;

    l->calls++;
    for (int i = 0; i < l->ndead; i++)
        if (tid_compare(l->dead[i], t) == 0)
            return BTREE_ROW_DEAD;
    return BTREE_ROW_LIVE;
}

/* A row that cannot be read: the error a heap fetch would leave. */
static btree_row is_live_error(void *ctx, tid t)
{
    buf_session *s = ctx;

    kerr_set(&s->err, KEEL_EIO,
             "could not read the row at (%u,%u): Input/output error", t.block,
             t.offset);
    return BTREE_ROW_ERROR;
}

/* Rows at or after (block, offset) are live, earlier ones dead. */
typedef struct live_from {
    blocknum_t block;
    uint16_t offset;
} live_from;

static btree_row is_live_from(void *ctx, tid t)
{
    const live_from *l = ctx;

    return tid_compare(t, (tid){l->block, l->offset}) >= 0 ? BTREE_ROW_LIVE
                                                           : BTREE_ROW_DEAD;
}

static void test_unique(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_INT4, KEEL_TEXT};
    tuple_desc *d = desc_of(2, types);
    btree *bt = NULL;
    keel_value v[2] = {{.isnull = false}, {.isnull = false}};
    tid a = {1, 1}, b = {1, 2}, c = {1, 3}, e = {2, 9}, out[8];
    liveness live = {.ndead = 0};
    uint32_t count;

    pool_open(f, 32);
    CHECK_OK(f, btree_create(f->s, REL_IDX, d, true, &bt));
    assert_true(btree_is_unique(bt));
    v[0].v.i4 = 42;
    v[1].v.s.ptr = "answer";
    v[1].v.s.len = 6;
    CHECK_OK(f, btree_insert(bt, f->s, v, a, NULL, NULL));
    assert_int_equal(btree_insert(bt, f->s, v, b, NULL, NULL), KEEL_EUNIQUE);
    /* The message names the key. */
    assert_non_null(strstr(buf_session_error(f->s)->msg, "42"));
    assert_non_null(strstr(buf_session_error(f->s)->msg, "answer"));
    /* The same tid again is a duplicate entry, not a unique violation. */
    assert_int_equal(btree_insert(bt, f->s, v, a, NULL, NULL), KEEL_EEXIST);

    /* a's row is live: refused, and the callback was asked. */
    assert_int_equal(btree_insert(bt, f->s, v, b, is_live, &live),
                     KEEL_EUNIQUE);
    assert_int_equal(live.calls, 1);
    /* a's row is dead: b goes in; then c sees b live. */
    live.dead[live.ndead++] = a;
    CHECK_OK(f, btree_insert(bt, f->s, v, b, is_live, &live));
    assert_int_equal(btree_insert(bt, f->s, v, c, is_live, &live),
                     KEEL_EUNIQUE);
    live.dead[live.ndead++] = b;
    CHECK_OK(f, btree_insert(bt, f->s, v, c, is_live, &live));
    /* A row that cannot be read refuses the insert with that error, not
     * as a duplicate key, and nothing goes in. */
    assert_int_equal(
        btree_insert(bt, f->s, v, (tid){1, 4}, is_live_error, f->s), KEEL_EIO);
    assert_non_null(strstr(buf_session_error(f->s)->msg, "could not read"));
    CHECK_OK(f, btree_search(bt, f->s, v, out, 8, &count));
    assert_int_equal(count, 3);
    assert_int_equal(tid_compare(out[0], a), 0);
    assert_int_equal(tid_compare(out[1], b), 0);
    assert_int_equal(tid_compare(out[2], c), 0);

    /* A different second column is a different key. */
    v[1].v.s.len = 5;
    CHECK_OK(f, btree_insert(bt, f->s, v, e, NULL, NULL));
    /* Keys with a null never conflict. */
    v[1].isnull = true;
    CHECK_OK(f, btree_insert(bt, f->s, v, (tid){3, 1}, NULL, NULL));
    CHECK_OK(f, btree_insert(bt, f->s, v, (tid){3, 2}, NULL, NULL));
    CHECK_OK(f, btree_search(bt, f->s, v, out, 8, &count));
    assert_int_equal(count, 2);
    assert_check_clean(f, REL_IDX, 6);
    btree_close(bt);
    tupdesc_free(d);
    pool_close(f);
}

/*
 * A unique index whose equal keys (dead versions) span several leaves: the
 * check must walk right over them, and an insert whose place is on a later
 * page must still see a live entry on an earlier one.
 */
static void test_unique_across_pages(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_TEXT};
    tuple_desc *d = desc_of(1, types);
    btree *bt = NULL;
    char big[2000];
    keel_value v = {.isnull = false, .v.s = {.ptr = big, .len = 1500}};
    live_from lf = {.block = 5, .offset = 0};
    uint32_t count;
    tid out[64];

    memset(big, 'k', sizeof(big));
    pool_open(f, 32);
    CHECK_OK(f, btree_create(f->s, REL_IDX, d, true, &bt));
    /* 40 versions of one key, each dead when the next comes: ~10 leaves. */
    for (uint16_t i = 1; i <= 40; i++) {
        lf.offset = (uint16_t)(i * 2);
        CHECK_OK(f, btree_insert(bt, f->s, &v, (tid){5, (uint16_t)(i * 2)},
                                 is_live_from, &lf));
    }
    CHECK_OK(f, btree_search(bt, f->s, &v, out, 64, &count));
    assert_int_equal(count, 40);
    assert_true(root_level(f, REL_IDX) >= 1);
    /* Only the newest, (5,80), on the last of those leaves, is live; it
     * blocks a tid whose place is first, one in the middle, one last. */
    assert_int_equal(btree_insert(bt, f->s, &v, (tid){5, 1}, is_live_from, &lf),
                     KEEL_EUNIQUE);
    assert_int_equal(
        btree_insert(bt, f->s, &v, (tid){5, 41}, is_live_from, &lf),
        KEEL_EUNIQUE);
    assert_int_equal(btree_insert(bt, f->s, &v, (tid){6, 1}, is_live_from, &lf),
                     KEEL_EUNIQUE);
    /* Once it is dead too, a new version goes in. */
    lf.offset = 81;
    CHECK_OK(f, btree_insert(bt, f->s, &v, (tid){5, 41}, is_live_from, &lf));
    assert_check_clean(f, REL_IDX, 41);
    btree_close(bt);
    tupdesc_free(d);
    pool_close(f);
}

/* Answers fate about every row, and counts the calls. */
typedef struct fate_all {
    btree_row fate;
    int calls;
} fate_all;

static btree_row answer_fate(void *ctx, tid t)
{
    fate_all *a = ctx;

    (void)t;
    a->calls++;
    return a->fate;
}

static int insert_asking(fixture *f, btree *bt, int32_t key, tid t, fate_all *a)
{
    keel_value v = {.isnull = false, .v.i4 = key};

    a->calls = 0;
    return btree_insert(bt, f->s, &v, t, answer_fate, a);
}

/*
 * Dead marks: an entry whose row the unique check finds dead is marked on
 * a page the check holds exclusively, and never asked about again; rows
 * that are only gone, or live, are asked about every time; searches still
 * see marked entries; the marks survive a checkpoint; a split never makes
 * a marked entry a high key.
 */
static void test_unique_dead_marks(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_INT4};
    tuple_desc *d = desc_of(1, types);
    btree *bt = NULL;
    fate_all a = {.fate = BTREE_ROW_DEAD};
    keel_value v = {.isnull = false};
    static tid out[1000];
    const int n = 900;
    uint32_t count;
    int k;

    pool_open(f, 32);
    CHECK_OK(f, btree_create(f->s, REL_IDX, d, true, &bt));
    /* A row updated n - 1 times, each version dead once the next is in:
     * each check asks about the previous version alone. */
    for (int i = 0; i < n; i++) {
        CHECK_OK(f, insert_asking(
                        f, bt, 7,
                        (tid){(blocknum_t)(i / 50 + 1), (uint16_t)(i % 50 + 1)},
                        &a));
        assert_int_equal(a.calls, i > 0 ? 1 : 0);
    }
    assert_true(root_level(f, REL_IDX) >= 1);
    assert_int_equal(run_check(f, REL_IDX).marked, (uint64_t)(n - 1));
    v.v.i4 = 7;
    CHECK_OK(f, btree_search(bt, f->s, &v, out, 1000, &count));
    assert_int_equal(count, (uint32_t)n);
    CHECK_OK(f, btree_search_last(bt, f->s, &v, NULL, out, 10, &count));
    assert_int_equal(count, (uint32_t)n);
    assert_int_equal(tid_compare(out[9], (tid){18, 50}), 0);

    /* Gone rows are asked about every time; a live one refuses. */
    a.fate = BTREE_ROW_GONE;
    for (int i = 0; i < 5; i++) {
        CHECK_OK(f, insert_asking(f, bt, 8, (tid){100, (uint16_t)(i + 1)}, &a));
        assert_int_equal(a.calls, i);
    }
    a.fate = BTREE_ROW_LIVE;
    assert_int_equal(insert_asking(f, bt, 8, (tid){100, 9}, &a), KEEL_EUNIQUE);
    assert_int_equal(a.calls, 1);

    /* Key 9: n entries over several leaves, none marked. */
    a.fate = BTREE_ROW_GONE;
    for (int i = 0; i < n; i++)
        CHECK_OK(f, insert_asking(f, bt, 9,
                                  (tid){(blocknum_t)(i / 50 + 1000),
                                        (uint16_t)(i % 50 + 1)},
                                  &a));
    assert_int_equal(a.calls, n - 1);
    /* Now all dead.  A tid placed first: the check holds only the first
     * leaf exclusively, and marks only there. */
    a.fate = BTREE_ROW_DEAD;
    CHECK_OK(f, insert_asking(f, bt, 9, (tid){999, 1}, &a));
    assert_int_equal(a.calls, n);
    CHECK_OK(f, insert_asking(f, bt, 9, (tid){998, 1}, &a));
    k = a.calls; /* (999,1) and the entries on the later leaves */
    assert_true(k > 1 && k < n);
    /* A tid placed last: every page up to its own is held exclusively. */
    CHECK_OK(f, insert_asking(f, bt, 9, (tid){2000, 1}, &a));
    assert_int_equal(a.calls, k); /* (998,1) and the same later ones */
    CHECK_OK(f, insert_asking(f, bt, 9, (tid){2000, 2}, &a));
    assert_int_equal(a.calls, 1);
    assert_check_clean(f, REL_IDX, (uint64_t)(2 * n + 5 + 4));

    /* The marks were written with their pages. */
    btree_close(bt);
    CHECK_OK(f, buf_checkpoint(f->s));
    pool_close(f);
    pool_open(f, 32);
    CHECK_OK(f, btree_open(f->s, REL_IDX, &bt));
    CHECK_OK(f, insert_asking(f, bt, 9, (tid){2000, 3}, &a));
    assert_int_equal(a.calls, 1);
    CHECK_OK(f, insert_asking(f, bt, 7, (tid){500, 1}, &a));
    assert_int_equal(a.calls, 1);
    /* A marked entry's own tid again: a duplicate entry. */
    assert_int_equal(insert_asking(f, bt, 7, (tid){1, 1}, &a), KEEL_EEXIST);
    assert_int_equal(a.calls, 1);
    assert_check_clean(f, REL_IDX, (uint64_t)(2 * n + 5 + 6));
    btree_close(bt);
    tupdesc_free(d);
    pool_close(f);
}

/* ts[0..n): tid (i / per + 1, i % per + 1) for each i, shuffled. */
static void shuffled_tids(tid *ts, int n, int per, uint64_t seed)
{
    for (int i = 0; i < n; i++)
        ts[i] = (tid){.block = (blocknum_t)(i / per + 1),
                      .offset = (uint16_t)(i % per + 1)};
    for (int i = n - 1; i > 0; i--) {
        int k = (int)(tu_rand(&seed) % (uint64_t)(i + 1));
        tid x = ts[i];
        ts[i] = ts[k];
        ts[k] = x;
    }
}

/* btree_search_last() of v with room for max: the count n and the last
 * min(n, max) of all[0..n), v's tids in order. */
static void check_search_last(fixture *f, btree *bt, const keel_value *v,
                              const tid *all, uint32_t n, uint32_t max)
{
    static tid out[4096];
    uint32_t count = 0, kept = n < max ? n : max;

    assert_true(max <= 4096);
    for (uint32_t i = 0; i < max; i++)
        out[i] = (tid){0, 0};
    CHECK_OK(f, btree_search_last(bt, f->s, v, NULL, out, max, &count));
    assert_int_equal(count, n);
    for (uint32_t i = 0; i < kept; i++)
        assert_int_equal(tid_compare(out[i], all[n - kept + i]), 0);
    for (uint32_t i = kept; i < max; i++)
        assert_int_equal(tid_compare(out[i], (tid){0, 0}), 0);
}

/* Duplicates in a non-unique index come back in tid order, from search and
 * from scans, across many pages. */
static void test_duplicates_tid_order(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_INT4};
    tuple_desc *d = desc_of(1, types);
    btree *bt = NULL;
    keel_value v = {.isnull = false};
    enum { N = 3000 };
    static tid ts[N], out[N];
    uint32_t count;
    btree_scan *sc;
    tid t;
    int rc;

    pool_open(f, 32);
    CHECK_OK(f, btree_create(f->s, REL_IDX, d, false, &bt));
    shuffled_tids(ts, N, 7, 99);
    for (int i = 0; i < N; i++) {
        v.v.i4 = 7;
        CHECK_OK(f, btree_insert(bt, f->s, &v, ts[i], NULL, NULL));
        v.v.i4 = (i & 1) ? 6 : 8; /* neighbours on both sides */
        CHECK_OK(f, btree_insert(bt, f->s, &v,
                                 (tid){ts[i].block + 10000, ts[i].offset}, NULL,
                                 NULL));
    }
    v.v.i4 = 7;
    CHECK_OK(f, btree_search(bt, f->s, &v, out, N, &count));
    assert_int_equal(count, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(out[i].block, (blocknum_t)i / 7 + 1);
        assert_int_equal(out[i].offset, i % 7 + 1);
    }
    /* A short array gets the first ones and the full count. */
    CHECK_OK(f, btree_search(bt, f->s, &v, out, 3, &count));
    assert_int_equal(count, N);
    assert_int_equal(tid_compare(out[2], (tid){1, 3}), 0);
    /* btree_lookup() finds the first in tid order, many pages left of the
     * last. */
    CHECK_OK(f, btree_lookup(bt, f->s, &v, &t));
    assert_int_equal(tid_compare(t, (tid){1, 1}), 0);
    /* btree_search_last() keeps the last ones, in order, whatever the
     * room's remainder against the count. */
    CHECK_OK(f, btree_search(bt, f->s, &v, out, N, &count));
    {
        static const uint32_t room[] = {0,  1,   2,     3, 7,
                                        64, 999, N - 1, N, N + 5};
        for (size_t i = 0; i < sizeof(room) / sizeof(room[0]); i++)
            check_search_last(f, bt, &v, out, N, room[i]);
        v.v.i4 = 5; /* no entry */
        check_search_last(f, bt, &v, out, 0, 4);
        v.v.i4 = 7;
    }

    btree_bound b = {.vals = &v, .ncols = 1, .inclusive = true};
    CHECK_OK(f, btree_scan_begin(bt, f->s, &b, &b, &sc));
    for (int i = 0; i < N; i++) {
        keel_value k;
        CHECK_OK(f, btree_scan_next(sc, &t, &k));
        assert_int_equal(k.v.i4, 7);
        assert_int_equal(
            tid_compare(t, (tid){(blocknum_t)i / 7 + 1, (uint16_t)(i % 7 + 1)}),
            0);
    }
    rc = btree_scan_next(sc, &t, NULL);
    assert_int_equal(rc, KEEL_ENOENT);
    btree_scan_end(sc);
    assert_check_clean(f, REL_IDX, 2 * N);
    btree_close(bt);
    tupdesc_free(d);
    pool_close(f);
}

/* btree_search_last() on a key of two columns (the general search, not
 * the integer path): the last entries across pages, in tid order. */
static void test_search_last_two_columns(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_INT4, KEEL_INT4};
    tuple_desc *d = desc_of(2, types);
    btree *bt = NULL;
    keel_value v[2] = {{.isnull = false}, {.isnull = false}};
    enum { N = 900 };
    static tid ts[N], all[N];
    static const uint32_t room[] = {0, 1, 5, 64, 300, N, N + 1};
    uint32_t count = 0;

    pool_open(f, 32);
    CHECK_OK(f, btree_create(f->s, REL_IDX, d, false, &bt));
    shuffled_tids(ts, N, 5, 7);
    for (int i = 0; i < N; i++) {
        v[0].v.i4 = 7;
        v[1].v.i4 = 7;
        CHECK_OK(f, btree_insert(bt, f->s, v, ts[i], NULL, NULL));
        v[1].v.i4 = (i & 1) ? 6 : 8; /* neighbours on both sides */
        CHECK_OK(f, btree_insert(bt, f->s, v,
                                 (tid){ts[i].block + 10000, ts[i].offset}, NULL,
                                 NULL));
    }
    v[1].v.i4 = 7;
    CHECK_OK(f, btree_search(bt, f->s, v, all, N, &count));
    assert_int_equal(count, N);
    for (int i = 0; i < N; i++)
        assert_int_equal(tid_compare(all[i], (tid){(blocknum_t)i / 5 + 1,
                                                   (uint16_t)(i % 5 + 1)}),
                         0);
    for (size_t i = 0; i < sizeof(room) / sizeof(room[0]); i++)
        check_search_last(f, bt, v, all, N, room[i]);
    v[1].v.i4 = 9; /* no entry */
    check_search_last(f, bt, v, all, 0, 3);
    assert_check_clean(f, REL_IDX, 2 * N);
    btree_close(bt);
    tupdesc_free(d);
    pool_close(f);
}

/* Prefix bounds on the leading column of a (name, int4) key. */
static void test_prefix_bounds(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_NAME, KEEL_INT4};
    tuple_desc *d = desc_of(2, types);
    const char *names[] = {"apple", "banana", "cherry"};
    btree *bt = NULL;
    btree_scan *sc;
    keel_value v[2], k[2];
    tid t;
    int n = 0, rc;

    pool_open(f, 32);
    CHECK_OK(f, btree_create(f->s, REL_IDX, d, false, &bt));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 500; j++) {
            v[0] = (keel_value){.isnull = false,
                                .v.s = {names[i], (uint32_t)strlen(names[i])}};
            v[1] = (keel_value){.isnull = false, .v.i4 = 499 - j};
            CHECK_OK(f,
                     btree_insert(bt, f->s, v,
                                  (tid){(blocknum_t)i + 1, (uint16_t)(j + 1)},
                                  NULL, NULL));
        }
    v[0] = (keel_value){.isnull = false, .v.s = {"banana", 6}};
    btree_bound lo = {.vals = v, .ncols = 1, .inclusive = true};
    btree_bound hi = lo;
    CHECK_OK(f, btree_scan_begin(bt, f->s, &lo, &hi, &sc));
    while ((rc = btree_scan_next(sc, &t, k)) == KEEL_OK) {
        assert_int_equal(k[0].v.s.len, 6);
        assert_memory_equal(k[0].v.s.ptr, "banana", 6);
        assert_int_equal(k[1].v.i4, n); /* ascending second column */
        n++;
    }
    assert_int_equal(rc, KEEL_ENOENT);
    assert_int_equal(n, 500);
    btree_scan_end(sc);

    /* Exclusive prefix bounds: strictly between apple and cherry. */
    v[0] = (keel_value){.isnull = false, .v.s = {"apple", 5}};
    k[0] = (keel_value){.isnull = false, .v.s = {"cherry", 6}};
    lo = (btree_bound){.vals = v, .ncols = 1, .inclusive = false};
    hi = (btree_bound){.vals = k, .ncols = 1, .inclusive = false};
    CHECK_OK(f, btree_scan_begin(bt, f->s, &lo, &hi, &sc));
    n = 0;
    while (btree_scan_next(sc, &t, NULL) == KEEL_OK) {
        assert_int_equal(t.block, 2);
        n++;
    }
    assert_int_equal(n, 500);
    btree_scan_end(sc);

    /* Scans through a spare: the first allocates and its end keeps it;
     * the next begin takes it back, its strings grown for a 150-byte
     * bound; one begun while it is out allocates its own, which its end
     * frees; a refused begin leaves the spare where it was. */
    {
        btree_scan *spare = NULL, *first, *sc2;
        char longname[151];
        keel_value b2[1];
        btree_bound lo2, hi2;
        int n2 = 0;

        memset(longname, 'd', 150);
        longname[150] = '\0';
        v[0] = (keel_value){.isnull = false, .v.s = {"banana", 6}};
        lo = (btree_bound){.vals = v, .ncols = 1, .inclusive = true};
        CHECK_OK(f, btree_scan_begin_spare(bt, f->s, &lo, &lo, &spare, &sc));
        assert_null(spare);
        btree_scan_end_spare(sc, &spare);
        assert_ptr_equal(spare, sc);
        first = sc;
        v[0] = (keel_value){.isnull = false, .v.s = {"apple", 5}};
        k[0] = (keel_value){.isnull = false, .v.s = {longname, 150}};
        lo = (btree_bound){.vals = v, .ncols = 1, .inclusive = false};
        hi = (btree_bound){.vals = k, .ncols = 1, .inclusive = false};
        CHECK_OK(f, btree_scan_begin_spare(bt, f->s, &lo, &hi, &spare, &sc));
        assert_ptr_equal(sc, first);
        assert_null(spare);
        b2[0] = (keel_value){.isnull = false, .v.s = {"cherry", 6}};
        lo2 = (btree_bound){.vals = b2, .ncols = 1, .inclusive = true};
        hi2 = lo2;
        CHECK_OK(f, btree_scan_begin_spare(bt, f->s, &lo2, &hi2, &spare, &sc2));
        assert_ptr_not_equal(sc2, first);
        n = 0;
        while ((rc = btree_scan_next(sc, &t, k)) == KEEL_OK) {
            assert_true(t.block == 2 || t.block == 3); /* banana, cherry */
            n++;
        }
        assert_int_equal(rc, KEEL_ENOENT);
        while ((rc = btree_scan_next(sc2, &t, NULL)) == KEEL_OK) {
            assert_int_equal(t.block, 3);
            n2++;
        }
        assert_int_equal(rc, KEEL_ENOENT);
        assert_int_equal(n, 1000);
        assert_int_equal(n2, 500);
        btree_scan_end_spare(sc, &spare);
        assert_ptr_equal(spare, first);
        btree_scan_end_spare(sc2, &spare);
        assert_ptr_equal(spare, first);
        lo.ncols = 0;
        assert_int_equal(
            btree_scan_begin_spare(bt, f->s, &lo, NULL, &spare, &sc),
            KEEL_EINVAL);
        assert_ptr_equal(spare, first);
        btree_scan_end(spare);
    }
    /* A bound with no columns is refused. */
    lo.ncols = 0;
    assert_int_equal(btree_scan_begin(bt, f->s, &lo, NULL, &sc), KEEL_EINVAL);
    btree_close(bt);
    tupdesc_free(d);
    pool_close(f);
}

/* ---- bulk build -----------------------------------------------------------
 */

typedef struct seq_input {
    int64_t i, n;
    keel_value v;
    int64_t swap_at; /* emit entries swap_at and swap_at+1 swapped */
} seq_input;

static bool seq_next(void *ctx, const keel_value **keys, tid *t)
{
    seq_input *in = ctx;
    int64_t i = in->i;

    if (in->i >= in->n)
        return false;
    if (i == in->swap_at)
        i++;
    else if (i == in->swap_at + 1)
        i--;
    in->v = (keel_value){.isnull = false, .v.i4 = (int32_t)(i * 2)};
    *keys = &in->v;
    *t = (tid){.block = (blocknum_t)(i / 50 + 1),
               .offset = (uint16_t)(i % 50 + 1)};
    in->i++;
    return true;
}

static void test_bulk_build(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_INT4};
    tuple_desc *d = desc_of(1, types);
    seq_input in = {.i = 0, .n = 100000, .swap_at = -10};
    btree *bt = NULL;
    btree_scan *sc;
    uint64_t count = 0;
    keel_value k;
    tid t;
    int64_t i = 0;
    int rc;

    pool_open(f, 64);
    CHECK_OK(f,
             btree_build(f->s, REL_IDX, d, true, seq_next, &in, &bt, &count));
    assert_int_equal(count, 100000);
    assert_true(root_level(f, REL_IDX) >= 2);
    assert_check_clean(f, REL_IDX, 100000);
    CHECK_OK(f, btree_scan_begin(bt, f->s, NULL, NULL, &sc));
    while ((rc = btree_scan_next(sc, &t, &k)) == KEEL_OK) {
        assert_int_equal(k.v.i4, i * 2);
        assert_int_equal(tid_compare(t, (tid){(blocknum_t)(i / 50 + 1),
                                              (uint16_t)(i % 50 + 1)}),
                         0);
        i++;
    }
    assert_int_equal(rc, KEEL_ENOENT);
    assert_int_equal(i, 100000);
    btree_scan_end(sc);
    /* The built tree takes inserts, splits and searches like any other. */
    for (int32_t j = 0; j < 20000; j++) {
        k = (keel_value){.isnull = false, .v.i4 = j * 10 + 1};
        CHECK_OK(f, btree_insert(bt, f->s, &k,
                                 (tid){(blocknum_t)(9999 + j / 100),
                                       (uint16_t)(j % 100 + 1)},
                                 NULL, NULL));
    }
    for (int32_t j = 0; j < 200000; j += 13) {
        k = (keel_value){.isnull = false, .v.i4 = j};
        rc = btree_lookup(bt, f->s, &k, &t);
        assert_int_equal(rc,
                         (j % 2 == 0 || (j % 10 == 1)) ? KEEL_OK : KEEL_ENOENT);
    }
    assert_check_clean(f, REL_IDX, 120000);
    btree_close(bt);

    /* An empty build is a valid empty index. */
    in = (seq_input){.i = 0, .n = 0, .swap_at = -10};
    CHECK_OK(
        f, btree_build(f->s, REL_IDX + 1, d, false, seq_next, &in, &bt, NULL));
    k = (keel_value){.isnull = false, .v.i4 = 0};
    assert_int_equal(btree_lookup(bt, f->s, &k, &t), KEEL_ENOENT);
    assert_check_clean(f, REL_IDX + 1, 0);
    btree_close(bt);
    tupdesc_free(d);
    pool_close(f);
}

/* Entry i of a build of large text keys: "%08d" of i, then a pad whose
 * length varies with i, 800 to 2600 bytes in all. */
typedef struct wide_input {
    int64_t i, n;
    keel_value v;
    char buf[2700];
} wide_input;

static uint32_t wide_len(int64_t i)
{
    return 800 + (uint32_t)((i * 7919) % 1801);
}

static keel_value wide_key(char *buf, int64_t i)
{
    uint32_t len = wide_len(i);

    snprintf(buf, 16, "%08d", (int)i);
    memset(buf + 8, (int)('a' + i % 26), len - 8);
    return (keel_value){.isnull = false, .v.s = {buf, len}};
}

static bool wide_next(void *ctx, const keel_value **keys, tid *t)
{
    wide_input *in = ctx;

    if (in->i >= in->n)
        return false;
    in->v = wide_key(in->buf, in->i);
    *keys = &in->v;
    *t = (tid){.block = (blocknum_t)(in->i / 50 + 1),
               .offset = (uint16_t)(in->i % 50 + 1)};
    in->i++;
    return true;
}

/*
 * A bulk build of keys from 800 to 2600 bytes: a leaf filled to its 90%
 * often has no room left for its high key, a copy of the next leaf's
 * first key, and then gives its last entry to the next leaf.  The tree
 * checks clean, a scan returns every entry in order, each is found.
 */
static void test_bulk_build_wide_keys(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_TEXT};
    tuple_desc *d = desc_of(1, types);
    static wide_input in = {.i = 0, .n = 3000};
    static char buf[2700];
    btree *bt = NULL;
    btree_scan *sc;
    uint64_t count = 0;
    keel_value k, want;
    tid t;
    int64_t i = 0;
    int rc;

    pool_open(f, 64);
    CHECK_OK(f,
             btree_build(f->s, REL_IDX, d, true, wide_next, &in, &bt, &count));
    assert_int_equal(count, 3000);
    assert_true(root_level(f, REL_IDX) >= 2);
    assert_check_clean(f, REL_IDX, 3000);
    CHECK_OK(f, btree_scan_begin(bt, f->s, NULL, NULL, &sc));
    while ((rc = btree_scan_next(sc, &t, &k)) == KEEL_OK) {
        want = wide_key(buf, i);
        assert_int_equal(k.v.s.len, want.v.s.len);
        assert_memory_equal(k.v.s.ptr, want.v.s.ptr, want.v.s.len);
        assert_int_equal(tid_compare(t, (tid){(blocknum_t)(i / 50 + 1),
                                              (uint16_t)(i % 50 + 1)}),
                         0);
        i++;
    }
    assert_int_equal(rc, KEEL_ENOENT);
    assert_int_equal(i, 3000);
    btree_scan_end(sc);
    for (int64_t j = 0; j < 3000; j++) {
        k = wide_key(buf, j);
        CHECK_OK(f, btree_lookup(bt, f->s, &k, &t));
        assert_int_equal(t.offset, j % 50 + 1);
    }
    btree_close(bt);
    tupdesc_free(d);
    pool_close(f);
}

/* ---- point lookups on skewed integer keys ------------------------------- */

/* Entry i of the skewed input: cubes (crowded near 0, sparse far out),
 * every 7th key twice, the int8 extremes at both ends, then nulls. */
typedef struct skew_input {
    int64_t i, n;
    keel_value v;
} skew_input;

static int64_t skew_key(int64_t j, int64_t m)
{
    int64_t c = j - m / 2;

    if (j == 0)
        return INT64_MIN;
    if (j == m - 1)
        return INT64_MAX;
    return c * c * c;
}

/* Entries: keys 0..m-1, each once, or twice when divisible by 7. */
static int64_t skew_entry_key(int64_t e, int64_t m, int *dup)
{
    int64_t j = e / 8 * 7, r = e % 8;

    /* Every block of 8 entries covers keys j..j+6, key j twice. */
    *dup = r <= 1 ? (int)r : 0;
    return j + (r == 0 ? 0 : r - 1) < m ? j + (r == 0 ? 0 : r - 1) : -1;
}

static bool skew_next(void *ctx, const keel_value **keys, tid *t)
{
    skew_input *in = ctx;
    int dup;
    int64_t m = in->n, j;

    for (;;) {
        if (in->i >= (m / 7 + 1) * 8 + 5)
            return false;
        j = skew_entry_key(in->i, m, &dup);
        t->block = (blocknum_t)(in->i / 50 + 1);
        t->offset = (uint16_t)(in->i % 50 + 1);
        in->i++;
        if (j >= 0)
            break;
        if (in->i > (m / 7 + 1) * 8) {
            in->v = (keel_value){.isnull = true};
            *keys = &in->v;
            return true;
        }
    }
    in->v = (keel_value){.isnull = false, .v.i8 = skew_key(j, m)};
    *keys = &in->v;
    return true;
}

/*
 * Point lookups guess a key's slot from its value (interpolation) and
 * gallop from there: keys spread very unevenly, duplicates, nulls and the
 * type's extremes must still be found exactly, and absent keys not at all,
 * in a bulk-built tree and after splits.
 */
static void test_lookup_skewed(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_INT8};
    tuple_desc *d = desc_of(1, types);
    const int64_t m = 70000;
    skew_input in = {.i = 0, .n = m};
    uint64_t count = 0;
    btree *bt = NULL;
    keel_value k;
    tid t, tids[4];
    uint32_t n;

    pool_open(f, 128);
    CHECK_OK(f,
             btree_build(f->s, REL_IDX, d, false, skew_next, &in, &bt, &count));
    assert_true(root_level(f, REL_IDX) >= 1);
    assert_check_clean(f, REL_IDX, count);
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t j = 0; j < m; j++) {
            int64_t key = skew_key(j, m);

            k = (keel_value){.isnull = false, .v.i8 = key};
            CHECK_OK(f, btree_lookup(bt, f->s, &k, &t));
            /* The first entry of key j is entry j / 7 * 8 + j % 7 (+1). */
            int64_t e = j / 7 * 8 + (j % 7 == 0 ? 0 : j % 7 + 1);
            assert_int_equal(t.block, (blocknum_t)(e / 50 + 1));
            assert_int_equal(t.offset, (uint16_t)(e % 50 + 1));
            CHECK_OK(f, btree_search(bt, f->s, &k, tids, 4, &n));
            assert_int_equal(n, (j % 7 == 0 ? 2 : 1) + (pass && j % 5 == 0));
            if (key != INT64_MAX && skew_key(j + 1, m) != key + 1) {
                k.v.i8 = key + 1;
                assert_int_equal(btree_lookup(bt, f->s, &k, &t), KEEL_ENOENT);
            }
        }
        if (pass == 1)
            break;
        /* Splits: a second entry for every 5th key, in a scattered order. */
        for (int64_t x = 0; x < m; x++) {
            int64_t j = (x * 7919) % m;
            if (j % 5 != 0)
                continue;
            k = (keel_value){.isnull = false, .v.i8 = skew_key(j, m)};
            CHECK_OK(f, btree_insert(bt, f->s, &k,
                                     (tid){(blocknum_t)(100000 + j / 50),
                                           (uint16_t)(j % 50 + 1)},
                                     NULL, NULL));
            count++;
        }
        assert_check_clean(f, REL_IDX, count);
    }
    btree_close(bt);
    tupdesc_free(d);
    pool_close(f);
}

/* A key of an integer column of type type with value x (OID: x's low 32
 * bits, so negative x sort after positive ones). */
static keel_value int_key_of(keel_type type, int64_t x)
{
    keel_value v = {.isnull = false};

    switch (type) {
    case KEEL_INT2:
        v.v.i2 = (int16_t)x;
        break;
    case KEEL_INT4:
        v.v.i4 = (int32_t)x;
        break;
    case KEEL_OID:
        v.v.oid = (uint32_t)x;
        break;
    default:
        v.v.i8 = x;
        break;
    }
    return v;
}

/* The tids of the entries equal to k, by a range scan [k, k] (the general
 * comparison): up to max into tids; returns how many there are. */
static uint32_t scan_equal(fixture *f, btree *bt, const keel_value *k,
                           tid *tids, uint32_t max)
{
    btree_bound b = {k, 1, true};
    btree_scan *sc = NULL;
    uint32_t n = 0;
    tid t;
    int rc;

    CHECK_OK(f, btree_scan_begin(bt, f->s, &b, &b, &sc));
    while ((rc = btree_scan_next(sc, &t, NULL)) == KEEL_OK) {
        if (n < max)
            tids[n] = t;
        n++;
    }
    assert_int_equal(rc, KEEL_ENOENT);
    btree_scan_end(sc);
    return n;
}

/* ---- the session's directory ------------------------------------------- */

/*
 * Every int4 key in [lo, hi] by step: btree_lookup_heap() and
 * btree_search_heap() through d give what a range scan (the general
 * comparison, from the root) gives: the same first tid, every tid in
 * order, the count.
 */
static void check_dir_agrees(fixture *f, btree *bt, btree_dir *d, int64_t lo,
                             int64_t hi, int64_t step)
{
    for (int64_t x = lo; x <= hi; x += step) {
        keel_value k = {.isnull = false, .v.i4 = (int32_t)x};
        tid want[8], got[8], t;
        uint32_t n = scan_equal(f, bt, &k, want, 8), count;
        int rc = btree_lookup_heap(bt, f->s, &k, NULL, d, &t, NULL);

        if (n == 0) {
            assert_int_equal(rc, KEEL_ENOENT);
        } else {
            assert_int_equal(rc, KEEL_OK);
            assert_int_equal(tid_compare(t, want[0]), 0);
        }
        CHECK_OK(
            f, btree_search_heap(bt, f->s, &k, NULL, d, got, 8, &count, NULL));
        assert_int_equal(count, n);
        for (uint32_t i = 0; i < n && i < 8; i++)
            assert_int_equal(tid_compare(got[i], want[i]), 0);
    }
}

/* The i-th tid of a run starting at block base, 200 to a block. */
static tid uniq_tid(blocknum_t base, int32_t i)
{
    return (tid){.block = base + (blocknum_t)(i / 200),
                 .offset = (uint16_t)(i % 200 + 1)};
}

static btree_dir_stats dir_stats(const btree_dir *d)
{
    btree_dir_stats st;

    btree_dir_stats_get(d, &st);
    return st;
}

/*
 * btree_lookup() and btree_search() on each integer key type (they
 * compare keys as integers), from the root and from a directory, agree
 * with a range scan (the general comparison): negative values and the
 * types' extremes, duplicates spread over pages (every tid, in order, and
 * their count when more than fit), null keys (which sort last, and end
 * the directory), absent keys, in a tree grown by random inserts.
 */
static void test_lookup_int_types(void **state)
{
    fixture *f = *state;
    const keel_type types[] = {KEEL_INT2, KEEL_INT4, KEEL_OID, KEEL_INT8};
    const int64_t extremes[] = {INT16_MIN, INT16_MAX, INT32_MIN, INT32_MAX,
                                UINT32_MAX};
    enum { N = 30000, SPAN = 3000 };
    btree_dir *dir = btree_dir_new(0);

    assert_non_null(dir);
    for (int ti = 0; ti < 4; ti++) {
        tuple_desc *d = desc_of(1, &types[ti]);
        relnumber_t rel = REL_IDX + 1 + (relnumber_t)ti;
        uint64_t rng = 4242 + (uint64_t)ti;
        btree *bt = NULL;
        keel_value k;
        tid t, tids[64], want[64];
        uint32_t count, n;

        pool_open(f, 48);
        CHECK_OK(f, btree_create(f->s, rel, d, false, &bt));
        for (int i = 0; i < N; i++) {
            uint64_t r = tu_rand(&rng);
            tid e = {.block = (blocknum_t)(i / 200 + 1),
                     .offset = (uint16_t)(i % 200 + 1)};
            k = int_key_of(types[ti], (int64_t)(r >> 20) % SPAN - SPAN / 2);
            if (i % 8 == 0) /* the extremes, repeated */
                k = int_key_of(types[ti], extremes[(i / 8) % 5]);
            if (i % 50 == 0)
                k = (keel_value){.isnull = true};
            CHECK_OK(f, btree_insert(bt, f->s, &k, e, NULL, NULL));
        }
        assert_true(root_level(f, rel) >= 1);
        for (int64_t x = -SPAN / 2 - 20; x <= SPAN / 2 + 20 + 5; x++) {
            int rc;
            /* The last five probes are the extremes. */
            int64_t y = x <= SPAN / 2 + 20 ? x : extremes[x - SPAN / 2 - 21];

            k = int_key_of(types[ti], y);
            n = scan_equal(f, bt, &k, want, 64);
            CHECK_OK(f, btree_search(bt, f->s, &k, tids, 64, &count));
            assert_int_equal(count, n);
            for (uint32_t i = 0; i < n && i < 64; i++)
                assert_int_equal(tid_compare(tids[i], want[i]), 0);
            /* Fewer slots than matches: the first ones, and the count. */
            CHECK_OK(f, btree_search(bt, f->s, &k, tids, 2, &count));
            assert_int_equal(count, n);
            for (uint32_t i = 0; i < n && i < 2; i++)
                assert_int_equal(tid_compare(tids[i], want[i]), 0);
            rc = btree_lookup(bt, f->s, &k, &t);
            if (n == 0) {
                assert_int_equal(rc, KEEL_ENOENT);
            } else {
                assert_int_equal(rc, KEEL_OK);
                assert_int_equal(tid_compare(t, want[0]), 0);
            }
            /* The same entered from the directory. */
            CHECK_OK(f, btree_search_heap(bt, f->s, &k, NULL, dir, tids, 64,
                                          &count, NULL));
            assert_int_equal(count, n);
            for (uint32_t i = 0; i < n && i < 64; i++)
                assert_int_equal(tid_compare(tids[i], want[i]), 0);
            rc = btree_lookup_heap(bt, f->s, &k, NULL, dir, &t, NULL);
            assert_int_equal(rc, n == 0 ? KEEL_ENOENT : KEEL_OK);
            if (n > 0)
                assert_int_equal(tid_compare(t, want[0]), 0);
        }
        assert_true(btree_dir_is_for(dir, bt));
        assert_true(dir_stats(dir).entries >= 2);
        k = (keel_value){.isnull = true};
        CHECK_OK(f, btree_search(bt, f->s, &k, tids, 1, &count));
        assert_int_equal(count, N / 50);
        CHECK_OK(f, btree_lookup(bt, f->s, &k, &t));
        assert_int_equal(tid_compare(t, tids[0]), 0);
        assert_check_clean(f, rel, N);
        btree_close(bt);
        tupdesc_free(d);
        pool_close(f);
    }
    btree_dir_free(dir);
}

/*
 * A directory starts lookups below the root and gives the answers of the
 * descent from the root: over a three-level tree, with the leaf level
 * (default size) or, when that does not fit, level 1; after splits have
 * made it stale (moving right, then rebuilt once moves are frequent);
 * after rows were appended past its last leaf (back to the root); as the
 * tree grows from a single leaf (nothing held, then rebuilt when the root
 * gains a level); and shared by two indexes in turn (rebuilt at each
 * switch).
 */
static void test_dir(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_INT4};
    tuple_desc *d4 = desc_of(1, types);
    seq_input in = {.i = 0, .n = 300000, .swap_at = -10};
    btree *bt = NULL, *small = NULL;
    btree_dir *d = btree_dir_new(0), *d64 = btree_dir_new(64),
              *tail = btree_dir_new(0);
    btree_dir_stats st;
    keel_value k = {.isnull = false};
    uint64_t builds;
    tid t;

    assert_non_null(d);
    assert_non_null(d64);
    assert_non_null(tail);
    pool_open(f, 1024);
    /* Keys 0, 2, .., 599998. */
    CHECK_OK(f,
             btree_build(f->s, REL_IDX, d4, false, seq_next, &in, &bt, NULL));
    assert_int_equal(root_level(f, REL_IDX), 2);

    check_dir_agrees(f, bt, d, -5, 600005, 37);
    st = dir_stats(d);
    assert_int_equal(st.level, 0);
    assert_in_range(st.entries, 500, 1500); /* one per leaf */
    assert_int_equal(st.builds, 1);
    assert_int_equal(st.fallbacks, 0);
    assert_true(btree_dir_is_for(d, bt));
    assert_in_range(st.bytes, 24 * st.entries, 24 * st.entries + 1024);

    /* 64 entries hold level 1's downlinks, not the leaves'. */
    check_dir_agrees(f, bt, d64, -5, 600005, 97);
    st = dir_stats(d64);
    assert_int_equal(st.level, 1);
    assert_in_range(st.entries, 2, 64);

    /* Splits: the odd keys below 40000 go into the first leaves. */
    CHECK_OK(f, btree_lookup_heap(bt, f->s, &k, NULL, tail, &t, NULL));
    for (int32_t x = 1; x < 40000; x += 2) {
        k.v.i4 = x;
        CHECK_OK(f, btree_insert(bt, f->s, &k, uniq_tid(10000, x), NULL, NULL));
    }
    builds = dir_stats(d).builds;
    check_dir_agrees(f, bt, d, -5, 45000, 1);
    st = dir_stats(d);
    assert_true(st.moves > 0);
    assert_true(st.builds > builds); /* moves were frequent: rebuilt */
    check_dir_agrees(f, bt, d64, -5, 45000, 3);

    /* More of them, up to 160000: the level-1 pages the directory of 64
     * entries named split too, and its lookups move right at its level. */
    for (int32_t x = 40001; x < 160000; x += 2) {
        k.v.i4 = x;
        CHECK_OK(f, btree_insert(bt, f->s, &k, uniq_tid(10000, x), NULL, NULL));
    }
    st = dir_stats(d64);
    check_dir_agrees(f, bt, d64, -5, 165000, 7);
    assert_int_equal(dir_stats(d64).level, 1);
    assert_true(dir_stats(d64).moves > st.moves);

    /* Rows appended past the last leaf the directory knows: the lookup of
     * the last one would move right over many leaves, so it starts over
     * from the root. */
    for (int32_t x = 600000; x < 610000; x++) {
        k.v.i4 = x;
        CHECK_OK(f, btree_insert(bt, f->s, &k, uniq_tid(20000, x - 600000),
                                 NULL, NULL));
    }
    k.v.i4 = 609999;
    CHECK_OK(f, btree_lookup_heap(bt, f->s, &k, NULL, tail, &t, NULL));
    assert_int_equal(tid_compare(t, uniq_tid(20000, 9999)), 0);
    st = dir_stats(tail);
    assert_int_equal(st.builds, 1);
    assert_int_equal(st.fallbacks, 1);
    check_dir_agrees(f, bt, tail, 599990, 610010, 1);
    assert_check_clean(f, REL_IDX, 300000 + 80000 + 10000);

    /* A tree that is one leaf: nothing to hold; once the root has
     * children, the directory is rebuilt. */
    CHECK_OK(f, btree_create(f->s, REL_IDX + 50, d4, true, &small));
    for (int32_t x = 0; x < 100; x++) {
        k.v.i4 = x;
        CHECK_OK(f,
                 btree_insert(small, f->s, &k, uniq_tid(30000, x), NULL, NULL));
    }
    check_dir_agrees(f, small, d, -2, 102, 1);
    st = dir_stats(d);
    assert_true(btree_dir_is_for(d, small));
    assert_int_equal(st.entries, 0);
    builds = st.builds;
    for (int32_t x = 100; x < 5000; x++) {
        k.v.i4 = x;
        CHECK_OK(f,
                 btree_insert(small, f->s, &k, uniq_tid(30000, x), NULL, NULL));
    }
    assert_int_equal(root_level(f, REL_IDX + 50), 1);
    check_dir_agrees(f, small, d, -2, 5002, 1);
    st = dir_stats(d);
    assert_int_equal(st.builds, builds + 1);
    assert_true(st.entries >= 2);
    assert_int_equal(st.level, 0);

    /* One directory for two indexes in turn: right answers, a build at
     * each switch. */
    builds = st.builds;
    for (int i = 0; i < 6; i++) {
        btree *which = i % 2 ? small : bt;
        check_dir_agrees(f, which, d, 1000 + i, 1100, 9);
        assert_true(btree_dir_is_for(d, which));
    }
    assert_int_equal(dir_stats(d).builds, builds + 6);

    btree_dir_free(d);
    btree_dir_free(d64);
    btree_dir_free(tail);
    btree_dir_free(NULL);
    btree_close(bt);
    btree_close(small);
    tupdesc_free(d4);
    pool_close(f);
}

static void test_bulk_build_rejects(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_INT4};
    tuple_desc *d = desc_of(1, types);
    seq_input in = {.i = 0, .n = 5000, .swap_at = 3000};
    btree *bt = NULL;
    keel_value vals[3];
    btree_entry dup[3];

    pool_open(f, 32);
    assert_int_equal(
        btree_build(f->s, REL_IDX, d, false, seq_next, &in, &bt, NULL),
        KEEL_EINVAL);
    assert_null(bt);
    assert_non_null(strstr(buf_session_error(f->s)->msg, "3001"));
    /* Equal keys: fine for a non-unique index, refused by a unique one. */
    for (int i = 0; i < 3; i++) {
        vals[i] = (keel_value){.isnull = false, .v.i4 = i == 2 ? 5 : 4};
        dup[i] = (btree_entry){.keys = &vals[i],
                               .t = {.block = 1, .offset = (uint16_t)(i + 1)}};
    }
    CHECK_OK(f, btree_build_array(f->s, REL_IDX + 1, d, false, dup, 3, &bt));
    assert_check_clean(f, REL_IDX + 1, 3);
    btree_close(bt);
    bt = NULL;
    assert_int_equal(btree_build_array(f->s, REL_IDX + 2, d, true, dup, 3, &bt),
                     KEEL_EUNIQUE);
    /* Building into a relation that is not empty is refused. */
    assert_int_equal(
        btree_build_array(f->s, REL_IDX + 1, d, false, dup, 3, &bt),
        KEEL_EEXIST);
    assert_int_equal(btree_create(f->s, REL_IDX + 1, d, false, &bt),
                     KEEL_EEXIST);
    tupdesc_free(d);
    pool_close(f);
}

/* ---- persistence ----------------------------------------------------------
 */

static void test_persistence(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_INT8, KEEL_TEXT};
    tuple_desc *d = desc_of(2, types);
    btree *bt = NULL;
    keel_value v[2];
    char buf[32];
    tid t;

    pool_open(f, 32);
    CHECK_OK(f, btree_create(f->s, REL_IDX, d, true, &bt));
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(buf, sizeof(buf), "v%d", i % 977);
        v[0] =
            (keel_value){.isnull = false, .v.i8 = (int64_t)i * 1000003 % 20011};
        v[1] = (keel_value){.isnull = false, .v.s = {buf, (uint32_t)n}};
        CHECK_OK(f, btree_insert(bt, f->s, v, (tid){(blocknum_t)i, (uint16_t)1},
                                 NULL, NULL));
    }
    btree_close(bt);
    CHECK_OK(f, buf_checkpoint(f->s));
    pool_close(f);

    pool_open(f, 16);
    CHECK_OK(f, btree_open(f->s, REL_IDX, &bt));
    assert_true(btree_is_unique(bt));
    assert_int_equal(btree_key_desc(bt)->natts, 2);
    assert_int_equal(btree_key_desc(bt)->attrs[1].type, KEEL_TEXT);
    assert_int_equal(btree_relnumber(bt), REL_IDX);
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(buf, sizeof(buf), "v%d", i % 977);
        v[0] =
            (keel_value){.isnull = false, .v.i8 = (int64_t)i * 1000003 % 20011};
        v[1] = (keel_value){.isnull = false, .v.s = {buf, (uint32_t)n}};
        CHECK_OK(f, btree_lookup(bt, f->s, v, &t));
        assert_int_equal(t.block, (blocknum_t)i);
    }
    assert_check_clean(f, REL_IDX, 20000);
    btree_close(bt);
    /* Not an index. */
    assert_int_equal(btree_open(f->s, 12345, &bt), KEEL_ENOENT);
    tupdesc_free(d);
    pool_close(f);
}

/* ---- a parent above the descent ------------------------------------------ */

/*
 * An insert whose split climbs past the levels its descent passed: the
 * descent saw the root at level 1, and while the insert was splitting its
 * leaf another session split the root (a level 2 now above it) and
 * filled the level-1 page that holds the leaf's downlink.  The insert
 * then splits that page too and finds its parent, which it never saw, by
 * descending from the root.  Made to happen, not left to timing: the
 * other session runs in the test's hook after the insert's new page is
 * made (FAULT_POINT_EXTENDED), while the insert holds its leaf locked.
 * Keys of 2000 bytes, so that a page holds a handful.
 */
#define HIGH_KEYLEN 2000
#define HIGH_STEP   1000000

static keel_value high_key(char *buf, int64_t n)
{
    snprintf(buf, 24, "%012lld", (long long)n);
    memset(buf + 12, 'p', HIGH_KEYLEN - 12);
    return (keel_value){.isnull = false, .v.s = {buf, HIGH_KEYLEN}};
}

/* The tid of the i-th key the other session inserts. */
static tid high_tid(int64_t i)
{
    return (tid){(blocknum_t)(10 + i / 200), (uint16_t)(i % 200 + 1)};
}

typedef struct high_ctx {
    fixture *f;
    btree *bt;
    buf_session *b;    /* the other session */
    int64_t nfirst;    /* keys HIGH_STEP * 1 .. nfirst * HIGH_STEP exist */
    bool armed, fired; /* the hook runs once, during the insert */
    int64_t added;     /* keys the other session inserted */
    int64_t *keys;     /* which */
} high_ctx;

/* Pins and share-locks block blk of the index through session b. */
static const void *high_page(high_ctx *c, blocknum_t blk, int32_t *id)
{
    TU_SESSION_OK(c->b, buf_read(c->b, REL_IDX, blk, NULL, id));
    buf_lock(c->b, *id, LW_SHARED);
    return buf_page(c->f->pool, *id);
}

static void high_done(high_ctx *c, int32_t id)
{
    buf_unlock(c->b, id);
    buf_release(c->b, id);
}

/* The root's block and level, from the meta page. */
static blocknum_t high_root(high_ctx *c, uint32_t *level)
{
    int32_t id;
    bt_meta m;

    memcpy(&m,
           (const char *)high_page(c, BT_META_BLOCK, &id) + PAGE_HEADER_SIZE,
           sizeof(m));
    high_done(c, id);
    *level = m.level;
    return m.root;
}

/* Whether the leftmost page of level 1 (which holds the leftmost leaf's
 * downlink) has no room for one more downlink. */
static bool high_leftmost_full(high_ctx *c)
{
    uint32_t level;
    blocknum_t blk = high_root(c, &level);
    int32_t id;
    const void *page;
    bool full;

    while (level > 1) {
        page = high_page(c, blk, &id);
        blk = btpage_item(page, btpage_first(page))->block;
        high_done(c, id);
        level--;
    }
    page = high_page(c, blk, &id);
    full =
        page_free_space(page) <
        BT_ALIGN8(btitem_size(btpage_item(page, btpage_nitems(page) - 1))) + 2;
    high_done(c, id);
    return full;
}

/*
 * The hook: the insert is splitting the leftmost leaf (it holds that leaf
 * locked).  The other session inserts, in descending order, keys just
 * above the first key of the second leaf, so that every split it makes
 * puts a downlink right after the second leaf's, next to the leftmost
 * leaf's: until the root has split and the level-1 page holding the
 * leftmost leaf's downlink is full.
 */
static void high_hook(void *ctx, uint32_t rel, uint32_t blk)
{
    high_ctx *c = ctx;
    char buf[HIGH_KEYLEN], kb[HIGH_KEYLEN];
    keel_value vals[BTREE_MAX_KEYS], k;
    bt_scankey sk;
    uint32_t level;
    int64_t first = 0;
    int32_t id;

    (void)blk;
    if (!c->armed || c->fired || rel != REL_IDX)
        return;
    c->fired = true;
    {
        const void *root = high_page(c, high_root(c, &level), &id);
        assert_int_equal(level, 1);
        bt_scankey_from_item(c->bt, btpage_item(root, btpage_first(root) + 1),
                             false, vals, &sk);
        /* The second leaf's first key: the first one at or above its
         * separator. */
        for (int64_t n = 1; n <= c->nfirst && first == 0; n++) {
            k = high_key(kb, n * HIGH_STEP);
            if (memcmp(k.v.s.ptr, vals[0].v.s.ptr, HIGH_KEYLEN) >= 0)
                first = n * HIGH_STEP;
        }
        high_done(c, id);
    }
    assert_true(first > HIGH_STEP);
    for (int64_t x = first + HIGH_STEP - 1; x > first; x--) {
        k = high_key(buf, x);
        TU_SESSION_OK(c->b, btree_insert(c->bt, c->b, &k, high_tid(c->added),
                                         NULL, NULL));
        c->keys[c->added++] = x;
        (void)high_root(c, &level);
        if (level >= 2 && high_leftmost_full(c))
            return;
        assert_true(c->added < 500);
    }
    fail_msg("the leftmost level-1 page never filled");
}

static void test_split_above_descent(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_TEXT};
    tuple_desc *d = desc_of(1, types);
    static char buf[HIGH_KEYLEN];
    static int64_t keys[512];
    high_ctx c = {.f = f, .nfirst = 12, .keys = keys};
    int64_t mine = 0;
    uint32_t level;
    keel_value k;
    tid t;

    pool_open(f, 128);
    CHECK_OK(f, btree_create(f->s, REL_IDX, d, true, &c.bt));
    for (int64_t n = 1; n <= c.nfirst; n++) {
        k = high_key(buf, n * HIGH_STEP);
        CHECK_OK(
            f, btree_insert(c.bt, f->s, &k, (tid){1, (uint16_t)n}, NULL, NULL));
    }
    assert_int_equal(root_level(f, REL_IDX), 1);
    CHECK_OK(f, buf_session_create(f->pool, &c.b, &f->err));
    fault_point_set(FAULT_POINT_EXTENDED, high_hook, &c);
    /* Keys into the leftmost leaf until one splits it. */
    while (!c.fired) {
        assert_true(mine < 20);
        k = high_key(buf, HIGH_STEP + ++mine);
        c.armed = true;
        CHECK_OK(f, btree_insert(c.bt, f->s, &k, (tid){2, (uint16_t)mine}, NULL,
                                 NULL));
        c.armed = false;
    }
    fault_point_set(FAULT_POINT_EXTENDED, NULL, NULL);
    (void)high_root(&c, &level);
    assert_true(level >= 2);
    buf_session_destroy(c.b);

    for (int64_t n = 1; n <= c.nfirst; n++) {
        k = high_key(buf, n * HIGH_STEP);
        CHECK_OK(f, btree_lookup(c.bt, f->s, &k, &t));
        assert_int_equal(tid_compare(t, (tid){1, (uint16_t)n}), 0);
    }
    for (int64_t i = 1; i <= mine; i++) {
        k = high_key(buf, HIGH_STEP + i);
        CHECK_OK(f, btree_lookup(c.bt, f->s, &k, &t));
        assert_int_equal(tid_compare(t, (tid){2, (uint16_t)i}), 0);
    }
    for (int64_t i = 0; i < c.added; i++) {
        k = high_key(buf, keys[i]);
        CHECK_OK(f, btree_lookup(c.bt, f->s, &k, &t));
        assert_int_equal(tid_compare(t, high_tid(i)), 0);
    }
    assert_check_clean(f, REL_IDX, (uint64_t)(c.nfirst + mine + c.added));
    btree_close(c.bt);
    tupdesc_free(d);
    pool_close(f);
}

/* ---- argument errors ------------------------------------------------------
 */

static void test_errors(void **state)
{
    fixture *f = *state;
    keel_type types[] = {KEEL_TEXT};
    tuple_desc *d = desc_of(1, types), *none = tupdesc_alloc(0);
    btree *bt = NULL;
    static char huge[BTREE_MAX_KEY_SIZE + 10];
    keel_value v = {.isnull = false, .v.s = {huge, 10}};
    tid t;

    pool_open(f, 16);
    assert_int_equal(btree_create(f->s, REL_IDX, none, false, &bt),
                     KEEL_EINVAL);
    CHECK_OK(f, btree_create(f->s, REL_IDX, d, false, &bt));
    memset(huge, 'x', sizeof(huge));
    assert_int_equal(btree_insert(bt, f->s, &v, TID_INVALID, NULL, NULL),
                     KEEL_EINVAL);
    CHECK_OK(f, btree_insert(bt, f->s, &v, (tid){1, 1}, NULL, NULL));
    assert_int_equal(btree_insert(bt, f->s, &v, (tid){1, 1}, NULL, NULL),
                     KEEL_EEXIST);
    assert_int_equal(btree_delete(bt, f->s, &v, (tid){1, 2}), KEEL_ENOENT);
    v.v.s.len = BTREE_MAX_KEY_SIZE; /* plus its length word: too big */
    assert_int_equal(btree_insert(bt, f->s, &v, (tid){1, 3}, NULL, NULL),
                     KEEL_ETOOBIG);
    /* The largest keys that fit still split properly. */
    v.v.s.len = BTREE_MAX_KEY_SIZE - 4;
    for (uint16_t i = 0; i < 30; i++) {
        huge[0] = (char)('a' + i);
        CHECK_OK(f, btree_insert(bt, f->s, &v, (tid){2, (uint16_t)(i + 1)},
                                 NULL, NULL));
    }
    assert_true(root_level(f, REL_IDX) >= 1);
    huge[0] = 'c';
    CHECK_OK(f, btree_lookup(bt, f->s, &v, &t));
    assert_int_equal(t.offset, 3);
    assert_check_clean(f, REL_IDX, 31);
    btree_close(bt);
    tupdesc_free(d);
    tupdesc_free(none);
    pool_close(f);
}

/*
 * Inserts that split and then cannot get a buffer for a new page, at each
 * level of the split: the session pins every page of the tree, and every
 * other buffer holds a dirty page of another relation whose writes fail,
 * so a new page's victim cannot be cleaned.  Once the root is at level
 * min_level, each insert may make `skip` new pages; the next one fails
 * (before the file grows).  The failing insert must leave the tree as it
 * was: its key absent, the root's level unchanged, every split it made put
 * back, the new blocks pages of zeroes (which the checker passes over), no
 * downlink missing; and the same insert must then succeed.  Keys of 1000
 * bytes keep the tree small; their order is scrambled so that splits in
 * the middle of a level relink a right sibling.
 */
#define SPLIT_KEYS 4000
#define TID_OF(i)  ((tid){(blocknum_t)(i) / 200 + 1, (uint16_t)((i) % 200 + 1)})

static keel_value split_key(char *buf, int32_t i)
{
    snprintf(buf, 16, "%08d", (int)(((int64_t)i * 7919) % 100000));
    memset(buf + 8, 'k', 992);
    return (keel_value){.isnull = false, .v.s = {buf, 1000}};
}

static void split_fault_run(fixture *f, uint32_t min_level, uint32_t skip)
{
    enum { POOL = 512 };
    const relnumber_t fill = REL_IDX + 7;
    keel_type types[] = {KEEL_TEXT};
    tuple_desc *d = desc_of(1, types);
    static int32_t held[POOL];
    static char buf[1000];
    btree *bt = NULL;
    keel_value v;
    blocknum_t nheld = 0, grown = 0;
    uint32_t level = 0;
    smgr_rel *r = NULL;
    int32_t i, n = 0;
    int rc = KEEL_OK;
    tid t;

    pool_open(f, POOL);
    CHECK_OK(f, btree_create(f->s, REL_IDX, d, true, &bt));
    assert_int_equal(smgr_rel_open(f->sm, REL_IDX, &r, &f->err), KEEL_OK);
    assert_int_equal(smgr_create(f->sm, fill, NULL, &f->err), KEEL_OK);
    for (i = 0; i < POOL - 2; i++) {
        int32_t id;
        blocknum_t blk;
        CHECK_OK(f, buf_extend(f->s, fill, 0, NULL, &id, &blk));
        buf_mark_dirty(f->s, id);
        buf_unlock_release(f->s, id);
    }
    for (i = 0; i < SPLIT_KEYS; i++) {
        for (; nheld < smgr_nblocks(r); nheld++)
            CHECK_OK(f, buf_read(f->s, REL_IDX, nheld, NULL, &held[nheld]));
        level = root_level(f, REL_IDX);
        if (level >= min_level)
            fault_arm(FAULT_OP_WRITE, FAULT_ENOSPC, skip, UINT32_MAX, fill);
        else
            fault_disarm_all();
        v = split_key(buf, i);
        rc = btree_insert(bt, f->s, &v, TID_OF(i), NULL, NULL);
        if (rc != KEEL_OK)
            break;
        n++;
    }
    if (rc != KEEL_ENOSPC)
        fail_msg("min_level %u skip %u: insert %d gave %d (%s)", min_level,
                 skip, i, rc, buf_session_error(f->s)->msg);
    assert_string_not_equal(buf_session_error(f->s)->msg, "");
    assert_int_equal(fault_delivered(FAULT_OP_WRITE), 1);
    fault_disarm_all();
    /* Every new page the insert made is in the file as zeroes; the one
     * it failed to make is not there (the victim is written before the
     * file grows). */
    grown = smgr_nblocks(r) - nheld;
    assert_int_equal(grown, skip);
    for (blocknum_t b = 0; b < nheld; b++)
        buf_release(f->s, held[b]);
    for (blocknum_t b = nheld; b < nheld + grown; b++) {
        int32_t id;
        CHECK_OK(f, buf_read(f->s, REL_IDX, b, NULL, &id));
        buf_lock(f->s, id, LW_SHARED);
        assert_true(page_is_new(buf_page(f->pool, id)));
        buf_unlock_release(f->s, id);
    }
    assert_int_equal(root_level(f, REL_IDX), level);
    assert_true(level >= min_level);
    assert_check_clean(f, REL_IDX, (uint64_t)n);
    v = split_key(buf, i);
    assert_int_equal(btree_lookup(bt, f->s, &v, &t), KEEL_ENOENT);
    /* What was put back is what reaches the file. */
    btree_close(bt);
    CHECK_OK(f, buf_checkpoint(f->s));
    pool_close(f);
    pool_open(f, 64);
    CHECK_OK(f, btree_open(f->s, REL_IDX, &bt));
    assert_int_equal(root_level(f, REL_IDX), level);
    assert_check_clean(f, REL_IDX, (uint64_t)n);
    assert_int_equal(btree_lookup(bt, f->s, &v, &t), KEEL_ENOENT);
    /* The key that failed goes in now, and the tree grows on. */
    for (int32_t j = i; j < i + 300 && j < SPLIT_KEYS; j++) {
        v = split_key(buf, j);
        CHECK_OK(f, btree_insert(bt, f->s, &v, TID_OF(j), NULL, NULL));
        n++;
    }
    assert_check_clean(f, REL_IDX, (uint64_t)n);
    v = split_key(buf, i);
    CHECK_OK(f, btree_lookup(bt, f->s, &v, &t));
    assert_int_equal(t.block, TID_OF(i).block);
    assert_int_equal(t.offset, TID_OF(i).offset);
    btree_close(bt);
    tupdesc_free(d);
    pool_close(f);
}

static void test_split_victim_fault(void **state)
{
    /* (root's level at least, new pages that succeed): the failure hits a
     * leaf split's own new page (nothing to undo); the new root above a
     * split root leaf; a level-1 root's split above a leaf split; the new
     * root above both; the level-2 root's split above a leaf split and a
     * level-1 split; and the new root above all three. */
    static const uint32_t cases[][2] = {{0, 0}, {0, 1}, {1, 1},
                                        {1, 2}, {2, 2}, {2, 3}};
    fixture *f = *state;

    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        split_fault_run(f, cases[c][0], cases[c][1]);
        tu_storage_close(f->dir, f->sm);
        tu_storage_open(&f->dir, &f->sm, &f->err);
    }
}

/* ---- the checker catches corruption ---------------------------------------
 */

/* Builds an int4 index of n entries (keys 0..n-1) in rel. */
static void build_int4(fixture *f, relnumber_t rel, int64_t n)
{
    keel_type types[] = {KEEL_INT4};
    tuple_desc *d = desc_of(1, types);
    seq_input in = {.i = 0, .n = n, .swap_at = -10};

    CHECK_OK(f, btree_build(f->s, rel, d, false, seq_next, &in, NULL, NULL));
    tupdesc_free(d);
}

/* Finds a leaf (not the root) with at least 10 items; returns its block. */
static blocknum_t find_leaf(fixture *f, relnumber_t rel)
{
    for (blocknum_t b = 1; b < 64; b++) {
        int32_t id;
        bool ok;
        CHECK_OK(f, buf_read(f->s, rel, b, NULL, &id));
        buf_lock(f->s, id, LW_SHARED);
        const void *pg = buf_page(f->pool, id);
        ok = btpage_is_leaf(pg) && !(btpage_opaque_c(pg)->flags & BT_ROOT) &&
             btpage_nitems(pg) >= 10;
        buf_unlock(f->s, id);
        buf_release(f->s, id);
        if (ok)
            return b;
    }
    fail_msg("no leaf found");
    return 0;
}

static void test_check_detects_order(void **state)
{
    fixture *f = *state;
    blocknum_t blk;
    check_result r;
    int32_t id;

    pool_open(f, 32);
    build_int4(f, REL_IDX, 5000);
    assert_check_clean(f, REL_IDX, 5000);
    blk = find_leaf(f, REL_IDX);

    /* Swap two line pointers of the leaf: keys out of order. */
    CHECK_OK(f, buf_read(f->s, REL_IDX, blk, NULL, &id));
    buf_lock(f->s, id, LW_EXCLUSIVE);
    uint16_t *lp = btpage_lp(buf_page(f->pool, id));
    uint16_t x = lp[4];
    lp[4] = lp[5];
    lp[5] = x;
    buf_mark_dirty(f->s, id);
    buf_unlock(f->s, id);
    buf_release(f->s, id);

    r = run_check(f, REL_IDX);
    assert_true(r.problems > 0);
    assert_true(r.named[blk]);
    assert_non_null(strstr(r.first, "item"));

    /* Put it back; then make the high key smaller than the page's keys. */
    CHECK_OK(f, buf_read(f->s, REL_IDX, blk, NULL, &id));
    buf_lock(f->s, id, LW_EXCLUSIVE);
    lp = btpage_lp(buf_page(f->pool, id));
    x = lp[4];
    lp[4] = lp[5];
    lp[5] = x;
    buf_mark_dirty(f->s, id);
    buf_unlock(f->s, id);
    buf_release(f->s, id);
    assert_check_clean(f, REL_IDX, 5000);

    CHECK_OK(f, buf_read(f->s, REL_IDX, blk, NULL, &id));
    buf_lock(f->s, id, LW_EXCLUSIVE);
    bt_item *hk = (bt_item *)btpage_item(buf_page(f->pool, id), BT_HIKEY);
    int32_t small = -5, hk_key;
    memcpy(&hk_key, (char *)hk + BT_LEAF_KEY_OFF, 4);
    memcpy((char *)hk + BT_LEAF_KEY_OFF, &small, 4);
    buf_mark_dirty(f->s, id);
    buf_unlock(f->s, id);
    buf_release(f->s, id);
    r = run_check(f, REL_IDX);
    assert_true(r.problems > 0);
    assert_true(r.named[blk]);

    /* Its key back; then a unique check's dead mark on the high key. */
    CHECK_OK(f, buf_read(f->s, REL_IDX, blk, NULL, &id));
    buf_lock(f->s, id, LW_EXCLUSIVE);
    hk = (bt_item *)btpage_item(buf_page(f->pool, id), BT_HIKEY);
    memcpy((char *)hk + BT_LEAF_KEY_OFF, &hk_key, 4);
    assert_true(btpage_item(buf_page(f->pool, id), 5)->info ==
                btitem_size(btpage_item(buf_page(f->pool, id), 5)));
    btpage_item_set_unique_dead(buf_page(f->pool, id), 5, true);
    buf_mark_dirty(f->s, id);
    buf_unlock(f->s, id);
    buf_release(f->s, id);
    assert_check_clean(f, REL_IDX, 5000); /* on a data item: fine */
    CHECK_OK(f, buf_read(f->s, REL_IDX, blk, NULL, &id));
    buf_lock(f->s, id, LW_EXCLUSIVE);
    btpage_item_set_unique_dead(buf_page(f->pool, id), BT_HIKEY, true);
    buf_mark_dirty(f->s, id);
    buf_unlock(f->s, id);
    buf_release(f->s, id);
    r = run_check(f, REL_IDX);
    assert_true(r.problems > 0);
    assert_true(r.named[blk]);
    assert_non_null(strstr(r.first, "high key marked dead"));
    pool_close(f);
}

static void test_check_detects_disk_corruption(void **state)
{
    fixture *f = *state;
    smgr_rel *r = NULL;
    check_result res;
    blocknum_t blk;

    pool_open(f, 32);
    build_int4(f, REL_IDX, 5000);
    blk = find_leaf(f, REL_IDX);
    CHECK_OK(f, buf_checkpoint(f->s));
    pool_close(f);

    assert_int_equal(smgr_rel_open(f->sm, REL_IDX, &r, &f->err), KEEL_OK);
    tu_flip_bit(smgr_rel_path(r), (long)blk * BLOCK_SIZE + 3000, 2);

    pool_open(f, 32);
    res = run_check(f, REL_IDX);
    assert_true(res.problems > 0);
    assert_true(res.named[blk]);
    pool_close(f);
}

/*
 * A leaf whose items are not where a B-tree page keeps them, written to
 * disk with a right checksum (a bug or a hand edit), is refused as it is
 * read (bt_read_check()): the lookup fails with KEEL_ECORRUPT naming the
 * file, the block and what is wrong, instead of reading what the line
 * pointers say, and the page never becomes valid in the pool (the same
 * lookup fails again, and succeeds once the good page is back).
 * btree_check() reports the page too.
 */
static void test_read_check(void **state)
{
    static const char *const want[] = {
        "item 5: overlaps another item",
        "item 5: offset 8184 out of bounds",
        "item 5: size 4096 out of bounds",
        "item 5: unexpected minus-infinity",
        "level 0 with flags",
        "item 0: a high key marked dead",
        "level 0 without its high key",
        "overlaps another item",
    };
    fixture *f = *state;
    union {
        uint64_t align;
        unsigned char b[BLOCK_SIZE];
    } good, bad;
    keel_value k = {.isnull = false};
    blocknum_t blk;
    check_result cr;
    smgr_rel *r;
    btree *bt;
    tid t;

    pool_open(f, 32);
    build_int4(f, REL_IDX, 5000); /* keys 0, 2, ..., 9998 */
    blk = find_leaf(f, REL_IDX);
    CHECK_OK(f, buf_checkpoint(f->s));
    pool_close(f);
    assert_int_equal(smgr_rel_open(f->sm, REL_IDX, &r, &f->err), KEEL_OK);
    assert_int_equal(smgr_read(r, blk, good.b, &f->err), KEEL_OK);
    assert_false(btpage_rightmost(good.b));
    memcpy(&k.v.i4, (const char *)btpage_item(good.b, 5) + BT_LEAF_KEY_OFF, 4);

    for (size_t c = 0; c < sizeof(want) / sizeof(want[0]); c++) {
        uint16_t *lp;
        bt_item *it;

        bad = good;
        lp = btpage_lp(bad.b);
        it = (bt_item *)btpage_item(bad.b, 5);
        switch (c) {
        case 0:
            lp[5] = lp[4];
            break;
        case 1:
            lp[5] = BLOCK_SIZE - 8;
            break;
        case 2:
            it->info = (uint16_t)((it->info & ~BT_INFO_SIZE) | 4096);
            break;
        case 3:
            it->info |= BT_INFO_MINUS_INF;
            break;
        case 4:
            btpage_opaque(bad.b)->flags &= (uint16_t)~BT_LEAF;
            break;
        case 5:
            btpage_item_set_unique_dead(bad.b, BT_HIKEY, true);
            break;
        case 6: /* no items, the high key included */
            ((page_header *)bad.b)->lower = PAGE_HEADER_SIZE;
            break;
        default: /* the high key where the last item is */
            lp[BT_HIKEY] = lp[btpage_nitems(bad.b) - 1];
            break;
        }
        /* smgr_write() makes the checksum right. */
        assert_int_equal(smgr_write(r, blk, bad.b, &f->err), KEEL_OK);

        pool_open(f, 32);
        CHECK_OK(f, btree_open(f->s, REL_IDX, &bt));
        for (int i = 0; i < 2; i++) {
            const char *msg;
            assert_int_equal(btree_lookup(bt, f->s, &k, &t), KEEL_ECORRUPT);
            msg = buf_session_error(f->s)->msg;
            if (strstr(msg, want[c]) == NULL ||
                strstr(msg, smgr_rel_path(r)) == NULL)
                fail_msg("case %zu: \"%s\" lacks \"%s\" or the file", c, msg,
                         want[c]);
            assert_int_equal(buf_session_pinned(f->s), 0);
        }
        cr = run_check(f, REL_IDX);
        assert_true(cr.problems > 0);
        assert_true(cr.named[blk]);
        btree_close(bt);
        pool_close(f);
    }

    assert_int_equal(smgr_write(r, blk, good.b, &f->err), KEEL_OK);
    pool_open(f, 32);
    CHECK_OK(f, btree_open(f->s, REL_IDX, &bt));
    CHECK_OK(f, btree_lookup(bt, f->s, &k, &t));
    assert_check_clean(f, REL_IDX, 5000);
    btree_close(bt);
    pool_close(f);
}

/* A bad meta page is one problem, not a crash. */
static void test_check_bad_meta(void **state)
{
    fixture *f = *state;
    check_result r;
    int32_t id;
    btree *bt;

    pool_open(f, 32);
    build_int4(f, REL_IDX, 100);
    CHECK_OK(f, buf_read(f->s, REL_IDX, 0, NULL, &id));
    buf_lock(f->s, id, LW_EXCLUSIVE);
    memset((char *)buf_page(f->pool, id) + PAGE_HEADER_SIZE, 0x5a, 4);
    buf_mark_dirty(f->s, id);
    buf_unlock(f->s, id);
    buf_release(f->s, id);
    r = run_check(f, REL_IDX);
    assert_int_equal(r.problems, 1);
    assert_true(r.named[0]);
    assert_int_equal(btree_open(f->s, REL_IDX, &bt), KEEL_ECORRUPT);
    pool_close(f);
}

/* Copies block blk of rel into out, or (write) puts out back in its
 * buffer, as a hand edit of the file that left its checksum right would. */
static void page_swap(fixture *f, relnumber_t rel, blocknum_t blk,
                      unsigned char *out, bool write)
{
    int32_t id;

    CHECK_OK(f, buf_read(f->s, rel, blk, NULL, &id));
    buf_lock(f->s, id, write ? LW_EXCLUSIVE : LW_SHARED);
    if (write) {
        memcpy(buf_page(f->pool, id), out, BLOCK_SIZE);
        buf_mark_dirty(f->s, id);
    } else {
        memcpy(out, buf_page(f->pool, id), BLOCK_SIZE);
    }
    buf_unlock(f->s, id);
    buf_release(f->s, id);
}

/* Scans the whole index; returns the status that ended the scan (KEEL_OK
 * at its end), failing the test if it returns more than max entries. */
static int scan_to_end(fixture *f, btree *bt, uint64_t max)
{
    btree_scan *sc = NULL;
    uint64_t n = 0;
    tid t;
    int rc;

    CHECK_OK(f, btree_scan_begin(bt, f->s, NULL, NULL, &sc));
    while ((rc = btree_scan_next(sc, &t, NULL)) == KEEL_OK)
        if (++n > max)
            fail_msg("the scan returned more than %llu entries",
                     (unsigned long long)max);
    btree_scan_end(sc);
    assert_int_equal(buf_session_pinned(f->s), 0);
    return rc == KEEL_ENOENT ? KEEL_OK : rc;
}

/*
 * Links damaged in ways page checksums cannot catch: a leaf whose
 * right-link points to itself, with a high key that sends a key right
 * (and inserts that split it, whose old right sibling is then the page
 * they hold); a right-link past the end of the index.  Lookups, scans and
 * inserts fail with KEEL_ECORRUPT, instead of looping, waiting for their
 * own locks (an alarm ends the test if one does), reading past the file
 * or tripping an assertion, and leave nothing pinned.  And what only the
 * checker sees: a right-link that skips a sibling, or ends the level early.
 */
static void test_damaged_links(void **state)
{
    fixture *f = *state;
    union {
        uint64_t align;
        unsigned char b[BLOCK_SIZE];
    } good, bad;
    keel_value k;
    int32_t last;
    blocknum_t blk, nblocks;
    smgr_rel *r;
    btree *bt;
    tid t, far = {.block = 0x7FFFFFF0, .offset = 1};

    alarm(120);
    pool_open(f, 32);
    build_int4(f, REL_IDX, 5000); /* keys 0, 2, ..., 9998 */
    CHECK_OK(f, btree_open(f->s, REL_IDX, &bt));
    assert_int_equal(smgr_rel_open(f->sm, REL_IDX, &r, &f->err), KEEL_OK);
    nblocks = smgr_nblocks(r);
    blk = find_leaf(f, REL_IDX);
    page_swap(f, REL_IDX, blk, good.b, false);
    assert_false(btpage_rightmost(good.b));
    memcpy(&last,
           (const char *)btpage_item(good.b,
                                     (uint16_t)(btpage_nitems(good.b) - 1)) +
               BT_LEAF_KEY_OFF,
           4);

    /* Right to itself, and the high key last + 1 (a key the index lacks),
     * so that a search for it moves right. */
    bad = good;
    btpage_opaque(bad.b)->right = blk;
    {
        int32_t hk = last + 1;
        memcpy((char *)btpage_item(bad.b, BT_HIKEY) + BT_LEAF_KEY_OFF, &hk, 4);
    }
    page_swap(f, REL_IDX, blk, bad.b, true);
    assert_int_equal(scan_to_end(f, bt, 100000), KEEL_ECORRUPT);
    assert_non_null(strstr(buf_session_error(f->s)->msg, "loop"));
    k = (keel_value){.isnull = false, .v.i4 = last + 1};
    assert_int_equal(btree_lookup(bt, f->s, &k, &t), KEEL_ECORRUPT);
    assert_int_equal(btree_insert(bt, f->s, &k, far, NULL, NULL),
                     KEEL_ECORRUPT);
    assert_int_equal(buf_session_pinned(f->s), 0);
    /* Keys that go into the page until it splits: the split's old right
     * sibling is the page itself, which the insert holds. */
    {
        int rc = KEEL_OK;
        int32_t first;
        memcpy(&first,
               (const char *)btpage_item(good.b, btpage_first(good.b)) +
                   BT_LEAF_KEY_OFF,
               4);
        for (k.v.i4 = first + 1; rc == KEEL_OK && k.v.i4 < last; k.v.i4 += 2)
            rc = btree_insert(bt, f->s, &k, far, NULL, NULL);
        assert_int_equal(rc, KEEL_ECORRUPT);
        assert_non_null(strstr(buf_session_error(f->s)->msg, "holds locked"));
        assert_int_equal(buf_session_pinned(f->s), 0);
    }

    bad = good;
    btpage_opaque(bad.b)->right = nblocks + 10;
    page_swap(f, REL_IDX, blk, bad.b, true);
    assert_int_equal(scan_to_end(f, bt, 100000), KEEL_ECORRUPT);
    assert_non_null(strstr(buf_session_error(f->s)->msg, "past the end"));

    /* What only the checker sees, the leaf level disagreeing with its
     * parent's downlinks: a leaf's right-link that skips its sibling, and
     * one that ends the level early. */
    {
        union {
            uint64_t align;
            unsigned char b[BLOCK_SIZE];
        } sib;
        blocknum_t right = btpage_opaque(good.b)->right;
        check_result cr;

        page_swap(f, REL_IDX, right, sib.b, false);
        assert_false(btpage_rightmost(sib.b));
        bad = good;
        btpage_opaque(bad.b)->right = btpage_opaque(sib.b)->right;
        page_swap(f, REL_IDX, blk, bad.b, true);
        cr = run_check(f, REL_IDX);
        assert_true(cr.problems >= 1);
        assert_non_null(strstr(cr.first, "parent level's next downlink is to"));
        /* Made a rightmost leaf: no right-link, no high key. */
        bad = good;
        btpage_opaque(bad.b)->right = BT_NONE;
        btpage_remove(bad.b, BT_HIKEY);
        page_swap(f, REL_IDX, blk, bad.b, true);
        cr = run_check(f, REL_IDX);
        assert_true(cr.problems >= 1);
        assert_non_null(strstr(cr.first, "level 0 ends here, but the parent "
                                         "level has downlinks to"));
    }

    page_swap(f, REL_IDX, blk, good.b, true);
    assert_check_clean(f, REL_IDX, 5000);
    btree_close(bt);
    pool_close(f);
    alarm(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_model_int4, setup, teardown),
        cmocka_unit_test_setup_teardown(test_model_name_int4, setup, teardown),
        cmocka_unit_test_setup_teardown(test_model_text_deep, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sequential_inserts, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unique, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unique_dead_marks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unique_across_pages, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_duplicates_tid_order, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_search_last_two_columns, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_prefix_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bulk_build, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bulk_build_wide_keys, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lookup_skewed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lookup_int_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bulk_build_rejects, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_persistence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_above_descent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_split_victim_fault, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_check_detects_order, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_check_detects_disk_corruption,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_bad_meta, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_links, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_check, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
