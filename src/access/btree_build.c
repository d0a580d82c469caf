/*
 * btree_build.c: building a B-tree from sorted input.
 *
 * Entries arrive in ascending (key, tid) order.  Each level has one page
 * being filled, held pinned and exclusively locked (nobody else can use
 * an index being built).  Leaves are filled left to right to 90%, internal
 * pages to 70% (room for later splits); when a page is full, the next
 * entry starts a new right sibling, the page gets that entry as its high
 * key, and a downlink to the sibling goes one level up (creating the level,
 * with a minus-infinity downlink to its leftmost child, the first time).
 * At the end the last page of each level is its rightmost, and the single
 * page of the top level is the root.  Pages come from buf_extend() through
 * a bulk-write ring so that a large build does not flush the pool.
 */
#include "access/btree.h"

#include <stdlib.h>
#include <string.h>

#include "access/btree_page.h"
#include "storage/bufmgr.h"

typedef struct bt_build_level {
    int32_t id;          /* the page being filled: pinned, locked */
    blocknum_t blk;      /* its block */
    blocknum_t leftmost; /* the level's first page */
} bt_build_level;

typedef struct bt_build {
    btree *bt;
    buf_session *s;
    buf_strategy *ring;
    uint32_t nlevels;
    bt_build_level lv[BT_MAX_LEVELS];
} bt_build;

/* Appends a new page of level l (left sibling left) and makes it the
 * level's current page. */
static int bt_build_new_page(bt_build *b, uint32_t l, blocknum_t left)
{
    int32_t id;
    blocknum_t blk;
    int rc;

    rc = buf_extend(b->s, b->bt->rel, sizeof(bt_opaque), b->ring, &id, &blk);
    if (rc != KEEL_OK)
        return rc;
    btpage_init(buf_page(b->s->pool, id), (uint16_t)l, 0);
    btpage_opaque(buf_page(b->s->pool, id))->left = left;
    b->lv[l].id = id;
    b->lv[l].blk = blk;
    if (left == BT_NONE)
        b->lv[l].leftmost = blk;
    return KEEL_OK;
}

/* Writes out (marks dirty and releases) the current page of level l. */
static void bt_build_release(bt_build *b, uint32_t l)
{
    buf_mark_dirty(b->s, b->lv[l].id);
    buf_unlock(b->s, b->lv[l].id);
    buf_release(b->s, b->lv[l].id);
    b->lv[l].id = BUF_INVALID;
}

/*
 * Appends item (in level l's format) to level l, starting a new page of the
 * level (and a downlink one level up) when the current one is full.
 */
