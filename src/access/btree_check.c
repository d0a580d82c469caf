/*
 * btree_check.c: the structural checker of a B-tree (for tests and
 * `keel check`).
 *
 * It walks the tree a level at a time from the root down.  For each level
 * it knows, from the level above, the ordered list of downlinks (child
 * block and separator); it follows the level's right-link chain from the
 * first child and checks that the chain visits exactly those children in
 * that order, that each page's entries lie in [its separator, its high
 * key), that its high key equals the next downlink's separator, and
 * everything about the page itself (header, item bounds, key encodings,
 * order, flags, level, left-link).  Every page is copied out under a share
 * lock held for that page only; with no concurrent writers (the assumed
 * setting) the copies form a consistent picture.  A page that cannot be
 * read or is malformed ends the walk of its level with a problem, so a
 * corrupt index cannot make the checker loop or read out of bounds.
 */
#include "access/btree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/btree_page.h"
#include "storage/bufmgr.h"

/* One downlink of the level above: its child and separator (a copy of an
 * internal item in the level's arena; SIZE_MAX for minus infinity). */
typedef struct bt_down {
    blocknum_t child;
    size_t sep;
} bt_down;

typedef struct bt_downs {
    bt_down *v;
    size_t n, cap;
    unsigned char *arena; /* 8-aligned item copies */
    size_t used, arena_cap;
} bt_downs;

typedef union bt_check_page {
    bt_item hdr;
    uint64_t align;
    unsigned char b[BLOCK_SIZE];
} bt_check_page;

typedef struct bt_check {
    buf_session *s;
    btree *bt;
    relnumber_t rel;
    blocknum_t nblocks;
    blocknum_t root;
    btree_problem_fn problem;
    btree_entry_fn entry;
    void *ctx;
    uint64_t problems;
    bool nomem;
    uint8_t *seen; /* a bit per block: reached by the walk */
    tid *tids;     /* every leaf entry's heap tid */
    size_t ntids, cap_tids;
    bt_check_page page;    /* the page being checked */
    bt_check_page prev_hk; /* the left sibling's high key (first item) */
    bool has_prev_hk;
} bt_check;

static void bt_report(bt_check *ch, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void bt_report(bt_check *ch, const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof(line), "index %u ", ch->rel);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    ch->problems++;
    if (ch->problem != NULL)
        ch->problem(ch->ctx, line);
}

/* Appends a downlink (sep: an internal item, or NULL for minus infinity). */
static bool bt_downs_add(bt_check *ch, bt_downs *d, blocknum_t child,
                         const bt_item *sep)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 256;
        bt_down *v = realloc(d->v, cap * sizeof(*v));
        if (v == NULL)
            return !(ch->nomem = true);
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n].child = child;
    d->v[d->n].sep = SIZE_MAX;
    if (sep != NULL) {
        size_t sz = btitem_size(sep);
        if (d->used + sz > d->arena_cap) {
            size_t cap = d->arena_cap ? d->arena_cap * 2 : 65536;
            unsigned char *a;
            while (cap < d->used + sz)
                cap *= 2;
            a = realloc(d->arena, cap);
            if (a == NULL)
                return !(ch->nomem = true);
            d->arena = a;
            d->arena_cap = cap;
        }
        memcpy(d->arena + d->used, sep, sz);
        d->v[d->n].sep = d->used;
        d->used += sz;
    }
    d->n++;
    return true;
}

static const bt_item *bt_down_sep(const bt_downs *d, size_t i)
{
    if (d->v[i].sep == SIZE_MAX)
        return NULL;
    return (const bt_item *)(d->arena + d->v[i].sep);
}

static void bt_downs_reset(bt_downs *d)
{
    d->n = 0;
    d->used = 0;
}

/* Compares two items (neither minus infinity), each from a leaf or an
 * internal page, by (key, tid). */
static int bt_item_cmp(const btree *bt, const bt_item *a, bool aleaf,
                       const bt_item *b, bool bleaf)
{
    keel_value vals[BTREE_MAX_KEYS];
    bt_scankey sk;

    bt_scankey_from_item(bt, a, aleaf, vals, &sk);
    return bt_compare(bt, &sk, b, bleaf);
}

/*
 * Checks a page's header, level, line pointers, item sizes and key
 * encodings (btpage_check()) and its downlinks' range, so that everything
 * after may read its items.  Reports and returns false on the first fault.
 */
