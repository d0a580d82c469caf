/*
 * test_catcache.c: the catalog caches (src/cache): hits, misses, negative
 * entries, lists, references and dead entries, invalidation through the
 * queue and a transaction's own pending list, queue overflow, pruning by
 * age and by memory target, exact accounting, and a randomized comparison
 * with direct catalog scans.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/tuple.h"
#include "cache/syscache.h"
#include "engine/engine.h"

/* A session of the test: its buffer and transaction sessions, its caches,
 * and the catalog_txn of its running transaction. */
typedef struct tsess {
    buf_session *bs;
    txn_session *ts;
    syscache *sc;
    catalog_txn ct;
    inval_pending pend;
    uint32_t applied; /* messages of pend applied to sc */
    bool writing;
} tsess;

/* One database for all tests (created once: creating one syncs files);
 * tests keep to their own oids and names. */
static char *g_dir;
static keel_db *g_db;

static int group_setup(void **state)
{
    keel_db_options dbo;
    keel_error e;

    (void)state;
    g_dir = tu_mkdtemp();
    keel_db_options_init(&dbo);
    dbo.dir = g_dir;
    dbo.pool_mb = 8;
    if (keel_db_create(&dbo, &e) != KEEL_OK ||
        keel_db_open(&dbo, &g_db, &e) != KEEL_OK) {
        print_error("cannot create a database: %s\n", e.msg);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    keel_error e;
    int rc = keel_db_close(g_db, &e);

    (void)state;
    tu_dir_remove(g_dir);
    return rc == KEEL_OK ? 0 : -1;
}

typedef struct fx {
    keel_db *db;
    inval_queue *q;
    tsess s[2];
    uint64_t now; /* the test clock */
} fx;

static uint64_t fx_clock(void *ctx)
{
    return ((fx *)ctx)->now;
}

/* Opens a fresh database and two sessions with caches over a queue of
 * qcap messages. */
static fx *fx_open(uint32_t qcap, const syscache_options *o)
{
    fx *f = calloc(1, sizeof(*f));
    kerr err;

    assert_non_null(f);
    f->db = g_db;
    assert_int_equal(inval_queue_create(qcap, &f->q, &err), KEEL_OK);
    for (int i = 0; i < 2; i++) {
        tsess *s = &f->s[i];
        assert_int_equal(buf_session_create(f->db->pool, &s->bs, &err),
                         KEEL_OK);
        assert_int_equal(txn_session_attach(f->db->txn, s->bs, &s->ts, &err),
                         KEEL_OK);
        assert_int_equal(syscache_create(f->db->cat, f->q, o, &s->sc, &err),
                         KEEL_OK);
        syscache_set_clock(s->sc, fx_clock, f);
    }
    return f;
}

static void fx_close(fx *f)
{
    for (int i = 0; i < 2; i++) {
        syscache_destroy(f->s[i].sc);
        inval_pending_free(&f->s[i].pend);
        txn_session_detach(f->s[i].ts);
        buf_session_destroy(f->s[i].bs);
    }
    inval_queue_destroy(f->q);
    free(f);
}

/* Fills s->ct from the transaction's current snapshot. */
static void fx_ct(fx *f, tsess *s)
{
    kerr err;

    (void)f;
    s->ct.bs = s->bs;
    assert_int_equal(txn_visibility(s->ts, &s->ct.vis, &err), KEEL_OK);
    s->ct.xid = XID_INVALID;
    s->ct.inval = NULL;
    s->ct.bootstrap = false;
}

/* Begins a transaction in session i the way the engine must: snapshot,
 * then the caches, again with a new snapshot while messages were applied.
 * Returns how many rounds consumed messages. */
static int fx_begin(fx *f, int i)
{
    tsess *s = &f->s[i];
    bool consumed = true;
    int rounds = 0;
    kerr err;

    assert_int_equal(txn_begin(s->ts, &err), KEEL_OK);
    fx_ct(f, s);
    for (;;) {
        assert_int_equal(syscache_txn_begin(s->sc, &s->ct, &consumed), KEEL_OK);
        if (!consumed)
            break;
        rounds++;
        assert_int_equal(txn_refresh_snapshot(s->ts, &err), KEEL_OK);
        fx_ct(f, s);
    }
    s->writing = false;
    return rounds;
}

/* Ends session i's read-only transaction: the cache's, then the
 * transaction (aborted: it wrote nothing). */
static void fx_end(fx *f, int i)
{
    syscache_txn_end(f->s[i].sc);
    txn_abort(f->s[i].ts, NULL);
}

/* Makes session i's transaction a writer (an xid, a pending list). */
static void fx_write(fx *f, int i)
{
    tsess *s = &f->s[i];
    xid_t xid;
    kerr err;

    if (s->writing)
        return;
    assert_int_equal(txn_assign_xid(s->ts, &xid, &err), KEEL_OK);
    assert_int_equal(txn_visibility(s->ts, &s->ct.vis, &err), KEEL_OK);
    s->ct.xid = xid;
    s->ct.inval = &s->pend;
    s->applied = 0;
    s->writing = true;
}

static void fx_commit(fx *f, int i)
{
    tsess *s = &f->s[i];
    kerr err;
    int rc;

    inval_commit_begin(f->q, &s->pend);
    rc = txn_commit(s->ts, &err);
    inval_commit_end(f->q, &s->pend, rc == KEEL_OK);
    assert_int_equal(rc, KEEL_OK);
    syscache_txn_end(s->sc);
}

static void fx_abort(fx *f, int i)
{
    tsess *s = &f->s[i];

    syscache_apply_pending(s->sc, &s->pend);
    inval_pending_clear(&s->pend);
    txn_abort(s->ts, NULL);
    syscache_txn_end(s->sc);
}

/*
 * Applies session i's own messages to its caches after a change, as the
 * engine does.  The pending list is deduplicated: a change whose messages
 * were already on it adds none, and an entry cached since their first
 * application would stay, so unless the change added one message per
 * index (nidx) the whole list is applied again; otherwise the new ones
 * suffice (and keep long transactions linear).
 */
static void fx_apply_new(fx *f, int i, uint32_t nidx)
{
    tsess *s = &f->s[i];
    inval_pending news = s->pend;

    (void)f;
    if (!s->pend.overflow && s->pend.count - s->applied >= nidx) {
        news.msgs += s->applied;
        news.count -= s->applied;
    }
    syscache_apply_pending(s->sc, &news);
    s->applied = s->pend.count;
}

/* Inserts namespace (oid, name) in session i's transaction. */
static int fx_ns_insert(fx *f, int i, oid_t oid, const char *name)
{
    tsess *s = &f->s[i];
    catalog_namespace r = {.oid = oid};
    keel_value vals[2];
    int rc;

    fx_write(f, i);
    snprintf(r.name, sizeof(r.name), "%s", name);
    catalog_namespace_values(&r, vals);
    rc = catalog_insert(f->db->cat, &s->ct, CAT_NAMESPACE, vals);
    fx_apply_new(f, i, 2);
    return rc;
}

/* Deletes the namespace called name in session i's transaction. */
static int fx_ns_delete(fx *f, int i, const char *name)
{
    tsess *s = &f->s[i];
    catalog_namespace r;
    keel_value vals[2];
    int rc;

    fx_write(f, i);
    rc = catalog_namespace_by_name(f->db->cat, &s->ct, name, &r);
    if (rc != KEEL_OK)
        return rc;
    catalog_namespace_values(&r, vals);
    rc = catalog_delete(f->db->cat, &s->ct, CAT_NAMESPACE, r.tid, vals);
    fx_apply_new(f, i, 2);
    return rc;
}

/* Inserts attribute (relid, attnum, name) in session i's transaction. */
static int fx_att_insert(fx *f, int i, oid_t relid, uint16_t attnum,
                         const char *name)
{
    tsess *s = &f->s[i];
    catalog_attribute a = {
        .relid = relid, .attnum = attnum, .type = KEEL_INT4, .notnull = false};
    keel_value vals[6];
    int rc;

    fx_write(f, i);
    snprintf(a.name, sizeof(a.name), "%s", name);
    catalog_attribute_values(&a, vals);
    rc = catalog_insert(f->db->cat, &s->ct, CAT_ATTRIBUTE, vals);
    fx_apply_new(f, i, 2);
    return rc;
}

typedef struct att_find {
    catalog_attribute a;
    bool found;
} att_find;

static int att_first(void *arg, const heap_row *row, bool *stop)
{
    att_find *af = arg;

    catalog_attribute_decode(row, &af->a);
    af->found = true;
    *stop = true;
    return KEEL_OK;
}

/* Deletes attribute (relid, attnum) in session i's transaction. */
static int fx_att_delete(fx *f, int i, oid_t relid, uint16_t attnum)
{
    tsess *s = &f->s[i];
    keel_value keys[2], vals[6];
    att_find af = {.found = false};
    int rc;

    fx_write(f, i);
    memset(keys, 0, sizeof(keys));
    keys[0].v.oid = relid;
    keys[1].v.i2 = (int16_t)attnum;
    rc = catalog_index_scan(f->db->cat, &s->ct, CAT_ATTRIBUTE, 0, keys, 2,
                            att_first, &af);
    if (rc != KEEL_OK)
        return rc;
    if (!af.found)
        return KEEL_ENOENT;
    catalog_attribute_values(&af.a, vals);
    rc = catalog_delete(f->db->cat, &s->ct, CAT_ATTRIBUTE, af.a.tid, vals);
    fx_apply_new(f, i, 2);
    return rc;
}

static syscache_stats stats_of(syscache *sc)
{
    syscache_stats st;

    syscache_get_stats(sc, &st);
    return st;
}

/* Every chain of every cache of sc is whole (see catcache_chains_valid). */
static void chains_ok(syscache *sc)
{
    char why[128];

    for (int id = 0; id < CACHE_COUNT; id++)
        if (!catcache_chains_valid(&sc->caches[id], why, sizeof(why)))
            fail_msg("cache %d: %s", id, why);
}

/* The session's memory is whole (catcache_memory_valid()) and its slabs
 * hold exactly the entries, lists and bucket arrays of up to
 * CATCACHE_CHUNK_MAX bytes that the caches and the dead ring hold. */
static void memory_ok(syscache *sc)
{
    char why[160];
    uint64_t pieces, want = 0;

    if (!catcache_memory_valid(&sc->sess, &pieces, why, sizeof(why)))
        fail_msg("memory: %s", why);
    for (int id = 0; id < CACHE_COUNT; id++) {
        const catcache *cc = &sc->caches[id];
        want +=
            ((size_t)cc->mask + 1) * sizeof(*cc->buckets) <= CATCACHE_CHUNK_MAX;
        want += ((size_t)cc->lmask + 1) * sizeof(*cc->lbuckets) <=
                CATCACHE_CHUNK_MAX;
        for (uint32_t b = 0; b <= cc->mask; b++)
            for (const catcache_entry *e = cc->buckets[b]; e; e = e->next)
                want += e->bytes <= CATCACHE_CHUNK_MAX;
        for (uint32_t b = 0; b <= cc->lmask; b++)
            for (const catcache_entry *e = cc->lbuckets[b]; e; e = e->next)
                want += e->bytes <= CATCACHE_CHUNK_MAX;
    }
    for (const catcache_link *l = sc->sess.dead.next; l != &sc->sess.dead;
         l = l->next)
        want += ((const catcache_entry *)((const char *)l -
                                          offsetof(catcache_entry, q)))
                    ->bytes <= CATCACHE_CHUNK_MAX;
    if (pieces != want)
        fail_msg("memory: %llu pieces in use, %llu held",
                 (unsigned long long)pieces, (unsigned long long)want);
}

/* ------------------------------------------------------------------ */

static void test_hits_misses_negative(void **state)
{
    syscache_options o = {.prune_min_age = -1, .memory_target = 0};
    fx *f = fx_open(64, &o);
    syscache *sc = f->s[0].sc;
    catcache_entry *e, *e2;
    syscache_stats st;
    const catalog_relation *rel;
    const catalog_attribute *att;
    const catalog_namespace *ns;
    const catalog_indexdef *ix;

    (void)state;
    fx_begin(f, 0);
    /* A miss builds a positive entry; the same search then hits it. */
    assert_int_equal(syscache_search2(sc, CACHE_CLASS_NAME,
                                      SYSCACHE_NAME("keel_class"),
                                      NAMESPACE_CATALOG, &e),
                     KEEL_OK);
    rel = syscache_row(e);
    assert_int_equal(rel->oid, CATALOG_CLASS_OID);
    assert_string_equal(rel->name, "keel_class");
    assert_int_equal(rel->natts, 8);
    assert_int_equal(syscache_search2(sc, CACHE_CLASS_NAME,
                                      SYSCACHE_NAME("keel_class"),
                                      NAMESPACE_CATALOG, &e2),
                     KEEL_OK);
    assert_ptr_equal(e, e2);
    syscache_release(sc, e2);
    syscache_release(sc, e);
    st = stats_of(sc);
    assert_int_equal(st.misses, 1);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.positive_entries, 1);
    /* The miss's scan and row stay for the next miss, which reuses
     * them (the catalog read allocates nothing), and are free between. */
    {
        btree_scan *scan = sc->spare.scan;
        void *data = sc->spare.row.data;
        assert_non_null(scan);
        assert_non_null(data);
        assert_false(sc->spare.row_busy);
        assert_int_equal(syscache_search2(sc, CACHE_CLASS_NAME,
                                          SYSCACHE_NAME("keel_index"),
                                          NAMESPACE_CATALOG, &e),
                         KEEL_OK);
        syscache_release(sc, e);
        assert_ptr_equal(sc->spare.scan, scan);
        assert_ptr_equal(sc->spare.row.data, data);
        assert_false(sc->spare.row_busy);
        st = stats_of(sc);
        assert_int_equal(st.misses, 2);
    }

    /* Every cache with a single-row search. */
    assert_int_equal(
        syscache_search1(sc, CACHE_CLASS_OID, CATALOG_INDEX_OID, &e), KEEL_OK);
    assert_string_equal(((const catalog_relation *)syscache_row(e))->name,
                        "keel_index");
    syscache_release(sc, e);
    assert_int_equal(
        syscache_search1(sc, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("public"), &e),
        KEEL_OK);
    ns = syscache_row(e);
    assert_int_equal(ns->oid, NAMESPACE_PUBLIC);
    syscache_release(sc, e);
    assert_int_equal(
        syscache_search1(sc, CACHE_NAMESPACE_OID, NAMESPACE_CATALOG, &e),
        KEEL_OK);
    assert_string_equal(((const catalog_namespace *)syscache_row(e))->name,
                        "keel_catalog");
    syscache_release(sc, e);
    assert_int_equal(
        syscache_search2(sc, CACHE_ATTRIBUTE_NUM, CATALOG_CLASS_OID, 2, &e),
        KEEL_OK);
    att = syscache_row(e);
    assert_string_equal(att->name, "name");
    assert_int_equal(att->type, KEEL_NAME);
    syscache_release(sc, e);
    assert_int_equal(syscache_search2(sc, CACHE_ATTRIBUTE_NAME,
                                      CATALOG_CLASS_OID,
                                      SYSCACHE_NAME("relnumber"), &e),
                     KEEL_OK);
    assert_int_equal(((const catalog_attribute *)syscache_row(e))->attnum, 4);
    syscache_release(sc, e);
    assert_int_equal(
        syscache_search1(sc, CACHE_INDEX_OID, CATALOG_CLASS_NAME_IDX, &e),
        KEEL_OK);
    ix = syscache_row(e);
    assert_int_equal(ix->tableoid, CATALOG_CLASS_OID);
    assert_int_equal(ix->nkeys, 2);
    assert_int_equal(ix->keys[0], 2);
    assert_int_equal(ix->keys[1], 3);
    syscache_release(sc, e);

    /* Negative entries: a miss remembers, the next search hits it. */
    st = stats_of(sc);
    assert_int_equal(
        syscache_search3(sc, CACHE_STATISTIC, CATALOG_CLASS_OID, 1, 0, &e),
        KEEL_ENOENT);
    assert_null(e);
    assert_int_equal(
        syscache_search1(sc, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("nope"), &e),
        KEEL_ENOENT);
    assert_int_equal(
        syscache_search3(sc, CACHE_STATISTIC, CATALOG_CLASS_OID, 1, 0, &e),
        KEEL_ENOENT);
    assert_int_equal(
        syscache_search1(sc, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("nope"), &e),
        KEEL_ENOENT);
    {
        syscache_stats st2 = stats_of(sc);
        assert_int_equal(st2.misses, st.misses + 2);
        assert_int_equal(st2.negative_hits, st.negative_hits + 2);
        assert_int_equal(st2.negative_entries, st.negative_entries + 2);
    }

    /* Keys no row can have: not found, nothing cached. */
    st = stats_of(sc);
    assert_int_equal(syscache_search1(sc, CACHE_CLASS_OID,
                                      (syscache_key)UINT64_C(0x100000014), &e),
                     KEEL_ENOENT);
    assert_int_equal(
        syscache_search2(sc, CACHE_ATTRIBUTE_NUM, CATALOG_CLASS_OID, 65538, &e),
        KEEL_ENOENT);
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_NAME,
                                      SYSCACHE_NAME("a_name_far_longer_than_"
                                                    "sixty_three_bytes_which_"
                                                    "no_catalog_row_holds"),
                                      &e),
                     KEEL_ENOENT);
    assert_int_equal(stats_of(sc).entries, st.entries);

    /* A single-row search on the list-only cache is refused. */
    assert_int_equal(
        syscache_search1(sc, CACHE_INDEX_TABLE, CATALOG_CLASS_OID, &e),
        KEEL_EINVAL);
    /* Searches by array. */
    {
        syscache_key k[2] = {SYSCACHE_NAME("keel_index"), NAMESPACE_CATALOG};
        assert_int_equal(syscache_search(sc, CACHE_CLASS_NAME, k, &e), KEEL_OK);
        assert_int_equal(((const catalog_relation *)syscache_row(e))->oid,
                         CATALOG_INDEX_OID);
        syscache_release(sc, e);
    }
    syscache_txn_end(sc);

    /* Hits need no transaction; misses do. */
    assert_int_equal(
        syscache_search1(sc, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("public"), &e),
        KEEL_OK);
    syscache_release(sc, e);
    assert_int_equal(
        syscache_search1(sc, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("other"), &e),
        KEEL_EINVAL);
    txn_abort(f->s[0].ts, NULL);
    fx_close(f);
}

