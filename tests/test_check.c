/*
 * test_check.c: what `keel init`, `keel stat` and `keel check` do, through
 * the functions they use: a pgbench database at scale 1 is complete and
 * passes the check; a flipped bit in a heap page is reported with its file
 * and block, and so is an invalid commit-log status; an index leaf with
 * two keys swapped (checksum recomputed) and
 * an index page with a flipped bit are reported; a database after all
 * kinds of changes passes, and a dead mark on a live row's entry does not;
 * heap tuples that do not decode as rows of their tables (user tables'
 * and catalogs') are reported one line each, and a damaged keel_class row
 * does not stop the check; tuples whose transaction ids, and catalog rows
 * whose object ids, are at or past the control file's limits are
 * reported; indexes whose table keel_class lost are still checked, and
 * relations whose schema keel_namespace lost reported; files a crash
 * leaves, that no relation owns, noted; a database the check cannot open
 * is an error, not a problem; and two stress runs end with a database the
 * check passes:
 * schemas and tables created and dropped, and money moved between
 * accounts under readers that check every balance adds up.  Inserts,
 * updates and deletes that each meet a failing read or write somewhere
 * take effect whole or not at all, and leave a database the check passes,
 * also four sessions at once; so do loads, index builds, analyzes and
 * drops, also three sessions at once.  An index build whose lock waited
 * for a writer that replaced a row meanwhile leaves a database the check
 * passes.
 */
#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "access/btree_page.h"
#include "access/heap_page.h"
#include "catalog/catalog.h"
#include "engine/control.h"
#include "engine/engine.h"
#include "keel/keel.h"
#include "port/clock.h"
#include "port/membarrier.h"
#include "storage/fault.h"
#include "storage/page.h"
#include "storage/smgr.h"
#include "check/dbinfo.h"
#include "tools/pgbench.h"

typedef struct lines {
    char text[64][1024]; /* problems, and notes as "note: ..." */
    int n;
    int notes;              /* lines that are notes */
    uint64_t counted_notes; /* keel_check()'s count */
} lines;

static void collect(void *ctx, bool note, const char *line)
{
    lines *l = ctx;
    if (getenv("KEEL_TEST_VERBOSE") != NULL)
        fprintf(stderr, "  %s: %s\n", note ? "note" : "problem", line);
    l->notes += note;
    if (l->n < 64)
        snprintf(l->text[l->n++], sizeof(l->text[0]), "%s%s",
                 note ? "note: " : "", line);
}

/* The problems the check finds in dir; its lines and notes in *l. */
static uint64_t run_check(const char *dir, lines *l)
{
    keel_error e = {0};
    uint64_t problems = 99;

    memset(l, 0, sizeof(*l));
    l->counted_notes = 99;
    assert_int_equal(
        keel_check(dir, collect, l, &problems, &l->counted_notes, &e),
        KEEL_OK);
    assert_int_equal(l->counted_notes, l->notes);
    return problems;
}

static keel_db_options opts_for(const char *dir)
{
    keel_db_options o;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 8;
    return o;
}

/* The relation named name, from the catalogs. */
static dbinfo_rel find_rel(const char *dir, const char *name)
{
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_session *s;
    keel_error e;
    dbinfo_rel *r, found = {0};
    size_t n;

    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(dbinfo_relations(s, &r, &n, NULL), KEEL_OK);
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].name, name) == 0)
            found = r[i];
    free(r);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_not_equal(found.relnumber, 0);
    return found;
}

/* Creates t (id int4 primary key, v int4) with the plain index t_v, and
 * inserts rows id 1..300, v = v_of(id). */
static void create_t(keel_session *s, int32_t (*v_of)(int32_t))
{
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                       {"v", KEEL_INT4, 0, false}};
    uint16_t pk = 1, k2 = 2;
    keel_value row[2];

    assert_int_equal(keel_create_table(s, NULL, "t", cols, 2, &pk, 1), KEEL_OK);
    assert_int_equal(keel_create_index(s, NULL, "t", "t_v", &k2, 1, false),
                     KEEL_OK);
    row[0].isnull = row[1].isnull = false;
    for (int32_t i = 1; i <= 300; i++) {
        row[0].v.i4 = i;
        row[1].v.i4 = v_of(i);
        assert_int_equal(keel_insert(s, NULL, "t", row), KEEL_OK);
    }
}

static int32_t mod7(int32_t id)
{
    return id % 7;
}

static int32_t plus1000(int32_t id)
{
    return 1000 + id;
}

/* The slot of the leaf entry that points to t; fails the test if none. */
static uint16_t leaf_slot_of(const void *leaf, tid t)
{
    for (uint16_t i = 0; i < btpage_nitems(leaf); i++)
        if (tid_compare(btitem_tid(btpage_item(leaf, i), true), t) == 0)
            return i;
    fail_msg("no entry for (%u,%u)", t.block, t.offset);
    return UINT16_MAX;
}

static bool any_line_has(const lines *l, const char *a, const char *b)
{
    for (int i = 0; i < l->n; i++)
        if (strstr(l->text[i], a) != NULL &&
            (b == NULL || strstr(l->text[i], b) != NULL))
            return true;
    return false;
}

static void test_init_stat_check(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e = {0};
    keel_db *db;
    keel_session *s;
    keel_value key, out[4];
    bool found;
    dbinfo_rel acc, pk, br;
    char path[512], blk5[32];
    lines l;
    static _Alignas(8) unsigned char page[BLOCK_SIZE], saved[BLOCK_SIZE];
    long off;

    (void)state;
    assert_int_equal(pgbench_init(dir, 1, 8, PGBENCH_PROGRESS_NONE, &e),
                     KEEL_OK);
    /* A second init of the same directory is refused. */
    assert_int_equal(pgbench_init(dir, 1, 8, PGBENCH_PROGRESS_NONE, &e),
                     KEEL_EEXIST);

    /* The tables are there, with their rows and primary keys. */
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    key.isnull = false;
    for (int32_t aid = 1; aid <= 100000; aid += 9973) {
        key.v.i4 = aid;
        assert_int_equal(
            keel_lookup(s, NULL, "pgbench_accounts", &key, out, &found),
            KEEL_OK);
        assert_true(found);
        assert_int_equal(out[0].v.i4, aid);
        assert_int_equal(out[1].v.i4, 1);
        assert_int_equal(out[2].v.i4, 0);
        assert_int_equal(out[3].v.s.len, 84);
    }
    key.v.i4 = 100001;
    assert_int_equal(
        keel_lookup(s, NULL, "pgbench_accounts", &key, out, &found), KEEL_OK);
    assert_false(found);
    key.v.i4 = 10;
    assert_int_equal(keel_lookup(s, NULL, "pgbench_tellers", &key, out, &found),
                     KEEL_OK);
    assert_true(found);
    assert_int_equal(out[1].v.i4, 1);
    assert_true(out[3].isnull);
    key.v.i4 = 1;
    assert_int_equal(
        keel_lookup(s, NULL, "pgbench_branches", &key, out, &found), KEEL_OK);
    assert_true(found);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);

    acc = find_rel(dir, "pgbench_accounts");
    pk = find_rel(dir, "pgbench_accounts_pkey");
    br = find_rel(dir, "pgbench_branches");
    assert_int_equal(acc.kind, 't');
    assert_int_equal(pk.kind, 'i');
    assert_int_equal(pk.table, acc.oid);
    assert_true(pk.unique);
    assert_true(acc.blocks > 1000);
    assert_true(pk.blocks > 100);
    assert_int_equal(br.blocks, 1);
    assert_int_equal(find_rel(dir, "pgbench_history").blocks, 0);

    /* A fresh database passes. */
    assert_int_equal(run_check(dir, &l), 0);
    assert_int_equal(l.n, 0);

    /* A flipped bit in a heap page: its file and block are named. */
    snprintf(path, sizeof(path), "%s/%u", dir, acc.relnumber);
    off = 5L * BLOCK_SIZE + 4000;
    tu_flip_bit(path, off, 2);
    assert_int_equal(run_check(dir, &l), 1);
    snprintf(blk5, sizeof(blk5), "block 5 ");
    assert_true(any_line_has(&l, path, blk5));
    assert_true(any_line_has(&l, "pgbench_accounts", "checksum"));
    tu_flip_bit(path, off, 2);
    assert_int_equal(run_check(dir, &l), 0);

    /* Two keys of an index leaf swapped, the checksum made right again. */
    {
        blocknum_t leaf = BT_NONE;
        uint16_t *lp, t;
        for (blocknum_t b = 1; b < pk.blocks && leaf == BT_NONE; b++) {
            bt_opaque op;
            tu_page_io(dir, pk.relnumber, b, page, false);
            memcpy(&op, page + BT_SPECIAL_OFF, sizeof(op));
            if ((op.flags & BT_LEAF) && op.right != BT_NONE)
                leaf = b;
        }
        assert_true(leaf != BT_NONE);
        memcpy(saved, page, BLOCK_SIZE);
        lp = (uint16_t *)(page + PAGE_HEADER_SIZE);
        t = lp[3];
        lp[3] = lp[4];
        lp[4] = t;
        page_set_checksum(page);
        tu_page_io(dir, pk.relnumber, leaf, page, true);
        assert_true(run_check(dir, &l) >= 1);
        assert_true(any_line_has(&l, "pgbench_accounts_pkey", NULL));
        tu_page_io(dir, pk.relnumber, leaf, saved, true);
        assert_int_equal(run_check(dir, &l), 0);

        /* A flipped bit in the same leaf. */
        snprintf(path, sizeof(path), "%s/%u", dir, pk.relnumber);
        tu_flip_bit(path, (long)leaf * BLOCK_SIZE + 300, 5);
        assert_true(run_check(dir, &l) >= 1);
        assert_true(any_line_has(&l, path, NULL));
        assert_true(any_line_has(&l, "pgbench_accounts_pkey", NULL));
    }

    tu_dir_remove(dir);
}

/* A commit-log status with the invalid pattern (its page's checksum made
 * right again) is a problem naming the log's file and block. */
static void test_check_clog_bits(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e = {0};
    keel_db *db;
    keel_session *s;
    static _Alignas(8) unsigned char page[BLOCK_SIZE], saved[BLOCK_SIZE];
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    create_t(s, mod7);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);

    tu_page_io(dir, CATALOG_CLOG_REL, 0, page, false);
    memcpy(saved, page, BLOCK_SIZE);
    /* Transaction 1000, which never ran: both bits. */
    page[PAGE_HEADER_SIZE + 250] |= 0x03;
    page_set_checksum(page);
    tu_page_io(dir, CATALOG_CLOG_REL, 0, page, true);
    assert_int_equal(run_check(dir, &l), 1);
    assert_true(any_line_has(&l, "invalid status bits for transaction 1000",
                             "block 0"));
    tu_page_io(dir, CATALOG_CLOG_REL, 0, saved, true);
    assert_int_equal(run_check(dir, &l), 0);
    tu_dir_remove(dir);
}

/* After every kind of change (updates, deletes, refused and aborted
 * inserts, a dropped table) the tables and their indexes still agree. */
