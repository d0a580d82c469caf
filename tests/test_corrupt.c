/*
 * test_corrupt.c: pages whose checksums are right but whose contents are
 * not, as a bug or a hand edit leaves them.  A database with two tables
 * (one with an integer primary key, a text index and a two-column index;
 * one with a long text primary key, so that its B-tree has three levels),
 * rows updated, deleted and pruned, is made once.  Then, for each case, a
 * copy of it gets one page changed (its checksum made right again): a
 * heap page's line pointers, tuple headers (column counts, data offsets,
 * flags, xids, next-version tids), text lengths and null bitmaps, or its
 * header's offsets and flags; a B-tree page's level, flags, left- and
 * right-links, downlinks and entries' tids, dead marks, integer keys,
 * item order or item count; a meta page's root, level and key columns;
 * commit-log status bits; random bytes anywhere, catalogs included; or
 * the control file's counters (its CRC made right again).  The copy is
 * checked (keel_check()), opened, used (lookups, keel_select_column,
 * scans through every index, inserts, updates, deletes, an aborted
 * transaction, DDL, analyze) and checked again.  Every call must return
 * KEEL_OK or an error code, and none may crash, trip a sanitizer or an
 * assertion, run past an alarm or a bounded number of scan steps, or
 * leave a buffer pinned or locked.
 *
 * B-tree pages are also changed where their items lie and how their
 * bytes parse (line pointers, item sizes, more items than the page holds,
 * header offsets, null-bitmap and minus-infinity flags, text lengths in
 * keys): each B-tree page is checked once as it is read from disk
 * (bt_read_check()), and those changes must be refused there.
 *
 * The cases come from a fixed seed.  KEEL_CORRUPT_CASES sets how many
 * run (default TC_DEFAULT_CASES), KEEL_CORRUPT_SEED the seed,
 * KEEL_CORRUPT_FIRST the first to run, and KEEL_CORRUPT_CASE runs one
 * case alone; KEEL_TEST_VERBOSE prints each case, what the check found
 * and the calls that failed.
 */
#include "testutil.h"
#include "wal/wal.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/btree_page.h"
#include "access/heap_page.h"
#include "engine/control.h"
#include "engine/engine.h"
#include "port/crc32c.h"
#include "storage/bufmgr.h"
#include "storage/page.h"
#include "check/dbinfo.h"

/* ThreadSanitizer makes each case some six times slower, and the test has
 * one thread: it runs fewer cases there. */
#if defined(__SANITIZE_THREAD__)
#define TC_DEFAULT_CASES 30
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TC_DEFAULT_CASES 30
#endif
#endif
#ifndef TC_DEFAULT_CASES
#define TC_DEFAULT_CASES 160
#endif
#define TC_T_ROWS    400    /* rows of t */
#define TC_U_ROWS    150    /* rows of u */
#define TC_MAX_STEPS 100000 /* scan steps before a scan counts as endless */
#define TC_ALARM_S   60     /* seconds one case may take */
#define TC_MAX_FILES 64

/* A relation file of the pristine database and what its pages are. */
typedef struct tc_file {
    char name[KEEL_NAME_LEN];
    uint32_t relnumber;
    char kind; /* 't', 'i', DBINFO_KIND_CLOG */
    uint32_t blocks;
} tc_file;

static char *base_dir; /* the pristine database */
static tc_file files[TC_MAX_FILES];
static int nfiles;
static char case_desc[400]; /* the running case, for the alarm */

static void on_alarm(int sig)
{
    static const char msg[] = "case did not finish in time: ";

    (void)sig;
    (void)!write(2, msg, sizeof(msg) - 1);
    (void)!write(2, case_desc, strlen(case_desc));
    (void)!write(2, "\n", 1);
    abort();
}

/* ---- values -------------------------------------------------------------- */

/* t.name for id i: 8..197 letters, distinct per id. */
static void t_name(char *buf, int32_t i)
{
    int len = 8 + (int)((uint32_t)i * 37u % 190u);

    snprintf(buf, 16, "n%06d", i);
    for (int k = 7; k < len; k++)
        buf[k] = (char)('a' + (i + k) % 26);
    buf[len] = '\0';
}

/* u.k for i: a long key (600..1399 bytes) in the order of i. */
static void u_key(char *buf, int32_t i)
{
    int len = 600 + (int)((uint32_t)i * 53u % 800u);

    snprintf(buf, 16, "k%06d", i);
    for (int k = 7; k < len; k++)
        buf[k] = (char)('A' + (i * 7 + k) % 26);
    buf[len] = '\0';
}

static void t_row(keel_value *v, int32_t id, char *name, char *note)
{
    t_name(name, id);
    snprintf(note, 32, "note %d", id);
    v[0] = tu_vi4(id);
    v[1] = tu_vstr(name);
    v[2].isnull = false;
    v[2].v.i8 = (int64_t)id * 1000 - 7;
    v[3] = id % 5 == 0 ? (keel_value){.isnull = true} : tu_vstr(note);
}

/* ---- copying a database ------------------------------------------------- */

static void copy_file(const char *from, const char *to)
{
    static char buf[1 << 16];
    int in = open(from, O_RDONLY), out;
    ssize_t n;

    assert_true(in >= 0);
    out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(out >= 0);
    while ((n = read(in, buf, sizeof(buf))) > 0)
        assert_int_equal(write(out, buf, (size_t)n), n);
    assert_int_equal(n, 0);
    close(in);
    close(out);
}