/* Statistics rows: decoded with their most common values, found by three
 * keys and listed by relation. */
static void test_statistics(void **state)
{
    syscache_options o = {.prune_min_age = -1, .memory_target = 0};
    fx *f = fx_open(64, &o);
    syscache *sc = f->s[0].sc;
    catalog_statistic st = {.relid = 90000,
                            .attnum = 2,
                            .inherited = true,
                            .nullfrac = 0.25,
                            .ndistinct = 7,
                            .nmcv = 2,
                            .mcv = {"odd", "even"},
                            .mcf = {0.5, 0.25}};
    keel_value vals[13];
    catcache_entry *e;
    catcache_list *l;
    const catalog_statistic *r;
    syscache_key k = 90000;

    (void)state;
    fx_begin(f, 0);
    assert_int_equal(syscache_search3(sc, CACHE_STATISTIC, 90000, 2, true, &e),
                     KEEL_ENOENT);
    fx_write(f, 0);
    catalog_statistic_values(&st, vals);
    assert_int_equal(
        catalog_insert(f->db->cat, &f->s[0].ct, CAT_STATISTIC, vals), KEEL_OK);
    st.attnum = 1;
    st.inherited = false;
    st.nmcv = 0;
    catalog_statistic_values(&st, vals);
    assert_int_equal(
        catalog_insert(f->db->cat, &f->s[0].ct, CAT_STATISTIC, vals), KEEL_OK);
    fx_commit(f, 0);
    fx_begin(f, 0);
    assert_int_equal(syscache_search3(sc, CACHE_STATISTIC, 90000, 2, true, &e),
                     KEEL_OK);
    r = syscache_row(e);
    assert_int_equal(r->relid, 90000);
    assert_int_equal(r->attnum, 2);
    assert_true(r->inherited);
    assert_true(r->nullfrac == 0.25 && r->ndistinct == 7);
    assert_int_equal(r->nmcv, 2);
    assert_string_equal(r->mcv[1], "even");
    assert_true(r->mcf[0] == 0.5 && r->mcf[1] == 0.25);
    syscache_release(sc, e);
    assert_int_equal(syscache_search3(sc, CACHE_STATISTIC, 90000, 2, false, &e),
                     KEEL_ENOENT);
    assert_int_equal(syscache_list(sc, CACHE_STATISTIC, 1, &k, &l), KEEL_OK);
    assert_int_equal(syscache_list_count(l), 2);
    r = syscache_list_row(l, 0);
    assert_int_equal(r->attnum, 1);
    assert_int_equal(r->nmcv, 0);
    r = syscache_list_row(l, 1);
    assert_int_equal(r->attnum, 2);
    syscache_list_release(sc, l);
    fx_end(f, 0);
    fx_close(f);
}