static void test_check_after_changes(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e = {0};
    keel_db *db;
    keel_session *s, *old;
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                       {"v", KEEL_INT4, 0, false}};
    uint16_t pk = 1;
    keel_value row[2], key;
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    create_t(s, mod7);
    /* An open snapshot holds the horizon back: no dead version is pruned
     * and no entry shed, so the pages below are as this test expects. */
    assert_int_equal(keel_session_begin(db, &old, &e), KEEL_OK);
    assert_int_equal(keel_begin(old), KEEL_OK);
    row[0].isnull = row[1].isnull = false;
    row[1].v.i4 = 300 % 7;
    row[0].v.i4 = 5; /* taken: refused, its row deleted again */
    assert_int_equal(keel_insert(s, NULL, "t", row), KEEL_EUNIQUE);
    key = row[0];
    row[1].v.i4 = 99;
    assert_int_equal(keel_update(s, NULL, "t", &key, row), KEEL_OK);
    key.v.i4 = 6;
    assert_int_equal(keel_delete(s, NULL, "t", &key), KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    row[0].v.i4 = 1000;
    assert_int_equal(keel_insert(s, NULL, "t", row), KEEL_OK);
    keel_abort(s);
    assert_int_equal(keel_create_table(s, NULL, "gone", cols, 2, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_drop_table(s, NULL, "gone"), KEEL_OK);
    /* Row 7 updated ten times: the primary key's unique checks mark the
     * entries of its dead versions. */
    key.v.i4 = row[0].v.i4 = 7;
    for (int i = 0; i < 10; i++) {
        row[1].v.i4 = 700 + i;
        assert_int_equal(keel_update(s, NULL, "t", &key, row), KEEL_OK);
    }
    assert_int_equal(keel_commit(old), KEEL_OK);
    keel_session_end(old);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);

    /* A unique index may lose a dead row's entry (btree_insert_prune()
     * removes them), never a live row's; a plain index neither. */
    {
        dbinfo_rel pkey = find_rel(dir, "t_pkey"), tv = find_rel(dir, "t_v");
        static _Alignas(8) unsigned char orig[BLOCK_SIZE], page[BLOCK_SIZE],
            vorig[BLOCK_SIZE], vpage[BLOCK_SIZE];
        uint16_t dead = UINT16_MAX, vslot;
        char want[32];
        tid dt;

        tu_page_io(dir, pkey.relnumber, 1, orig, false);
        memcpy(page, orig, BLOCK_SIZE);
        for (uint16_t i = 0; i < btpage_nitems(page) && dead == UINT16_MAX; i++)
            if (btpage_item(page, i)->info & BT_INFO_UNIQUE_DEAD)
                dead = i;
        assert_int_not_equal(dead, UINT16_MAX);
        dt = btitem_tid(btpage_item(page, dead), true);
        btpage_remove(page, dead);
        page_set_checksum(page);
        tu_page_io(dir, pkey.relnumber, 1, page, true);
        assert_int_equal(run_check(dir, &l), 0);
        /* id 2's entry, a live row's (the rows' first slots are ids 1..4). */
        btpage_remove(page, 1);
        page_set_checksum(page);
        tu_page_io(dir, pkey.relnumber, 1, page, true);
        assert_int_equal(run_check(dir, &l), 1);
        assert_true(
            any_line_has(&l, "t_pkey", "(0,2) of table t is indexed 0"));
        tu_page_io(dir, pkey.relnumber, 1, orig, true);
        assert_int_equal(run_check(dir, &l), 0);
        /* The dead row's entry in the plain index. */
        assert_int_equal(tv.blocks, 2);
        tu_page_io(dir, tv.relnumber, 1, vorig, false);
        memcpy(vpage, vorig, BLOCK_SIZE);
        vslot = leaf_slot_of(vpage, dt);
        btpage_remove(vpage, vslot);
        page_set_checksum(vpage);
        tu_page_io(dir, tv.relnumber, 1, vpage, true);
        assert_int_equal(run_check(dir, &l), 1);
        snprintf(want, sizeof(want), "(%u,%u)", dt.block, dt.offset);
        assert_true(any_line_has(&l, "t_v", want));
        tu_page_io(dir, tv.relnumber, 1, vorig, true);
        assert_int_equal(run_check(dir, &l), 0);
    }

    /* The primary key's first entry (id 1's) pointed past the heap page's
     * tuples, then past the heap's blocks: the entry is reported as pointing to
     * no tuple, and its row as indexed 0 times. */
    {
        dbinfo_rel pkey = find_rel(dir, "t_pkey");
        static _Alignas(8) unsigned char orig[BLOCK_SIZE], page[BLOCK_SIZE];
        static const tid to[] = {{0, 999}, {4000, 1}};
        bt_item *it;
        char want[48];
        tid real;

        tu_page_io(dir, pkey.relnumber, 1, orig, false);
        for (size_t i = 0; i < sizeof(to) / sizeof(to[0]); i++) {
            memcpy(page, orig, BLOCK_SIZE);
            it = (bt_item *)btpage_item(page, 0);
            real = btitem_tid(it, true);
            it->block = to[i].block;
            it->offset = to[i].offset;
            page_set_checksum(page);
            tu_page_io(dir, pkey.relnumber, 1, page, true);
            assert_int_equal(run_check(dir, &l), 2);
            snprintf(want, sizeof(want), "points to (%u,%u), which is no",
                     to[i].block, to[i].offset);
            assert_true(any_line_has(&l, "t_pkey", want));
            snprintf(want, sizeof(want), "(%u,%u) of table t is indexed 0",
                     real.block, real.offset);
            assert_true(any_line_has(&l, "t_pkey", want));
        }
        tu_page_io(dir, pkey.relnumber, 1, orig, true);
        assert_int_equal(run_check(dir, &l), 0);
    }

    /* A mark on the entry of a live row (id 1, the leaf's first entry),
     * the checksum made right again: reported. */
    {
        dbinfo_rel pkey = find_rel(dir, "t_pkey");
        static _Alignas(8) unsigned char page[BLOCK_SIZE];
        int marked = 0;

        assert_int_equal(pkey.blocks, 2); /* the meta page and one leaf */
        tu_page_io(dir, pkey.relnumber, 1, page, false);
        for (uint16_t i = 0; i < btpage_nitems(page); i++)
            marked += (btpage_item(page, i)->info & BT_INFO_UNIQUE_DEAD) != 0;
        assert_int_equal(marked, 9);
        btpage_item_set_unique_dead(page, 0, true);
        page_set_checksum(page);
        tu_page_io(dir, pkey.relnumber, 1, page, true);
        assert_int_equal(run_check(dir, &l), 1);
        assert_true(any_line_has(&l, "t_pkey", "is marked dead"));
        assert_true(any_line_has(&l, "(0,1)", "may be live"));

        /* Every entry marked: ten lines, then one that counts the rest. */
        for (uint16_t i = 0; i < btpage_nitems(page); i++)
            btpage_item_set_unique_dead(page, i, true);
        page_set_checksum(page);
        tu_page_io(dir, pkey.relnumber, 1, page, true);
        assert_true(run_check(dir, &l) > 250);
        assert_int_equal(l.n, 11);
        assert_true(any_line_has(&l, "t_pkey", "more tuples disagree"));
    }
    tu_dir_remove(dir);
}

/*
 * Pruned versions: heap page 0 full, a row deleted and one updated, then
 * (the horizon past both) another update of a row on that page prunes
 * them.  Their line pointers are DEAD, which the check accepts with or
 * without their entries in the plain index; a live row's entry missing
 * is still reported.
 */
static void test_check_pruned(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    keel_value row[2], key;
    lines l;

    (void)state;
    if (!membarrier_ready())
        skip(); /* no horizon here: nothing is ever pruned */
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    create_t(s, plus1000);
    row[0].isnull = row[1].isnull = false;
    key = tu_vi4(6);
    assert_int_equal(keel_delete(s, NULL, "t", &key), KEEL_OK);
    key.v.i4 = row[0].v.i4 = 5;
    row[1].v.i4 = 55;
    assert_int_equal(keel_update(s, NULL, "t", &key, row), KEEL_OK);
    /* Past the longest wait between two horizons (5 ms). */
    usleep(20000);
    key.v.i4 = row[0].v.i4 = 8;
    row[1].v.i4 = 88;
    assert_int_equal(keel_update(s, NULL, "t", &key, row), KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);

    {
        dbinfo_rel t = find_rel(dir, "t"), tv = find_rel(dir, "t_v");
        static _Alignas(8) unsigned char heap[BLOCK_SIZE], page[BLOCK_SIZE];
        uint16_t slot;
        char want[32];

        tu_page_io(dir, t.relnumber, 0, heap, false);
        assert_int_equal(heappage_lp_state_of(heappage_get_lp(heap, 6)),
                         HEAPPAGE_LP_DEAD);
        assert_int_equal(heappage_lp_state_of(heappage_get_lp(heap, 5)),
                         HEAPPAGE_LP_DEAD);
        assert_int_equal(heappage_lp_state_of(heappage_get_lp(heap, 8)),
                         HEAPPAGE_LP_NORMAL); /* its deleter ran */
        assert_int_equal(run_check(dir, &l), 0);

        /* t_v: block 1 is its only leaf. */
        assert_int_equal(tv.blocks, 2);
        tu_page_io(dir, tv.relnumber, 1, page, false);
        slot = leaf_slot_of(page, (tid){.block = 0, .offset = 6});
        btpage_remove(page, slot);
        page_set_checksum(page);
        tu_page_io(dir, tv.relnumber, 1, page, true);
        assert_int_equal(run_check(dir, &l), 0);
        /* A live row's: id 1's. */
        slot = leaf_slot_of(page, (tid){.block = 0, .offset = 1});
        btpage_remove(page, slot);
        page_set_checksum(page);
        tu_page_io(dir, tv.relnumber, 1, page, true);
        assert_int_equal(run_check(dir, &l), 1);
        snprintf(want, sizeof(want), "(0,1) of table t is indexed 0");
        assert_true(any_line_has(&l, "t_v", want));
    }
    tu_dir_remove(dir);
}

/* The tuple at line pointer off of heap page page, which must be one. */

static heap_tuple_header *tuple_at(unsigned char *page, uint16_t off)
{
    heappage_lp lp = heappage_get_lp(page, off);

    assert_int_equal(heappage_lp_state_of(lp), HEAPPAGE_LP_NORMAL);
    return (heap_tuple_header *)(page + heappage_lp_off(lp));
}

/*
 * Heap-only chains (access/heap_page.h): a row updated 400 times without
 * an index on the changed column, pruned on the way, leaves its first
 * line a redirect; an index built afterwards names the row by that root,
 * and the check passes.  An entry moved to the chain's live heap-only
 * version is two problems: the root not indexed, the heap-only version
 * indexed.
 */
static void test_check_heap_only(void **state)
{
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                       {"v", KEEL_INT4, 0, false}};
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    keel_value row[2], key;
    uint16_t pk = 1, k2 = 2;
    lines l;

    (void)state;
    if (!membarrier_ready())
        skip(); /* no horizon here: nothing is ever pruned */
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "h", cols, 2, &pk, 1), KEEL_OK);
    for (int32_t i = 1; i <= 10; i++) {
        row[0] = tu_vi4(i);
        row[1] = tu_vi4(i);
        assert_int_equal(keel_insert(s, NULL, "h", row), KEEL_OK);
    }
    key = tu_vi4(3);
    for (int32_t i = 0; i < 400; i++) {
        row[0] = tu_vi4(3);
        row[1] = tu_vi4(1000 + i);
        assert_int_equal(keel_update(s, NULL, "h", &key, row), KEEL_OK);
        if (i % 50 == 49)
            usleep(20000); /* past the longest wait between horizons */
    }
    assert_int_equal(keel_create_index(s, NULL, "h", "h_v", &k2, 1, false),
                     KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);

    {
        dbinfo_rel h = find_rel(dir, "h"), hv = find_rel(dir, "h_v");
        static _Alignas(8) unsigned char heap[BLOCK_SIZE], page[BLOCK_SIZE];
        heappage_lp lp;
        heap_tuple_header *th;
        uint16_t live, slot;
        char want[64];

        assert_int_equal(h.blocks, 1);
        tu_page_io(dir, h.relnumber, 0, heap, false);
        lp = heappage_get_lp(heap, 3);
        assert_int_equal(heappage_lp_state_of(lp), HEAPPAGE_LP_REDIRECT);
        live = heappage_lp_off(lp);
        for (int hops = 0; (th = tuple_at(heap, live))->flags &
                           HEAP_TUPLE_HOT_UPDATED;
             hops++) {
            assert_true(hops < 400);
            live = th->next_offset;
        }
        assert_true(th->flags & HEAP_TUPLE_HEAP_ONLY);
        assert_int_equal(run_check(dir, &l), 0);

        /* h_v: block 1 is its only leaf. */
        assert_int_equal(hv.blocks, 2);
        tu_page_io(dir, hv.relnumber, 1, page, false);
        slot = leaf_slot_of(page, (tid){.block = 0, .offset = 3});
        ((bt_item *)btpage_item(page, slot))->offset = live;
        page_set_checksum(page);
        tu_page_io(dir, hv.relnumber, 1, page, true);
        assert_int_equal(run_check(dir, &l), 2);
        assert_true(any_line_has(&l, "h_v", "(0,3) of table h is indexed 0"));
        snprintf(want, sizeof(want), "(0,%u) of table h is indexed 1 times",
                 live);
        assert_true(any_line_has(&l, want, "heap-only"));
    }
    tu_dir_remove(dir);
}


/* Fails the test, listing l's lines, unless one of them is want. */
static void assert_has_line(const lines *l, const char *want)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->text[i], want) == 0)
            return;
    for (int i = 0; i < l->n; i++)
        print_message("  line %d: %s\n", i, l->text[i]);
    fail_msg("no line \"%s\"", want);
}

static const keel_column w_cols[] = {{"id", KEEL_INT4, 0, true},
                                     {"s", KEEL_TEXT, 0, true},
                                     {"n", KEEL_INT4, 0, false}};

/* Creates w (id int4 primary key, s text not null, n int4) with rows id
 * 1..40, s "row <id>", n 10 * id but null for even ids: one heap page. */
static void create_w(keel_session *s)
{
    uint16_t pk = 1;
    keel_value row[3];
    char buf[16];

    assert_int_equal(keel_create_table(s, NULL, "w", w_cols, 3, &pk, 1),
                     KEEL_OK);
    for (int32_t i = 1; i <= 40; i++) {
        snprintf(buf, sizeof(buf), "row %d", i);
        row[0] = tu_vi4(i);
        row[1] = tu_vstr(buf);
        row[2] = tu_vi4(i * 10);
        row[2].isnull = i % 2 == 0;
        assert_int_equal(keel_insert(s, NULL, "w", row), KEEL_OK);
    }
}

/*
 * Tuples whose bytes do not decode as rows of their table, on a heap page
 * whose checksum is right again: a null bitmap with a not-null column
 * null, a text length past the tuple's end, a header with a column too
 * many.  A read of such a row fails; the check reports each tuple once,
 * naming the table, its file, the block, the tuple and what is wrong,
 * and not also an index entry the damaged tuple lacks: its key cannot be
 * read, so its entries are not judged.
 */
