/*
 * check.c: keel_check() (keel.h), which `keel check DIR` runs: every page's
 * checksum and header, every heap page's structure, every heap tuple
 * decoded against its table's row type, every transaction id and catalog
 * object id against the control file's limits, every commit-log status,
 * every B-tree's structure, and the agreement of each table with its
 * indexes; and notes the files named as relations' that no relation owns.
 *
 * The database is opened read-only, so nothing is dirty in its pool:
 * relation files are read block by block with smgr_read() (which verifies
 * each page), and what is checked is what is on disk.  Each tuple of a
 * verified heap page is decoded once, by heap_row_decode(), the check
 * every read makes, with the row type the engine itself would use (the
 * catalogs' own, or a user table's handle built from keel_attribute).
 * The B-trees are checked through the buffer pool by btree_check(), whose
 * entry callback counts, for every heap tuple of the table, how often the
 * index points to it.
 */
#include "keel/keel.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/heapam.h"
#include "wal/wal.h"
#include "engine/control.h"
#include "engine/engine.h"
#include "check/dbinfo.h"
#include "txn/clog.h"

/* Lines of one kind reported per index before they are only counted (one
 * broken page can make every page after it unreachable). */
#define CHECK_MAX_TID_LINES  10
#define CHECK_MAX_TREE_LINES 20
/* Lines about a table's tuples reported before they are only counted. */
#define CHECK_MAX_TUPLE_LINES 20

/* Line pointers a heap page can have (each takes 4 bytes after the
 * header), and one: they are numbered from 1. */
#define CHECK_PAGE_LINES (BLOCK_SIZE / HEAPPAGE_LP_SIZE + 1)

/* Where a table's heap tuples are, and how often an index points there. */
typedef struct tid_map {
    uint32_t nblocks;
    uint32_t *start; /* nblocks + 1: first slot of each block */
    uint8_t *state;  /* per line pointer: TID_NONE, TID_ONCE, TID_ATMOST,
                        with TID_DEAD */
    uint8_t *count;  /* entries seen in the index being checked (saturating) */
    xid_t *deleter;  /* per line pointer: a TID_DEAD tuple's committed
                        deleter, else 0 */
    uint8_t *bad;    /* per block: unreadable (reported already) */
    size_t n, cap;
} tid_map;

#define TID_KIND 0x0F
#define TID_DEAD 0x80 /* the tuple can never be live again (heap_fate) */
#define TID_NONE 0    /* no tuple */
#define TID_ONCE 1    /* a tuple: indexed exactly once */
#define TID_ATMOST                                                             \
    2 /* deleted by its inserter, or its inserter did not                      \
         commit: indexed at most once */
#define TID_DAMAGED                                                            \
    3 /* a tuple that does not decode, reported as such: whatever entries      \
         point to it are not judged, its key being unknown */
#define TID_HEAP_ONLY                                                          \
    4 /* a heap-only version: never indexed (its chain's root is) */

typedef struct check_ctx {
    keel_check_fn fn;
    void *ctx;
    uint64_t problems;
    uint64_t notes;
    const dbinfo_rel *rel; /* the index being checked */
    const dbinfo_rel *table;
    tid_map *map;
    uint64_t stray;  /* entries pointing to no tuple */
    uint64_t marks;  /* entries marked dead whose tuple may be live */
    uint64_t tree;   /* btree_check's problems in this index */
    xid_t xid_limit; /* the control file's limits, as the open took them */
    oid_t oid_limit;
} check_ctx;

/*
 * How check_file() reads a table's tuples: its row type, to decode each
 * one (NULL: it could not be had, which was reported), which catalog the
 * table is (for the object ids its rows hold), and what it found.
 */
typedef struct tuple_reader {
    heap_rel *heap;
    heap_rel catalog_heap; /* heap's storage for a catalog */
    int cat;               /* catalog_id, or -1 for a user table */
    heap_row row;          /* the tuple last decoded */
    uint64_t lines;        /* problems found in the table's tuples */
    /* Per line pointer of the page being read: its tuple does not decode. */
    uint8_t damaged[CHECK_PAGE_LINES];
} tuple_reader;

/* Formats one line to fn, counting it as a problem or a note. */
static void report(check_ctx *c, bool is_note, const char *fmt, va_list ap)
{
    char line[1024];

    vsnprintf(line, sizeof(line), fmt, ap);
    if (is_note)
        c->notes++;
    else
        c->problems++;
    if (c->fn != NULL)
        c->fn(c->ctx, is_note, line);
}