/* The cache's hash of a key equals catalog_key_hash() of the same key. */
static void test_hash_agrees(void **state)
{
    syscache_options o;
    fx *f;
    tuple_desc *d;
    kerr err;
    keel_value kv[3];
    uint64_t seed = 12345;

    (void)state;
    syscache_options_default(&o);
    f = fx_open(64, &o);
    for (int round = 0; round < 200; round++) {
        char name[40];
        uint32_t oid = (uint32_t)tu_rand(&seed);
        uint16_t num = (uint16_t)tu_rand(&seed);
        bool b = tu_rand(&seed) & 1;
        snprintf(name, sizeof(name), "n%llu",
                 (unsigned long long)(tu_rand(&seed) % 100000));
        memset(kv, 0, sizeof(kv));

        /* (name, oid): keel_class by name */
        d = tupdesc_alloc(2);
        assert_int_equal(tupdesc_set(d, 0, KEEL_NAME, 0, true, &err), KEEL_OK);
        assert_int_equal(tupdesc_set(d, 1, KEEL_OID, 0, true, &err), KEEL_OK);
        kv[0].v.s.ptr = name;
        kv[0].v.s.len = (uint32_t)strlen(name);
        kv[1].v.oid = oid;
        {
            syscache_key k[2] = {SYSCACHE_NAME(name), oid};
            assert_int_equal(syscache_hash(f->s[0].sc, CACHE_CLASS_NAME, k),
                             catalog_key_hash(d, kv));
        }
        tupdesc_free(d);

        /* (oid, int2, bool): keel_statistic */
        d = tupdesc_alloc(3);
        assert_int_equal(tupdesc_set(d, 0, KEEL_OID, 0, true, &err), KEEL_OK);
        assert_int_equal(tupdesc_set(d, 1, KEEL_INT2, 0, true, &err), KEEL_OK);
        assert_int_equal(tupdesc_set(d, 2, KEEL_BOOL, 0, true, &err), KEEL_OK);
        kv[0].v.oid = oid;
        kv[1].v.i2 = (int16_t)num;
        kv[2].v.b = b;
        {
            syscache_key k[3] = {oid, num, b};
            assert_int_equal(syscache_hash(f->s[0].sc, CACHE_STATISTIC, k),
                             catalog_key_hash(d, kv));
        }
        tupdesc_free(d);

        /* (oid, name): keel_attribute by name, the name padded by a NUL
         * inside its length as catalog rows may carry it */
        d = tupdesc_alloc(2);
        assert_int_equal(tupdesc_set(d, 0, KEEL_OID, 0, true, &err), KEEL_OK);
        assert_int_equal(tupdesc_set(d, 1, KEEL_NAME, 0, true, &err), KEEL_OK);
        {
            char padded[64] = {0};
            syscache_key k[2] = {oid, SYSCACHE_NAME(name)};
            memcpy(padded, name, strlen(name));
            kv[0].v.oid = oid;
            kv[1].v.s.ptr = padded;
            kv[1].v.s.len = sizeof(padded);
            assert_int_equal(syscache_hash(f->s[0].sc, CACHE_ATTRIBUTE_NAME, k),
                             catalog_key_hash(d, kv));
        }
        tupdesc_free(d);
    }

    /* Multi-key hashes spread: 10,000 (relid, attnum) pairs of a grid over
     * 4096 buckets load none of them much above the mean of 2.4. */
    {
        uint16_t *load = calloc(4096, sizeof(*load));
        uint32_t max = 0;
        assert_non_null(load);
        for (syscache_key rel = 16384; rel < 16384 + 100; rel++) {
            for (syscache_key att = 1; att <= 100; att++) {
                syscache_key k[2] = {rel, att};
                uint32_t b =
                    syscache_hash(f->s[0].sc, CACHE_ATTRIBUTE_NUM, k) & 4095;
                if (++load[b] > max)
                    max = load[b];
            }
        }
        assert_true(max <= 14);
        free(load);
    }
    fx_close(f);
}

static void test_lists(void **state)
{
    syscache_options o = {.prune_min_age = -1, .memory_target = 0};
    fx *f = fx_open(64, &o);
    syscache *sc = f->s[0].sc;
    catcache_list *l, *l2;
    syscache_key k = CATALOG_CLASS_OID;
    syscache_stats st;

    (void)state;
    fx_begin(f, 0);
    assert_int_equal(syscache_list(sc, CACHE_ATTRIBUTE_NUM, 1, &k, &l),
                     KEEL_OK);
    assert_int_equal(syscache_list_count(l), 8);
    for (uint32_t i = 0; i < 8; i++) {
        const catalog_attribute *a = syscache_list_row(l, i);
        assert_int_equal(a->relid, CATALOG_CLASS_OID);
        assert_int_equal(a->attnum, i + 1);
    }
    assert_string_equal(
        ((const catalog_attribute *)syscache_list_row(l, 1))->name, "name");
    assert_int_equal(syscache_list(sc, CACHE_ATTRIBUTE_NUM, 1, &k, &l2),
                     KEEL_OK);
    assert_ptr_equal(l, l2);
    syscache_list_release(sc, l2);
    st = stats_of(sc);
    assert_int_equal(st.list_misses, 1);
    assert_int_equal(st.list_hits, 1);
    assert_int_equal(st.lists, 1);

    /* The indexes of a table. */
    assert_int_equal(syscache_list(sc, CACHE_INDEX_TABLE, 1, &k, &l2), KEEL_OK);
    assert_int_equal(syscache_list_count(l2), 2);
    assert_int_equal(
        ((const catalog_indexdef *)syscache_list_row(l2, 0))->tableoid,
        CATALOG_CLASS_OID);
    syscache_list_release(sc, l2);
    /* An empty list. */
    {
        syscache_key none = 999999;
        assert_int_equal(syscache_list(sc, CACHE_INDEX_TABLE, 1, &none, &l2),
                         KEEL_OK);
        assert_int_equal(syscache_list_count(l2), 0);
        syscache_list_release(sc, l2);
    }
    /* Bad key counts (more than the cache's, or none): refused, no list. */
    {
        syscache_key two[2] = {k, 1};
        l2 = (catcache_list *)&two;
        assert_int_equal(syscache_list(sc, CACHE_INDEX_TABLE, 2, two, &l2),
                         KEEL_EINVAL);
        assert_null(l2);
        l2 = (catcache_list *)&two;
        assert_int_equal(syscache_list(sc, CACHE_INDEX_TABLE, 0, two, &l2),
                         KEEL_EINVAL);
        assert_null(l2);
    }

    /* A message of the cache drops its lists; a referenced one lives on,
     * dead, until released. */
    st = stats_of(sc);
    inval_queue_append_one(f->q, CACHE_ATTRIBUTE_NUM, 12345);
    fx_end(f, 0);
    assert_int_equal(fx_begin(f, 0), 1);
    assert_int_equal(stats_of(sc).lists, st.lists); /* still held */
    assert_int_equal(syscache_list_count(l), 8);
    assert_int_equal(syscache_list(sc, CACHE_ATTRIBUTE_NUM, 1, &k, &l2),
                     KEEL_OK);
    assert_ptr_not_equal(l, l2);
    assert_int_equal(syscache_list_count(l2), 8);
    syscache_list_release(sc, l);
    assert_int_equal(stats_of(sc).lists, st.lists); /* old gone, new in */
    /* Other caches' messages leave it. */
    inval_queue_append_one(f->q, CACHE_ATTRIBUTE_NAME, 12345);
    fx_end(f, 0);
    fx_begin(f, 0);
    assert_int_equal(syscache_list(sc, CACHE_ATTRIBUTE_NUM, 1, &k, &l),
                     KEEL_OK);
    assert_ptr_equal(l, l2);
    syscache_list_release(sc, l);
    syscache_list_release(sc, l2);

    /* More lists than twice the chains they start with (16): the chains
     * double, and every list is still found, the same one. */
    {
        enum { NL = 80 };
        catcache_list *many[NL];
        syscache_stats before = stats_of(sc), after;

        for (syscache_key i = 0; i < NL; i++) {
            syscache_key key = 1000000 + i * 7;
            assert_int_equal(
                syscache_list(sc, CACHE_INDEX_TABLE, 1, &key, &many[i]),
                KEEL_OK);
            assert_int_equal(syscache_list_count(many[i]), 0);
            syscache_list_release(sc, many[i]);
        }
        after = stats_of(sc);
        assert_int_equal(after.lists, before.lists + NL);
        assert_int_equal(after.list_misses, before.list_misses + NL);
        /* 16 chains became 64 (doubled twice). */
        assert_int_equal(after.bucket_bytes,
                         before.bucket_bytes + 48 * sizeof(void *));
        for (syscache_key i = 0; i < NL; i++) {
            syscache_key key = 1000000 + i * 7;
            assert_int_equal(syscache_list(sc, CACHE_INDEX_TABLE, 1, &key, &l),
                             KEEL_OK);
            assert_ptr_equal(l, many[i]);
            syscache_list_release(sc, l);
        }
        assert_int_equal(stats_of(sc).list_hits, after.list_hits + NL);
        assert_int_equal(stats_of(sc).list_misses, after.list_misses);
    }
    fx_end(f, 0);
    fx_close(f);
}