static void test_check_tuples_decoded(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    static _Alignas(8) unsigned char orig[BLOCK_SIZE], page[BLOCK_SIZE],
        leaf_orig[BLOCK_SIZE], leaf[BLOCK_SIZE];
    heap_tuple_header *h;
    dbinfo_rel w, pk;
    char want[3][1024];
    uint32_t huge = 1000;
    keel_value key = tu_vi4(3), out[3];
    bool found;
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    create_w(s);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    w = find_rel(dir, "w");
    pk = find_rel(dir, "w_pkey");
    assert_int_equal(w.blocks, 1);
    assert_int_equal(pk.blocks, 2); /* the meta page and one leaf */

    tu_page_io(dir, w.relnumber, 0, orig, false);
    memcpy(page, orig, BLOCK_SIZE);
    /* (0,2), id 2: n is null, so it has a null bitmap; id marked null. */
    h = tuple_at(page, 2);
    assert_true(h->flags & HEAP_TUPLE_HAS_NULLS);
    ((unsigned char *)h)[h->hoff] |= 0x01;
    /* (0,3): the length word of s (after id) past the tuple's end. */
    h = tuple_at(page, 3);
    assert_false(h->flags & HEAP_TUPLE_HAS_NULLS);
    memcpy((unsigned char *)h + h->hoff + 4, &huge, 4);
    /* (0,4): four columns. */
    tuple_at(page, 4)->natts = 4;
    page_set_checksum(page);
    tu_page_io(dir, w.relnumber, 0, page, true);
    snprintf(want[0], sizeof(want[0]),
             "public.w: file %s/%u block 0: relation %u, row (0,2): column 1 "
             "(int4) is null, but the row type has it not null",
             dir, w.relnumber, w.relnumber);
    snprintf(want[1], sizeof(want[1]),
             "public.w: file %s/%u block 0: relation %u, row (0,3): column 2 "
             "(text) runs past the end of the tuple (%u bytes)",
             dir, w.relnumber, w.relnumber,
             heappage_lp_len(heappage_get_lp(page, 3)));
    snprintf(want[2], sizeof(want[2]),
             "public.w: file %s/%u block 0: relation %u, row (0,4): tuple of "
             "%u bytes with 4 columns does not match the row type (3 "
             "columns)",
             dir, w.relnumber, w.relnumber,
             heappage_lp_len(heappage_get_lp(page, 4)));
    assert_int_equal(run_check(dir, &l), 3);
    assert_int_equal(l.n, 3);
    for (int i = 0; i < 3; i++)
        assert_has_line(&l, want[i]);

    /* A read of row 3 fails, saying the same. */
    o.read_only = true;
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_lookup(s, NULL, "w", &key, out, &found),
                     KEEL_ECORRUPT);
    assert_non_null(strstr(keel_session_error(s),
                           "row (0,3): column 2 (text) runs past the end"));
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    o.read_only = false;

    /* Row 3's entry in w_pkey gone as well: still one line for it. */
    tu_page_io(dir, pk.relnumber, 1, leaf_orig, false);
    memcpy(leaf, leaf_orig, BLOCK_SIZE);
    btpage_remove(leaf, leaf_slot_of(leaf, (tid){.block = 0, .offset = 3}));
    page_set_checksum(leaf);
    tu_page_io(dir, pk.relnumber, 1, leaf, true);
    assert_int_equal(run_check(dir, &l), 3);
    assert_int_equal(l.n, 3);
    for (int i = 0; i < 3; i++)
        assert_has_line(&l, want[i]);
    /* The heap page put back: the tuple decodes, and lacks its entry. */
    tu_page_io(dir, w.relnumber, 0, orig, true);
    assert_int_equal(run_check(dir, &l), 1);
    assert_true(
        any_line_has(&l, "public.w_pkey", "(0,3) of table w is indexed 0"));
    tu_page_io(dir, pk.relnumber, 1, leaf_orig, true);
    assert_int_equal(run_check(dir, &l), 0);
    tu_dir_remove(dir);
}

/*
 * The catalogs' tuples are decoded too: a keel_statistic row whose first
 * common value's length runs past its end, and w's keel_class row with a
 * column too many.  Each is reported with its file, block and tuple.  The check
 * does not stop at the keel_class row, which the list of relations
 * leaves out (a note says so): w's index is then an index of a table
 * keel_class does not hold, and no file is called unowned.
 */
static void test_check_catalog_tuples_decoded(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    static _Alignas(8) unsigned char st_orig[BLOCK_SIZE], st_page[BLOCK_SIZE],
        cls_orig[BLOCK_SIZE], cls_page[BLOCK_SIZE];
    dbinfo_rel w, pk, st, cls;
    tid st_t = {0}, cls_t = {0};
    char want[4][1024];
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    create_w(s);
    assert_int_equal(keel_analyze(s, NULL, "w"), KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    w = find_rel(dir, "w");
    pk = find_rel(dir, "w_pkey");
    st = find_rel(dir, "keel_statistic");
    cls = find_rel(dir, "keel_class");

    /* A keel_statistic row of w's without nulls: relid, attnum,
     * inherited, nullfrac, ndistinct, then mcv1's length word (at 24). */
    for (blocknum_t b = 0; b < st.blocks && st_t.offset == 0; b++) {
        tu_page_io(dir, st.relnumber, b, st_orig, false);
        for (uint16_t off = 1; off <= heappage_nitems(st_orig); off++) {
            heap_tuple_header *h;
            oid_t relid;
            if (heappage_lp_state_of(heappage_get_lp(st_orig, off)) !=
                HEAPPAGE_LP_NORMAL)
                continue;
            h = tuple_at(st_orig, off);
            memcpy(&relid, (unsigned char *)h + h->hoff, 4);
            if (!(h->flags & HEAP_TUPLE_HAS_NULLS) && relid == w.oid) {
                st_t = (tid){.block = b, .offset = off};
                break;
            }
        }
    }
    assert_int_not_equal(st_t.offset, 0);
    memcpy(st_page, st_orig, BLOCK_SIZE);
    {
        heap_tuple_header *h = tuple_at(st_page, st_t.offset);
        uint32_t huge = 5000;
        memcpy((unsigned char *)h + h->hoff + 24, &huge, 4);
    }
    page_set_checksum(st_page);
    /* w's live keel_class row: oid, then its name. */
    for (blocknum_t b = 0; b < cls.blocks && cls_t.offset == 0; b++) {
        tu_page_io(dir, cls.relnumber, b, cls_orig, false);
        for (uint16_t off = 1; off <= heappage_nitems(cls_orig); off++) {
            heap_tuple_header *h;
            if (heappage_lp_state_of(heappage_get_lp(cls_orig, off)) !=
                HEAPPAGE_LP_NORMAL)
                continue;
            h = tuple_at(cls_orig, off);
            if (h->xmax == XID_INVALID &&
                strcmp((char *)h + h->hoff + 4, "w") == 0) {
                cls_t = (tid){.block = b, .offset = off};
                break;
            }
        }
    }
    assert_int_not_equal(cls_t.offset, 0);
    memcpy(cls_page, cls_orig, BLOCK_SIZE);
    tuple_at(cls_page, cls_t.offset)->natts = 9;
    page_set_checksum(cls_page);
    tu_page_io(dir, st.relnumber, st_t.block, st_page, true);
    tu_page_io(dir, cls.relnumber, cls_t.block, cls_page, true);

    snprintf(want[0], sizeof(want[0]),
             "keel_catalog.keel_statistic: file %s/%u block %u: relation "
             "%u, row (%u,%u): column 6 (text) runs past the end of the "
             "tuple (%u bytes)",
             dir, st.relnumber, st_t.block, st.relnumber, st_t.block,
             st_t.offset,
             heappage_lp_len(heappage_get_lp(st_page, st_t.offset)));
    snprintf(want[1], sizeof(want[1]),
             "keel_catalog.keel_class: file %s/%u block %u: relation %u, "
             "row (%u,%u): tuple of %u bytes with 9 columns does not match "
             "the row type (8 columns)",
             dir, cls.relnumber, cls_t.block, cls.relnumber, cls_t.block,
             cls_t.offset,
             heappage_lp_len(heappage_get_lp(cls_page, cls_t.offset)));
    snprintf(want[2], sizeof(want[2]),
             "public.w_pkey (file %u): index of table %u, which keel_class "
             "does not hold",
             pk.relnumber, w.oid);
    snprintf(want[3], sizeof(want[3]),
             "note: 1 row(s) of keel_namespace, keel_class or keel_index "
             "that do not decode were left out of the list of relations: "
             "what they describe may be missing from it, and no file is "
             "called unowned");
    assert_int_equal(run_check(dir, &l), 3);
    assert_int_equal(l.n, 4);
    assert_int_equal(l.notes, 1);
    for (int i = 0; i < 4; i++)
        assert_has_line(&l, want[i]);

    /* The keel_statistic row alone. */
    tu_page_io(dir, cls.relnumber, cls_t.block, cls_orig, true);
    assert_int_equal(run_check(dir, &l), 1);
    assert_int_equal(l.n, 1);
    assert_has_line(&l, want[0]);
    tu_page_io(dir, st.relnumber, st_t.block, st_orig, true);
    assert_int_equal(run_check(dir, &l), 0);
    assert_int_equal(l.n, 0);
    tu_dir_remove(dir);
}

/* In a child: opens the database, and in one transaction inserts row 1001
 * of t, updates row 5, inserts row 1002 and deletes it again; writes
 * every page out (a checkpoint) and dies before the transaction ends, as
 * a crash would. */
static int crash_in_txn(const char *dir)
{
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    keel_value row[2] = {tu_vi4(1001), tu_vi4(1)}, key = tu_vi4(5);
    keel_value row2[2] = {tu_vi4(1002), tu_vi4(2)}, key2 = tu_vi4(1002);
    keel_value upd[2] = {tu_vi4(5), tu_vi4(55)};

    if (keel_db_open(&o, &db, &e) != KEEL_OK ||
        keel_session_begin(db, &s, &e) != KEEL_OK || keel_begin(s) != KEEL_OK ||
        keel_insert(s, NULL, "t", row) != KEEL_OK ||
        keel_update(s, NULL, "t", &key, upd) != KEEL_OK ||
        keel_insert(s, NULL, "t", row2) != KEEL_OK ||
        keel_delete(s, NULL, "t", &key2) != KEEL_OK ||
        keel_checkpoint(db, &e) != KEEL_OK)
        return 1;
    _exit(0);
}

/*
 * A transaction's rows on disk, its id at the control file's transaction
 * id limit: the limit a crash-interrupted open had reserved past it, put
 * back as it was, as if the reservation's write were lost.  The commit
 * log records no end for that transaction, so the open does not refuse
 * the database; the check reports each tuple the transaction inserted or
 * deleted, as an id an open would hand out again.  With the control file
 * as the crash left it, no problem.
 */
static void test_check_xids_past_limit(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    control_data c, saved;
    kerr err;
    pid_t pid;
    int status, nwant = 0;
    xid_t x = XID_INVALID;
    dbinfo_rel t;
    static _Alignas(8) unsigned char page[BLOCK_SIZE];
    char want[8][1024];
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    create_t(s, mod7);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    t = find_rel(dir, "t");
    assert_int_equal(run_check(dir, &l), 0);

    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(crash_in_txn(dir));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* As the crash left it: one note, that it was not shut down. */
    assert_int_equal(run_check(dir, &l), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.notes, 1);

    /* The crashed transaction's id: row 1001's inserter. */
    for (blocknum_t b = 0; b < 2; b++) {
        tu_page_io(dir, t.relnumber, b, page, false);
        for (uint16_t off = 1; off <= heappage_nitems(page); off++) {
            heap_tuple_header *h = tuple_at(page, off);
            int32_t id;
            memcpy(&id, (unsigned char *)h + h->hoff, 4);
            if (id == 1001)
                x = h->xmin;
        }
    }
    assert_true(x >= XID_FIRST_NORMAL);
    assert_int_equal(control_read(dir, &c, &err), KEEL_OK);
    saved = c;
    assert_true(c.xid_limit > x);
    c.xid_limit = x;
    assert_int_equal(control_write(dir, &c, &err), KEEL_OK);
    /* Its tuples: row 5's old version (deleted), its new one and row 1001
     * (inserted), row 1002 (inserted and deleted). */
    for (blocknum_t b = 0; b < 2; b++) {
        tu_page_io(dir, t.relnumber, b, page, false);
        for (uint16_t off = 1; off <= heappage_nitems(page); off++) {
            heap_tuple_header *h = tuple_at(page, off);
            char prefix[512];
            if (h->xmin != x && h->xmax != x)
                continue;
            assert_true(nwant < 8);
            snprintf(prefix, sizeof(prefix),
                     "public.t: file %s/%u block %u: tuple (%u,%u): ", dir,
                     t.relnumber, b, b, off);
            if (h->xmin == x && h->xmax == x)
                snprintf(want[nwant++], sizeof(want[0]),
                         "%sinserting transaction %u and deleting "
                         "transaction %u are at or past the control file's "
                         "transaction id limit %u, from which ids would be "
                         "handed out again",
                         prefix, x, x, x);
            else
                snprintf(want[nwant++], sizeof(want[0]),
                         "%s%s transaction %u is at or past the control "
                         "file's transaction id limit %u, from which ids "
                         "would be handed out again",
                         prefix, h->xmin == x ? "inserting" : "deleting", x, x);
        }
    }
    assert_int_equal(nwant, 4);
    assert_int_equal(run_check(dir, &l), 4);
    assert_int_equal(l.n, 5);
    assert_int_equal(l.notes, 1);
    for (int i = 0; i < nwant; i++)
        assert_has_line(&l, want[i]);
    assert_true(any_line_has(&l, "(0,5): deleting transaction", NULL));

    assert_int_equal(control_write(dir, &saved, &err), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    assert_int_equal(l.n, 1);
    tu_dir_remove(dir);
}

/*
 * Relations, indexes and a schema whose object ids are at or past the
 * control file's object id limit (its CRC right): each keel_class,
 * keel_index and keel_namespace row that gives one of them its id is
 * reported, as an id an open would hand out again.  A lower next_oid
 * alone is no problem: an open restarts from the limit, not from it.
 */
static void test_check_oids_past_limit(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    control_data c, saved;
    kerr err;
    dbinfo_rel pk, tv, cat[3];
    static const char *const cat_names[3] = {"keel_namespace", "keel_class",
                                             "keel_index"};
    static const char *const cat_what[3] = {
        "oid %u is", "oid %u and relnumber %u are", "indexrelid %u is"};
    static _Alignas(8) unsigned char page[BLOCK_SIZE];
    char want[16][1024];
    int nwant = 0, per_cat[3] = {0};
    oid_t lim;
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    create_t(s, mod7);
    assert_int_equal(keel_create_schema(s, "app"), KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    pk = find_rel(dir, "t_pkey");
    tv = find_rel(dir, "t_v");
    for (int i = 0; i < 3; i++)
        cat[i] = find_rel(dir, cat_names[i]);
    assert_true(find_rel(dir, "t").oid < pk.oid && pk.oid < tv.oid);

    assert_int_equal(control_read(dir, &c, &err), KEEL_OK);
    saved = c;
    assert_true(c.oid_limit > tv.oid);
    lim = pk.oid;
    c.oid_limit = c.next_oid = lim;
    assert_int_equal(control_write(dir, &c, &err), KEEL_OK);
    /* Every row of the three catalogs whose first column, the id it
     * gives, is at or past the limit: t_pkey's and t_v's keel_class and
     * keel_index rows, and app's keel_namespace row. */
    for (int i = 0; i < 3; i++)
        for (blocknum_t b = 0; b < cat[i].blocks; b++) {
            tu_page_io(dir, cat[i].relnumber, b, page, false);
            for (uint16_t off = 1; off <= heappage_nitems(page); off++) {
                heap_tuple_header *h;
                oid_t id, relnumber;
                char what[128];
                if (heappage_lp_state_of(heappage_get_lp(page, off)) !=
                    HEAPPAGE_LP_NORMAL)
                    continue;
                h = tuple_at(page, off);
                memcpy(&id, (unsigned char *)h + h->hoff, 4);
                if (id < lim)
                    continue;
                if (i == 1) { /* relnumber: after oid, name, namespace */
                    memcpy(&relnumber, (unsigned char *)h + h->hoff + 72, 4);
                    assert_int_equal(relnumber, id);
                }
                assert_true(nwant < 16);
                per_cat[i]++;
                snprintf(what, sizeof(what), cat_what[i], id, id);
                snprintf(want[nwant++], sizeof(want[0]),
                         "keel_catalog.%s: file %s/%u block %u: tuple "
                         "(%u,%u): %s at or past the control file's object "
                         "id limit %u, from which ids would be handed out "
                         "again",
                         cat_names[i], dir, cat[i].relnumber, b, b, off, what,
                         lim);
            }
        }
    assert_int_equal(per_cat[0], 1);
    assert_true(per_cat[1] >= 2);
    assert_true(per_cat[2] >= 2);
    assert_int_equal(run_check(dir, &l), nwant);
    assert_int_equal(l.n, nwant);
    for (int i = 0; i < nwant; i++)
        assert_has_line(&l, want[i]);

    /* next_oid lowered, the limit as it was: nothing is handed out
     * again. */
    c = saved;
    c.next_oid = CATALOG_FIRST_USER_OID;
    assert_int_equal(control_write(dir, &c, &err), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    assert_int_equal(control_write(dir, &saved, &err), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    tu_dir_remove(dir);
}

/* Not a database, or one open elsewhere: an error, not a problem list. */
static void test_check_not_a_database(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_error e = {0};
    uint64_t problems = 0;
    lines l = {0};

    (void)state;
    assert_int_equal(keel_check(dir, collect, &l, &problems, NULL, &e),
                     KEEL_ENOENT);
    assert_non_null(strstr(e.msg, dir));
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_check(dir, collect, &l, &problems, NULL, &e),
                     KEEL_EBUSY);
    assert_non_null(strstr(e.msg, "already open"));
    assert_int_equal(problems, 0);
    assert_int_equal(l.n, 0);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    /* A damaged control file is a problem the check reports, not a
     * failure to check. */
    {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", dir, CONTROL_FILE_NAME);
        tu_flip_bit(path, 8 + 16, 3);
        assert_int_equal(run_check(dir, &l), 1);
        assert_int_equal(l.n, 1);
        assert_true(any_line_has(&l, "control file", "checksum mismatch"));
        tu_flip_bit(path, 8 + 16, 3);
        assert_int_equal(run_check(dir, &l), 0);
    }
    tu_dir_remove(dir);
}

/* Deletes, in a transaction of its own, the keel_class row of relation
 * name in public, or (schema) the keel_namespace row of schema name:
 * damage that leaves the rows that name it behind. */
static void delete_catalog_row(keel_session *s, bool schema, const char *name)
{
    keel_db *db = s->db;
    catalog_txn ct;
    catalog_relation r;
    catalog_namespace ns;
    keel_value vals[13];
    int rc;

    assert_int_equal(engine_stmt_begin_catalog(s, true, &ct), KEEL_OK);
    if (schema) {
        rc = catalog_namespace_by_name(db->cat, &ct, name, &ns);
        if (rc == KEEL_OK) {
            catalog_namespace_values(&ns, vals);
            rc = catalog_delete(db->cat, &ct, CAT_NAMESPACE, ns.tid, vals);
        }
    } else {
        rc = catalog_relation_by_name(db->cat, &ct, name, NAMESPACE_PUBLIC, &r);
        if (rc == KEEL_OK) {
            catalog_relation_values(&r, vals);
            rc = catalog_delete(db->cat, &ct, CAT_CLASS, r.tid, vals);
        }
    }
    assert_int_equal(engine_stmt_end(s, rc, true), KEEL_OK);
}

/* A table's keel_class row gone, its indexes' rows left: each index is
 * reported, and its file and B-tree still checked. */
static void test_check_index_without_table(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    static _Alignas(8) unsigned char page[BLOCK_SIZE];
    dbinfo_rel tv;
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    create_t(s, mod7);
    delete_catalog_row(s, false, "t");
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);

    assert_int_equal(run_check(dir, &l), 2);
    assert_false(any_line_has(&l, "keel_namespace", NULL));
    assert_true(any_line_has(&l, "t_pkey", "which keel_class does not hold"));
    assert_true(any_line_has(&l, "t_v", "which keel_class does not hold"));
    /* A damaged page of one of them is found too. */
    tv = find_rel(dir, "t_v");
    tu_page_io(dir, tv.relnumber, 1, page, false);
    page[BLOCK_SIZE / 2] ^= 0x10;
    tu_page_io(dir, tv.relnumber, 1, page, true);
    assert_int_equal(run_check(dir, &l), 4);
    assert_true(any_line_has(&l, "t_v", "checksum"));
    tu_dir_remove(dir);
}

/* A relation whose schema's keel_namespace row is gone is reported. */
static void test_check_relation_without_schema(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true}};
    keel_error e;
    keel_db *db;
    keel_session *s;
    uint16_t pk = 1;
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_schema(s, "app"), KEEL_OK);
    assert_int_equal(keel_create_table(s, "app", "t", cols, 1, &pk, 1),
                     KEEL_OK);
    delete_catalog_row(s, true, "app");
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 2); /* t and t_pkey */
    assert_true(any_line_has(&l, "t (file", "is not in keel_namespace"));
    assert_true(any_line_has(&l, "t_pkey (file", "is not in keel_namespace"));
    tu_dir_remove(dir);
}