static int bt_build_add(bt_build *b, uint32_t l, const void *item,
                        uint16_t size)
{
    bt_itembuf carry, dl;
    unsigned char mi[BT_MINUS_INF_SIZE];
    const bt_item *first;
    size_t fill = l == 0 ? BT_LEAF_FILL : BT_INTERNAL_FILL;
    blocknum_t oldblk;
    int32_t oldid;
    uint16_t dlsize;
    void *page;
    bool carried = false;
    int rc;

    if (l >= BT_MAX_LEVELS)
        return kerr_set(&b->s->err, KEEL_ETOOBIG, "index %u: too many levels",
                        b->bt->rel);
    if (l == b->nlevels) {
        /* A new top level: it starts with a downlink to the level below's
         * first page. */
        rc = bt_build_new_page(b, l, BT_NONE);
        if (rc != KEEL_OK)
            return rc;
        b->nlevels++;
        if (!btpage_add(buf_page(b->s->pool, b->lv[l].id), 0, mi,
                        bt_form_minus_inf(b->lv[l - 1].leftmost, mi)))
            return kerr_set(&b->s->err, KEEL_ECORRUPT, "build: page full");
    }
    page = buf_page(b->s->pool, b->lv[l].id);
    if (BT_PAGE_CAP - page_free_space(page) + size + 2 <= fill &&
        btpage_add(page, btpage_nitems(page), item, size))
        return KEEL_OK;

    /* The page is done.  Its high key is the next page's first entry,
     * which must fit: if it does not, the page's last entry moves over
     * (it frees exactly the room its own copy as high key needs). */
    if (page_free_space(page) < (size_t)size + 2) {
        uint16_t last = (uint16_t)(btpage_nitems(page) - 1);
        const bt_item *it = btpage_item(page, last);
        memcpy(carry.b, it, btitem_size(it));
        btpage_remove(page, last);
        carried = true;
    }
    first = carried ? &carry.hdr : (const bt_item *)item;
    if (!btpage_add(page, BT_HIKEY, first, btitem_size(first)))
        return kerr_set(&b->s->err, KEEL_ECORRUPT,
                        "build: no room for the "
                        "high key");
    oldid = b->lv[l].id;
    oldblk = b->lv[l].blk;
    rc = bt_build_new_page(b, l, oldblk);
    if (rc != KEEL_OK)
        return rc; /* the old page stays current: released at cleanup */
    btpage_opaque(page)->right = b->lv[l].blk;
    buf_mark_dirty(b->s, oldid);
    buf_unlock(b->s, oldid);
    buf_release(b->s, oldid);

    /* The new page: the first entry (on internal levels as minus
     * infinity, its key having moved up), then the item if it was not. */
    page = buf_page(b->s->pool, b->lv[l].id);
    if (l == 0) {
        if (!btpage_add(page, 0, first, btitem_size(first)))
            return kerr_set(&b->s->err, KEEL_ECORRUPT, "build: page full");
    } else if (!btpage_add(page, 0, mi, bt_form_minus_inf(first->block, mi))) {
        return kerr_set(&b->s->err, KEEL_ECORRUPT, "build: page full");
    }
    if (carried && !btpage_add(page, btpage_nitems(page), item, size))
        return kerr_set(&b->s->err, KEEL_ECORRUPT, "build: page full");

    dlsize = bt_form_downlink(first, l == 0, b->lv[l].blk, dl.b);
    return bt_build_add(b, l + 1, dl.b, dlsize);
}

/* Iterates an array for btree_build_array(). */
typedef struct bt_array_input {
    const btree_entry *entries;
    size_t n, next;
} bt_array_input;

static bool bt_array_next(void *ctx, const keel_value **keys, tid *t)
{
    bt_array_input *in = ctx;

    if (in->next >= in->n)
        return false;
    *keys = in->entries[in->next].keys;
    *t = in->entries[in->next].t;
    in->next++;
    return true;
}

int btree_build_array(buf_session *s, relnumber_t rel,
                      const tuple_desc *keydesc, bool unique,
                      const btree_entry *entries, size_t n, btree **out)
{
    bt_array_input in = {.entries = entries, .n = n, .next = 0};

    return btree_build(s, rel, keydesc, unique, bt_array_next, &in, out, NULL);
}

/*
 * Checks that (keys, t) sorts after the previous entry prev (a leaf item;
 * NULL for the first) and, in a unique index, that their keys differ
 * unless one has a null.  n is the entry's position, for messages.
 */
static int bt_build_check_order(const btree *bt, buf_session *s,
                                const keel_value *keys, tid t, bool nulls,
                                const bt_item *prev, uint64_t n)
{
    bt_scankey sk;
    char kb[160];
    int c;

    if (prev == NULL)
        return KEEL_OK;
    bt_scankey_init(bt, &sk, keys, bt->natts, 0);
    c = bt_compare(bt, &sk, prev, true);
    if (c == 0 && bt->unique && !nulls && !(prev->info & BT_INFO_NULLS)) {
        bt_key_format(bt->desc, keys, bt->natts, kb, sizeof(kb));
        return kerr_set(&s->err, KEEL_EUNIQUE,
                        "build of unique index %u: duplicate key %s at entry "
                        "%llu",
                        bt->rel, kb, (unsigned long long)n);
    }
    sk.has_tid = true;
    sk.t = t;
    if (bt_compare(bt, &sk, prev, true) <= 0) {
        bt_key_format(bt->desc, keys, bt->natts, kb, sizeof(kb));
        return kerr_set(&s->err, KEEL_EINVAL,
                        "build of index %u: input not in ascending (key, "
                        "tid) order at entry %llu, key %s tid (%u,%u)",
                        bt->rel, (unsigned long long)n, kb, t.block, t.offset);
    }
    return KEEL_OK;
}