/* A referenced entry survives invalidation (dead) until released; the
 * accounting includes it until then. */
static void test_refcount_dead(void **state)
{
    syscache_options o = {.prune_min_age = -1, .memory_target = 0};
    fx *f = fx_open(64, &o);
    syscache *sc = f->s[0].sc;
    catcache_entry *e, *e2;
    syscache_stats st0, st;
    syscache_key k = NAMESPACE_PUBLIC;

    (void)state;
    st0 = stats_of(sc);
    fx_begin(f, 0);
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e), KEEL_OK);
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e2),
                     KEEL_OK);
    assert_ptr_equal(e, e2);
    assert_int_equal(catcache_refcount(e), 2);
    syscache_release(sc, e2);
    assert_int_equal(catcache_refcount(e), 1);
    st = stats_of(sc);
    assert_int_equal(st.positive_bytes,
                     sizeof(catcache_entry) + sizeof(catalog_namespace));

    /* Invalidate it through the queue. */
    inval_queue_append_one(f->q, CACHE_NAMESPACE_OID,
                           syscache_hash(sc, CACHE_NAMESPACE_OID, &k));
    fx_end(f, 0);
    fx_begin(f, 0);
    assert_true(e->dead);
    assert_string_equal(((const catalog_namespace *)syscache_row(e))->name,
                        "public");
    memory_ok(sc); /* the dead entry still holds its piece */
    st = stats_of(sc);
    assert_int_equal(st.invalidations, 1);
    assert_int_equal(st.positive_entries, 1);
    /* A new search builds a new entry. */
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e2),
                     KEEL_OK);
    assert_ptr_not_equal(e, e2);
    assert_int_equal(stats_of(sc).positive_entries, 2);
    syscache_release(sc, e);
    assert_int_equal(stats_of(sc).positive_entries, 1);
    syscache_release(sc, e2);

    /* A reset (own pending list overflowed) frees everything unreferenced
     * and marks the rest dead. */
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e), KEEL_OK);
    assert_int_equal(
        syscache_search1(sc, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("zz"), &e2),
        KEEL_ENOENT);
    {
        inval_pending p = {.overflow = true};
        syscache_apply_pending(sc, &p);
    }
    st = stats_of(sc);
    assert_int_equal(st.resets, 1);
    assert_int_equal(st.negative_entries, 0);
    assert_int_equal(st.positive_entries, 1);
    assert_true(e->dead);
    syscache_release(sc, e);
    st = stats_of(sc);
    assert_int_equal(st.bytes, st.bucket_bytes);
    assert_int_equal(st.bytes, st0.bytes);
    assert_int_equal(st.positive_bytes + st.negative_bytes + st.list_bytes, 0);

    /* Two references across the invalidation: the first release leaves
     * the dead entry readable and counted, the second frees it. */
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e), KEEL_OK);
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e2),
                     KEEL_OK);
    assert_ptr_equal(e, e2);
    inval_queue_append_one(f->q, CACHE_NAMESPACE_OID,
                           syscache_hash(sc, CACHE_NAMESPACE_OID, &k));
    fx_end(f, 0);
    fx_begin(f, 0);
    assert_true(e->dead);
    syscache_release(sc, e2);
    assert_int_equal(catcache_refcount(e), 1);
    assert_string_equal(((const catalog_namespace *)syscache_row(e))->name,
                        "public");
    assert_int_equal(stats_of(sc).positive_entries, 1);
    syscache_release(sc, e);
    assert_int_equal(stats_of(sc).positive_entries, 0);
    assert_int_equal(stats_of(sc).bytes, st0.bytes);

    /* A session that ends holding a reference to a dead entry frees it
     * too (the leak check of the sanitizer build would see it if not). */
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e), KEEL_OK);
    inval_queue_append_one(f->q, CACHE_NAMESPACE_OID,
                           syscache_hash(sc, CACHE_NAMESPACE_OID, &k));
    fx_end(f, 0);
    fx_begin(f, 0);
    assert_true(e->dead);
    fx_end(f, 0);
    fx_close(f);
}

/* A second session sees committed changes after their messages. */
static void test_inval_queue(void **state)
{
    syscache_options o = {.prune_min_age = -1, .memory_target = 0};
    fx *f = fx_open(64, &o);
    syscache *a = f->s[0].sc, *b = f->s[1].sc;
    catcache_entry *e;

    (void)state;
    /* B caches that "n1" does not exist. */
    fx_begin(f, 1);
    assert_int_equal(
        syscache_search1(b, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("n1"), &e),
        KEEL_ENOENT);
    assert_int_equal(syscache_search1(b, CACHE_NAMESPACE_OID, 21000, &e),
                     KEEL_ENOENT);
    fx_end(f, 1);

    /* A creates it; its own caches see it before commit. */
    fx_begin(f, 0);
    assert_int_equal(
        syscache_search1(a, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("n1"), &e),
        KEEL_ENOENT);
    assert_int_equal(fx_ns_insert(f, 0, 21000, "n1"), KEEL_OK);
    assert_int_equal(
        syscache_search1(a, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("n1"), &e),
        KEEL_OK);
    syscache_release(a, e);

    /* B, before the commit, still sees none. */
    fx_begin(f, 1);
    assert_int_equal(
        syscache_search1(b, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("n1"), &e),
        KEEL_ENOENT);
    fx_end(f, 1);

    fx_commit(f, 0);

    /* B's next transaction applies the messages and sees the row. */
    assert_int_equal(fx_begin(f, 1), 1);
    assert_int_equal(
        syscache_search1(b, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("n1"), &e),
        KEEL_OK);
    assert_int_equal(((const catalog_namespace *)syscache_row(e))->oid, 21000);
    syscache_release(b, e);
    assert_int_equal(syscache_search1(b, CACHE_NAMESPACE_OID, 21000, &e),
                     KEEL_OK);
    syscache_release(b, e);
    fx_end(f, 1);

    /* A drops it but aborts: A's caches forget what they saw. */
    fx_begin(f, 0);
    assert_int_equal(fx_ns_delete(f, 0, "n1"), KEEL_OK);
    assert_int_equal(
        syscache_search1(a, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("n1"), &e),
        KEEL_ENOENT);
    fx_abort(f, 0);
    fx_begin(f, 0);
    assert_int_equal(
        syscache_search1(a, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("n1"), &e),
        KEEL_OK);
    syscache_release(a, e);
    /* Now for real. */
    assert_int_equal(fx_ns_delete(f, 0, "n1"), KEEL_OK);
    fx_commit(f, 0);

    assert_int_equal(fx_begin(f, 1), 1);
    assert_int_equal(
        syscache_search1(b, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("n1"), &e),
        KEEL_ENOENT);
    assert_int_equal(syscache_search1(b, CACHE_NAMESPACE_OID, 21000, &e),
                     KEEL_ENOENT);
    fx_end(f, 1);
    fx_close(f);
}

/* An update that changes a row's key (a rename) drops what other sessions
 * cache under the old key as well as the new one. */
static void test_update_old_key(void **state)
{
    syscache_options o = {.prune_min_age = -1, .memory_target = 0};
    fx *f = fx_open(64, &o);
    syscache *b = f->s[1].sc;
    catcache_entry *e;
    catalog_namespace r;
    keel_value vals[2];

    (void)state;
    fx_begin(f, 0);
    assert_int_equal(fx_ns_insert(f, 0, 21500, "before"), KEEL_OK);
    fx_commit(f, 0);
    /* B caches the row by its name, and the new name as missing. */
    fx_begin(f, 1);
    assert_int_equal(
        syscache_search1(b, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("before"), &e),
        KEEL_OK);
    syscache_release(b, e);
    assert_int_equal(
        syscache_search1(b, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("after"), &e),
        KEEL_ENOENT);
    fx_end(f, 1);
    /* A renames it. */
    fx_begin(f, 0);
    fx_write(f, 0);
    assert_int_equal(
        catalog_namespace_by_name(f->db->cat, &f->s[0].ct, "before", &r),
        KEEL_OK);
    snprintf(r.name, sizeof(r.name), "after");
    catalog_namespace_values(&r, vals);
    assert_int_equal(
        catalog_update(f->db->cat, &f->s[0].ct, CAT_NAMESPACE, r.tid, vals),
        KEEL_OK);
    fx_apply_new(f, 0, 2);
    fx_commit(f, 0);
    /* B sees the new name and no longer the old one. */
    fx_begin(f, 1);
    assert_int_equal(
        syscache_search1(b, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("before"), &e),
        KEEL_ENOENT);
    assert_int_equal(
        syscache_search1(b, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("after"), &e),
        KEEL_OK);
    assert_int_equal(((const catalog_namespace *)syscache_row(e))->oid, 21500);
    syscache_release(b, e);
    fx_end(f, 1);
    /* Clean up for the tests that share the database. */
    fx_begin(f, 0);
    assert_int_equal(fx_ns_delete(f, 0, "after"), KEEL_OK);
    fx_commit(f, 0);
    fx_close(f);
}