/* In a child: commits a table "gone", drops it, creates "half" in a
 * transaction, and dies without a close, as a crash would. */
static int crash_after_ddl(const char *dir)
{
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true}};
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    uint16_t pk = 1;

    if (keel_db_open(&o, &db, &e) != KEEL_OK ||
        keel_session_begin(db, &s, &e) != KEEL_OK ||
        keel_create_table(s, NULL, "gone", cols, 1, &pk, 1) != KEEL_OK ||
        keel_drop_table(s, NULL, "gone") != KEEL_OK ||
        keel_begin(s) != KEEL_OK ||
        keel_create_table(s, NULL, "half", cols, 1, &pk, 1) != KEEL_OK)
        return 1;
    _exit(0);
}

/* Files of relation number names in dir, other than the commit log's. */
static int relation_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        relnumber_t rel;
        n += smgr_relnumber_of(de->d_name, &rel) && rel != 1;
    }
    closedir(d);
    return n;
}

/*
 * The files a crash leaves, of a dropped table and of one whose create
 * did not commit, belong to no relation: the check notes each, and
 * nothing else (not the live table's, nor files not named as
 * relations'), after a note that the database was not shut down
 * cleanly; with keel_class unreadable it does not guess at them.
 */
static void test_check_notes_unowned_files(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    pid_t pid;
    int status, before, last = 0;
    char path[4200];
    dbinfo_rel cls, live[3];
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    create_t(s, mod7);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    before = relation_files(dir);
    live[0] = find_rel(dir, "t");
    live[1] = find_rel(dir, "t_pkey");
    live[2] = find_rel(dir, "t_v");
    /* Looked up now: find_rel() opens for writing, and its clean close
     * would end the crash's "not shut down" state below. */
    cls = find_rel(dir, "keel_class");
    for (int i = 0; i < 2; i++) {
        FILE *f;
        snprintf(path, sizeof(path), "%s/%s", dir, i ? "0123" : "notes");
        f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
    }
    assert_int_equal(run_check(dir, &l), 0);
    assert_int_equal(l.notes, 0);

    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(crash_after_ddl(dir));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* gone and gone_pkey, half and half_pkey. */
    assert_int_equal(relation_files(dir), before + 4);
    /* Notes, not problems: such a file is not damage, and damage can
     * make a live relation's look the same (the note says so). */
    assert_int_equal(run_check(dir, &l), 0);
    assert_int_equal(l.notes, 5);
    assert_int_equal(l.n, 5);
    /* First, that the database was not shut down (the check replays its
     * log first, as any open for writing does). */
    snprintf(path, sizeof(path),
             "note: database \"%s\" was not shut down cleanly: ", dir);
    assert_memory_equal(l.text[0], path, strlen(path));
    for (int i = 1; i < 5; i++) {
        unsigned rel = 0;
        snprintf(path, sizeof(path),
                 "note: file %s/%%u is no relation's "
                 "that keel_class shows: a crash",
                 dir);
        assert_int_equal(sscanf(l.text[i], path, &rel), 1);
        assert_non_null(
            strstr(l.text[i], "a damaged keel_class or keel_clog can hide"));
        /* In relation number order, none of them a live relation's. */
        assert_true(rel > (unsigned)last);
        last = (int)rel;
        for (int j = 0; j < 3; j++)
            assert_int_not_equal(rel, live[j].relnumber);
    }
    assert_false(any_line_has(&l, "/0123 ", NULL));
    assert_false(any_line_has(&l, "/notes ", NULL));
    /* The check leaves them. */
    assert_int_equal(relation_files(dir), before + 4);

    /* keel_class's heap page damaged: the catalogs cannot be listed, and
     * no file is called unowned for it (the recovery above shut it down). */
    snprintf(path, sizeof(path), "%s/%u", dir, cls.relnumber);
    tu_flip_bit(path, BLOCK_SIZE / 2, 2);
    assert_true(run_check(dir, &l) >= 1);
    assert_true(any_line_has(&l, "checksum", NULL));
    assert_int_equal(l.notes, 0);
    /* Repaired, then an open for writing and a clean close: the files
     * are noted again, and the shutdown no longer. */
    tu_flip_bit(path, BLOCK_SIZE / 2, 2);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    assert_int_equal(l.notes, 4);
    assert_false(any_line_has(&l, "note: database", NULL));
    tu_dir_remove(dir);
}

/* The schema race's two sides. */
typedef struct ddl_race {
    keel_db *db;
    uint64_t until_ns;
    atomic_int bad;           /* an outcome no interleaving allows */
    atomic_long drops;        /* schemas dropped */
    atomic_long creates;      /* tables created and committed */
    atomic_long refused;      /* creates refused: no schema, or a drop */
    atomic_long drop_refused; /* drops refused: a create in it */
} ddl_race;

static void *race_dropper(void *arg)
{
    ddl_race *r = arg;
    keel_session *s;
    keel_error e;

    if (keel_session_begin(r->db, &s, &e) != KEEL_OK) {
        atomic_store(&r->bad, 1);
        return NULL;
    }
    while (clock_now_ns() < r->until_ns && !atomic_load(&r->bad)) {
        int rc = keel_create_schema(s, "sx");
        if (rc != KEEL_OK && rc != KEEL_EEXIST)
            atomic_store(&r->bad, 10 + rc);
        rc = keel_drop_schema(s, "sx");
        if (rc == KEEL_OK)
            atomic_fetch_add(&r->drops, 1);
        else if (rc == KEEL_EBUSY || rc == KEEL_ESERIALIZE)
            atomic_fetch_add(&r->drop_refused, 1);
        else if (rc != KEEL_ENOENT)
            atomic_store(&r->bad, 30 + rc);
    }
    keel_session_end(s);
    return NULL;
}