int btree_build(buf_session *s, relnumber_t rel, const tuple_desc *keydesc,
                bool unique, btree_build_next_fn next, void *ctx, btree **out,
                uint64_t *count)
{
    bt_itembuf item, prev;
    bt_build b;
    int32_t mid = BUF_INVALID;
    blocknum_t mblk;
    uint64_t n = 0;
    const keel_value *keys;
    tid t;
    int rc;

    memset(&b, 0, sizeof(b));
    b.s = s;
    for (uint32_t l = 0; l < BT_MAX_LEVELS; l++)
        b.lv[l].id = BUF_INVALID;
    rc = bt_handle_new(rel, keydesc, unique, &b.bt, &s->err);
    if (rc != KEEL_OK)
        return rc;
    b.ring = buf_strategy_create(s->pool, BUF_STRATEGY_BULK_WRITE);
    if (b.ring == NULL) {
        rc = kerr_set(&s->err, KEEL_ENOMEM, "out of memory for a build");
        goto out;
    }
    rc = bt_rel_prepare(s, rel);
    if (rc == KEEL_OK)
        rc = bt_register_check(b.bt, s);
    if (rc == KEEL_OK)
        rc = buf_extend(s, rel, sizeof(bt_opaque), b.ring, &mid, &mblk);
    if (rc != KEEL_OK)
        goto out;
    if (mblk != BT_META_BLOCK) {
        rc = kerr_set(&s->err, KEEL_EEXIST,
                      "relation %u grew while its index was built", rel);
        goto out;
    }

    while (next(ctx, &keys, &t)) {
        uint16_t size;

        if (!tid_valid(t)) {
            rc = kerr_set(&s->err, KEEL_EINVAL,
                          "build of index %u: invalid tid at entry %llu", rel,
                          (unsigned long long)n);
            goto out;
        }
        rc = bt_form_leaf(b.bt, keys, t, item.b, &size, &s->err);
        if (rc != KEEL_OK)
            goto out;
        rc = bt_build_check_order(b.bt, s, keys, t,
                                  (item.hdr.info & BT_INFO_NULLS) != 0,
                                  n == 0 ? NULL : &prev.hdr, n);
        if (rc != KEEL_OK)
            goto out;
        if (b.nlevels == 0) {
            rc = bt_build_new_page(&b, 0, BT_NONE);
            if (rc != KEEL_OK)
                goto out;
            b.nlevels = 1;
        }
        rc = bt_build_add(&b, 0, item.b, size);
        if (rc != KEEL_OK)
            goto out;
        memcpy(prev.b, item.b, size);
        n++;
    }
    if (b.nlevels == 0) {
        rc = bt_build_new_page(&b, 0, BT_NONE);
        if (rc != KEEL_OK)
            goto out;
        b.nlevels = 1;
    }
    /* The top level's only page is the root. */
    {
        uint32_t top = b.nlevels - 1;
        blocknum_t root = b.lv[top].blk;

        btpage_opaque(buf_page(s->pool, b.lv[top].id))->flags |= BT_ROOT;
        bt_meta_write(b.bt, buf_page(s->pool, mid), root, top);
        atomic_store_relaxed(&b.bt->root_cache, (uint64_t)top << 32 | root);
    }
out:
    for (uint32_t l = 0; l < b.nlevels; l++)
        if (b.lv[l].id != BUF_INVALID)
            bt_build_release(&b, l);
    if (mid != BUF_INVALID) {
        /* On failure it stays a plain page: the index does not open. */
        buf_mark_dirty(s, mid);
        buf_unlock(s, mid);
        buf_release(s, mid);
    }
    buf_strategy_free(b.ring);
    if (rc == KEEL_OK && out != NULL) {
        *out = b.bt;
        b.bt = NULL;
    }
    btree_close(b.bt);
    if (rc == KEEL_OK && count != NULL)
        *count = n;
    return rc;
}