/* A reader that falls more than the queue's capacity behind resets. */
static void test_queue_overflow(void **state)
{
    syscache_options o = {.prune_min_age = -1, .memory_target = 0};
    fx *f = fx_open(4, &o);
    syscache *b = f->s[1].sc;
    catcache_entry *e, *held;
    syscache_stats st;

    (void)state;
    fx_begin(f, 1);
    assert_int_equal(syscache_search1(b, CACHE_NAMESPACE_OID, 90, &held),
                     KEEL_OK);
    for (oid_t o2 = 30000; o2 < 30010; o2++)
        assert_int_equal(syscache_search1(b, CACHE_NAMESPACE_OID, o2, &e),
                         KEEL_ENOENT);
    fx_end(f, 1);
    for (int i = 0; i < 10; i++)
        inval_queue_append_one(f->q, CACHE_CLASS_OID, (uint32_t)i);
    fx_begin(f, 1);
    st = stats_of(b);
    assert_int_equal(st.resets, 1);
    assert_int_equal(st.negative_entries, 0);
    assert_true(held->dead);
    syscache_release(b, held);
    st = stats_of(b);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes, st.bucket_bytes);
    /* It works again afterwards. */
    assert_int_equal(syscache_search1(b, CACHE_NAMESPACE_OID, 90, &e), KEEL_OK);
    syscache_release(b, e);
    /* A transaction with more messages than the queue holds appends a
     * reset for everyone. */
    fx_end(f, 1);
    fx_begin(f, 0);
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof(name), "ov%d", i);
        assert_int_equal(fx_ns_insert(f, 0, 40000 + (oid_t)i, name), KEEL_OK);
    }
    fx_commit(f, 0);
    fx_begin(f, 1);
    assert_int_equal(stats_of(b).resets, 2);
    assert_int_equal(syscache_search1(b, CACHE_NAMESPACE_OID, 40003, &e),
                     KEEL_OK);
    syscache_release(b, e);
    fx_end(f, 1);
    fx_close(f);
}

/* Entries unused for the min age go when a cache is about to double. */
static void test_prune_age(void **state)
{
    syscache_options o = {.prune_min_age = 10, .memory_target = 0};
    fx *f;
    syscache *sc;
    catcache_entry *e, *held;
    syscache_stats st, st0;

    (void)state;
    if (!KEEL_CATCACHE_PRUNE) {
        skip();
        return;
    }
    f = fx_open(64, &o);
    sc = f->s[0].sc;
    /* CACHE_NAMESPACE_OID starts with 16 buckets: it would double at the
     * 33rd entry. */
    f->now = 1000;
    fx_begin(f, 0);
    st0 = stats_of(sc);
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, 90, &held),
                     KEEL_OK);
    for (oid_t k = 50000; k < 50030; k++)
        assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e),
                         KEEL_ENOENT);
    fx_end(f, 0);

    /* Within the min age: the cache grows, nothing is pruned. */
    f->now = 1005;
    fx_begin(f, 0);
    for (oid_t k = 50030; k < 50035; k++)
        assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e),
                         KEEL_ENOENT);
    st = stats_of(sc);
    assert_int_equal(st.age_prunes, 0);
    assert_int_equal(st.negative_entries, 35);
    assert_true(st.bucket_bytes > st0.bucket_bytes); /* grew to 32 */
    fx_end(f, 0);

    /* Much later: five of the old ones are used again, then new entries
     * push the cache to its next doubling (more than 64 entries). */
    f->now = 2000;
    fx_begin(f, 0);
    for (oid_t k = 50000; k < 50005; k++)
        assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e),
                         KEEL_ENOENT);
    st0 = stats_of(sc);
    for (oid_t k = 60000; k < 60030; k++)
        assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e),
                         KEEL_ENOENT);
    st = stats_of(sc);
    /* 36 + 30 = 66 > 64: the 30 old unused ones were pruned instead of
     * doubling; the used ones, the new ones and the held one stay. */
    assert_int_equal(st.age_prunes, 30);
    assert_int_equal(st.bucket_bytes, st0.bucket_bytes);
    assert_int_equal(st.negative_entries, 35);
    assert_false(held->dead);
    chains_ok(sc);
    st0 = stats_of(sc);
    for (oid_t k = 50000; k < 50005; k++)
        assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e),
                         KEEL_ENOENT);
    for (oid_t k = 60000; k < 60030; k++)
        assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e),
                         KEEL_ENOENT);
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, 90, &e),
                     KEEL_OK);
    syscache_release(sc, e);
    st = stats_of(sc);
    assert_int_equal(st.misses, st0.misses);
    syscache_release(sc, held);

    /* Everything was used again since the last prune: the next prune
     * records the uses and removes nothing, and the cache doubles. */
    fx_end(f, 0);
    f->now = 3000;
    fx_begin(f, 0);
    st0 = stats_of(sc);
    for (oid_t k = 70000; k < 70040; k++)
        assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e),
                         KEEL_ENOENT);
    st = stats_of(sc);
    assert_int_equal(st.age_prunes, 30);
    assert_true(st.bucket_bytes > st0.bucket_bytes); /* 64 buckets */
    assert_int_equal(st.entries, 76);
    fx_end(f, 0);

    /* At the next prune, all of those are too old, the entry that was
     * held among them. */
    f->now = 4000;
    fx_begin(f, 0);
    for (oid_t k = 80000; k < 80060; k++)
        assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, k, &e),
                         KEEL_ENOENT);
    st = stats_of(sc);
    assert_int_equal(st.age_prunes, 30 + 76);
    assert_int_equal(st.positive_entries, 0);
    assert_int_equal(st.negative_entries, 60);
    chains_ok(sc);
    fx_end(f, 0);
    fx_close(f);
}

/* A flood of one-off negative misses is evicted before a hot set used
 * again and again, all within one second. */
static void test_memory_target_flood(void **state)
{
    syscache_options o = {.prune_min_age = -1, .memory_target = 0};
    fx *f;
    syscache *sc;
    catcache_entry *e;
    syscache_stats st, st0;
    const uint32_t hot_neg = 50;
    uint64_t target;

    (void)state;
    if (!KEEL_CATCACHE_PRUNE) {
        skip();
        return;
    }
    f = fx_open(64, &o);
    sc = f->s[0].sc;
    fx_begin(f, 0);
    /* The hot set: every attribute of the catalogs (positive) and some
     * negative entries. */
    for (int round = 0; round < 2; round++) {
        for (oid_t rel = 10; rel <= 50; rel += 10)
            for (uint16_t a = 1; a <= 13; a++)
                if (syscache_search2(sc, CACHE_ATTRIBUTE_NUM, rel, a, &e) ==
                    KEEL_OK)
                    syscache_release(sc, e);
        for (uint32_t i = 0; i < hot_neg; i++)
            assert_int_equal(
                syscache_search1(sc, CACHE_CLASS_OID, 80000 + i, &e),
                KEEL_ENOENT);
    }
    st0 = stats_of(sc);
    target = st0.bytes + 200 * sizeof(catcache_entry);
    o.memory_target = target;
    syscache_set_options(sc, &o);
    /* The flood, with the hot set used between every 50 misses. */
    for (uint32_t i = 0; i < 20000; i++) {
        assert_int_equal(
            syscache_search1(sc, CACHE_NAMESPACE_OID, 100000 + i, &e),
            KEEL_ENOENT);
        assert_true(stats_of(sc).bytes <= target);
        if (i % 1000 == 999) {
            chains_ok(sc);
            memory_ok(sc);
        }
        if (i % 50 == 49) {
            uint64_t misses = stats_of(sc).misses;
            for (oid_t rel = 10; rel <= 50; rel += 10)
                for (uint16_t a = 1; a <= 13; a++)
                    if (syscache_search2(sc, CACHE_ATTRIBUTE_NUM, rel, a, &e) ==
                        KEEL_OK)
                        syscache_release(sc, e);
            for (uint32_t j = 0; j < hot_neg; j++)
                assert_int_equal(
                    syscache_search1(sc, CACHE_CLASS_OID, 80000 + j, &e),
                    KEEL_ENOENT);
            /* Every hot search hit. */
            assert_int_equal(stats_of(sc).misses, misses);
        }
    }
    st = stats_of(sc);
    assert_true(st.evictions >= 19000);
    assert_int_equal(st.positive_entries, st0.positive_entries);
    assert_true(st.bytes <= target);

    /* At equal standing, negative entries go before positive ones. */
    o.memory_target = 0;
    syscache_set_options(sc, &o);
    syscache_reset(sc);
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, 90, &e),
                     KEEL_OK);
    syscache_release(sc, e);
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, 5, &e),
                     KEEL_ENOENT);
    st = stats_of(sc);
    o.memory_target = st.bytes - 1;
    syscache_set_options(sc, &o);
    st = stats_of(sc);
    assert_int_equal(st.negative_entries, 0);
    assert_int_equal(st.positive_entries, 1);
    /* Referenced entries are never evicted, whatever the target. */
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, 90, &e),
                     KEEL_OK);
    o.memory_target = 1;
    syscache_set_options(sc, &o);
    assert_int_equal(stats_of(sc).positive_entries, 1);
    assert_false(e->dead);
    syscache_release(sc, e);
    /* Exact accounting: with everything evicted, only the buckets. */
    assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_OID, 91, &e),
                     KEEL_OK);
    assert_int_equal(stats_of(sc).positive_entries, 1); /* 90 went */
    syscache_release(sc, e);
    syscache_set_options(sc, &o); /* the target is checked again */
    st = stats_of(sc);
    assert_int_equal(st.bytes, st.bucket_bytes);
    assert_int_equal(st.entries, 0);
    chains_ok(sc);
    fx_end(f, 0);
    fx_close(f);
}