static void problem(check_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(check_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void problem(check_ctx *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    report(c, false, fmt, ap);
    va_end(ap);
}

static void note(check_ctx *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    report(c, true, fmt, ap);
    va_end(ap);
}

static void tid_map_free(tid_map *m)
{
    free(m->start);
    free(m->state);
    free(m->count);
    free(m->deleter);
    free(m->bad);
    memset(m, 0, sizeof(*m));
}

/*
 * The index expectations of block blk's heap-only chains (access/
 * heap_page.h, "Heap-only updates"), recorded already line by line: a
 * chain's root (a REDIRECT, or an indexed version updated heap-only)
 * stands for the whole row, which is dead (TID_DEAD) only if every
 * version of the chain is, and whose deleter is the largest committed one
 * among them.  The page was verified (heappage_verify()), so the links
 * are sound; a walk still stops after as many hops as the page has lines.
 */
static void chain_fates(tid_map *m, blocknum_t blk, const void *page,
                        const visibility *vis, const uint8_t *damaged)
{
    uint16_t n = heappage_nitems(page);
    size_t first = m->start[blk];

    for (uint16_t off = 1; off <= n; off++) {
        heappage_lp lp = heappage_get_lp(page, off);
        uint16_t cur = off;
        bool dead = true;
        xid_t deleter = 0;
        const heap_tuple_header *h;
        size_t len;

        if (damaged != NULL && damaged[off])
            continue;
        if (heappage_lp_state_of(lp) == HEAPPAGE_LP_REDIRECT)
            cur = heappage_lp_off(lp);
        else if ((h = heappage_get_item_const(page, off, &len)) == NULL ||
                 len < sizeof(*h) || !(h->flags & HEAP_TUPLE_HOT_UPDATED) ||
                 (h->flags & HEAP_TUPLE_HEAP_ONLY))
            continue;
        for (uint16_t hops = 0; hops < n; hops++) {
            heap_fate fate;
            kerr e;
            if ((damaged != NULL && damaged[cur]) ||
                (h = heappage_get_item_const(page, cur, &len)) == NULL ||
                len < sizeof(*h) ||
                heap_tuple_fate(vis, h->xmin, h->xmax, &fate, &e) != KEEL_OK ||
                fate != HEAP_DEAD) {
                dead = false;
                break;
            }
            if (h->xmax > deleter)
                deleter = h->xmax;
            if (!(h->flags & HEAP_TUPLE_HOT_UPDATED) ||
                h->next_offset == cur || h->next_offset < 1 ||
                h->next_offset > n)
                break;
            cur = h->next_offset;
        }
        m->state[first + off - 1] = (uint8_t)((m->state[first + off - 1] &
                                               TID_KIND) |
                                              (dead ? TID_DEAD : 0));
        m->deleter[first + off - 1] = dead ? deleter : 0;
    }
}

/* Records the line pointers of block blk (the next block) of a heap page
 * (NULL: an unreadable block, whose entries are not checked); vis tells
 * whose inserters committed; damaged (NULL: none) which tuples do not
 * decode, by line pointer.  ENOMEM. */
static int tid_map_add_block(tid_map *m, blocknum_t blk, const void *page,
                             const visibility *vis, const uint8_t *damaged)
{
    uint16_t nitems = page != NULL ? heappage_nitems(page) : 0;

    if (m->start == NULL) {
        m->start = malloc(((size_t)m->nblocks + 1) * sizeof(uint32_t));
        m->bad = calloc((size_t)m->nblocks + 1, 1);
        if (m->start == NULL || m->bad == NULL)
            return KEEL_ENOMEM;
    }
    if (m->n + nitems > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 65536;
        while (cap < m->n + nitems)
            cap *= 2;
        uint8_t *ns = realloc(m->state, cap);
        xid_t *nd;
        if (ns == NULL)
            return KEEL_ENOMEM;
        m->state = ns;
        nd = realloc(m->deleter, cap * sizeof(*nd));
        if (nd == NULL)
            return KEEL_ENOMEM;
        m->deleter = nd;
        m->cap = cap;
    }
    m->start[blk] = (uint32_t)m->n;
    m->bad[blk] = page == NULL;
    for (uint16_t off = 1; off <= nitems; off++) {
        heappage_lp lp = heappage_get_lp(page, off);
        uint8_t st = TID_NONE;
        m->deleter[m->n] = 0;
        if (damaged != NULL && damaged[off]) {
            st = TID_DAMAGED;
        } else if (heappage_lp_state_of(lp) == HEAPPAGE_LP_NORMAL &&
                   heappage_lp_len(lp) >= sizeof(heap_tuple_header) &&
                   (((const heap_tuple_header *)((const char *)page +
                                                 heappage_lp_off(lp)))
                        ->flags &
                    HEAP_TUPLE_HEAP_ONLY)) {
            st = TID_HEAP_ONLY;
        } else if (heappage_lp_state_of(lp) == HEAPPAGE_LP_REDIRECT) {
            /* Only a committed heap-only update redirects: the row lives
             * on in its chain, whose fate is judged below. */
            st = TID_ONCE;
        } else if (heappage_lp_state_of(lp) == HEAPPAGE_LP_NORMAL) {
            const heap_tuple_header *h =
                (const heap_tuple_header *)((const char *)page +
                                            heappage_lp_off(lp));
            bool committed = true;
            heap_fate fate;
            kerr e;
            /* A failed insert removes its index entries and deletes its
             * row; an aborted transaction may have stopped half way
             * through its entries. */
            if (h->xmax != 0 && h->xmax == h->xmin)
                committed = false;
            else if (heap_tuple_visible(vis, h->xmin, 0, &committed, &e) !=
                     KEEL_OK)
                committed = true; /* unknown: the strict rule */
            st = committed ? TID_ONCE : TID_ATMOST;
            /* What a unique check's dead mark on its entries claims. */
            if (heap_tuple_fate(vis, h->xmin, h->xmax, &fate, &e) == KEEL_OK &&
                fate == HEAP_DEAD) {
                st |= TID_DEAD;
                if (committed)
                    m->deleter[m->n] = h->xmax;
            }
        } else if (heappage_lp_state_of(lp) == HEAPPAGE_LP_DEAD) {
            /* Pruned: an index may still hold the entry, until it sheds
             * it (or a vacuum does). */
            st = TID_ATMOST | TID_DEAD;
        }
        m->state[m->n++] = st;
    }
    m->start[blk + 1] = (uint32_t)m->n;
    if (page != NULL)
        chain_fates(m, blk, page, vis, damaged);
    return KEEL_OK;
}

/* The slot of t, or SIZE_MAX if the table has no such line pointer. */
static size_t tid_map_slot(const tid_map *m, tid t)
{
    size_t first, end;

    if (t.block >= m->nblocks || t.offset == 0)
        return SIZE_MAX;
    first = m->start[t.block];
    end = m->start[t.block + 1];
    if (first + t.offset - 1 >= end)
        return SIZE_MAX;
    return first + t.offset - 1;
}

static void on_btree_problem(void *arg, const char *line)
{
    check_ctx *c = arg;

    if (++c->tree <= CHECK_MAX_TREE_LINES)
        problem(c, "%s.%s (file %u): %s", c->rel->schema, c->rel->name,
                c->rel->relnumber, line);
    else
        c->problems++;
}

static void on_btree_entry(void *arg, const keel_value *keys, tid t,
                           bool unique_dead)
{
    check_ctx *c = arg;
    size_t slot;

    (void)keys;
    if (c->map == NULL)
        return;
    if (t.block < c->map->nblocks && c->map->bad[t.block])
        return; /* its block was reported unreadable */
    slot = tid_map_slot(c->map, t);
    if (slot != SIZE_MAX && (c->map->state[slot] & TID_KIND) == TID_DAMAGED)
        return; /* its tuple was reported */
    if (slot == SIZE_MAX || (c->map->state[slot] & TID_KIND) == TID_NONE) {
        if (++c->stray <= CHECK_MAX_TID_LINES)
            problem(c,
                    "%s.%s (file %u): entry points to (%u,%u), which is no "
                    "tuple of table %s",
                    c->rel->schema, c->rel->name, c->rel->relnumber, t.block,
                    t.offset, c->table->name);
        else
            c->problems++;
        return;
    }
    if (c->map->count[slot] < 255)
        c->map->count[slot]++;
    if (!unique_dead || (c->map->state[slot] & TID_DEAD))
        return;
    if (++c->marks <= CHECK_MAX_TID_LINES)
        problem(c,
                "%s.%s (file %u): the entry for (%u,%u) is marked dead, but "
                "that tuple of table %s may be live",
                c->rel->schema, c->rel->name, c->rel->relnumber, t.block,
                t.offset, c->table->name);
    else
        c->problems++;
}

/* The catalog whose heap is relation number rel, or -1. */
static int catalog_of(relnumber_t rel)
{
    switch (rel) {
    case CATALOG_NAMESPACE_OID:
        return CAT_NAMESPACE;
    case CATALOG_CLASS_OID:
        return CAT_CLASS;
    case CATALOG_ATTRIBUTE_OID:
        return CAT_ATTRIBUTE;
    case CATALOG_INDEX_OID:
        return CAT_INDEX;
    case CATALOG_STATISTIC_OID:
        return CAT_STATISTIC;
    default:
        return -1;
    }
}

/*
 * Gives rd table rel's row type: a catalog's own, or a user table's as
 * the engine builds it from keel_attribute (engine_table_handle(), which
 * keeps the handle until the database closes).  A row type that cannot
 * be had is a problem (the engine cannot read the table either), and rd
 * then decodes nothing.  ENOMEM.
 */
static int tuple_reader_open(check_ctx *c, keel_session *s, catalog_txn *ct,
                             const dbinfo_rel *rel, tuple_reader *rd)
{
    engine_rel *h;
    int rc;

    rd->heap = NULL;
    rd->cat = catalog_of(rel->relnumber);
    rd->lines = 0;
    memset(rd->damaged, 0, sizeof(rd->damaged));
    if (rd->cat >= 0) {
        heap_rel_init(&rd->catalog_heap, rel->relnumber,
                      catalog_desc(s->db->cat, (catalog_id)rd->cat));
        rd->heap = &rd->catalog_heap;
    } else {
        catalog_relation cr = {.oid = rel->oid,
                               .relnumber = rel->relnumber,
                               .kind = RELKIND_TABLE,
                               .natts = rel->natts};
        snprintf(cr.name, sizeof(cr.name), "%s", rel->name);
        rc = engine_table_handle(s, ct, &cr, &h);
        if (rc == KEEL_ENOMEM)
            return rc;
        if (rc != KEEL_OK) {
            problem(c,
                    "%s.%s (file %u): its row type cannot be read, so its "
                    "tuples are not decoded: %s",
                    rel->schema, rel->name, rel->relnumber,
                    keel_session_error(s));
            return KEEL_OK;
        }
        rd->heap = &h->heap;
    }
    rc = heap_row_prepare(&rd->row, rd->heap, &s->bs->err);
    if (rc != KEEL_OK)
        rd->heap = NULL;
    return rc;
}

/* One problem in a tuple of rel, on block blk of the file at path; past
 * CHECK_MAX_TUPLE_LINES of the table's, only counted. */
static void tuple_problem(check_ctx *c, tuple_reader *rd, const dbinfo_rel *rel,
                          const char *path, blocknum_t blk, const char *fmt,
                          ...) __attribute__((format(printf, 6, 7)));

static void tuple_problem(check_ctx *c, tuple_reader *rd, const dbinfo_rel *rel,
                          const char *path, blocknum_t blk, const char *fmt,
                          ...)
{
    char what[KEEL_ERROR_MSG_MAX + 64];
    va_list ap;

    if (++rd->lines > CHECK_MAX_TUPLE_LINES) {
        c->problems++;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    problem(c, "%s.%s: file %s block %u: %s", rel->schema, rel->name, path, blk,
            what);
}

/*
 * The tuple at t, just decoded into rd->row, is a row of catalog rd->cat:
 * reports each object id it gives an object (a schema's, a relation's
 * and its file's number, an index's) at or past the control file's
 * object id limit.  Rows that only refer to an object by its id
 * (keel_attribute, keel_statistic, an index's table, a relation's
 * schema) are left to the row that gives the object its id, so that one
 * object past the limit is one line.
 */
static void check_row_oids(check_ctx *c, tuple_reader *rd,
                           const dbinfo_rel *rel, const char *path, tid t)
{
    oid_t lim = c->oid_limit;
    catalog_namespace ns;
    catalog_relation cr;
    catalog_indexdef ix;
    char what[128];

    switch (rd->cat) {
    case CAT_NAMESPACE:
        catalog_namespace_decode(&rd->row, &ns);
        if (ns.oid < lim)
            return;
        snprintf(what, sizeof(what), "oid %u is", ns.oid);
        break;
    case CAT_CLASS:
        catalog_relation_decode(&rd->row, &cr);
        if (cr.oid < lim && cr.relnumber < lim)
            return;
        if (cr.oid >= lim && cr.relnumber >= lim)
            snprintf(what, sizeof(what), "oid %u and relnumber %u are", cr.oid,
                     cr.relnumber);
        else if (cr.oid >= lim)
            snprintf(what, sizeof(what), "oid %u is", cr.oid);
        else
            snprintf(what, sizeof(what), "relnumber %u is", cr.relnumber);
        break;
    case CAT_INDEX:
        catalog_index_decode(&rd->row, &ix);
        if (ix.indexoid < lim)
            return;
        snprintf(what, sizeof(what), "indexrelid %u is", ix.indexoid);
        break;
    default:
        return;
    }
    tuple_problem(c, rd, rel, path, t.block,
                  "tuple (%u,%u): %s at or past the control file's object id "
                  "limit %u, from which ids would be handed out again",
                  t.block, t.offset, what, lim);
}

/* Reports the tuple h at t, of rel, if its inserting or deleting
 * transaction id is at or past the control file's limit. */
static void check_tuple_xids(check_ctx *c, tuple_reader *rd,
                             const dbinfo_rel *rel, const char *path, tid t,
                             const heap_tuple_header *h)
{
    xid_t lim = c->xid_limit;
    /* XID_FROZEN lies below every limit. */
    bool xmin_past = h->xmin >= lim;
    bool xmax_past = h->xmax != XID_INVALID && h->xmax >= lim;

    if (xmin_past && xmax_past)
        tuple_problem(c, rd, rel, path, t.block,
                      "tuple (%u,%u): inserting transaction %u and deleting "
                      "transaction %u are at or past the control file's "
                      "transaction id limit %u, from which ids would be "
                      "handed out again",
                      t.block, t.offset, h->xmin, h->xmax, lim);
    else if (xmin_past || xmax_past)
        tuple_problem(c, rd, rel, path, t.block,
                      "tuple (%u,%u): %s transaction %u is at or past the "
                      "control file's transaction id limit %u, from which "
                      "ids would be handed out again",
                      t.block, t.offset, xmin_past ? "inserting" : "deleting",
                      xmin_past ? h->xmin : h->xmax, lim);
}

/*
 * Checks each tuple of block blk of table rel (its page verified by
 * heappage_verify()): its transaction ids against the control file's
 * limit, and, with rd->heap, that it decodes as a row of the table
 * (heap_row_decode()), and a catalog row's object ids against the limit.
 * Marks in rd->damaged the tuples that do not decode.
 */
static void check_tuples(check_ctx *c, tuple_reader *rd, const dbinfo_rel *rel,
                         const char *path, blocknum_t blk, const void *page)
{
    uint16_t nitems = heappage_nitems(page);
    kerr e;

    for (uint16_t off = 1; off <= nitems; off++) {
        size_t len = 0;
        const heap_tuple_header *h = heappage_get_item_const(page, off, &len);
        tid t = {.block = blk, .offset = off};

        rd->damaged[off] = 0;
        if (h == NULL)
            continue; /* no tuple: unused or dead */
        check_tuple_xids(c, rd, rel, path, t, h);
        if (rd->heap == NULL)
            continue;
        kerr_clear(&e);
        if (heap_row_decode(rd->heap, &rd->row, t, h, len, &e) != KEEL_OK) {
            rd->damaged[off] = 1;
            tuple_problem(c, rd, rel, path, blk, "%s", e.msg);
            continue;
        }
        check_row_oids(c, rd, rel, path, t);
    }
}

/*
 * Reads every block of rel from disk (smgr_read() verifies checksum and
 * header); for a table, also verifies each heap page and its tuples
 * (check_tuples(), with rd) and, with map, records its tuples; for the
 * commit log, each status.
 */
static int check_file(check_ctx *c, keel_db *db, const dbinfo_rel *rel,
                      void *page, tid_map *map, const visibility *vis,
                      tuple_reader *rd)
{
    smgr_rel *sr;
    kerr e;
    int rc;

    kerr_clear(&e);
    if (rel->missing) {
        problem(c, "%s.%s: file %s/%u is missing", rel->schema, rel->name,
                db->dir, rel->relnumber);
        return KEEL_OK;
    }
    rc = smgr_rel_open(db->smgr, rel->relnumber, &sr, &e);
    if (rc != KEEL_OK) {
        problem(c, "%s.%s: %s", rel->schema, rel->name, e.msg);
        return KEEL_OK;
    }
    if (map != NULL)
        map->nblocks = rel->blocks;
    for (blocknum_t blk = 0; blk < rel->blocks; blk++) {
        bool ok = true;
        kerr_clear(&e);
        rc = smgr_read(sr, blk, page, &e);
        if (rc != KEEL_OK) {
            problem(c, "%s.%s: %s", rel->schema, rel->name, e.msg);
            ok = false;
        } else if ((rel->kind == RELKIND_TABLE &&
                    heappage_verify(page, blk, &e) != KEEL_OK) ||
                   (rel->kind == DBINFO_KIND_CLOG &&
                    clog_page_verify(page, blk, &e) != KEEL_OK)) {
            problem(c, "%s.%s: file %s block %u: %s", rel->schema, rel->name,
                    smgr_rel_path(sr), blk, e.msg);
            ok = false;
        } else if (rd != NULL) {
            check_tuples(c, rd, rel, smgr_rel_path(sr), blk, page);
        }
        if (map != NULL &&
            tid_map_add_block(map, blk, ok ? page : NULL, vis,
                              ok && rd != NULL ? rd->damaged : NULL) != KEEL_OK)
            return KEEL_ENOMEM;
    }
    if (rd != NULL && rd->lines > CHECK_MAX_TUPLE_LINES) {
        problem(c, "%s.%s: %llu more problems in its tuples", rel->schema,
                rel->name,
                (unsigned long long)(rd->lines - CHECK_MAX_TUPLE_LINES));
        c->problems--; /* that line sums up problems counted already */
    }
    return KEEL_OK;
}

/* Checks index ix of table (whose tuples are in map, or map NULL). */
static int check_index(check_ctx *c, keel_session *s, const dbinfo_rel *ix,
                       const dbinfo_rel *table, tid_map *map)
{
    uint64_t probs = 0, wrong = 0, hidden;
    int rc;

    c->rel = ix;
    c->table = table;
    c->map = map;
    c->stray = 0;
    c->marks = 0;
    c->tree = 0;
    if (map != NULL) {
        free(map->count);
        map->count = calloc(map->n ? map->n : 1, 1);
        if (map->count == NULL)
            return KEEL_ENOMEM;
    }
    rc = btree_check(s->bs, ix->relnumber, on_btree_problem, on_btree_entry, c,
                     &probs);
    if (rc == KEEL_ENOMEM)
        return rc;
    if (rc != KEEL_OK) {
        problem(c, "%s.%s (file %u): cannot be checked: %s", ix->schema,
                ix->name, ix->relnumber, keel_session_error(s));
        return KEEL_OK;
    }
    if (c->tree > CHECK_MAX_TREE_LINES) {
        problem(c, "%s.%s (file %u): %llu more problems in this index",
                ix->schema, ix->name, ix->relnumber,
                (unsigned long long)(c->tree - CHECK_MAX_TREE_LINES));
        c->problems--; /* that line sums up problems counted already */
    }
    if (map == NULL || probs > 0)
        return KEEL_OK; /* a broken tree's entries prove nothing more */
    for (blocknum_t b = 0; b < map->nblocks; b++)
        for (uint32_t i = map->start[b]; i < map->start[b + 1]; i++) {
            uint8_t st = map->state[i] & TID_KIND, n = map->count[i];
            /* A user table's unique index may have shed a dead row's
             * entry (btree_insert_prune()); no snapshot can see the row.
             * The catalogs' indexes never shed. */
            bool dead = ix->unique && strcmp(ix->schema, "keel_catalog") != 0 &&
                        (map->state[i] & TID_DEAD);
            /* An index built by a transaction whose snapshot did not see
             * a version (its deleter committed first, or was the builder
             * itself) has no entry for it.  Such a deleter's xid is at or
             * below the builder's: xids are handed out in order, the
             * builder's after its snapshot (the engine takes it once the
             * table is locked, after any snapshot taken again for a lock
             * that waited).  (Not every deleter below it committed first;
             * for those an entry missing is not reported.) */
            dead = dead || (map->deleter[i] != 0 && ix->built > XID_FROZEN &&
                            map->deleter[i] <= ix->built);
            if ((st == TID_ONCE && (n == 1 || (dead && n == 0))) ||
                (st == TID_ATMOST && n <= 1) || st == TID_NONE ||
                st == TID_DAMAGED || (st == TID_HEAP_ONLY && n == 0))
                continue;
            if (++wrong <= CHECK_MAX_TID_LINES)
                problem(c,
                        "%s.%s (file %u): tuple (%u,%u) of table %s is "
                        "indexed %u times, not %s",
                        ix->schema, ix->name, ix->relnumber, b,
                        i - map->start[b] + 1, table->name, n,
                        st == TID_ONCE     ? "once"
                        : st == TID_ATMOST ? "at most once"
                                           : "never (it is heap-only)");
            else
                c->problems++;
        }
    hidden =
        (wrong > CHECK_MAX_TID_LINES ? wrong - CHECK_MAX_TID_LINES : 0) +
        (c->stray > CHECK_MAX_TID_LINES ? c->stray - CHECK_MAX_TID_LINES : 0) +
        (c->marks > CHECK_MAX_TID_LINES ? c->marks - CHECK_MAX_TID_LINES : 0);
    if (hidden > 0) {
        problem(c, "%s.%s (file %u): %llu more tuples disagree with the table",
                ix->schema, ix->name, ix->relnumber,
                (unsigned long long)hidden);
        c->problems--; /* as above */
    }
    return KEEL_OK;
}

static int by_number(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * Notes each regular file in the database's directory named as a
 * relation's that none of rels[0..n) owns: what a crash leaves of a
 * create that did not commit, or of a drop that did before the close
 * that removes its file.  keel never removes a file the catalogs do not
 * account for (src/catalog/README.md), and neither does the check: a
 * damaged keel_class or commit log page that reads as empty (as a new
 * page does) hides live relations' rows, and their files would look the
 * same.  A note, then, not a problem, and one that says so.
 */
static int check_unowned_files(check_ctx *c, keel_db *db,
                               const dbinfo_rel *rels, size_t n)
{
    DIR *d = opendir(db->dir);
    uint32_t *nums = NULL;
    size_t nn = 0, cap = 0;
    struct dirent *de;
    int rc = KEEL_OK;

    if (d == NULL) {
        problem(c, "the directory %s cannot be listed: %s", db->dir,
                strerror(errno));
        return KEEL_OK;
    }
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        uint32_t num;
        bool owned = false;
        if (!smgr_relnumber_of(de->d_name, &num) ||
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        /* rels is in relation number order (dbinfo_relations()). */
        for (size_t lo = 0, hi = n; lo < hi && !owned;) {
            size_t mid = lo + (hi - lo) / 2;
            if (rels[mid].relnumber < num)
                lo = mid + 1;
            else if (rels[mid].relnumber > num)
                hi = mid;
            else
                owned = true;
        }
        if (owned)
            continue;
        if (nn == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            uint32_t *p = realloc(nums, ncap * sizeof(*p));
            if (p == NULL) {
                rc = KEEL_ENOMEM;
                break;
            }
            nums = p;
            cap = ncap;
        }
        nums[nn++] = num;
    }
    closedir(d);
    if (rc == KEEL_OK) {
        if (nn > 1)
            qsort(nums, nn, sizeof(*nums), by_number);
        for (size_t i = 0; i < nn; i++)
            note(c,
                 "file %s/%u is no relation's that keel_class shows: a "
                 "crash leaves the file of a create that did not commit, "
                 "or of a drop that did, but a damaged keel_class or "
                 "keel_clog can hide a live relation's",
                 db->dir, nums[i]);
    }
    free(nums);
    return rc;
}

/* Checks every relation of the open database. */
static int check_relations(check_ctx *c, keel_db *db, keel_session *s)
{
    dbinfo_rel *rels = NULL;
    size_t n = 0;
    uint64_t skipped = 0;
    catalog_txn ct;
    tuple_reader *rd = calloc(1, sizeof(*rd));
    void *page = aligned_alloc(4096, BLOCK_SIZE);
    int rc = page == NULL || rd == NULL
                 ? KEEL_ENOMEM
                 : dbinfo_relations(s, &rels, &n, &skipped);

    bool catalogs_read = rc == KEEL_OK && skipped == 0;

    if (rc != KEEL_OK && rc != KEEL_ENOMEM) {
        problem(c, "the catalogs cannot be read: %s", keel_session_error(s));
        rc = KEEL_OK;
    }
    /* Each such row is reported with its table's tuples below. */
    if (rc == KEEL_OK && skipped > 0)
        note(c,
             "%llu row(s) of keel_namespace, keel_class or keel_index that "
             "do not decode were left out of the list of relations: what "
             "they describe may be missing from it, and no file is called "
             "unowned",
             (unsigned long long)skipped);
    /*
     * The limits that tuples and catalog rows are held to: the first ids
     * that no open has handed out, as far as what is durable says.  For
     * transaction ids that is the control file's xid_limit:
     * txn_assign_xid() has a higher limit written and synced before it
     * hands out an id at or past it, and an open restarts from it (the
     * transaction manager's next_xid lives in memory, lost in a crash).
     * For object ids it is oid_limit, not next_oid: engine_oid_next()
     * reserves oids the same way and an open restarts from oid_limit,
     * while next_oid is only where the last clean close had got to (after
     * a crash, oids past it are rightly in use).  The open took both as it
     * restarts from them (raised to the first normal xid and the first
     * user oid), and a read-only open changes neither.  An id at or past
     * its limit would be handed out again: the control file's counter was
     * lowered, or the row is damaged.
     */
    pthread_mutex_lock(&db->control_lock);
    c->xid_limit = db->control.xid_limit;
    c->oid_limit = db->control.oid_limit;
    pthread_mutex_unlock(&db->control_lock);
    /* A snapshot taken now sees every transaction that ever committed. */
    if (rc == KEEL_OK)
        rc = keel_begin(s);
    if (rc == KEEL_OK)
        rc = engine_catalog_txn(s, false, &ct);
    if (rc != KEEL_OK && rc != KEEL_ENOMEM) {
        problem(c, "no snapshot: %s", keel_session_error(s));
        n = 0;
        catalogs_read = false;
        rc = KEEL_OK;
    }
    for (size_t i = 0; rc == KEEL_OK && i < n; i++)
        if (rels[i].no_schema)
            problem(c,
                    "%s (file %u): its schema, oid %s, is not in "
                    "keel_namespace",
                    rels[i].name, rels[i].relnumber, rels[i].schema);
    /* Files first, each table followed by its indexes. */
    for (size_t i = 0; rc == KEEL_OK && i < n; i++) {
        tid_map map = {0};
        bool has_index = false;
        if (rels[i].kind == RELKIND_INDEX && rels[i].table != 0)
            continue; /* with its table */
        for (size_t j = 0; j < n; j++)
            has_index = has_index || (rels[j].kind == RELKIND_INDEX &&
                                      rels[j].table == rels[i].oid);
        bool table = rels[i].kind == RELKIND_TABLE && !dbinfo_no_file(&rels[i]);
        if (table)
            rc = tuple_reader_open(c, s, &ct, &rels[i], rd);
        if (rc == KEEL_OK)
            rc = check_file(c, db, &rels[i], page,
                            rels[i].kind == RELKIND_TABLE && has_index ? &map
                                                                       : NULL,
                            &ct.vis, table ? rd : NULL);
        for (size_t j = 0; rc == KEEL_OK && j < n; j++) {
            if (rels[j].kind != RELKIND_INDEX || rels[j].table != rels[i].oid)
                continue;
            rc = check_file(c, db, &rels[j], page, NULL, NULL, NULL);
            if (rc == KEEL_OK && !dbinfo_no_file(&rels[j]))
                rc = check_index(c, s, &rels[j], &rels[i],
                                 dbinfo_no_file(&rels[i]) ? NULL : &map);
        }
        tid_map_free(&map);
    }
    /* Indexes whose table keel_index does not name, or names but
     * keel_class does not hold: no table's turn above reached them. */
    for (size_t i = 0; rc == KEEL_OK && i < n; i++) {
        bool listed = false;
        if (rels[i].kind != RELKIND_INDEX)
            continue;
        for (size_t j = 0; j < n && rels[i].table != 0; j++)
            listed = listed || (rels[j].oid == rels[i].table &&
                                rels[j].kind != RELKIND_INDEX);
        if (listed)
            continue;
        if (rels[i].table == 0)
            problem(c, "%s.%s (file %u): index without a keel_index row",
                    rels[i].schema, rels[i].name, rels[i].relnumber);
        else
            problem(c,
                    "%s.%s (file %u): index of table %u, which keel_class "
                    "does not hold",
                    rels[i].schema, rels[i].name, rels[i].relnumber,
                    rels[i].table);
        rc = check_file(c, db, &rels[i], page, NULL, NULL, NULL);
        if (rc == KEEL_OK && !dbinfo_no_file(&rels[i]))
            rc = check_index(c, s, &rels[i], &rels[i], NULL);
    }
    /* Only a complete list of relations tells which files none owns. */
    if (rc == KEEL_OK && catalogs_read)
        rc = check_unowned_files(c, db, rels, n);
    keel_abort(s);
    if (rd != NULL)
        heap_row_free(&rd->row);
    free(rd);
    free(rels);
    free(page);
    return rc;
}

/* Whether the log from redo holds more than the checkpoint record: what
 * an open would replay.  A crash right after a checkpoint leaves none. */
static bool log_to_replay(const char *dir, uint64_t redo)
{
    wal_reader *r;
    const wal_record *h;
    const char *b;
    kerr e;
    int n = 0;

    if (wal_reader_open(dir, redo, &r, &e) != KEEL_OK)
        return true; /* let the open say what is wrong */
    while (n < 2 && wal_reader_next(r, &h, &b, &e) == KEEL_OK)
        n++;
    wal_reader_close(r);
    return n > 1;
}

keel_status keel_check(const char *dir, keel_check_fn fn, void *ctx,
                       uint64_t *problems, uint64_t *notes, keel_error *err)
{
    check_ctx c = {.fn = fn, .ctx = ctx};
    keel_db_options o;
    keel_db *db = NULL;
    keel_session *s = NULL;
    keel_error e = {0};
    uint64_t recovered = 0, recovery_ns = 0;
    bool crashed = false;
    int rc;

    *problems = 0;
    if (notes != NULL)
        *notes = 0;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 32;
    /* A database a crash left must have its log replayed before its
     * files mean anything, as any open for writing does: so first one
     * (which a directory that cannot be written refuses: then it is
     * checked as it lies, its log replayed in memory).  Then read-only. */
    {
        control_data cd;
        kerr ke;
        if (control_read(dir, &cd, &ke) == KEEL_OK &&
            cd.state != CONTROL_SHUT_DOWN && access(dir, W_OK) == 0 &&
            log_to_replay(dir, cd.redo_lsn)) {
            keel_db *w;
            o.read_only = false;
            if (keel_db_open(&o, &w, &e) == KEEL_OK) {
                recovered = w->recovered_records;
                recovery_ns = w->recovery_ns;
                crashed = keel_db_close(w, &e) == KEEL_OK;
            }
        }
    }
    o.read_only = true;
    rc = keel_db_open(&o, &db, &e);
    /* A damaged control file or catalog is a finding; anything else that
     * stops the open (in use, not a database, no permission) means there
     * was no check. */
    if (rc == KEEL_ECORRUPT || rc == KEEL_EVERSION) {
        problem(&c, "%s", e.msg);
        *problems = c.problems;
        return KEEL_OK;
    }
    if (rc != KEEL_OK) {
        if (err != NULL)
            *err = e;
        return rc;
    }
    /* A crash leaves the control file "in production"; an open for
     * writing, which would then say "shut down", was never made. */
    if (crashed)
        note(&c,
             "database \"%s\" was not shut down cleanly: recovery replayed "
             "%llu log records in %.3f s (%.0f per second), and the "
             "transactions it was running read as aborted",
             dir, (unsigned long long)recovered, (double)recovery_ns / 1e9,
             recovery_ns > 0 ? (double)recovered * 1e9 / (double)recovery_ns
                             : 0.0);
    else if (db->found_state != CONTROL_SHUT_DOWN)
        note(&c,
             "database \"%s\" was not shut down cleanly: the transactions "
             "it was running read as aborted, and what it changed after its "
             "last checkpoint may be missing (it cannot be written, so its "
             "log was not replayed)",
             dir);
    /* Opened read-only, the database is checked as it lies on disk and
     * left so: nothing dirties a page, and the files are read directly. */
    rc = keel_session_begin(db, &s, &e);
    if (rc == KEEL_OK) {
        rc = check_relations(&c, db, s);
        if (rc == KEEL_ENOMEM)
            snprintf(e.msg, sizeof(e.msg), "out of memory");
        e.code = rc;
        keel_session_end(s);
    }
    if (keel_db_close(db, rc == KEEL_OK ? &e : NULL) != KEEL_OK &&
        rc == KEEL_OK)
        rc = e.code;
    if (rc != KEEL_OK && err != NULL)
        *err = e;
    *problems = c.problems;
    if (notes != NULL)
        *notes = c.notes;
    return rc;
}