/* Copies every file of base_dir but its lock file into the empty dir. */
static void copy_db(const char *dir)
{
    DIR *d = opendir(base_dir);
    struct dirent *de;
    char from[512], to[512];

    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || strcmp(de->d_name, CONTROL_LOCK_NAME) == 0)
            continue;
        snprintf(from, sizeof(from), "%s/%s", base_dir, de->d_name);
        snprintf(to, sizeof(to), "%s/%s", dir, de->d_name);
        if (strcmp(de->d_name, WAL_DIR_NAME) == 0) {
            DIR *w = opendir(from);
            struct dirent *we;
            char wf[1100], wt[1100];
            assert_non_null(w);
            assert_int_equal(mkdir(to, 0700), 0);
            while ((we = readdir(w)) != NULL) {
                if (we->d_name[0] == '.')
                    continue;
                snprintf(wf, sizeof(wf), "%.511s/%.255s", from, we->d_name);
                snprintf(wt, sizeof(wt), "%.511s/%.255s", to, we->d_name);
                copy_file(wf, wt);
            }
            closedir(w);
            continue;
        }
        copy_file(from, to);
    }
    closedir(d);
}

/* ---- the pristine database ---------------------------------------------- */

static keel_db_options tc_opts(const char *dir)
{
    keel_db_options o;

    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 4;
    o.max_sessions = 4;
    return o;
}

static void make_base(void)
{
    static const keel_column tcols[] = {{"id", KEEL_INT4, 0, true},
                                        {"name", KEEL_TEXT, 0, false},
                                        {"n", KEEL_INT8, 0, false},
                                        {"note", KEEL_TEXT, 0, false}};
    static const keel_column ucols[] = {{"k", KEEL_TEXT, 0, true},
                                        {"v", KEEL_INT4, 0, false}};
    keel_db_options o = tc_opts(base_dir);
    keel_error e = {0};
    keel_db *db;
    keel_session *s;
    uint16_t pk = 1, kname = 2, kn[2] = {3, 1};
    keel_value v[4];
    char name[256], note[32], key[1500];
    dbinfo_rel *rels;
    size_t n;

    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "t", tcols, 4, &pk, 1),
                     KEEL_OK);
    assert_int_equal(
        keel_create_index(s, NULL, "t", "t_name", &kname, 1, false), KEEL_OK);
    assert_int_equal(keel_create_index(s, NULL, "t", "t_n", kn, 2, false),
                     KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "u", ucols, 2, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int32_t i = 1; i <= TC_T_ROWS; i++) {
        t_row(v, i, name, note);
        assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_OK);
    }
    for (int32_t i = 1; i <= TC_U_ROWS; i++) {
        u_key(key, i);
        v[0] = tu_vstr(key);
        v[1] = tu_vi4(i);
        assert_int_equal(keel_insert(s, NULL, "u", v), KEEL_OK);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
    /* Versions with deleters, committed and aborted, and pruned ones (a
     * row updated again and again prunes its full page). */
    for (int32_t i = 10; i < 40; i += 3) {
        keel_value k = tu_vi4(i);
        t_row(v, i, name, note);
        v[2].v.i8 = -i;
        assert_int_equal(keel_update(s, NULL, "t", &k, v), KEEL_OK);
    }
    for (int32_t i = 0; i < 40; i++) {
        keel_value k = tu_vi4(100);
        t_row(v, 100, name, note);
        v[2].v.i8 = i;
        assert_int_equal(keel_update(s, NULL, "t", &k, v), KEEL_OK);
    }
    for (int32_t i = 50; i < 60; i++) {
        keel_value k = tu_vi4(i);
        assert_int_equal(keel_delete(s, NULL, "t", &k), KEEL_OK);
    }
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int32_t i = 1; i < 5; i++) {
        keel_value k = tu_vi4(i);
        assert_int_equal(keel_delete(s, NULL, "t", &k), KEEL_OK);
    }
    keel_abort(s);

    assert_int_equal(dbinfo_relations(s, &rels, &n, NULL), KEEL_OK);
    for (size_t i = 0; i < n && nfiles < TC_MAX_FILES; i++) {
        if (rels[i].blocks == 0)
            continue;
        snprintf(files[nfiles].name, sizeof(files[nfiles].name), "%s",
                 rels[i].name);
        files[nfiles].relnumber = rels[i].relnumber;
        files[nfiles].kind = rels[i].kind;
        files[nfiles].blocks = rels[i].blocks;
        nfiles++;
    }
    free(rels);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    /* u's primary key has three levels, t_name two. */
    for (int i = 0; i < nfiles; i++) {
        union {
            uint64_t align;
            unsigned char b[BLOCK_SIZE];
        } meta;
        bt_meta m;
        bool u = strcmp(files[i].name, "u_pkey") == 0;
        if (!u && strcmp(files[i].name, "t_name") != 0)
            continue;
        tu_page_io(base_dir, files[i].relnumber, 0, meta.b, false);
        memcpy(&m, meta.b + PAGE_HEADER_SIZE, sizeof(m));
        assert_true(m.level >= (u ? 2u : 1u));
    }
}

/* ---- mutations ---------------------------------------------------------- */

typedef union tc_page {
    uint64_t align;
    unsigned char b[BLOCK_SIZE];
} tc_page;

static uint32_t pick(uint64_t *rng, uint32_t n)
{
    return n == 0 ? 0 : (uint32_t)(tu_rand(rng) % n);
}

/* An interesting 16-bit value for a field whose sane value is cur. */
static uint16_t odd16(uint64_t *rng, uint16_t cur)
{
    static const uint16_t v[] = {0,    1,     7,     8,     23,   24,
                                 4096, 8176,  8184,  8188,  8191, 8192,
                                 8200, 16384, 32767, 32768, 65535};

    switch (pick(rng, 4)) {
    case 0:
        return v[pick(rng, sizeof(v) / sizeof(v[0]))];
    case 1:
        return (uint16_t)(cur + 8 * (pick(rng, 9) - 4));
    case 2:
        return (uint16_t)(cur + pick(rng, 7) - 3);
    default:
        return (uint16_t)tu_rand(rng);
    }
}