/* With the default options, a hot set of 10,000 entries (attributes by
 * number) fits under the memory target: the second pass only hits. */
static void test_hot_set_fits_default(void **state)
{
    syscache_options o;
    fx *f;
    syscache *sc;
    catcache_entry *e;
    syscache_stats st0, st;
    const uint32_t n = 10000, per_rel = 50;

    (void)state;
    syscache_options_default(&o);
    assert_int_equal(o.prune_min_age, 300);
    assert_int_equal(o.memory_target, 4 << 20);
    f = fx_open(64, &o);
    sc = f->s[0].sc;
    fx_begin(f, 0);
    for (uint32_t i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "c%u", (unsigned)(i % per_rel));
        assert_int_equal(fx_att_insert(f, 0, 70000 + i / per_rel,
                                       (uint16_t)(1 + i % per_rel), name),
                         KEEL_OK);
    }
    fx_commit(f, 0);
    fx_begin(f, 0);
    for (int pass = 0; pass < 2; pass++) {
        st0 = stats_of(sc);
        for (uint32_t i = 0; i < n; i++) {
            assert_int_equal(syscache_search2(sc, CACHE_ATTRIBUTE_NUM,
                                              70000 + i / per_rel,
                                              1 + i % per_rel, &e),
                             KEEL_OK);
            syscache_release(sc, e);
        }
        st = stats_of(sc);
        assert_int_equal(st.evictions, 0);
        if (pass == 1)
            assert_int_equal(st.misses, st0.misses);
    }
    assert_true(st.bytes <= o.memory_target);
    print_message("hot set of %u attribute entries: %llu bytes\n", n,
                  (unsigned long long)st.bytes);
    fx_end(f, 0);
    fx_close(f);
}

/* Where a name copy starts after off bytes of an entry: on a 16-byte
 * boundary, after its length byte. */
static size_t name_start(size_t off)
{
    return (off + 1 + 15) & ~(size_t)15;
}

/* An entry's name copy as catcache_entry_make() lays it out: the length
 * byte (capped), the name and its NUL, in a buffer of exactly that size
 * (so that AddressSanitizer sees any read past it).  Freed by the caller
 * from name - 1. */
static char *entry_name(const char *name)
{
    size_t len = strlen(name);
    char *p = malloc(len + 2);

    assert_non_null(p);
    p[0] = (char)(uint8_t)(len < CATCACHE_NAME_LEN_CAP ? len
                                                       : CATCACHE_NAME_LEN_CAP);
    memcpy(p + 1, name, len + 1);
    return p + 1;
}

/*
 * catcache_name_equal() against strcmp(): every length from 0 to 70 (and
 * around the length byte's cap) against names equal, one byte longer or
 * shorter, and differing in each single byte (which the word compare must
 * see wherever it falls, the overlapping last word included).
 */
static void test_name_equal(void **state)
{
    static const size_t lens[] = {254, 255, 256, 300};
    char a[320], b[320];
    size_t len;
    uint64_t compared = 0;

    (void)state;
    for (size_t li = 0; li < 71 + sizeof(lens) / sizeof(lens[0]); li++) {
        len = li < 71 ? li : lens[li - 71];
        for (size_t i = 0; i < len; i++)
            a[i] = (char)('a' + (i * 7) % 26);
        a[len] = '\0';
        for (int other = -1; other <= 1; other++) {
            size_t blen = len + (size_t)other;
            char *e;
            if (other < 0 && len == 0)
                continue;
            memcpy(b, a, len < blen ? len : blen);
            for (size_t i = len; i < blen; i++)
                b[i] = 'z';
            b[blen] = '\0';
            e = entry_name(b);
            assert_int_equal(catcache_name_equal(e, a, len), strcmp(e, a) == 0);
            assert_int_equal(catcache_name_equal(e, a, len), other == 0);
            free(e - 1);
            compared++;
        }
        for (size_t i = 0; i < len; i++) {
            char *e;
            memcpy(b, a, len + 1);
            b[i] = (char)(b[i] ^ 0x20);
            e = entry_name(b);
            assert_false(catcache_name_equal(e, a, len));
            free(e - 1);
            compared++;
        }
    }
    assert_true(compared > 2500);
}

/* Exact bytes per entry kind, by cache, and back to the buckets after a
 * reset. */
static void test_accounting(void **state)
{
    syscache_options o = {.prune_min_age = -1, .memory_target = 0};
    fx *f = fx_open(64, &o);
    syscache *sc = f->s[0].sc;
    catcache_entry *e;
    catcache_list *l;
    syscache_stats st0, st;
    syscache_key k = CATALOG_CLASS_OID;
    uint64_t sum = 0;

    (void)state;
    st0 = stats_of(sc);
    for (int id = 0; id < CACHE_COUNT; id++)
        sum += st0.by_cache_bytes[id];
    assert_int_equal(sum, st0.bytes);
    assert_int_equal(st0.bytes, st0.bucket_bytes);
    /* The bucket arrays lie in the session's first region, the only one
     * a session that misses little needs. */
    assert_int_equal(st0.block_bytes,
                     CATCACHE_REGION_BYTES(CATCACHE_FIRST_SLABS));
    fx_begin(f, 0);
    assert_int_equal(
        syscache_search1(sc, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("public"), &e),
        KEEL_OK);
    syscache_release(sc, e);
    st = stats_of(sc);
    /* Name copies start on a 16-byte boundary after their length byte. */
    assert_int_equal(st.positive_bytes, name_start(sizeof(catcache_entry) +
                                                   sizeof(catalog_namespace)) +
                                            strlen("public") + 1);
    assert_int_equal(st.by_cache_bytes[CACHE_NAMESPACE_NAME],
                     st0.by_cache_bytes[CACHE_NAMESPACE_NAME] +
                         st.positive_bytes);
    assert_int_equal(
        syscache_search1(sc, CACHE_NAMESPACE_NAME, SYSCACHE_NAME("abc"), &e),
        KEEL_ENOENT);
    assert_int_equal(syscache_search1(sc, CACHE_CLASS_OID, 4242, &e),
                     KEEL_ENOENT);
    st = stats_of(sc);
    assert_int_equal(st.negative_bytes, name_start(sizeof(catcache_entry)) +
                                            strlen("abc") + 1 +
                                            sizeof(catcache_entry));
    assert_int_equal(syscache_list(sc, CACHE_ATTRIBUTE_NUM, 1, &k, &l),
                     KEEL_OK);
    syscache_list_release(sc, l);
    st = stats_of(sc);
    assert_int_equal(st.list_bytes,
                     sizeof(catcache_entry) + 8 * sizeof(catalog_attribute));
    assert_int_equal(st.bytes, st.bucket_bytes + st.positive_bytes +
                                   st.negative_bytes + st.list_bytes);
    sum = 0;
    for (int id = 0; id < CACHE_COUNT; id++)
        sum += st.by_cache_bytes[id];
    assert_int_equal(sum, st.bytes);
    /* Many entries: the buckets double, and a reset returns every byte
     * but theirs. */
    for (oid_t i = 0; i < 5000; i++)
        assert_int_equal(syscache_search1(sc, CACHE_CLASS_OID, 100000 + i, &e),
                         KEEL_ENOENT);
    st = stats_of(sc);
    assert_true(st.bucket_bytes > st0.bucket_bytes);
    /* The entries lie in the session's blocks, whole ones. */
    assert_true(st.block_bytes >= st.negative_bytes);
    assert_true(st.block_bytes > CATCACHE_REGION_BYTES(CATCACHE_FIRST_SLABS));
    assert_int_equal(
        (st.block_bytes - CATCACHE_REGION_BYTES(CATCACHE_FIRST_SLABS)) %
            CATCACHE_REGION_BYTES(CATCACHE_REGION_SLABS),
        0);
    syscache_reset(sc);
    {
        syscache_stats full = st;
        st = stats_of(sc);
        assert_int_equal(st.bytes, st.bucket_bytes);
        assert_int_equal(st.positive_bytes + st.negative_bytes + st.list_bytes,
                         0);
        assert_int_equal(st.entries + st.lists, 0);
        /* The blocks stay, and the same entries again fit in what the
         * reset freed. */
        assert_int_equal(st.block_bytes, full.block_bytes);
        for (oid_t i = 0; i < 5000; i++)
            assert_int_equal(
                syscache_search1(sc, CACHE_CLASS_OID, 100000 + i, &e),
                KEEL_ENOENT);
        st = stats_of(sc);
        assert_int_equal(st.negative_entries, 5000);
        assert_int_equal(st.block_bytes, full.block_bytes);
        memory_ok(sc);
    }
    fx_end(f, 0);
    fx_close(f);
}

/*
 * A memory target bounds the memory the cache holds, not only the bytes
 * it counts: a flood of missing names whose length changes phase by phase
 * (as per-customer names grow a digit) puts each phase's entries in
 * another size class, and the pieces earlier phases freed serve the new
 * ones.  The blocks stay near the target, and the cache still answers.
 */