static void *race_creator(void *arg)
{
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true}};
    ddl_race *r = arg;
    keel_session *s;
    keel_error e;
    uint16_t pk = 1;
    unsigned seed = 7;

    if (keel_session_begin(r->db, &s, &e) != KEEL_OK) {
        atomic_store(&r->bad, 2);
        return NULL;
    }
    while (clock_now_ns() < r->until_ns && !atomic_load(&r->bad)) {
        int rc = keel_begin(s);
        bool commit = rand_r(&seed) % 4 != 0;
        if (rc == KEEL_OK)
            rc = keel_create_table(s, "sx", "t", cols, 1, &pk, 1);
        if (rc == KEEL_ENOENT || rc == KEEL_ESERIALIZE) {
            atomic_fetch_add(&r->refused, 1);
            keel_abort(s);
            continue;
        }
        if (rc != KEEL_OK) {
            atomic_store(&r->bad, 50 + rc);
            break;
        }
        if (!commit) {
            keel_abort(s);
            continue;
        }
        if (keel_commit(s) != KEEL_OK) {
            atomic_store(&r->bad, 70);
            break;
        }
        atomic_fetch_add(&r->creates, 1);
        /* Committed in its schema: still reachable there. */
        rc = keel_drop_table(s, "sx", "t");
        if (rc != KEEL_OK)
            atomic_store(&r->bad, 90 + rc);
    }
    keel_session_end(s);
    return NULL;
}

/*
 * Stress: one session creates and drops schema sx over and over, another
 * creates a table in it and drops it again, in transactions it commits or
 * aborts.  Whatever the interleaving, a committed table stays reachable
 * (its schema cannot go while it is there), no call fails in a way none
 * allows, and the check finds nothing.
 */
static void test_schema_ddl_race(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    ddl_race r = {0};
    pthread_t d, c;
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &r.db, &e), KEEL_OK);
    r.until_ns = clock_now_ns() + (uint64_t)(tu_stress_seconds(2) * 1e9);
    assert_int_equal(pthread_create(&d, NULL, race_dropper, &r), 0);
    assert_int_equal(pthread_create(&c, NULL, race_creator, &r), 0);
    pthread_join(d, NULL);
    pthread_join(c, NULL);
    print_message("schema race: %ld drops (%ld refused), %ld tables "
                  "created (%ld refused)\n",
                  atomic_load(&r.drops), atomic_load(&r.drop_refused),
                  atomic_load(&r.creates), atomic_load(&r.refused));
    assert_int_equal(atomic_load(&r.bad), 0);
    assert_true(atomic_load(&r.drops) > 0);
    assert_true(atomic_load(&r.creates) > 0);
    assert_int_equal(keel_db_close(r.db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    tu_dir_remove(dir);
}

/* ---- transfers against consistent readers ------------------------------ */

#define BANK_ACCOUNTS 24
#define BANK_WRITERS  4
#define BANK_READERS  3
#define BANK_START    1000

/* What the transfer stress's threads share. */
typedef struct bank {
    keel_db *db;
    uint64_t until_ns;
    tu_failures log;
    atomic_long commits, aborts, conflicts, reads, scans;
} bank;

static bool bank_going(bank *b)
{
    return !tu_failed(&b->log) && clock_now_ns() < b->until_ns;
}

/* Account id's row with balance bal, padded by pad bytes (into buf), so
 * that versions differ in size and some move off their page. */
static void bank_row(keel_value *v, int32_t id, int32_t bal, char *buf,
                     uint32_t pad)
{
    memset(buf, 'a' + id % 26, pad);
    v[0] = tu_vi4(id);
    v[1] = tu_vi4(bal);
    v[2].isnull = false;
    v[2].v.s.ptr = buf;
    v[2].v.s.len = pad;
}

/* Moves money between two accounts, by update or (one in ten) delete and
 * insert, and aborts one in ten on purpose. */
static void *bank_writer(void *arg)
{
    bank *b = arg;
    keel_session *s;
    keel_error e;
    uint64_t rnd = (uint64_t)(uintptr_t)&s;
    char b1[256], b2[256];

    if (keel_session_begin(b->db, &s, &e) != KEEL_OK) {
        tu_fail(&b->log, "writer session: %s", e.msg);
        return NULL;
    }
    while (bank_going(b)) {
        int32_t from = (int32_t)(tu_rand(&rnd) % BANK_ACCOUNTS) + 1, to;
        int32_t amount = (int32_t)(tu_rand(&rnd) % 50) + 1, bal[2];
        int mode = (int)(tu_rand(&rnd) % 10), rc = keel_begin(s);
        keel_value key, out, v[3];
        bool found = false;

        do
            to = (int32_t)(tu_rand(&rnd) % BANK_ACCOUNTS) + 1;
        while (to == from);
        for (int k = 0; rc == KEEL_OK && k < 2; k++) {
            key = tu_vi4(k == 0 ? from : to);
            rc = keel_select_column(s, NULL, "acct", "bal", &key, &out, &found);
            if (rc == KEEL_OK && !found) {
                tu_fail(&b->log, "writer: account %d missing", key.v.i4);
                break;
            }
            bal[k] = out.v.i4;
        }
        if (rc == KEEL_OK && found) {
            bank_row(v, from, bal[0] - amount, b1,
                     (uint32_t)(tu_rand(&rnd) % 200) + 1);
            key = tu_vi4(from);
            if (mode == 0) {
                rc = keel_delete(s, NULL, "acct", &key);
                if (rc == KEEL_OK)
                    rc = keel_insert(s, NULL, "acct", v);
            } else {
                rc = keel_update(s, NULL, "acct", &key, v);
            }
        }
        if (rc == KEEL_OK && found) {
            bank_row(v, to, bal[1] + amount, b2,
                     (uint32_t)(tu_rand(&rnd) % 200) + 1);
            key = tu_vi4(to);
            rc = keel_update(s, NULL, "acct", &key, v);
        }
        if (rc == KEEL_ESERIALIZE) {
            atomic_fetch_add(&b->conflicts, 1);
            keel_abort(s);
        } else if (rc != KEEL_OK) {
            tu_fail(&b->log, "writer: %s", keel_session_error(s));
            keel_abort(s);
        } else if (!found) {
            keel_abort(s);
        } else if (mode == 1) {
            atomic_fetch_add(&b->aborts, 1);
            keel_abort(s);
        } else if (keel_commit(s) != KEEL_OK) {
            tu_fail(&b->log, "commit: %s", keel_session_error(s));
        } else {
            atomic_fetch_add(&b->commits, 1);
        }
    }
    keel_session_end(s);
    return NULL;
}

/* In each transaction reads every balance one to four times, by point
 * selects, lookups or a scan: all reads agree, and add up. */
static void *bank_reader(void *arg)
{
    bank *b = arg;
    keel_session *s;
    keel_error e;
    uint64_t rnd = (uint64_t)(uintptr_t)&s;

    if (keel_session_begin(b->db, &s, &e) != KEEL_OK) {
        tu_fail(&b->log, "reader session: %s", e.msg);
        return NULL;
    }
    while (bank_going(b) && keel_begin(s) == KEEL_OK) {
        int32_t bal[BANK_ACCOUNTS + 1];
        int rounds = 1 + (int)(tu_rand(&rnd) % 4);

        for (int round = 0; round < rounds && bank_going(b); round++) {
            int how = (int)(tu_rand(&rnd) % 3), n = 0;
            keel_value out[3], key;
            keel_scan *sc = NULL;
            bool found = true;
            long sum = 0;
            int rc = how == 2 ? keel_scan_begin(s, NULL, "acct", NULL, NULL,
                                                NULL, &sc)
                              : KEEL_OK;

            for (int32_t id = 1; rc == KEEL_OK && found; id++) {
                if (how == 2) {
                    rc = keel_scan_next(sc, out, &found);
                    if (rc != KEEL_OK || !found)
                        break;
                } else if (id > BANK_ACCOUNTS) {
                    break;
                } else {
                    key = tu_vi4(id);
                    rc = how == 0
                             ? keel_select_column(s, NULL, "acct", "bal", &key,
                                                  &out[1], &found)
                             : keel_lookup(s, NULL, "acct", &key, out, &found);
                    out[0] = key;
                    if (rc != KEEL_OK || !found) {
                        tu_fail(&b->log, "reader: account %d: %s", id,
                                found ? keel_session_error(s) : "missing");
                        break;
                    }
                }
                if (out[0].v.i4 < 1 || out[0].v.i4 > BANK_ACCOUNTS) {
                    tu_fail(&b->log, "reader: account %d", out[0].v.i4);
                    break;
                }
                if (round > 0 && bal[out[0].v.i4] != out[1].v.i4)
                    tu_fail(&b->log,
                            "reader: account %d went from %d to %d in "
                            "one transaction",
                            out[0].v.i4, bal[out[0].v.i4], out[1].v.i4);
                bal[out[0].v.i4] = out[1].v.i4;
                sum += out[1].v.i4;
                n++;
            }
            if (sc != NULL) {
                keel_scan_end(sc);
                atomic_fetch_add(&b->scans, 1);
            }
            if (rc != KEEL_OK)
                tu_fail(&b->log, "reader: %s", keel_session_error(s));
            else if (n != BANK_ACCOUNTS ||
                     sum != (long)BANK_ACCOUNTS * BANK_START)
                tu_fail(&b->log, "reader: %d accounts holding %ld (way %d)", n,
                        sum, how);
            /* One reader holds its snapshot, and with it the horizon,
             * back a while, as writers prune. */
            if (b->reads % 7 == 0 && round + 1 < rounds)
                clock_sleep_us(2000);
        }
        atomic_fetch_add(&b->reads, 1);
        keel_commit(s);
    }
    keel_session_end(s);
    return NULL;
}

/*
 * Writers move money between few accounts (conflicting often, by update,
 * or by delete and insert, some aborting, rows changing size and page)
 * while readers read every balance several times in one transaction by
 * every path (point select, lookup, scan): each reader sees the same
 * balances throughout, adding up to what they started with; at the end
 * the total is the same and the check finds nothing wrong.
 */
static void test_transfer_stress(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                       {"bal", KEEL_INT4, 0, true},
                                       {"pad", KEEL_TEXT, 0, true}};
    pthread_t th[BANK_WRITERS + BANK_READERS];
    bank b = {.log = TU_FAILURES_INIT};
    keel_session *s;
    keel_error e;
    keel_value v[3], key, out;
    char buf[256];
    uint16_t pk = 1;
    bool found;
    long sum = 0;
    lines l;

    (void)state;
    o.max_sessions = 16;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &b.db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(b.db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "acct", cols, 3, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int32_t id = 1; id <= BANK_ACCOUNTS; id++) {
        bank_row(v, id, BANK_START, buf, 100);
        assert_int_equal(keel_insert(s, NULL, "acct", v), KEEL_OK);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
    b.until_ns = clock_now_ns() + (uint64_t)(tu_stress_seconds(2) * 1e9);
    for (int i = 0; i < BANK_WRITERS + BANK_READERS; i++)
        assert_int_equal(
            pthread_create(&th[i], NULL,
                           i < BANK_WRITERS ? bank_writer : bank_reader, &b),
            0);
    for (int i = 0; i < BANK_WRITERS + BANK_READERS; i++)
        pthread_join(th[i], NULL);
    print_message("transfers: %ld committed, %ld aborted, %ld conflicts; "
                  "%ld reading transactions, %ld scans\n",
                  atomic_load(&b.commits), atomic_load(&b.aborts),
                  atomic_load(&b.conflicts), atomic_load(&b.reads),
                  atomic_load(&b.scans));
    tu_failures_check(&b.log);
    assert_true(atomic_load(&b.commits) > 0);
    assert_true(atomic_load(&b.reads) > 0);
    for (int32_t id = 1; id <= BANK_ACCOUNTS; id++) {
        key = tu_vi4(id);
        assert_int_equal(
            keel_select_column(s, NULL, "acct", "bal", &key, &out, &found),
            KEEL_OK);
        assert_true(found);
        sum += out.v.i4;
    }
    assert_int_equal(sum, (long)BANK_ACCOUNTS * BANK_START);
    keel_session_end(s);
    assert_int_equal(keel_db_close(b.db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    assert_int_equal(l.notes, 0);
    tu_dir_remove(dir);
}

/* An index built after rows were updated and deleted, by other
 * transactions or its own, holds only the versions its build saw: the
 * versions that were dead by then need no entry, and the check asks
 * none. */
static void test_check_index_after_changes(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    keel_value key, row[2];
    uint16_t k2 = 2;
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    create_t(s, mod7);
    for (int32_t id = 1; id <= 300; id += 3) {
        key = tu_vi4(id);
        row[0] = key;
        row[1] = tu_vi4(id + 5000);
        assert_int_equal(keel_update(s, NULL, "t", &key, row), KEEL_OK);
        key = tu_vi4(id + 1);
        assert_int_equal(keel_delete(s, NULL, "t", &key), KEEL_OK);
    }
    assert_int_equal(keel_create_index(s, NULL, "t", "t_w", &k2, 1, false),
                     KEEL_OK);
    /* The same in the build's own transaction. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int32_t id = 3; id <= 300; id += 3) {
        key = tu_vi4(id);
        row[0] = key;
        row[1] = tu_vi4(id + 7000);
        assert_int_equal(keel_update(s, NULL, "t", &key, row), KEEL_OK);
    }
    assert_int_equal(keel_delete(s, NULL, "t", &(keel_value){.v.i4 = 1}),
                     KEEL_OK);
    assert_int_equal(keel_create_index(s, NULL, "t", "t_w2", &k2, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_commit(s), KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    tu_dir_remove(dir);
}

/* ---- writers against index builds ---------------------------------------- */

#define BUILD_WRITERS 2
#define BUILD_INDEXES 24
#define BUILD_TRIES   100 /* of each build, refused by rows it cannot see */

/* What the index build stress's threads share. */
typedef struct build_race {
    keel_db *db;
    atomic_int done;    /* the builder has finished */
    atomic_int writers; /* started: each writer's number, for its keys */
    tu_failures log;
    atomic_long inserts, updates, refused, builds, build_refused;
    atomic_int hold; /* writers pause while set (a build refused often) */
} build_race;

/* Inserts new rows and updates old ones of w until the builder is done,
 * retrying what an index build refuses. */
static void *build_writer(void *arg)
{
    build_race *r = arg;
    keel_session *s;
    keel_error e;
    uint64_t rnd = (uint64_t)(uintptr_t)&s;
    /* Keys of its own, whatever the stacks' addresses. */
    int32_t base = (atomic_fetch_add(&r->writers, 1) + 1) * 100000000, n = 0;

    if (keel_session_begin(r->db, &s, &e) != KEEL_OK) {
        tu_fail(&r->log, "writer session: %s", e.msg);
        return NULL;
    }
    while (!atomic_load(&r->done) && !tu_failed(&r->log)) {
        bool insert = n < 50 || tu_rand(&rnd) % 2 == 0;
        if (atomic_load(&r->hold)) {
            clock_sleep_us(100);
            continue;
        }
        keel_value v[2], key;
        int rc;

        if (insert) {
            v[0] = tu_vi4(base + n);
        } else {
            key = tu_vi4(base + (int32_t)(tu_rand(&rnd) % (uint64_t)n));
            v[0] = key;
        }
        v[1] = tu_vi4((int32_t)(tu_rand(&rnd) % 1000));
        rc = insert ? keel_insert(s, NULL, "w", v)
                    : keel_update(s, NULL, "w", &key, v);
        if (rc == KEEL_ESERIALIZE) {
            atomic_fetch_add(&r->refused, 1);
            continue; /* the statement's own transaction is gone */
        }
        if (rc != KEEL_OK) {
            tu_fail(&r->log, "%s: %s", insert ? "insert" : "update",
                    keel_session_error(s));
            break;
        }
        if (insert) {
            n++;
            atomic_fetch_add(&r->inserts, 1);
        } else {
            atomic_fetch_add(&r->updates, 1);
        }
    }
    keel_session_end(s);
    return NULL;
}

/*
 * Indexes built on a table while writers insert and update its rows (the
 * writes a build refuses retried): at the end every row is in every index,
 * as the check verifies; without the writers' check of a build in flight,
 * rows written after a build's scan would be missing from its index.
 */
static void test_writes_against_builds(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                       {"v", KEEL_INT4, 0, true}};
    build_race r = {.log = TU_FAILURES_INIT};
    /* The race is between writers and builds, not with the disk: commits
     * that waited for the log would keep writers running (and builds
     * refused) for most of the time. */
    o.synchronous_commit = false;
    pthread_t th[BUILD_WRITERS];
    keel_session *s;
    keel_error e;
    uint16_t pk = 1, k2 = 2;
    double secs = tu_stress_seconds(2);
    uint64_t pause_us = (uint64_t)(secs * 1e6 / BUILD_INDEXES);
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &r.db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(r.db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "w", cols, 2, &pk, 1), KEEL_OK);
    for (int i = 0; i < BUILD_WRITERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, build_writer, &r), 0);
    /* A build refused by rows committed since its snapshot is tried
     * again, at once, up to BUILD_TRIES times. */
    for (int i = 0; i < BUILD_INDEXES && !tu_failed(&r.log); i++) {
        char name[32];
        int rc = KEEL_ESERIALIZE;
        snprintf(name, sizeof(name), "w_v%d", i);
        clock_sleep_us((uint32_t)pause_us);
        for (int t = 0; t < BUILD_TRIES && rc == KEEL_ESERIALIZE; t++) {
            /* Refused half the tries (a slow build under a sanitizer
             * against busy writers), the writers pause so that it ends:
             * the race is in the tries before. */
            if (t == BUILD_TRIES / 2)
                atomic_store(&r.hold, 1);
            rc = keel_create_index(s, NULL, "w", name, &k2, 1, false);
            if (rc == KEEL_ESERIALIZE)
                atomic_fetch_add(&r.build_refused, 1);
        }
        atomic_store(&r.hold, 0);
        if (rc != KEEL_OK)
            tu_fail(&r.log, "build %d: %s", i, keel_session_error(s));
        else
            atomic_fetch_add(&r.builds, 1);
    }
    atomic_store(&r.done, 1);
    for (int i = 0; i < BUILD_WRITERS; i++)
        pthread_join(th[i], NULL);
    print_message("index builds: %ld built (%ld refused); %ld inserts, %ld "
                  "updates, %ld refused\n",
                  atomic_load(&r.builds), atomic_load(&r.build_refused),
                  atomic_load(&r.inserts), atomic_load(&r.updates),
                  atomic_load(&r.refused));
    tu_failures_check(&r.log);
    assert_int_equal(atomic_load(&r.builds), BUILD_INDEXES);
    assert_true(atomic_load(&r.inserts) > 0);
    keel_session_end(s);
    assert_int_equal(keel_db_close(r.db, &e), KEEL_OK);
    if (run_check(dir, &l) != 0) {
        for (int i = 0; i < l.n; i++)
            print_message("check: %s\n", l.text[i]);
        fail_msg("keel check found problems after the builds");
    }
    tu_dir_remove(dir);
}

/* An index build run by a thread of its own, on table w, column 2. */
typedef struct build_call {
    keel_session *s;
    const char *name;
    keel_status rc;
    char msg[256];
} build_call;

static void *build_call_main(void *arg)
{
    build_call *c = arg;
    uint16_t k2 = 2;

    c->rc = keel_create_index(c->s, NULL, "w", c->name, &k2, 1, false);
    snprintf(c->msg, sizeof(c->msg), "%s", keel_session_error(c->s));
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

/*
 * Starts a build of index name on w in session b, sees it wait for the
 * ROW EXCLUSIVE lock session c holds (its transaction's first lock,
 * taken without a change), then has c update row 2 (replacing the
 * version the build would index) and commit, and returns once the build
 * ended, with its result.
 */
static keel_status build_past_update(keel_session *b, keel_session *c,
                                     const char *name, int32_t v,
                                     build_call *bc)
{
    keel_value key = tu_vi4(2), row[2] = {tu_vi4(2), tu_vi4(v)};
    pthread_t th;

    assert_int_equal(keel_begin(c), KEEL_OK);
    assert_int_equal(
        keel_lock_table(c, NULL, "w", KEEL_LOCK_ROW_EXCLUSIVE, false), KEEL_OK);
    *bc = (build_call){.s = b, .name = name};
    assert_int_equal(pthread_create(&th, NULL, build_call_main, bc), 0);
    see_waiting(b);
    /* Its lock held already, the update does not queue behind the
     * build's SHARE; its xid comes after the build began. */
    assert_int_equal(keel_update(c, NULL, "w", &key, row), KEEL_OK);
    assert_int_equal(keel_commit(c), KEEL_OK);
    assert_int_equal(pthread_join(th, NULL), 0);
    return bc->rc;
}

/*
 * An index build whose lock waited for a writer takes its snapshot again
 * once granted, and sees the writer's update: the version the update
 * replaced is dead to that snapshot and gets no entry.  keel check allows
 * a missing entry only where the deleter's xid is below the build's, so
 * the build takes its xid after its lock, not before: otherwise this
 * database fails the check.  A transaction that holds an xid already (an
 * earlier statement took one) keeps its snapshot through the wait, and
 * its build is refused instead.
 */
static void test_build_after_lock_wait(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                       {"v", KEEL_INT4, 0, true}};
    keel_session *b, *c;
    keel_db *db;
    keel_error e;
    keel_value v[2], key = tu_vi4(2), out[2];
    uint16_t pk = 1;
    build_call bc;
    bool found;
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &c, &e), KEEL_OK);
    assert_int_equal(keel_create_table(b, NULL, "w", cols, 2, &pk, 1), KEEL_OK);
    for (int32_t id = 1; id <= 3; id++) {
        v[0] = tu_vi4(id);
        v[1] = tu_vi4(10 * id);
        assert_int_equal(keel_insert(b, NULL, "w", v), KEEL_OK);
    }
    /* The build waits, then sees the update. */
    if (build_past_update(b, c, "w_v", 21, &bc) != KEEL_OK)
        fail_msg("build: %s", bc.msg);
    assert_int_equal(keel_lookup(b, NULL, "w", &key, out, &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(out[1].v.i4, 21);
    /* An explicit transaction whose xid an earlier statement took (a
     * schema that exists: refused, nothing changed, no lock). */
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_create_schema(b, "public"), KEEL_EEXIST);
    assert_int_equal(build_past_update(b, c, "w_v2", 22, &bc), KEEL_ESERIALIZE);
    assert_non_null(strstr(bc.msg, "w_v2"));
    keel_abort(b);
    keel_session_end(c);
    keel_session_end(b);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    if (run_check(dir, &l) != 0) {
        for (int i = 0; i < l.n; i++)
            print_message("check: %s\n", l.text[i]);
        fail_msg("keel check found problems after the build");
    }
    tu_dir_remove(dir);
}