static bool bt_check_layout(bt_check *ch, blocknum_t blk, const void *page,
                            uint32_t level)
{
    const bt_opaque *op = btpage_opaque_c(page);
    char why[128];
    uint16_t n;

    if (btpage_header(page)->special == BT_SPECIAL_OFF && op->level != level) {
        bt_report(ch,
                  "block %u: level %u flags %#x where a page of level "
                  "%u belongs",
                  blk, op->level, op->flags, level);
        return false;
    }
    if (!btpage_check(page, ch->bt->desc, why, sizeof(why))) {
        bt_report(ch, "block %u: %s", blk, why);
        return false;
    }
    n = btpage_nitems(page);
    for (uint16_t i = btpage_first(page); i < n && level > 0; i++) {
        const bt_item *it = btpage_item(page, i);
        if (it->block >= ch->nblocks) {
            bt_report(ch,
                      "block %u item %u: downlink to block %u out of "
                      "range",
                      blk, i, it->block);
            return false;
        }
    }
    return true;
}

/*
 * Checks the contents of a well-formed page: data items strictly
 * ascending, all below the high key, none below the lower bound (the
 * downlink's separator, NULL for minus infinity) or the left sibling's
 * high key.
 */
static void bt_check_order(bt_check *ch, blocknum_t blk, const void *page,
                           bool leaf, const bt_item *lower)
{
    const btree *bt = ch->bt;
    uint16_t n = btpage_nitems(page), first = btpage_first(page);
    uint16_t k0 = (uint16_t)(leaf ? first : first + 1); /* first keyed */
    const bt_item *hk =
        btpage_rightmost(page) ? NULL : btpage_item(page, BT_HIKEY);

    for (uint16_t i = k0; i < n; i++) {
        const bt_item *it = btpage_item(page, i);

        if (i > k0 &&
            bt_item_cmp(bt, btpage_item(page, i - 1), leaf, it, leaf) >= 0)
            bt_report(ch, "block %u item %u: key not above item %u's", blk, i,
                      i - 1);
        if (hk != NULL && bt_item_cmp(bt, it, leaf, hk, leaf) >= 0)
            bt_report(ch, "block %u item %u: key not below the high key", blk,
                      i);
        if (i == k0 && lower != NULL &&
            bt_item_cmp(bt, it, leaf, lower, false) < 0)
            bt_report(ch,
                      "block %u item %u: key below the parent's "
                      "separator for the page",
                      blk, i);
        if (i == k0 && ch->has_prev_hk &&
            bt_item_cmp(bt, it, leaf, &ch->prev_hk.hdr, leaf) < 0)
            bt_report(ch,
                      "block %u item %u: key below the left sibling's "
                      "high key",
                      blk, i);
    }
}

/* Reads block blk into ch->page under a share lock.  Reports and returns
 * false if it cannot be read. */
static bool bt_check_read(bt_check *ch, blocknum_t blk)
{
    int32_t id;
    int rc = buf_read(ch->s, ch->rel, blk, NULL, &id);

    if (rc == KEEL_ENOMEM) /* not the page's fault: the check stops */
        return !(ch->nomem = true);
    if (rc != KEEL_OK) {
        bt_report(ch, "block %u: unreadable: %s", blk,
                  buf_session_error(ch->s)->msg);
        return false;
    }
    buf_lock(ch->s, id, LW_SHARED);
    memcpy(ch->page.b, buf_page(ch->s->pool, id), BLOCK_SIZE);
    buf_unlock(ch->s, id);
    buf_release(ch->s, id);
    return true;
}

/* Hands every entry of a checked leaf to the entry callback and records
 * its tid. */
static void bt_check_entries(bt_check *ch, const void *page)
{
    uint16_t n = btpage_nitems(page);

    for (uint16_t i = btpage_first(page); i < n; i++) {
        const bt_item *it = btpage_item(page, i);
        tid t = btitem_tid(it, true);

        if (ch->ntids == ch->cap_tids) {
            size_t cap = ch->cap_tids ? ch->cap_tids * 2 : 4096;
            tid *v = realloc(ch->tids, cap * sizeof(*v));
            if (v == NULL) {
                ch->nomem = true;
                return;
            }
            ch->tids = v;
            ch->cap_tids = cap;
        }
        ch->tids[ch->ntids++] = t;
        if (ch->entry != NULL) {
            keel_value vals[BTREE_MAX_KEYS];
            tuple_deform(ch->bt->desc, btitem_key(it, true),
                         (it->info & BT_INFO_NULLS) != 0, vals);
            ch->entry(ch->ctx, vals, t, (it->info & BT_INFO_UNIQUE_DEAD) != 0);
        }
    }
}