/* An interesting 32-bit value (block numbers, xids, lengths). */
static uint32_t odd32(uint64_t *rng, uint32_t cur, uint32_t nblocks)
{
    static const uint32_t v[] = {0,          1,          2,          3,
                                 4,          0x7FFFFFFF, 0x80000000, 0xFFFFFFFE,
                                 0xFFFFFFFF, 8192,       65536};

    switch (pick(rng, 5)) {
    case 0:
        return v[pick(rng, sizeof(v) / sizeof(v[0]))];
    case 1:
        return nblocks + pick(rng, 3);
    case 2:
        return pick(rng, nblocks + 1);
    case 3:
        return cur + pick(rng, 5) - 2;
    default:
        return (uint32_t)tu_rand(rng);
    }
}

static void put16(unsigned char *p, size_t off, uint16_t x)
{
    memcpy(p + off, &x, 2);
}

static void put32(unsigned char *p, size_t off, uint32_t x)
{
    memcpy(p + off, &x, 4);
}

/* Changes the header's offsets (keeping what page_verify() checks sane,
 * or not), flags or hint, or splats random bytes. */
static void mutate_generic(unsigned char *p, uint64_t *rng, char *what,
                           size_t wsize)
{
    page_header h;
    uint32_t k = pick(rng, 6);

    memcpy(&h, p, sizeof(h));
    switch (k) {
    case 0:
        h.lower =
            (uint16_t)(PAGE_HEADER_SIZE +
                       pick(rng, (uint32_t)(h.upper - PAGE_HEADER_SIZE) + 1));
        snprintf(what, wsize, "header lower %u", h.lower);
        break;
    case 1:
        h.upper = (uint16_t)(h.lower +
                             pick(rng, (uint32_t)(h.special - h.lower) + 1));
        snprintf(what, wsize, "header upper %u", h.upper);
        break;
    case 2:
        h.special =
            (uint16_t)(h.upper + 8 * pick(rng, (BLOCK_SIZE - h.upper) / 8 + 1));
        h.special &= (uint16_t)~7u;
        if (h.special < h.upper)
            h.special = BLOCK_SIZE;
        snprintf(what, wsize, "header special %u", h.special);
        break;
    case 3:
        h.flags = (uint16_t)tu_rand(rng);
        h.am_hint = odd16(rng, h.am_hint);
        snprintf(what, wsize, "header flags %#x hint %u", h.flags, h.am_hint);
        break;
    case 4: {
        uint32_t n = 1 + pick(rng, 8);
        for (uint32_t i = 0; i < n; i++)
            p[PAGE_HEADER_SIZE + pick(rng, BLOCK_SIZE - PAGE_HEADER_SIZE)] =
                (unsigned char)tu_rand(rng);
        snprintf(what, wsize, "%u random bytes", n);
        return;
    }
    default: {
        uint32_t a =
            PAGE_HEADER_SIZE + pick(rng, BLOCK_SIZE - PAGE_HEADER_SIZE);
        uint32_t len = 1 + pick(rng, BLOCK_SIZE - a);
        if (len > 512)
            len = 512;
        memset(p + a, pick(rng, 2) ? 0xFF : 0, len);
        snprintf(what, wsize, "bytes %u..%u set", a, a + len);
        return;
    }
    }
    memcpy(p, &h, sizeof(h));
}

/* A NORMAL line pointer's number on a heap page, or 0. */
static uint16_t heap_pick_item(const unsigned char *p, uint64_t *rng)
{
    uint16_t n = heappage_nitems(p), tries = 0;

    while (n > 0 && tries++ < 64) {
        uint16_t i = (uint16_t)(1 + pick(rng, n));
        if (heappage_lp_state_of(heappage_get_lp(p, i)) == HEAPPAGE_LP_NORMAL)
            return i;
    }
    return 0;
}