#ifdef KEEL_FAULT_INJECTION
/*
 * Inserts into a table with two unique indexes and keys of 600 bytes (so
 * that index pages split often), in a pool much smaller than the table,
 * each with one I/O failing somewhere: the n-th write the insert makes
 * (writing out a dirty victim, extending a file) or the n-th read, n
 * varying from insert to insert, or none when it makes fewer.  Every
 * insert must either succeed or fail with the I/O's error and leave
 * nothing: afterwards exactly the rows that succeeded are found, through
 * either index and a scan, and the check finds no problem.  Half the rows
 * go in one explicit transaction, which a failed insert must not spoil.
 * Then updates and deletes, the same way: each row keeps its old values or
 * has its new ones.
 */
#define FAULT_ROWS 2400

/* Arms one failure for change i: of the n-th write (ENOSPC) for even i, of
 * the n-th read (EIO) for odd ones. */
static void fault_arm_one(int32_t i, uint32_t n)
{
    if (i % 2 == 0)
        fault_arm(FAULT_OP_WRITE, FAULT_ENOSPC, n, 1, 0);
    else
        fault_arm(FAULT_OP_READ, FAULT_EIO, n, 1, 0);
}

/* Asserts that change i failed as fault_arm_one() made it. */
static void assert_fault_error(keel_session *s, int32_t i, int rc)
{
    const char *want = i % 2 == 0 ? "No space" : "Input/output error";

    if (rc != (i % 2 == 0 ? KEEL_ENOSPC : KEEL_EIO) ||
        strstr(keel_session_error(s), want) == NULL)
        fail_msg("change %d: %d, %s", i, rc, keel_session_error(s));
}

static keel_value fault_key(char *buf, int32_t i)
{
    snprintf(buf, 16, "%06d", (int)(((int64_t)i * 7919) % 1000000));
    memset(buf + 6, 'k', 594);
    return (keel_value){.isnull = false, .v.s = {buf, 600}};
}