/*
 * Walks level `level` along its right-links from the first downlink in
 * down, checking it against down, and collects the next level's downlinks
 * into next.
 */
static void bt_check_level(bt_check *ch, uint32_t level, const bt_downs *down,
                           bt_downs *next)
{
    const btree *bt = ch->bt;
    bool leaf = level == 0;
    blocknum_t blk = down->v[0].child, prev = BT_NONE;
    bool follows_parent = true;
    size_t j = 0;

    ch->has_prev_hk = false;
    while (blk != BT_NONE && !ch->nomem) {
        const void *page = ch->page.b;
        const bt_opaque *op = btpage_opaque_c(page);
        const bt_item *lower = NULL;

        if (blk == BT_META_BLOCK || blk >= ch->nblocks) {
            bt_report(ch, "block %u: right-link to block %u out of range", prev,
                      blk);
            return;
        }
        if (ch->seen[blk / 8] & (1u << (blk % 8))) {
            bt_report(ch,
                      "block %u: reached twice (from block %u on level "
                      "%u)",
                      blk, prev, level);
            return;
        }
        ch->seen[blk / 8] |= (uint8_t)(1u << (blk % 8));
        if (follows_parent) {
            if (j >= down->n) {
                bt_report(ch,
                          "block %u: on level %u after block %u, but the "
                          "parent level has no downlink to it",
                          blk, level, prev);
                follows_parent = false;
            } else if (down->v[j].child != blk) {
                bt_report(ch,
                          "block %u: on level %u after block %u, but the "
                          "parent level's next downlink is to block %u",
                          blk, level, prev, down->v[j].child);
                follows_parent = false;
            } else {
                lower = bt_down_sep(down, j);
            }
        }
        if (!bt_check_read(ch, blk))
            return;
        if (!bt_check_layout(ch, blk, page, level))
            return;
        if (op->left != prev)
            bt_report(ch, "block %u: left-link %u, expected %u", blk, op->left,
                      prev);
        if (((op->flags & BT_ROOT) != 0) != (blk == ch->root))
            bt_report(ch, "block %u: root flag %s", blk,
                      blk == ch->root ? "missing on the root"
                                      : "set on a page that is not the root");
        bt_check_order(ch, blk, page, leaf, lower);

        /* The high key must be the separator of the next downlink. */
        if (follows_parent) {
            if (j + 1 < down->n) {
                const bt_item *sep = bt_down_sep(down, j + 1);
                if (btpage_rightmost(page)) {
                    bt_report(ch,
                              "block %u: level %u ends here, but the "
                              "parent level has downlinks to %zu more pages",
                              blk, level, down->n - j - 1);
                    follows_parent = false;
                } else if (sep == NULL ||
                           bt_item_cmp(bt, btpage_item(page, BT_HIKEY), leaf,
                                       sep, false) != 0)
                    bt_report(ch,
                              "block %u: high key differs from the "
                              "parent's separator for block %u",
                              blk, down->v[j + 1].child);
            } else if (!btpage_rightmost(page)) {
                bt_report(ch,
                          "block %u: has right sibling %u, but the "
                          "parent level has no downlink to it",
                          blk, op->right);
                follows_parent = false;
            }
        }

        if (leaf) {
            bt_check_entries(ch, page);
        } else {
            uint16_t n = btpage_nitems(page), first = btpage_first(page);
            for (uint16_t i = first; i < n; i++) {
                const bt_item *it = btpage_item(page, i);
                /* Minus infinity stands for the page's lower bound. */
                const bt_item *sep = i == first ? lower : it;
                if (i == first && !follows_parent && ch->has_prev_hk)
                    sep = &ch->prev_hk.hdr;
                if (!bt_downs_add(ch, next, it->block, sep))
                    return;
            }
        }
        if (!btpage_rightmost(page)) {
            const bt_item *hk = btpage_item(page, BT_HIKEY);
            memcpy(ch->prev_hk.b, hk, btitem_size(hk));
            ch->has_prev_hk = true;
        }
        j++;
        prev = blk;
        blk = op->right;
    }
    /* A walk cut short for want of memory says nothing of the level. */
    if (follows_parent && j < down->n && !ch->nomem)
        bt_report(ch,
                  "level %u ends at block %u, but the parent level has "
                  "downlinks to %zu more pages (first: block %u)",
                  level, prev, down->n - j, down->v[j].child);
}