static void mutate_heap(unsigned char *p, uint32_t nblocks, uint64_t *rng,
                        char *what, size_t wsize)
{
    uint16_t i = heap_pick_item(p, rng), j;
    heappage_lp *lps = (heappage_lp *)(p + PAGE_HEADER_SIZE);
    heappage_lp lp;
    heap_tuple_header t;
    uint16_t off, len;
    uint32_t k = pick(rng, 16);

    if (i == 0 || k >= 14) {
        mutate_generic(p, rng, what, wsize);
        return;
    }
    lp = lps[i - 1];
    off = heappage_lp_off(lp);
    len = heappage_lp_len(lp);
    memcpy(&t, p + off, sizeof(t));
    switch (k) {
    case 0:
        off = (uint16_t)(odd16(rng, off) & 0x7FFF);
        lps[i - 1] = heappage_lp_make(off, HEAPPAGE_LP_NORMAL, len);
        snprintf(what, wsize, "item %u offset %u", i, off);
        return;
    case 1:
        len = (uint16_t)(odd16(rng, len) & 0x7FFF);
        lps[i - 1] = heappage_lp_make(off, HEAPPAGE_LP_NORMAL, len);
        snprintf(what, wsize, "item %u length %u", i, len);
        return;
    case 2:
        j = heap_pick_item(p, rng);
        lps[i - 1] = lps[j - 1];
        snprintf(what, wsize, "item %u is item %u", i, j);
        return;
    case 3:
        lps[i - 1] = heappage_lp_make((uint16_t)(pick(rng, 2) ? 0 : 8),
                                      HEAPPAGE_LP_NORMAL, len);
        snprintf(what, wsize, "item %u in the header", i);
        return;
    case 4:
        lps[i - 1] =
            heappage_lp_make(off, (heappage_lp_state)pick(rng, 4), len);
        snprintf(what, wsize, "item %u state %u", i,
                 heappage_lp_state_of(lps[i - 1]));
        return;
    case 5:
        t.natts = odd16(rng, t.natts);
        snprintf(what, wsize, "item %u natts %u", i, t.natts);
        break;
    case 6:
        t.hoff = odd16(rng, t.hoff);
        snprintf(what, wsize, "item %u hoff %u", i, t.hoff);
        break;
    case 7:
        t.flags = pick(rng, 2) ? (uint16_t)(t.flags ^ (1u << pick(rng, 16)))
                               : (uint16_t)tu_rand(rng);
        snprintf(what, wsize, "item %u flags %#x", i, t.flags);
        break;
    case 8:
        t.xmin = odd32(rng, t.xmin, nblocks);
        snprintf(what, wsize, "item %u xmin %u", i, t.xmin);
        break;
    case 9:
        t.xmax = pick(rng, 3) == 0 ? t.xmin : odd32(rng, t.xmax, nblocks);
        if (pick(rng, 2))
            t.flags |= HEAP_TUPLE_XMAX_UPDATE;
        snprintf(what, wsize, "item %u xmax %u flags %#x", i, t.xmax, t.flags);
        break;
    case 10:
        t.next_block = odd32(rng, t.next_block, nblocks);
        t.next_offset = odd16(rng, t.next_offset);
        if (pick(rng, 2)) {
            t.flags |= HEAP_TUPLE_XMAX_UPDATE;
            if (t.xmax == 0)
                t.xmax = t.xmin;
        }
        snprintf(what, wsize, "item %u next (%u,%u)", i, t.next_block,
                 t.next_offset);
        break;
    case 11: {
        /* A length word somewhere in the data area. */
        uint32_t at = t.hoff + 4 * pick(rng, 4);
        uint32_t v = odd32(rng, 0, len);
        if (at + 4 <= len)
            put32(p, off + at, v);
        snprintf(what, wsize, "item %u data word at %u = %u", i, at, v);
        return;
    }
    case 12: {
        /* Far more line pointers than a page gets, copies of item i's,
         * which is made a version whose deleter committed (its inserter),
         * on a page that says it has such versions: all to be pruned. */
        page_header h;
        uint16_t most = (uint16_t)((off - PAGE_HEADER_SIZE) / 4), nl;
        if (most <= HEAPPAGE_MAX_LINES) {
            snprintf(what, wsize, "item %u too low for many lines", i);
            return;
        }
        nl = (uint16_t)(HEAPPAGE_MAX_LINES + 1 +
                        pick(rng, most - HEAPPAGE_MAX_LINES));
        memcpy(&h, p, sizeof(h));
        for (uint16_t x = heappage_nitems(p); x < nl; x++)
            lps[x] = lp;
        h.lower = (uint16_t)(PAGE_HEADER_SIZE + 4 * nl);
        if (h.upper < h.lower)
            h.upper = (uint16_t)((h.lower + 7) & ~7);
        h.flags |= PAGE_FLAG_PRUNABLE;
        if (pick(rng, 2))
            h.flags |= PAGE_FLAG_HAS_FREE_LINES;
        h.am_hint = HEAPPAGE_HINT_MANY;
        memcpy(p, &h, sizeof(h));
        if (t.xmin >= XID_FIRST_NORMAL)
            t.xmax = t.xmin;
        t.flags &= (uint16_t)~HEAP_TUPLE_XMAX_UPDATE;
        snprintf(what, wsize, "%u line pointers, copies of item %u's", nl, i);
        break;
    }
    default: {
        /* More line pointers than there are: free space (or garbage). */
        page_header h;
        uint16_t extra = (uint16_t)(1 + pick(rng, 8));
        memcpy(&h, p, sizeof(h));
        for (uint16_t x = 0; x < extra && h.lower + 4 <= h.upper; x++) {
            if (pick(rng, 2))
                put32(p, h.lower, (uint32_t)tu_rand(rng));
            h.lower = (uint16_t)(h.lower + 4);
        }
        memcpy(p, &h, sizeof(h));
        snprintf(what, wsize, "lower %u (more line pointers)", h.lower);
        return;
    }
    }
    memcpy(p + off, &t, sizeof(t));
}

static void mutate_meta(unsigned char *p, uint32_t nblocks, uint64_t *rng,
                        char *what, size_t wsize)
{
    bt_meta m;

    memcpy(&m, p + PAGE_HEADER_SIZE, sizeof(m));
    switch (pick(rng, 7)) {
    case 0:
        m.root = odd32(rng, m.root, nblocks);
        snprintf(what, wsize, "meta root %u", m.root);
        break;
    case 1:
        m.level =
            pick(rng, 2) ? m.level + pick(rng, 3) - 1 : odd32(rng, m.level, 40);
        snprintf(what, wsize, "meta level %u", m.level);
        break;
    case 2:
        m.root = 1 + pick(rng, nblocks - 1);
        m.level = pick(rng, 3);
        snprintf(what, wsize, "meta root %u level %u", m.root, m.level);
        break;
    case 3:
        m.natts = odd16(rng, m.natts);
        snprintf(what, wsize, "meta natts %u", m.natts);
        break;
    case 4: {
        uint32_t a = pick(rng, 2)
                         ? pick(rng, m.natts < BTREE_MAX_KEYS ? m.natts + 1u
                                                              : BTREE_MAX_KEYS)
                         : pick(rng, BTREE_MAX_KEYS);
        m.attrs[a].type = (uint8_t)pick(rng, 12);
        m.attrs[a].notnull = (uint8_t)pick(rng, 3);
        m.attrs[a].len = odd16(rng, m.attrs[a].len);
        snprintf(what, wsize, "meta attr %u type %u len %u", a, m.attrs[a].type,
                 m.attrs[a].len);
        break;
    }
    case 5:
        m.unique = (uint8_t)pick(rng, 3);
        snprintf(what, wsize, "meta unique %u", m.unique);
        break;
    default:
        mutate_generic(p, rng, what, wsize);
        return;
    }
    memcpy(p + PAGE_HEADER_SIZE, &m, sizeof(m));
}