static void test_changes_under_io_faults(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    static const keel_column cols[] = {{"k", KEEL_TEXT, 0, true},
                                       {"n", KEEL_INT4, 0, true}};
    static bool ok[FAULT_ROWS];
    static int32_t want[FAULT_ROWS]; /* the row's n, or -1: no row */
    static char buf[600];
    keel_session *s;
    keel_db *db;
    keel_error e;
    keel_value v[2], out[2];
    uint16_t pk = 1, k2 = 2;
    int failed = 0, in = 0, n;
    keel_scan *sc;
    bool found;
    lines l;

    (void)state;
    o.pool_mb = 1;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "t", cols, 2, &pk, 1), KEEL_OK);
    assert_int_equal(keel_create_index(s, NULL, "t", "t_n", &k2, 1, true),
                     KEEL_OK);
    for (int32_t i = 0; i < FAULT_ROWS; i++) {
        int rc;
        if (i == FAULT_ROWS / 2)
            assert_int_equal(keel_begin(s), KEEL_OK);
        v[0] = fault_key(buf, i);
        v[1] = tu_vi4(i);
        fault_arm_one(i, (uint32_t)(i % 7));
        rc = keel_insert(s, NULL, "t", v);
        fault_disarm_all();
        ok[i] = rc == KEEL_OK;
        if (rc != KEEL_OK) {
            assert_fault_error(s, i, rc);
            failed++;
        }
        in += ok[i];
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
    print_message("inserts under I/O faults: %d of %d failed\n", failed,
                  FAULT_ROWS);
    /* Failures of every kind happened, and most inserts got through. */
    assert_true(failed >= 20);
    assert_true(in >= FAULT_ROWS / 2);

    for (int32_t i = 0; i < FAULT_ROWS; i++) {
        v[0] = fault_key(buf, i);
        assert_int_equal(keel_lookup(s, NULL, "t", v, out, &found), KEEL_OK);
        if (found != ok[i])
            fail_msg("row %d: %s, but its insert %s", i,
                     found ? "found" : "absent",
                     ok[i] ? "succeeded" : "failed");
        if (found)
            assert_int_equal(out[1].v.i4, i);
        want[i] = ok[i] ? i : -1;
    }
    /* Then updates (a new n: new entries in both indexes) and deletes,
     * each in its own transaction, each meeting a failing write. */
    failed = 0;
    for (int32_t i = 0; i < FAULT_ROWS; i++) {
        keel_value key = fault_key(buf, i);
        int rc;
        if (want[i] < 0 || i % 3 == 2)
            continue;
        v[0] = key;
        v[1] = tu_vi4(i + FAULT_ROWS);
        fault_arm_one(i, (uint32_t)(i % 5));
        rc = i % 3 == 0 ? keel_update(s, NULL, "t", &key, v)
                        : keel_delete(s, NULL, "t", &key);
        fault_disarm_all();
        if (rc == KEEL_OK) {
            want[i] = i % 3 == 0 ? i + FAULT_ROWS : -1;
            in -= i % 3 == 1;
        } else {
            assert_fault_error(s, i, rc);
            failed++;
        }
    }
    print_message("updates and deletes under I/O faults: %d failed\n", failed);
    assert_true(failed >= 10);
    for (int32_t i = 0; i < FAULT_ROWS; i++) {
        v[0] = fault_key(buf, i);
        assert_int_equal(keel_lookup(s, NULL, "t", v, out, &found), KEEL_OK);
        if (found != (want[i] >= 0))
            fail_msg("row %d: %s, expected %s", i, found ? "found" : "absent",
                     want[i] >= 0 ? "there" : "gone");
        if (found)
            assert_int_equal(out[1].v.i4, want[i]);
    }
    v[0] = tu_vi4(-1);
    v[1] = tu_vi4(2 * FAULT_ROWS);
    {
        keel_bound lo = {&v[0], 1, true}, hi = {&v[1], 1, true};
        assert_int_equal(keel_scan_begin(s, NULL, "t", "t_n", &lo, &hi, &sc),
                         KEEL_OK);
    }
    n = 0;
    while (keel_scan_next(sc, out, &found) == KEEL_OK && found) {
        int32_t i = out[1].v.i4 % FAULT_ROWS;
        assert_true(out[1].v.i4 >= 0 && out[1].v.i4 < 2 * FAULT_ROWS);
        assert_int_equal(want[i], out[1].v.i4);
        n++;
    }
    keel_scan_end(sc);
    assert_int_equal(n, in);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    tu_dir_remove(dir);
}

/* Rows 0..DDL_ROWS-1 of a loaded table: (i, a text of 300 bytes). */
#define DDL_ROWS 400

typedef struct ddl_load {
    int32_t i;
    char text[300];
} ddl_load;

static keel_status ddl_next(void *ctx, keel_value *values, bool *done)
{
    ddl_load *l = ctx;

    if (l->i == DDL_ROWS) {
        *done = true;
        return KEEL_OK;
    }
    memset(l->text, 'a' + l->i % 26, sizeof(l->text));
    values[0] = tu_vi4((l->i * 7919) % DDL_ROWS);
    values[1] = (keel_value){.isnull = false, .v.s = {l->text, 300}};
    l->i++;
    return KEEL_OK;
}

/*
 * Schema changes under I/O faults, as changes above: tables loaded,
 * indexed, analyzed and dropped, each statement meeting one failing read
 * or write at a varying point.  Each takes effect whole or not at all:
 * afterwards the catalogs hold exactly the tables and indexes whose
 * statements succeeded, each table its rows, and the check finds no
 * problem and no file that no relation owns.
 */
#define DDL_TABLES 24

static void test_ddl_under_io_faults(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    static const keel_column cols[] = {{"k", KEEL_INT4, 0, true},
                                       {"v", KEEL_TEXT, 0, true}};
    bool table[DDL_TABLES] = {false}, index[DDL_TABLES] = {false};
    uint16_t pk = 1, k2 = 2;
    int failed = 0, tables = 0, indexes = 0, round;
    keel_session *s;
    keel_db *db;
    keel_error e;
    dbinfo_rel *r;
    size_t n;
    lines l;

    (void)state;
    o.pool_mb = 1;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    for (round = 0; round < 4 * DDL_TABLES; round++) {
        int32_t t = (round * 5) % DDL_TABLES;
        char name[32], iname[32];
        ddl_load ld = {0};
        uint64_t rows = 0;
        int rc;

        snprintf(name, sizeof(name), "d%d", t);
        snprintf(iname, sizeof(iname), "d%d_v", t);
        /* Loads and builds make many reads and writes, the rest few. */
        fault_arm_one(round, !table[t] || !index[t]
                                 ? (uint32_t)((round * 37) % 60)
                                 : (uint32_t)(round % 4));
        if (!table[t]) {
            rc = keel_load_table(s, NULL, name, cols, 2, &pk, 1, ddl_next, &ld,
                                 &rows);
            if (rc == KEEL_OK)
                table[t] = true;
        } else if (!index[t]) {
            rc = keel_create_index(s, NULL, name, iname, &k2, 1, false);
            if (rc == KEEL_OK)
                index[t] = true;
        } else if (round % 3 == 0) {
            rc = keel_analyze(s, NULL, name);
        } else {
            rc = keel_drop_table(s, NULL, name);
            if (rc == KEEL_OK)
                table[t] = index[t] = false;
        }
        fault_disarm_all();
        if (rc != KEEL_OK) {
            assert_fault_error(s, round, rc);
            failed++;
        }
    }
    print_message("schema changes under I/O faults: %d of %d failed\n", failed,
                  round);
    assert_true(failed >= 10);

    assert_int_equal(dbinfo_relations(s, &r, &n, NULL), KEEL_OK);
    for (size_t i = 0; i < n; i++) {
        int32_t t = -1;
        if (strcmp(r[i].schema, "public") != 0)
            continue;
        if (sscanf(r[i].name, "d%d", &t) != 1 || t < 0 || t >= DDL_TABLES)
            fail_msg("unexpected relation %s", r[i].name);
        if (r[i].kind == 't') {
            assert_true(table[t]);
            tables++;
        } else if (strstr(r[i].name, "_v") != NULL) {
            assert_true(index[t]);
            indexes++;
        } else {
            assert_true(table[t]); /* its primary key */
        }
    }
    free(r);
    for (int32_t t = 0; t < DDL_TABLES; t++) {
        tables -= table[t];
        indexes -= index[t];
        if (table[t]) {
            char name[32];
            keel_value lo = tu_vi4(0), hi = tu_vi4(DDL_ROWS), out[2];
            keel_bound lb = {&lo, 1, true}, hb = {&hi, 1, true};
            keel_scan *sc;
            bool found;
            int rows = 0;
            snprintf(name, sizeof(name), "d%d", t);
            assert_int_equal(
                keel_scan_begin(s, NULL, name, NULL, &lb, &hb, &sc), KEEL_OK);
            while (keel_scan_next(sc, out, &found) == KEEL_OK && found)
                assert_int_equal(out[0].v.i4, rows++);
            keel_scan_end(sc);
            assert_int_equal(rows, DDL_ROWS);
        }
    }
    assert_int_equal(tables, 0);
    assert_int_equal(indexes, 0);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    assert_int_equal(l.notes, 0);
    tu_dir_remove(dir);
}

/*
 * Schema changes as above by DDL_THREADS sessions at once, each on tables
 * of its own (so they share the catalogs' pages), arming faults that any
 * of them may meet: afterwards the catalogs hold exactly what succeeded,
 * and the check finds no problem and no file that no relation owns.
 */
#define DDL_THREADS 3

typedef struct ddl_fault_race {
    keel_db *db;
    int thread;
    bool table[DDL_TABLES], index[DDL_TABLES];
    int failed;
    tu_failures *log;
} ddl_fault_race;

static void *ddl_fault_worker(void *arg)
{
    ddl_fault_race *w = arg;
    static const keel_column cols[] = {{"k", KEEL_INT4, 0, true},
                                       {"v", KEEL_TEXT, 0, true}};
    uint16_t pk = 1, k2 = 2;
    uint64_t rnd = (uint64_t)w->thread * 31 + 7;
    keel_session *s;
    keel_error e;

    if (keel_session_begin(w->db, &s, &e) != KEEL_OK) {
        tu_fail(w->log, "session: %s", e.msg);
        return NULL;
    }
    for (int round = 0; round < 3 * DDL_TABLES && !tu_failed(w->log); round++) {
        int32_t t = (round * 5) % DDL_TABLES;
        char name[32], iname[32];
        ddl_load ld = {0};
        uint64_t rows = 0, x = tu_rand(&rnd);
        int rc;

        snprintf(name, sizeof(name), "w%dd%d", w->thread, t);
        snprintf(iname, sizeof(iname), "w%dd%d_v", w->thread, t);
        if (x % 3 == 0) {
            if ((x >> 2) % 2 == 0)
                fault_arm(FAULT_OP_WRITE, FAULT_ENOSPC, (uint32_t)(x >> 8) % 60,
                          1, 0);
            else
                fault_arm(FAULT_OP_READ, FAULT_EIO, (uint32_t)(x >> 8) % 60, 1,
                          0);
        }
        if (!w->table[t]) {
            rc = keel_load_table(s, NULL, name, cols, 2, &pk, 1, ddl_next, &ld,
                                 &rows);
            if (rc == KEEL_OK)
                w->table[t] = true;
        } else if (!w->index[t]) {
            rc = keel_create_index(s, NULL, name, iname, &k2, 1, false);
            if (rc == KEEL_OK)
                w->index[t] = true;
        } else if (round % 3 == 0) {
            rc = keel_analyze(s, NULL, name);
        } else {
            rc = keel_drop_table(s, NULL, name);
            if (rc == KEEL_OK)
                w->table[t] = w->index[t] = false;
        }
        if (rc == KEEL_ENOSPC || rc == KEEL_EIO)
            w->failed++;
        else if (rc != KEEL_OK)
            tu_fail(w->log, "%s: %d, %s", name, rc, keel_session_error(s));
    }
    keel_session_end(s);
    return NULL;
}