static int bt_tid_cmp(const void *a, const void *b)
{
    return tid_compare(*(const tid *)a, *(const tid *)b);
}

/* Reports heap tuples indexed more than once. */
static void bt_check_tids(bt_check *ch)
{
    if (ch->ntids == 0)
        return;
    qsort(ch->tids, ch->ntids, sizeof(tid), bt_tid_cmp);
    for (size_t i = 0; i < ch->ntids;) {
        size_t k = i + 1;
        while (k < ch->ntids && tid_compare(ch->tids[k], ch->tids[i]) == 0)
            k++;
        if (k - i > 1)
            bt_report(ch, "heap tuple (%u,%u) is indexed %zu times",
                      ch->tids[i].block, ch->tids[i].offset, k - i);
        i = k;
    }
}

/* Reports pages that the walk did not reach (all-zero pages excepted: a
 * new block is zeroes in the file until its buffer is written, and a failed
 * split leaves its new pages zeroed). */
static void bt_check_unreached(bt_check *ch)
{
    for (blocknum_t b = 1; b < ch->nblocks; b++) {
        if (ch->seen[b / 8] & (1u << (b % 8)))
            continue;
        if (!bt_check_read(ch, b))
            continue;
        if (!page_is_new(ch->page.b))
            bt_report(ch, "block %u: not reachable from the root", b);
    }
}

int btree_check(buf_session *s, relnumber_t rel, btree_problem_fn problem,
                btree_entry_fn entry, void *ctx, uint64_t *problems)
{
    bt_downs a = {0}, b = {0};
    bt_downs *down = &a, *next = &b;
    tuple_desc *desc = NULL;
    bt_check *ch;
    smgr_rel *srel;
    bt_meta meta;
    int rc;

    rc = smgr_rel_open(buf_pool_smgr(s->pool), rel, &srel, &s->err);
    if (rc != KEEL_OK)
        return rc;
    ch = calloc(1, sizeof(*ch));
    if (ch == NULL)
        return kerr_set(&s->err, KEEL_ENOMEM, "out of memory for a check");
    ch->s = s;
    ch->rel = rel;
    ch->problem = problem;
    ch->entry = entry;
    ch->ctx = ctx;
    ch->nblocks = smgr_nblocks(srel);
    if (ch->nblocks == 0) {
        bt_report(ch, "has no meta page (empty relation)");
        goto done;
    }
    if (!bt_check_read(ch, BT_META_BLOCK))
        goto done;
    {
        kerr e;
        int prc = bt_meta_parse(ch->page.b, rel, &meta, &desc, &e);
        if (prc == KEEL_ENOMEM) {
            ch->nomem = true;
            goto done;
        }
        if (prc != KEEL_OK) {
            bt_report(ch, "block 0: %s", e.msg);
            goto done;
        }
    }
    if (meta.root >= ch->nblocks) {
        bt_report(ch, "block 0: root block %u is past the end (%u blocks)",
                  meta.root, ch->nblocks);
        goto done;
    }
    rc = bt_handle_new(rel, desc, meta.unique != 0, &ch->bt, &s->err);
    if (rc == KEEL_OK)
        rc = bt_register_check(ch->bt, s);
    if (rc != KEEL_OK)
        goto done;
    ch->root = meta.root;
    ch->seen = calloc((size_t)ch->nblocks / 8 + 1, 1);
    if (ch->seen == NULL || !bt_downs_add(ch, down, meta.root, NULL)) {
        ch->nomem = true;
        goto done;
    }
    for (uint32_t level = meta.level;; level--) {
        uint64_t before = ch->problems;

        bt_downs_reset(next);
        bt_check_level(ch, level, down, next);
        if (ch->nomem || level == 0)
            break;
        if (next->n == 0) {
            if (ch->problems == before)
                bt_report(ch, "level %u has no downlinks", level);
            break;
        }
        bt_downs *t = down;
        down = next;
        next = t;
    }
    if (!ch->nomem) {
        bt_check_tids(ch);
        bt_check_unreached(ch);
    }
done:
    if (ch->nomem && rc == KEEL_OK)
        rc = kerr_set(&s->err, KEEL_ENOMEM, "out of memory for a check");
    if (rc == KEEL_OK)
        *problems = ch->problems;
    tupdesc_free(desc);
    btree_close(ch->bt);
    free(ch->seen);
    free(ch->tids);
    free(a.v);
    free(a.arena);
    free(b.v);
    free(b.arena);
    free(ch);
    return rc;
}