/*
 * What a B-tree page mutation changes.  The BTM_LAYOUT ones change where
 * items lie or how their bytes parse (line pointers, sizes, the item
 * count, the header's offsets, null bitmaps, text lengths), which the
 * check on reading a page refuses; the others change what well-formed
 * items and links say.
 */
enum {
    BTM_LEVEL,
    BTM_FLAGS,
    BTM_RIGHT,
    BTM_LEFT,
    BTM_LINK,   /* a downlink's child or an entry's heap tid */
    BTM_DEAD,   /* an entry's dead mark */
    BTM_KEY,    /* a key's integer value */
    BTM_SWAP,   /* two items' places */
    BTM_FEWER,  /* the last items dropped */
    BTM_HEADER, /* flags and hint of the page header */
    BTM_LAYOUT, /* from here on, layout */
    BTM_LP = BTM_LAYOUT,
    BTM_SIZE,
    BTM_INFO,    /* null bitmap or minus-infinity flag */
    BTM_KEYWORD, /* any word of a key: a text length */
    BTM_MORE,    /* more line pointers */
    BTM_GENERIC, /* header offsets, random bytes */
    BTM_COUNT
};

static void mutate_btree(unsigned char *p, const tc_file *f, uint32_t blk,
                         uint64_t *rng, char *what, size_t wsize)
{
    bool int_keys =
        strcmp(f->name, "t_name") != 0 && strcmp(f->name, "u_pkey") != 0;
    uint32_t nblocks = f->blocks;
    bt_opaque op;
    page_header h;
    bt_item it = {0};
    uint16_t n = btpage_nitems(p), i, j, off, oj, size;
    uint32_t k;

    if (blk == BT_META_BLOCK) {
        mutate_meta(p, nblocks, rng, what, wsize);
        return;
    }
    do
        k = pick(rng, BTM_COUNT);
    while (n == 0 && k != BTM_LEVEL && k != BTM_FLAGS && k != BTM_RIGHT &&
           k != BTM_LEFT && k != BTM_HEADER && k < BTM_LAYOUT);
    memcpy(&op, p + BT_SPECIAL_OFF, sizeof(op));
    memcpy(&h, p, sizeof(h));
    i = (uint16_t)pick(rng, n);
    memcpy(&off, p + PAGE_HEADER_SIZE + 2 * (size_t)i, 2);
    if (n > 0)
        memcpy(&it, p + off, sizeof(it));
    size = it.info & BT_INFO_SIZE;
    switch (k) {
    case BTM_LEVEL:
        op.level = pick(rng, 2) ? (uint16_t)(op.level + pick(rng, 3) - 1)
                                : odd16(rng, op.level);
        snprintf(what, wsize, "level %u", op.level);
        break;
    case BTM_FLAGS:
        op.flags = pick(rng, 2) ? (uint16_t)(op.flags ^ (1u << pick(rng, 3)))
                                : (uint16_t)tu_rand(rng);
        snprintf(what, wsize, "flags %#x", op.flags);
        break;
    case BTM_RIGHT:
        switch (pick(rng, 4)) {
        case 0:
            op.right = blk;
            break;
        case 1:
            op.right =
                op.left != BT_NONE ? op.left : 1 + pick(rng, nblocks - 1);
            break;
        default:
            op.right = odd32(rng, op.right, nblocks);
            break;
        }
        snprintf(what, wsize, "right-link %u", op.right);
        break;
    case BTM_LEFT:
        op.left = odd32(rng, op.left, nblocks);
        snprintf(what, wsize, "left-link %u", op.left);
        break;
    case BTM_LINK:
        switch (pick(rng, 4)) {
        case 0:
            it.block = blk;
            break;
        case 1:
            it.offset = odd16(rng, it.offset);
            break;
        default:
            it.block = odd32(rng, it.block, nblocks);
            break;
        }
        memcpy(p + off, &it, sizeof(it));
        snprintf(what, wsize, "item %u points to (%u,%u)", i, it.block,
                 it.offset);
        return;
    case BTM_DEAD:
        it.info ^= BT_INFO_UNIQUE_DEAD;
        memcpy(p + off, &it, sizeof(it));
        snprintf(what, wsize, "item %u info %#x", i, it.info);
        return;
    case BTM_KEY: {
        /* A word of an integer key, inside the item. */
        uint16_t koff = op.level == 0 ? BT_LEAF_KEY_OFF : BT_INTERNAL_KEY_OFF;
        uint32_t at = koff + 4 * pick(rng, 3), v = odd32(rng, 0, 1000);
        if (!int_keys || (it.info & BT_INFO_MINUS_INF) || at + 4 > size) {
            snprintf(what, wsize, "item %u: no integer key, unchanged", i);
            return;
        }
        put32(p, off + at, v);
        snprintf(what, wsize, "item %u key word %u = %u", i, at, v);
        return;
    }
    case BTM_SWAP:
        j = (uint16_t)pick(rng, n);
        memcpy(&oj, p + PAGE_HEADER_SIZE + 2 * (size_t)j, 2);
        put16(p, PAGE_HEADER_SIZE + 2 * (size_t)i, oj);
        put16(p, PAGE_HEADER_SIZE + 2 * (size_t)j, off);
        snprintf(what, wsize, "items %u and %u swapped", i, j);
        return;
    case BTM_FEWER:
        h.lower = (uint16_t)(h.lower - 2 * (1 + pick(rng, n)));
        memcpy(p, &h, sizeof(h));
        snprintf(what, wsize, "lower %u (fewer items)", h.lower);
        return;
    case BTM_HEADER:
        h.flags = (uint16_t)tu_rand(rng);
        h.am_hint = (uint16_t)tu_rand(rng);
        memcpy(p, &h, sizeof(h));
        snprintf(what, wsize, "header flags %#x hint %u", h.flags, h.am_hint);
        return;
    case BTM_LP:
        off = pick(rng, 3) ? odd16(rng, off)
                           : (uint16_t)(PAGE_HEADER_SIZE + 8 * pick(rng, 4));
        put16(p, PAGE_HEADER_SIZE + 2 * (size_t)i, off);
        snprintf(what, wsize, "item %u offset %u", i, off);
        return;
    case BTM_SIZE:
        if (off > BLOCK_SIZE - sizeof(it))
            return;
        it.info = (uint16_t)((it.info & ~BT_INFO_SIZE) |
                             (odd16(rng, size) & BT_INFO_SIZE));
        memcpy(p + off, &it, sizeof(it));
        snprintf(what, wsize, "item %u size %u", i, it.info & BT_INFO_SIZE);
        return;
    case BTM_INFO:
        if (off > BLOCK_SIZE - sizeof(it))
            return;
        it.info ^= pick(rng, 2) ? BT_INFO_NULLS : BT_INFO_MINUS_INF;
        memcpy(p + off, &it, sizeof(it));
        snprintf(what, wsize, "item %u info %#x", i, it.info);
        return;
    case BTM_KEYWORD: {
        uint32_t at = off +
                      (op.level == 0 ? BT_LEAF_KEY_OFF : BT_INTERNAL_KEY_OFF) +
                      4 * pick(rng, 3);
        uint32_t v = odd32(rng, 0, 1000);
        if (n == 0 || at + 4 > BLOCK_SIZE)
            return;
        put32(p, at, v);
        snprintf(what, wsize, "item %u key word at %u = %u", i, at, v);
        return;
    }
    case BTM_MORE:
        for (uint32_t x = 1 + pick(rng, 4); x > 0 && h.lower + 2 <= h.upper;
             x--) {
            put16(p, h.lower, (uint16_t)(pick(rng, 2) ? off : tu_rand(rng)));
            h.lower = (uint16_t)(h.lower + 2);
        }
        memcpy(p, &h, sizeof(h));
        snprintf(what, wsize, "lower %u (more items)", h.lower);
        return;
    default:
        mutate_generic(p, rng, what, wsize);
        return;
    }
    memcpy(p + BT_SPECIAL_OFF, &op, sizeof(op));
}