static void test_concurrent_ddl_under_io_faults(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    static ddl_fault_race w[DDL_THREADS];
    tu_failures log = TU_FAILURES_INIT;
    pthread_t th[DDL_THREADS];
    int failed = 0, tables = 0, indexes = 0;
    keel_session *s;
    keel_error e;
    dbinfo_rel *r;
    size_t n;
    lines l;

    (void)state;
    o.pool_mb = 1;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &w[0].db, &e), KEEL_OK);
    for (int t = 0; t < DDL_THREADS; t++) {
        w[t] = (ddl_fault_race){.db = w[0].db, .thread = t, .log = &log};
        assert_int_equal(pthread_create(&th[t], NULL, ddl_fault_worker, &w[t]),
                         0);
    }
    for (int t = 0; t < DDL_THREADS; t++) {
        pthread_join(th[t], NULL);
        failed += w[t].failed;
    }
    fault_disarm_all();
    tu_failures_check(&log);
    print_message("concurrent schema changes under I/O faults: %d failed\n",
                  failed);
    assert_true(failed >= 5);
    assert_int_equal(keel_session_begin(w[0].db, &s, &e), KEEL_OK);
    assert_int_equal(dbinfo_relations(s, &r, &n, NULL), KEEL_OK);
    for (size_t i = 0; i < n; i++) {
        int wt = -1, t = -1;
        if (strcmp(r[i].schema, "public") != 0)
            continue;
        if (sscanf(r[i].name, "w%dd%d", &wt, &t) != 2 || wt < 0 ||
            wt >= DDL_THREADS || t < 0 || t >= DDL_TABLES)
            fail_msg("unexpected relation %s", r[i].name);
        if (r[i].kind == 't') {
            assert_true(w[wt].table[t]);
            tables++;
        } else if (strstr(r[i].name, "_v") != NULL) {
            assert_true(w[wt].index[t]);
            indexes++;
        } else {
            assert_true(w[wt].table[t]);
        }
    }
    free(r);
    for (int wt = 0; wt < DDL_THREADS; wt++)
        for (int32_t t = 0; t < DDL_TABLES; t++) {
            tables -= w[wt].table[t];
            indexes -= w[wt].index[t];
        }
    assert_int_equal(tables, 0);
    assert_int_equal(indexes, 0);
    keel_session_end(s);
    assert_int_equal(keel_db_close(w[0].db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    assert_int_equal(l.notes, 0);
    tu_dir_remove(dir);
}

/*
 * The same under concurrency: FAULT_THREADS sessions insert rows of their
 * own (keys interleaved, so that they share pages and split them under
 * each other), then update a third of them (a new n: new entries in both
 * indexes) and delete a third; before one change in eight, its writer arms
 * one failing read or write a few I/Os ahead, and whichever session makes
 * that I/O gets the error, and no other.  Afterwards every row has the
 * values its last successful change gave it, and the check passes.
 */
#define FAULT_THREADS    4
#define FAULT_PER_THREAD 500

typedef struct fault_race {
    keel_db *db;
    int32_t thread;
    bool ok[FAULT_PER_THREAD];
    int32_t want[FAULT_PER_THREAD]; /* the row's n at the end, or -1 */
    int failed, failed_changes;
    tu_failures *log;
} fault_race;

/* For one change in eight (by the random x): one failing I/O, a write
 * (ENOSPC) or a read (EIO) a few I/Os ahead, armed for whichever session
 * makes it. */
static void fault_arm_sometimes(uint64_t x)
{
    if (x % 8 != 0)
        return;
    if ((x >> 3) % 2 == 0)
        fault_arm(FAULT_OP_WRITE, FAULT_ENOSPC, (uint32_t)(x >> 8) % 4, 1, 0);
    else
        fault_arm(FAULT_OP_READ, FAULT_EIO, (uint32_t)(x >> 8) % 4, 1, 0);
}

static void *fault_writer(void *arg)
{
    fault_race *w = arg;
    uint64_t rnd = (uint64_t)w->thread * 7919 + 1;
    keel_session *s;
    keel_error e;
    char buf[600];

    if (keel_session_begin(w->db, &s, &e) != KEEL_OK) {
        tu_fail(w->log, "session: %s", e.msg);
        return NULL;
    }
    for (int32_t j = 0; j < FAULT_PER_THREAD && !tu_failed(w->log); j++) {
        int32_t i = j * FAULT_THREADS + w->thread;
        keel_value v[2] = {fault_key(buf, i), tu_vi4(i)};
        uint64_t x = tu_rand(&rnd);
        int rc;
        fault_arm_sometimes(x);
        rc = keel_insert(s, NULL, "t", v);
        w->ok[j] = rc == KEEL_OK;
        w->want[j] = rc == KEEL_OK ? i : -1;
        if (rc == KEEL_ENOSPC || rc == KEEL_EIO)
            w->failed++;
        else if (rc != KEEL_OK)
            tu_fail(w->log, "insert %d: %d, %s", i, rc, keel_session_error(s));
    }
    /* Then its rows change: a third get a new n (new entries in both
     * indexes), a third go. */
    for (int32_t j = 0; j < FAULT_PER_THREAD && !tu_failed(w->log); j++) {
        int32_t i = j * FAULT_THREADS + w->thread;
        keel_value key = fault_key(buf, i), v[2] = {key, tu_vi4(i + 100000)};
        uint64_t x = tu_rand(&rnd);
        int rc;
        if (w->want[j] < 0 || j % 3 == 2)
            continue;
        fault_arm_sometimes(x);
        rc = j % 3 == 0 ? keel_update(s, NULL, "t", &key, v)
                        : keel_delete(s, NULL, "t", &key);
        if (rc == KEEL_OK)
            w->want[j] = j % 3 == 0 ? i + 100000 : -1;
        else if (rc == KEEL_ENOSPC || rc == KEEL_EIO)
            w->failed_changes++;
        else
            tu_fail(w->log, "%s %d: %d, %s", j % 3 == 0 ? "update" : "delete",
                    i, rc, keel_session_error(s));
    }
    keel_session_end(s);
    return NULL;
}

static void test_concurrent_changes_under_io_faults(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    static const keel_column cols[] = {{"k", KEEL_TEXT, 0, true},
                                       {"n", KEEL_INT4, 0, true}};
    static fault_race w[FAULT_THREADS];
    tu_failures log = TU_FAILURES_INIT;
    pthread_t th[FAULT_THREADS];
    uint16_t pk = 1, k2 = 2;
    int failed = 0, failed_changes = 0, in = 0, n = 0;
    keel_value v[2], out[2];
    keel_session *s;
    keel_scan *sc;
    keel_error e;
    bool found;
    char buf[600];
    lines l;

    (void)state;
    o.pool_mb = 1;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &w[0].db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(w[0].db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "t", cols, 2, &pk, 1), KEEL_OK);
    assert_int_equal(keel_create_index(s, NULL, "t", "t_n", &k2, 1, true),
                     KEEL_OK);
    for (int t = 0; t < FAULT_THREADS; t++) {
        w[t] = (fault_race){.db = w[0].db, .thread = t, .log = &log};
        assert_int_equal(pthread_create(&th[t], NULL, fault_writer, &w[t]), 0);
    }
    for (int t = 0; t < FAULT_THREADS; t++) {
        pthread_join(th[t], NULL);
        failed += w[t].failed;
        failed_changes += w[t].failed_changes;
    }
    fault_disarm_all();
    tu_failures_check(&log);
    print_message("concurrent inserts under I/O faults: %d of %d failed; "
                  "updates and deletes: %d failed\n",
                  failed, FAULT_THREADS * FAULT_PER_THREAD, failed_changes);
    assert_true(failed >= 10);
    assert_true(failed_changes >= 10);
    for (int t = 0; t < FAULT_THREADS; t++)
        for (int32_t j = 0; j < FAULT_PER_THREAD; j++) {
            int32_t i = j * FAULT_THREADS + t;
            v[0] = fault_key(buf, i);
            assert_int_equal(keel_lookup(s, NULL, "t", v, out, &found),
                             KEEL_OK);
            if (found != (w[t].want[j] >= 0))
                fail_msg("row %d: %s, expected %s (its insert %s)", i,
                         found ? "found" : "absent",
                         w[t].want[j] >= 0 ? "there" : "gone",
                         w[t].ok[j] ? "succeeded" : "failed");
            if (found && out[1].v.i4 != w[t].want[j])
                fail_msg("row %d: n %d, expected %d", i, out[1].v.i4,
                         w[t].want[j]);
            in += found;
        }
    v[0] = tu_vi4(-1);
    v[1] = tu_vi4(100000 + FAULT_THREADS * FAULT_PER_THREAD);
    {
        keel_bound lo = {&v[0], 1, true}, hi = {&v[1], 1, true};
        assert_int_equal(keel_scan_begin(s, NULL, "t", "t_n", &lo, &hi, &sc),
                         KEEL_OK);
    }
    while (keel_scan_next(sc, out, &found) == KEEL_OK && found)
        n++;
    keel_scan_end(sc);
    assert_int_equal(n, in);
    keel_session_end(s);
    assert_int_equal(keel_db_close(w[0].db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    tu_dir_remove(dir);
}

/*
 * An insert whose second index refuses its key deletes its row again and
 * removes its first entry.  Here both need pages that were evicted, and
 * reading them fails.  An entry left behind names a dead version and
 * harms nobody: the transaction goes on.  A row that could not be deleted
 * would commit live and missing an entry, but the row's page stays pinned
 * from the insert to its undo: it cannot be evicted, the undo reads
 * nothing, and the transaction goes on.  The same holds for catalog rows.
 */
typedef struct undo_fault {
    keel_session *s; /* the inserting session */
    const char *dir;
    bool heap; /* try to evict the inserted row's page too */
    int fired;
    uint32_t failed; /* reads failed */
} undo_fault;

/* At FAULT_POINT_INDEX_UNDO: every page written out, every relation's
 * evicted (the row's table's too if u->heap: refused, since the insert
 * holds the row's page pinned), and every read from now on failing. */
static void undo_fault_fire(void *ctx, uint32_t rel, uint32_t blk)
{
    undo_fault *u = ctx;
    DIR *d = opendir(u->dir);
    struct dirent *de;
    relnumber_t r;

    (void)blk;
    assert_non_null(d);
    assert_int_equal(buf_checkpoint(u->s->bs), KEEL_OK);
    while ((de = readdir(d)) != NULL)
        if (smgr_relnumber_of(de->d_name, &r) && (r != rel || u->heap))
            assert_int_equal(buf_drop_rel(u->s->bs, r, 0),
                             r == rel ? KEEL_EBUSY : KEEL_OK);
    closedir(d);
    fault_arm(FAULT_OP_READ, FAULT_EIO, 0, UINT32_MAX, 0);
    u->fired++;
}

/* Sets the fault point for u, or clears it (u NULL) and disarms. */
static void undo_fault_set(undo_fault *u)
{
    fault_point_set(FAULT_POINT_INDEX_UNDO, u ? undo_fault_fire : NULL, u);
    if (u == NULL)
        fault_disarm_all();
}

/* Inserts (k, n) in u->s's transaction, the undo failing as u says. */
static int insert_undo_failing(undo_fault *u, int32_t k, int32_t n)
{
    keel_value v[2] = {tu_vi4(k), tu_vi4(n)};
    int rc;

    undo_fault_set(u);
    rc = keel_insert(u->s, NULL, "t", v);
    u->failed = fault_delivered(FAULT_OP_READ);
    undo_fault_set(NULL);
    return rc;
}

/* The n of row k, or -1 if there is none. */
static int32_t row_n(keel_session *s, int32_t k)
{
    keel_value key = tu_vi4(k), out[2];
    bool found;

    assert_int_equal(keel_lookup(s, NULL, "t", &key, out, &found), KEEL_OK);
    return found ? out[1].v.i4 : -1;
}

static void test_insert_undo_fails(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    static const keel_column cols[] = {{"k", KEEL_INT4, 0, true},
                                       {"n", KEEL_INT4, 0, true}};
    uint16_t pk = 1, k2 = 2;
    undo_fault u = {0};
    static const int32_t want[] = {-1, 10, 20, -1, 40, -1, 60};
    keel_session *s, *s2;
    keel_db *db;
    keel_error e;
    lines l;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s2, &e), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "t", cols, 2, &pk, 1), KEEL_OK);
    assert_int_equal(keel_create_index(s, NULL, "t", "t_n", &k2, 1, true),
                     KEEL_OK);
    for (int32_t k = 1; k <= 2; k++) {
        keel_value v[2] = {tu_vi4(k), tu_vi4(10 * k)};
        assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_OK);
    }
    u.s = s;
    u.dir = dir;

    /* The entry stays, the row is deleted: the transaction goes on. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(insert_undo_failing(&u, 3, 20), KEEL_EUNIQUE);
    assert_int_equal(u.fired, 1);
    assert_true(u.failed > 0);
    assert_int_equal(row_n(s, 3), -1);
    {
        keel_value v[2] = {tu_vi4(4), tu_vi4(40)};
        assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_OK);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(row_n(s, 3), -1);
    assert_int_equal(row_n(s, 4), 40);

    /* The row's page cannot be evicted: deleting the row reads nothing,
     * and the transaction goes on. */
    u.heap = true;
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(insert_undo_failing(&u, 5, 20), KEEL_EUNIQUE);
    assert_int_equal(u.fired, 2);
    assert_true(u.failed > 0);
    assert_int_equal(row_n(s, 5), -1);
    {
        keel_value v[2] = {tu_vi4(6), tu_vi4(60)};
        assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_OK);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
    for (int32_t k = 1; k <= 6; k++)
        assert_int_equal(row_n(s, k), want[k]);

    /* A schema's row, refused by the name index because another running
     * transaction made the same name, is deleted again the same way. */
    assert_int_equal(keel_begin(s2), KEEL_OK);
    assert_int_equal(keel_create_schema(s2, "x"), KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    undo_fault_set(&u);
    assert_int_equal(keel_create_schema(s, "x"), KEEL_EEXIST);
    u.failed = fault_delivered(FAULT_OP_READ);
    undo_fault_set(NULL);
    assert_int_equal(u.fired, 3);
    assert_true(u.failed > 0);
    assert_int_equal(keel_create_schema(s, "y"), KEEL_OK);
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(keel_commit(s2), KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_create_schema(s, "x"), KEEL_EEXIST);
    assert_int_equal(keel_create_schema(s, "y"), KEEL_EEXIST);
    keel_abort(s);
    keel_session_end(s2);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(run_check(dir, &l), 0);
    tu_dir_remove(dir);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_stat_check),
        cmocka_unit_test(test_check_clog_bits),
        cmocka_unit_test(test_check_after_changes),
        cmocka_unit_test(test_check_pruned),
        cmocka_unit_test(test_check_heap_only),
        cmocka_unit_test(test_check_tuples_decoded),
        cmocka_unit_test(test_check_catalog_tuples_decoded),
        cmocka_unit_test(test_check_xids_past_limit),
        cmocka_unit_test(test_check_oids_past_limit),
        cmocka_unit_test(test_check_not_a_database),
        cmocka_unit_test(test_check_index_without_table),
        cmocka_unit_test(test_check_relation_without_schema),
        cmocka_unit_test(test_check_notes_unowned_files),
        cmocka_unit_test(test_check_index_after_changes),
        cmocka_unit_test(test_schema_ddl_race),
        cmocka_unit_test(test_transfer_stress),
        cmocka_unit_test(test_writes_against_builds),
        cmocka_unit_test(test_build_after_lock_wait),
#ifdef KEEL_FAULT_INJECTION
        cmocka_unit_test(test_changes_under_io_faults),
        cmocka_unit_test(test_ddl_under_io_faults),
        cmocka_unit_test(test_concurrent_changes_under_io_faults),
        cmocka_unit_test(test_concurrent_ddl_under_io_faults),
        cmocka_unit_test(test_insert_undo_fails),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