static void test_memory_target_name_lengths(void **state)
{
    syscache_options o = {.prune_min_age = -1, .memory_target = 0};
    fx *f;
    syscache *sc;
    catcache_entry *e;
    syscache_stats st;
    uint64_t target, most_blocks = 0;
    char name[KEEL_NAME_LEN];

    (void)state;
    if (!KEEL_CATCACHE_PRUNE) {
        skip();
        return;
    }
    f = fx_open(64, &o);
    sc = f->s[0].sc;
    fx_begin(f, 0);
    target = stats_of(sc).bytes + 256 * 1024;
    o.memory_target = target;
    syscache_set_options(sc, &o);
    /* Names of 6, 22, 38 and 54 bytes: each phase's negative entries are
     * 16 bytes longer than the last's, and 8,000 of them fill the target
     * four times over. */
    for (int phase = 0; phase < 4; phase++)
        for (uint32_t i = 0; i < 8000; i++) {
            snprintf(name, sizeof(name), "%0*u", 6 + 16 * phase, i);
            assert_int_equal(syscache_search1(sc, CACHE_NAMESPACE_NAME,
                                              SYSCACHE_NAME(name), &e),
                             KEEL_ENOENT);
            st = stats_of(sc);
            assert_true(st.bytes <= target);
            if (st.block_bytes > most_blocks)
                most_blocks = st.block_bytes;
            if (i % 1000 == 999)
                memory_ok(sc);
        }
    st = stats_of(sc);
    assert_true(st.evictions >= 4 * 8000 - 2000);
    /* The last phase's newest names still answer from the cache. */
    for (uint32_t i = 7990; i < 8000; i++) {
        uint64_t misses = stats_of(sc).misses;
        snprintf(name, sizeof(name), "%0*u", 6 + 16 * 3, i);
        assert_int_equal(
            syscache_search1(sc, CACHE_NAMESPACE_NAME, SYSCACHE_NAME(name), &e),
            KEEL_ENOENT);
        assert_int_equal(stats_of(sc).misses, misses);
    }
    /* The regions within a quarter of the target and one region beyond
     * it (pieces rounded up to 16 bytes, slab headers and ends, room to
     * align the slabs), where reusing freed pieces only for their own
     * size would hold all four phases' (over four times the target). */
    if (most_blocks >
        target + target / 4 + CATCACHE_REGION_BYTES(CATCACHE_REGION_SLABS))
        fail_msg("blocks reached %llu bytes against a target of %llu",
                 (unsigned long long)most_blocks, (unsigned long long)target);
    chains_ok(sc);
    memory_ok(sc);
    fx_end(f, 0);
    fx_close(f);
}

/* catcache_memory_valid() finds what it is there to find: a slab's count
 * of pieces in use off by one, a broken back link among the slabs with
 * room, an empty slab off the empty list, the regions' bytes miscounted. */
static void test_memory_check_finds_faults(void **state)
{
    syscache_options o = {.prune_min_age = -1, .memory_target = 0};
    fx *f = fx_open(64, &o);
    syscache *sc = f->s[0].sc;
    catcache_session *s = &sc->sess;
    catcache_entry *e;
    catcache_slab *sl = NULL, *empty;
    char why[160];
    uint64_t pieces;

    (void)state;
    fx_begin(f, 0);
    for (oid_t i = 0; i < 100; i++)
        assert_int_equal(syscache_search1(sc, CACHE_CLASS_OID, 70000 + i, &e),
                         KEEL_ENOENT);
    memory_ok(sc);
    for (size_t c = 1; c <= CATCACHE_CLASSES && sl == NULL; c++)
        sl = s->room[c];
    assert_non_null(sl);

    sl->used++;
    assert_false(catcache_memory_valid(s, &pieces, why, sizeof(why)));
    assert_non_null(strstr(why, "carved"));
    sl->used--;

    sl->prev = sl;
    assert_false(catcache_memory_valid(s, &pieces, why, sizeof(why)));
    assert_non_null(strstr(why, "back link"));
    sl->prev = NULL;

    s->block_bytes++;
    assert_false(catcache_memory_valid(s, &pieces, why, sizeof(why)));
    assert_non_null(strstr(why, "block_bytes"));
    s->block_bytes--;

    /* Every entry gone: their slabs go to the empty list. */
    syscache_reset(sc);
    memory_ok(sc);
    assert_non_null(s->empty);
    empty = s->empty;
    s->empty = empty->next;
    assert_false(catcache_memory_valid(s, &pieces, why, sizeof(why)));
    assert_non_null(strstr(why, "empty list"));
    s->empty = empty;

    memory_ok(sc);
    fx_end(f, 0);
    fx_close(f);
}

/*
 * Two sessions' caches, made and filled by one thread, their misses
 * interleaved (as an allocator both draw on would place them side by
 * side): no cache line holds memory of both, so that one session's hits,
 * which write their entries, never take a line the other's hits read.
 * Entries (positive, negative, lists) and bucket arrays alike.
 */
static void test_sessions_apart(void **state)
{
    syscache_options o = {.prune_min_age = -1, .memory_target = 0};
    fx *f = fx_open(64, &o);
    enum { NREL = 4, NATT = 8, MAXR = 2 * NREL * NATT + 16 };
    static const oid_t rels[NREL] = {CATALOG_NAMESPACE_OID, CATALOG_CLASS_OID,
                                     CATALOG_ATTRIBUTE_OID, CATALOG_INDEX_OID};
    struct {
        uintptr_t lo, hi; /* [lo, hi) */
    } r[2][MAXR];
    catcache_entry *held[2][MAXR];
    int n[2] = {0, 0}, nheld[2] = {0, 0};

    (void)state;
    fx_begin(f, 0);
    fx_begin(f, 1);
    for (int rel = 0; rel < NREL; rel++)
        for (int att = 1; att <= NATT; att++)
            for (int i = 0; i < 2; i++) {
                syscache *sc = f->s[i].sc;
                catcache_entry *e = NULL;
                catcache_list *l = NULL;
                syscache_key k = rels[rel];
                int rc = syscache_search2(sc, CACHE_ATTRIBUTE_NUM, rels[rel],
                                          (syscache_key)att, &e);
                assert_true(rc == KEEL_OK || rc == KEEL_ENOENT);
                if (rc == KEEL_OK)
                    held[i][nheld[i]++] = e;
                /* A negative entry too, and a list once per relation. */
                assert_int_equal(
                    syscache_search2(sc, CACHE_ATTRIBUTE_NUM, rels[rel],
                                     (syscache_key)(att + 100), &e),
                    KEEL_ENOENT);
                if (att == 1) {
                    assert_int_equal(
                        syscache_list(sc, CACHE_ATTRIBUTE_NUM, 1, &k, &l),
                        KEEL_OK);
                    held[i][nheld[i]++] = &l->e;
                }
            }
    for (int i = 0; i < 2; i++) {
        catcache *cc = &f->s[i].sc->caches[CACHE_ATTRIBUTE_NUM];
        /* Every entry of the cache, negative ones included, and the
         * bucket arrays. */
        for (uint32_t b = 0; b <= cc->mask; b++)
            for (catcache_entry *e = cc->buckets[b]; e != NULL; e = e->next) {
                assert_true(n[i] < MAXR);
                r[i][n[i]].lo = (uintptr_t)e;
                r[i][n[i]++].hi = (uintptr_t)e + e->bytes;
            }
        for (uint32_t b = 0; b <= cc->lmask; b++)
            for (catcache_entry *e = cc->lbuckets[b]; e != NULL; e = e->next) {
                assert_true(n[i] < MAXR);
                r[i][n[i]].lo = (uintptr_t)e;
                r[i][n[i]++].hi = (uintptr_t)e + e->bytes;
            }
        assert_true(n[i] + 2 <= MAXR);
        r[i][n[i]].lo = (uintptr_t)cc->buckets;
        r[i][n[i]++].hi = (uintptr_t)(cc->buckets + cc->mask + 1);
        r[i][n[i]].lo = (uintptr_t)cc->lbuckets;
        r[i][n[i]++].hi = (uintptr_t)(cc->lbuckets + cc->lmask + 1);
        assert_true(n[i] > NREL * NATT); /* the negative entries at least */
    }
    for (int a = 0; a < n[0]; a++)
        for (int b = 0; b < n[1]; b++) {
            uintptr_t a0 = r[0][a].lo / CACHE_LINE_SIZE,
                      a1 = (r[0][a].hi - 1) / CACHE_LINE_SIZE;
            uintptr_t b0 = r[1][b].lo / CACHE_LINE_SIZE,
                      b1 = (r[1][b].hi - 1) / CACHE_LINE_SIZE;
            if (a0 <= b1 && b0 <= a1)
                fail_msg("session 0's [%#lx, %#lx) and session 1's [%#lx, "
                         "%#lx) share a cache line",
                         (unsigned long)r[0][a].lo, (unsigned long)r[0][a].hi,
                         (unsigned long)r[1][b].lo, (unsigned long)r[1][b].hi);
        }
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < nheld[i]; k++) {
            if (held[i][k]->kind == CATCACHE_LIST)
                syscache_list_release(f->s[i].sc, (catcache_list *)held[i][k]);
            else
                syscache_release(f->s[i].sc, held[i][k]);
        }
        fx_end(f, i);
    }
    fx_close(f);
}

/* ------------------------------------------------------------------ */
/* Randomized: the caches answer what direct catalog scans answer.    */
/* ------------------------------------------------------------------ */

#define R_OIDS 48
#define R_RELS 6
#define R_ATTS 6

typedef struct ns_find {
    catalog_namespace ns;
    bool found;
} ns_find;

static int ns_first(void *arg, const heap_row *row, bool *stop)
{
    ns_find *nf = arg;

    nf->ns.tid = row->tid;
    nf->ns.oid = row->values[0].v.oid;
    snprintf(nf->ns.name, sizeof(nf->ns.name), "%.*s",
             (int)row->values[1].v.s.len, row->values[1].v.s.ptr);
    nf->found = true;
    *stop = true;
    return KEEL_OK;
}