static void mutate_clog(unsigned char *p, uint64_t *rng, char *what,
                        size_t wsize)
{
    uint32_t n = 1 + pick(rng, 4);

    if (pick(rng, 3) == 0) {
        mutate_generic(p, rng, what, wsize);
        return;
    }
    /* Status bits of the first transactions, the ones used. */
    for (uint32_t i = 0; i < n; i++)
        p[PAGE_HEADER_SIZE + pick(rng, 16)] = (unsigned char)tu_rand(rng);
    snprintf(what, wsize, "%u status bytes", n);
}

/* Rewrites the control file in dir with one of its counters or its state
 * changed, its CRC made right again. */
static void mutate_control(const char *dir, uint64_t *rng, char *what,
                           size_t wsize)
{
    unsigned char img[512];
    control_data c;
    char path[512];
    uint32_t crc, *field;
    const char *name;
    int fd;

    snprintf(path, sizeof(path), "%s/%s", dir, CONTROL_FILE_NAME);
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, img, sizeof(img), 0), sizeof(img));
    memcpy(&c, img + 8, sizeof(c));
    switch (pick(rng, 5)) {
    case 0:
        field = &c.state, name = "state";
        break;
    case 1:
        field = &c.xid_limit, name = "xid_limit";
        break;
    case 2:
        field = &c.next_oid, name = "next_oid";
        break;
    case 3:
        field = &c.oid_limit, name = "oid_limit";
        break;
    default:
        field = &c.reserved, name = "reserved";
        break;
    }
    if (field == &c.next_oid || field == &c.oid_limit)
        *field = pick(rng, 2) ? CATALOG_FIRST_USER_OID + pick(rng, 8)
                              : odd32(rng, *field, 16);
    else
        *field = odd32(rng, *field, 16);
    memcpy(img + 8, &c, sizeof(c));
    crc = crc32c(img, sizeof(img) - 4);
    memcpy(img + sizeof(img) - 4, &crc, 4);
    assert_int_equal(pwrite(fd, img, sizeof(img), 0), sizeof(img));
    close(fd);
    snprintf(what, wsize, "control %s = %u", name, *field);
}

/* Changes one page (or the control file) of the copy in dir, as rng
 * picks; describes the change in what. */
static void mutate(const char *dir, uint64_t *rng, char *what, size_t wsize)
{
    tc_file *f;
    uint32_t blk;
    tc_page pg;
    char w[160];
    int tries = 0;

    if (pick(rng, 40) == 0) {
        mutate_control(dir, rng, what, wsize);
        return;
    }
    /* The user relations' files more often than the catalogs'. */
    do {
        f = &files[pick(rng, (uint32_t)nfiles)];
    } while (f->kind == 't' && f->relnumber < CATALOG_FIRST_USER_OID &&
             pick(rng, 3) != 0 && tries++ < 8);
    blk = pick(rng, f->blocks);
    tu_page_io(dir, f->relnumber, blk, pg.b, false);
    if (page_is_new(pg.b)) {
        snprintf(what, wsize, "%.63s block %u: new page, unchanged", f->name,
                 blk);
        return;
    }
    w[0] = '\0';
    switch (f->kind) {
    case RELKIND_TABLE:
        mutate_heap(pg.b, f->blocks, rng, w, sizeof(w));
        break;
    case RELKIND_INDEX:
        mutate_btree(pg.b, f, blk, rng, w, sizeof(w));
        break;
    default:
        mutate_clog(pg.b, rng, w, sizeof(w));
        break;
    }
    page_set_checksum(pg.b);
    tu_page_io(dir, f->relnumber, blk, pg.b, true);
    snprintf(what, wsize, "%.63s (file %u) block %u: %.150s", f->name,
             f->relnumber, blk, w);
}

/* ---- using the damaged copy --------------------------------------------- */

static void on_problem(void *ctx, bool note, const char *line)
{
    if (getenv("KEEL_TEST_VERBOSE") != NULL)
        fprintf(stderr, "    %s: %s\n", note ? "note" : "problem", line);
    if (!note)
        (*(uint64_t *)ctx)++;
}

static uint64_t sink; /* what the values read sum to: keeps the reads */

/* Reads every byte of the values a call returned (so that a value
 * pointing outside its row is caught by the sanitizer). */
static void touch(const keel_value *v, uint16_t n)
{
    for (uint16_t i = 0; i < n; i++) {
        if (v[i].isnull)
            continue;
        if (v[i].v.s.len <= 4 * BLOCK_SIZE && v[i].v.s.ptr != NULL &&
            (uintptr_t)v[i].v.s.ptr > 4096)
            for (uint32_t k = 0; k < v[i].v.s.len; k++)
                sink += (unsigned char)v[i].v.s.ptr[k];
    }
}

/* The status of one call made through session s: any keel_status, and no
 * buffer left pinned (and so none locked). */
static int tc_call(keel_session *s, int rc, const char *what)
{
    if (rc < 0 || rc >= KEEL_STATUS_COUNT)
        fail_msg("%s: %s: status %d is no keel_status", case_desc, what, rc);
    if (buf_session_pinned(s->bs) != 0)
        fail_msg("%s: %s left %u buffers pinned (status %s: %s)", case_desc,
                 what, buf_session_pinned(s->bs), keel_status_str(rc),
                 keel_session_error(s));
    if (rc != KEEL_OK && getenv("KEEL_TEST_VERBOSE") != NULL)
        fprintf(stderr, "    %s: %s: %s\n", what, keel_status_str(rc),
                keel_session_error(s));
    return rc;
}

#define TC(s, call) tc_call((s), (call), #call)

/* Runs a scan to its end, in at most TC_MAX_STEPS rows. */
static void scan_all(keel_session *s, const char *table, const char *index,
                     const keel_bound *lo, const keel_bound *hi)
{
    keel_value out[4];
    keel_scan *sc = NULL;
    bool found = true;
    int rc, steps = 0;

    rc = TC(s, keel_scan_begin(s, NULL, table, index, lo, hi, &sc));
    if (rc != KEEL_OK)
        return;
    while (found) {
        rc = keel_scan_next(sc, out, &found);
        if (rc < 0 || rc >= KEEL_STATUS_COUNT)
            fail_msg("%s: keel_scan_next: status %d", case_desc, rc);
        if (rc != KEEL_OK)
            break;
        if (found)
            touch(out, strcmp(table, "t") == 0 ? 4 : 2);
        if (++steps > TC_MAX_STEPS)
            fail_msg("%s: a scan of %s by %s does not end", case_desc, table,
                     index != NULL ? index : "its primary key");
    }
    keel_scan_end(sc);
    (void)TC(s, KEEL_OK);
}

/* Reads, changes and reads again, through every path the tables have. */
static void use_db(keel_session *s, uint64_t *rng)
{
    static const keel_column xcols[] = {{"a", KEEL_INT4, 0, true},
                                        {"b", KEEL_TEXT, 0, false}};
    keel_value out[4], key, v[4], lo_v, hi_v;
    keel_bound lo = {&lo_v, 1, true}, hi = {&hi_v, 1, false};
    char name[256], note[32], kbuf[1500];
    bool found;
    uint16_t pk = 1, kb = 2;

    /* Point reads. */
    for (int i = 0; i < 6; i++) {
        int32_t id = (int32_t)(1 + pick(rng, TC_T_ROWS + 20));
        key = tu_vi4(id);
        if (TC(s, keel_lookup(s, NULL, "t", &key, out, &found)) == KEEL_OK &&
            found)
            touch(out, 4);
        if (TC(s, keel_select_column(s, NULL, "t", "name", &key, out,
                                     &found)) == KEEL_OK &&
            found)
            touch(out, 1);
        (void)TC(s, keel_select_column(s, NULL, "t", "id", &key, out, &found));
        u_key(kbuf, (int32_t)(1 + pick(rng, TC_U_ROWS + 5)));
        key = tu_vstr(kbuf);
        if (TC(s, keel_lookup(s, NULL, "u", &key, out, &found)) == KEEL_OK &&
            found)
            touch(out, 2);
    }

    /* Scans: each index whole, and a range of each. */
    scan_all(s, "t", NULL, NULL, NULL);
    scan_all(s, "t", "t_name", NULL, NULL);
    scan_all(s, "t", "t_n", NULL, NULL);
    scan_all(s, "u", NULL, NULL, NULL);
    lo_v = tu_vi4(100);
    hi_v = tu_vi4(300);
    scan_all(s, "t", NULL, &lo, &hi);
    t_name(name, 150);
    lo_v = tu_vstr(name);
    hi_v = tu_vstr("z");
    scan_all(s, "t", "t_name", &lo, &hi);
    u_key(kbuf, 60);
    lo_v = tu_vstr(kbuf);
    scan_all(s, "u", NULL, &lo, NULL);

    /* Changes: new rows (some splitting leaves), updates that move the
     * row and its index entries, deletes, a duplicate key. */
    for (int i = 0; i < 12; i++) {
        int32_t id = TC_T_ROWS + 100 + i * 3 + (int32_t)pick(rng, 3);
        t_row(v, id, name, note);
        (void)TC(s, keel_insert(s, NULL, "t", v));
    }
    for (int i = 0; i < 10; i++) {
        int32_t id = (int32_t)(1 + pick(rng, TC_T_ROWS));
        key = tu_vi4(id);
        t_row(v, id, name, note);
        name[3] = 'z'; /* another place in t_name */
        v[2].v.i8 = -(int64_t)id;
        (void)TC(s, keel_update(s, NULL, "t", &key, v));
    }
    for (int i = 0; i < 6; i++) {
        key = tu_vi4((int32_t)(1 + pick(rng, TC_T_ROWS)));
        (void)TC(s, keel_delete(s, NULL, "t", &key));
    }
    t_row(v, (int32_t)(100 + pick(rng, 200)), name, note);
    (void)TC(s, keel_insert(s, NULL, "t", v));
    for (int i = 0; i < 4; i++) {
        u_key(kbuf, (int32_t)(TC_U_ROWS + 10 + i));
        kbuf[6] = (char)('0' + pick(rng, 10));
        v[0] = tu_vstr(kbuf);
        v[1] = tu_vi4(i);
        (void)TC(s, keel_insert(s, NULL, "u", v));
        u_key(kbuf, (int32_t)(1 + pick(rng, TC_U_ROWS)));
        key = tu_vstr(kbuf);
        if (pick(rng, 2))
            (void)TC(s, keel_delete(s, NULL, "u", &key));
        else
            (void)TC(s, keel_update(s, NULL, "u", &key, v));
    }

    /* An explicit transaction that aborts. */
    if (TC(s, keel_begin(s)) == KEEL_OK) {
        t_row(v, TC_T_ROWS + 500, name, note);
        (void)TC(s, keel_insert(s, NULL, "t", v));
        key = tu_vi4((int32_t)(1 + pick(rng, TC_T_ROWS)));
        (void)TC(s, keel_delete(s, NULL, "t", &key));
        keel_abort(s);
        (void)TC(s, KEEL_OK);
    }

    /* DDL, which reads and writes the catalogs (and builds an index from a
     * scan of t). */
    if (TC(s, keel_create_table(s, NULL, "x", xcols, 2, &pk, 1)) == KEEL_OK) {
        v[0] = tu_vi4(1);
        v[1] = tu_vstr("one");
        (void)TC(s, keel_insert(s, NULL, "x", v));
        (void)TC(s, keel_create_index(s, NULL, "x", "x_b", &kb, 1, true));
        (void)TC(s, keel_drop_table(s, NULL, "x"));
    }
    (void)TC(s, keel_create_index(s, NULL, "t", "t_name2", &kb, 1, false));
    (void)TC(s, keel_analyze(s, NULL, "t"));

    /* And read again what the changes left. */
    scan_all(s, "t", "t_name", NULL, NULL);
    scan_all(s, "t", NULL, NULL, NULL);
    scan_all(s, "u", NULL, NULL, NULL);
}