/* Checks session i's caches against scans for one random key. */
static void r_check(fx *f, int i, uint64_t *seed)
{
    tsess *s = &f->s[i];
    syscache *sc = s->sc;
    catcache_entry *e;
    uint32_t what = (uint32_t)(tu_rand(seed) % 4);

    if (what == 0) { /* namespace by oid */
        oid_t oid = 20000 + (oid_t)(tu_rand(seed) % R_OIDS);
        keel_value kv = {.isnull = false};
        ns_find nf = {.found = false};
        int rc;
        kv.v.oid = oid;
        assert_int_equal(catalog_index_scan(f->db->cat, &s->ct, CAT_NAMESPACE,
                                            0, &kv, 1, ns_first, &nf),
                         KEEL_OK);
        rc = syscache_search1(sc, CACHE_NAMESPACE_OID, oid, &e);
        assert_int_equal(rc, nf.found ? KEEL_OK : KEEL_ENOENT);
        if (rc == KEEL_OK) {
            const catalog_namespace *ns = syscache_row(e);
            assert_int_equal(ns->oid, oid);
            assert_string_equal(ns->name, nf.ns.name);
            syscache_release(sc, e);
        }
    } else if (what == 1) { /* namespace by name */
        char name[16];
        catalog_namespace ns;
        int rc, rc2;
        snprintf(name, sizeof(name), "ns%u",
                 (unsigned)(tu_rand(seed) % R_OIDS));
        rc2 = catalog_namespace_by_name(f->db->cat, &s->ct, name, &ns);
        assert_true(rc2 == KEEL_OK || rc2 == KEEL_ENOENT);
        rc =
            syscache_search1(sc, CACHE_NAMESPACE_NAME, SYSCACHE_NAME(name), &e);
        assert_int_equal(rc, rc2);
        if (rc == KEEL_OK) {
            assert_int_equal(((const catalog_namespace *)syscache_row(e))->oid,
                             ns.oid);
            syscache_release(sc, e);
        }
    } else if (what == 2) { /* attribute by (relid, attnum) */
        oid_t rel = 60000 + (oid_t)(tu_rand(seed) % R_RELS);
        uint16_t att = (uint16_t)(1 + tu_rand(seed) % R_ATTS);
        keel_value kv[2];
        att_find af = {.found = false};
        int rc;
        memset(kv, 0, sizeof(kv));
        kv[0].v.oid = rel;
        kv[1].v.i2 = (int16_t)att;
        assert_int_equal(catalog_index_scan(f->db->cat, &s->ct, CAT_ATTRIBUTE,
                                            0, kv, 2, att_first, &af),
                         KEEL_OK);
        rc = syscache_search2(sc, CACHE_ATTRIBUTE_NUM, rel, att, &e);
        assert_int_equal(rc, af.found ? KEEL_OK : KEEL_ENOENT);
        if (rc == KEEL_OK) {
            assert_string_equal(
                ((const catalog_attribute *)syscache_row(e))->name, af.a.name);
            syscache_release(sc, e);
        }
        if (af.found) {
            rc = syscache_search2(sc, CACHE_ATTRIBUTE_NAME, rel,
                                  SYSCACHE_NAME(af.a.name), &e);
            assert_int_equal(rc, KEEL_OK);
            assert_int_equal(
                ((const catalog_attribute *)syscache_row(e))->attnum, att);
            syscache_release(sc, e);
        }
    } else { /* the attributes of a relation, as a list */
        oid_t rel = 60000 + (oid_t)(tu_rand(seed) % R_RELS);
        catalog_attribute atts[R_ATTS + 1];
        uint32_t n;
        catcache_list *l;
        syscache_key k = rel;
        assert_int_equal(
            catalog_attributes(f->db->cat, &s->ct, rel, atts, R_ATTS + 1, &n),
            KEEL_OK);
        assert_int_equal(syscache_list(sc, CACHE_ATTRIBUTE_NUM, 1, &k, &l),
                         KEEL_OK);
        assert_int_equal(syscache_list_count(l), n);
        for (uint32_t j = 0; j < n; j++) {
            const catalog_attribute *a = syscache_list_row(l, j);
            assert_int_equal(a->attnum, atts[j].attnum);
            assert_string_equal(a->name, atts[j].name);
        }
        syscache_list_release(sc, l);
    }
}

/* One random change by session i: insert or delete a namespace or an
 * attribute.  Unique conflicts are fine (the insert leaves no trace). */
static void r_change(fx *f, int i, uint64_t *seed)
{
    uint32_t what = (uint32_t)(tu_rand(seed) % 4);
    int rc;

    if (what == 0) {
        uint32_t n = (uint32_t)(tu_rand(seed) % R_OIDS);
        uint32_t m = (uint32_t)(tu_rand(seed) % R_OIDS);
        char name[16];
        snprintf(name, sizeof(name), "ns%u", (unsigned)m);
        rc = fx_ns_insert(f, i, 20000 + n, name);
        assert_true(rc == KEEL_OK || rc == KEEL_EUNIQUE);
    } else if (what == 1) {
        char name[16];
        snprintf(name, sizeof(name), "ns%u",
                 (unsigned)(tu_rand(seed) % R_OIDS));
        rc = fx_ns_delete(f, i, name);
        assert_true(rc == KEEL_OK || rc == KEEL_ENOENT);
    } else if (what == 2) {
        oid_t rel = 60000 + (oid_t)(tu_rand(seed) % R_RELS);
        uint16_t att = (uint16_t)(1 + tu_rand(seed) % R_ATTS);
        char name[16];
        snprintf(name, sizeof(name), "c%u", (unsigned)(tu_rand(seed) % R_ATTS));
        rc = fx_att_insert(f, i, rel, att, name);
        assert_true(rc == KEEL_OK || rc == KEEL_EUNIQUE);
    } else {
        oid_t rel = 60000 + (oid_t)(tu_rand(seed) % R_RELS);
        uint16_t att = (uint16_t)(1 + tu_rand(seed) % R_ATTS);
        rc = fx_att_delete(f, i, rel, att);
        assert_true(rc == KEEL_OK || rc == KEEL_ENOENT);
    }
}

static void run_random(uint64_t seed, const syscache_options *o, uint32_t qcap,
                       int steps)
{
    fx *f = fx_open(qcap, o);
    /* Each session holds one reference across transactions at times: it
     * must stay readable, unchanged, whatever happens to its row. */
    catcache_entry *held[2] = {NULL, NULL};
    catalog_attribute held_row[2];

    for (int step = 0; step < steps; step++) {
        int i = (int)(tu_rand(&seed) % 2);
        uint32_t kind = (uint32_t)(tu_rand(&seed) % 10);

        if (held[i] != NULL)
            assert_memory_equal(syscache_row(held[i]), &held_row[i],
                                sizeof(held_row[i]));
        if (kind < 5) { /* a reading transaction */
            fx_begin(f, i);
            for (int j = 0; j < 8; j++)
                r_check(f, i, &seed);
            if (tu_rand(&seed) % 3 == 0) {
                oid_t rel = 60000 + (oid_t)(tu_rand(&seed) % R_RELS);
                uint16_t att = (uint16_t)(1 + tu_rand(&seed) % R_ATTS);
                if (held[i] != NULL)
                    syscache_release(f->s[i].sc, held[i]);
                held[i] = NULL;
                if (syscache_search2(f->s[i].sc, CACHE_ATTRIBUTE_NUM, rel, att,
                                     &held[i]) == KEEL_OK)
                    memcpy(&held_row[i], syscache_row(held[i]),
                           sizeof(held_row[i]));
            }
            fx_end(f, i);
        } else if (kind < 9) { /* a writing one, checked as it goes */
            int nch = 1 + (int)(tu_rand(&seed) % 6);
            fx_begin(f, i);
            for (int j = 0; j < nch; j++) {
                r_change(f, i, &seed);
                r_check(f, i, &seed);
            }
            if (tu_rand(&seed) % 4 == 0)
                fx_abort(f, i);
            else
                fx_commit(f, i);
        } else { /* the clock moves */
            f->now += tu_rand(&seed) % 400;
        }
        chains_ok(f->s[i].sc);
        memory_ok(f->s[i].sc);
    }
    /* Everything released: no references are left anywhere. */
    for (int i = 0; i < 2; i++) {
        if (held[i] != NULL)
            syscache_release(f->s[i].sc, held[i]);
        syscache_stats st = stats_of(f->s[i].sc);
        print_message(
            "session %d: %llu hits, %llu negative hits, %llu "
            "misses, %llu list hits, %llu invalidations, %llu "
            "evictions, %llu age prunes, %llu resets\n",
            i, (unsigned long long)st.hits,
            (unsigned long long)st.negative_hits, (unsigned long long)st.misses,
            (unsigned long long)st.list_hits,
            (unsigned long long)st.invalidations,
            (unsigned long long)st.evictions, (unsigned long long)st.age_prunes,
            (unsigned long long)st.resets);
        syscache_reset(f->s[i].sc);
        st = stats_of(f->s[i].sc);
        assert_int_equal(st.bytes, st.bucket_bytes);
    }
    fx_close(f);
}

static void test_random(void **state)
{
    syscache_options plain = {.prune_min_age = -1, .memory_target = 0};
    syscache_options tight = {.prune_min_age = 30, .memory_target = 9000};
    syscache_options dflt;

    (void)state;
    syscache_options_default(&dflt);
    run_random(0x9e3779b97f4a7c15u, &plain, 32, 400);
    run_random(0x1234567u, &tight, 8, 400);
    run_random(0xabcdefu, &dflt, 64, 400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hits_misses_negative),
        cmocka_unit_test(test_hash_agrees),
        cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_refcount_dead),
        cmocka_unit_test(test_inval_queue),
        cmocka_unit_test(test_update_old_key),
        cmocka_unit_test(test_queue_overflow),
        cmocka_unit_test(test_prune_age),
        cmocka_unit_test(test_memory_target_flood),
        cmocka_unit_test(test_accounting),
        cmocka_unit_test(test_memory_target_name_lengths),
        cmocka_unit_test(test_memory_check_finds_faults),
        cmocka_unit_test(test_sessions_apart),
        cmocka_unit_test(test_name_equal),
        cmocka_unit_test(test_hot_set_fits_default),
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