/* One case: a copy with one change, checked, opened, used, closed. */
static void run_case(uint64_t seed, int c, uint64_t *found_by_check)
{
    uint64_t rng = seed * 0x9E3779B97F4A7C15ull + (uint64_t)c * 2654435761u + 1;
    char *dir = tu_mkdtemp(), what[300];
    keel_db_options o = tc_opts(dir);
    keel_error e = {0};
    keel_db *db = NULL;
    keel_session *s = NULL;
    uint64_t problems = 0, notes = 0, counted = 0;
    int rc;

    copy_db(dir);
    mutate(dir, &rng, what, sizeof(what));
    snprintf(case_desc, sizeof(case_desc), "case %d: %s", c, what);
    if (getenv("KEEL_TEST_VERBOSE") != NULL)
        fprintf(stderr, "%s\n", case_desc);
    alarm(TC_ALARM_S);

    rc = keel_check(dir, on_problem, &counted, &problems, &notes, &e);
    if (rc < 0 || rc >= KEEL_STATUS_COUNT)
        fail_msg("%s: keel_check: status %d", case_desc, rc);
    if (rc == KEEL_OK && problems > 0)
        (*found_by_check)++;

    rc = keel_db_open(&o, &db, &e);
    if (rc < 0 || rc >= KEEL_STATUS_COUNT)
        fail_msg("%s: keel_db_open: status %d", case_desc, rc);
    if (rc == KEEL_OK) {
        rc = keel_session_begin(db, &s, &e);
        if (rc == KEEL_OK) {
            use_db(s, &rng);
            keel_session_end(s);
        }
        tu_assert_pool_quiet(db->pool);
        rc = keel_db_close(db, &e);
        if (rc != KEEL_OK)
            fail_msg("%s: keel_db_close: %s", case_desc, e.msg);
        /* Whatever the session did, the check still runs to its end. */
        rc = keel_check(dir, on_problem, &counted, &problems, &notes, &e);
        if (rc < 0 || rc >= KEEL_STATUS_COUNT)
            fail_msg("%s: keel_check after use: status %d", case_desc, rc);
    } else if (getenv("KEEL_TEST_VERBOSE") != NULL) {
        fprintf(stderr, "    open: %s\n", e.msg);
    }
    alarm(0);
    tu_dir_remove(dir);
}

static void test_corrupt_pages(void **state)
{
    const char *env = getenv("KEEL_CORRUPT_CASES");
    const char *one = getenv("KEEL_CORRUPT_CASE");
    const char *sd = getenv("KEEL_CORRUPT_SEED");
    const char *from = getenv("KEEL_CORRUPT_FIRST");
    int cases = env != NULL ? atoi(env) : TC_DEFAULT_CASES;
    uint64_t seed = sd != NULL ? strtoull(sd, NULL, 0) : 1;
    uint64_t caught = 0;

    (void)state;
    signal(SIGALRM, on_alarm);
    base_dir = tu_mkdtemp();
    make_base();
    if (one != NULL) {
        run_case(seed, atoi(one), &caught);
    } else {
        for (int c = from != NULL ? atoi(from) : 0; c < cases; c++)
            run_case(seed, c, &caught);
        if (getenv("KEEL_TEST_VERBOSE") != NULL)
            fprintf(stderr, "%llu of %d cases found by the check\n",
                    (unsigned long long)caught, cases);
    }
    tu_dir_remove(base_dir);
    base_dir = NULL;
    (void)sink;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corrupt_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
