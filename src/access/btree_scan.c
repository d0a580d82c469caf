/*
 * btree_scan.c: range scans.  A scan copies the entries in range of one
 * leaf at a time, under that page's share lock alone, and follows the
 * right-link it saw for the next batch: it holds no pin or lock between
 * calls, and a concurrent split never makes it miss or repeat an entry.
 */
#include "access/btree.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "access/btree_internal.h"
#include "access/btree_page.h"
#include "port/mem.h"
#include "storage/bufmgr.h"

/* ---- range scans ------------------------------------------------------- */

struct btree_scan {
    btree *bt;
    buf_session *s;
    bt_scankey lo; /* where to start (nvals 0: the leftmost entry) */
    bt_scankey hi; /* an entry is in range iff hi compares above it */
    bool has_hi;
    bool started;    /* the first leaf has been read */
    bool finished;   /* no more leaves to read */
    blocknum_t next; /* the next leaf to read */
    uint32_t walk;   /* leaves read after the first */
    uint16_t count;  /* entries in the batch */
    uint16_t cur;    /* the next one to return */
    keel_value lo_vals[BTREE_MAX_KEYS];
    keel_value hi_vals[BTREE_MAX_KEYS];
    char *strings;      /* the bounds' string bytes */
    size_t strings_cap; /* strings' size */
    uint16_t offs[BT_MAX_ITEMS];
    uint64_t items[BLOCK_SIZE / 8]; /* the batch: copied leaf items */
};

/* Copies n bound values into dst, their string bytes into *arena. */
static void bt_copy_vals(const tuple_desc *d, keel_value *dst,
                         const keel_value *src, uint16_t n, char **arena)
{
    for (uint16_t i = 0; i < n; i++) {
        dst[i] = src[i];
        if (!src[i].isnull &&
            type_has_bytes(d->attrs[i].type)) {
            if (src[i].v.s.len > 0)
                memcpy(*arena, src[i].v.s.ptr, src[i].v.s.len);
            dst[i].v.s.ptr = *arena;
            *arena += src[i].v.s.len;
        }
    }
}

static size_t bt_string_bytes(const tuple_desc *d, const btree_bound *b)
{
    size_t n = 0;

    for (uint16_t i = 0; b != NULL && i < b->ncols; i++)
        if (!b->vals[i].isnull &&
            type_has_bytes(d->attrs[i].type))
            n += b->vals[i].v.s.len;
    return n;
}

/*
 * Starts a scan in sc, a spare one (its strings kept) or NULL for a new
 * one.  On failure a spare sc stays the caller's, intact.
 */
static int bt_scan_start(btree *bt, buf_session *s, const btree_bound *lower,
                         const btree_bound *upper, btree_scan *sc,
                         btree_scan **out)
{
    const btree_bound *bounds[2] = {lower, upper};
    size_t need, cap = 0;
    char *strings = NULL, *arena;
    bool fresh = sc == NULL;

    for (int i = 0; i < 2; i++)
        if (bounds[i] != NULL &&
            (bounds[i]->ncols == 0 || bounds[i]->ncols > bt->natts ||
             bounds[i]->vals == NULL))
            return kerr_set(&s->err, KEEL_EINVAL,
                            "index %u: a scan bound has 1 to %u columns",
                            bt->rel, bt->natts);
    need =
        bt_string_bytes(bt->desc, lower) + bt_string_bytes(bt->desc, upper) + 1;
    if (fresh) {
        sc = mem_alloc_lines(sizeof(*sc)); /* written as it goes */
        if (sc == NULL)
            return kerr_set(&s->err, KEEL_ENOMEM, "out of memory for a scan");
    } else {
        strings = sc->strings;
        cap = sc->strings_cap;
    }
    if (cap < need) {
        free(strings);
        cap = need > 64 ? need : 64;
        strings = malloc(cap);
        if (strings == NULL) {
            if (fresh) {
                mem_free_aligned(sc);
            } else {
                sc->strings = NULL;
                sc->strings_cap = 0;
            }
            return kerr_set(&s->err, KEEL_ENOMEM, "out of memory for a scan");
        }
    }
    /* Only the header is cleared: the bound values (lo_vals, hi_vals:
     * 768 bytes) are read only up to their key's nvals, which
     * bt_copy_vals() writes, and the batch (offs, items: 10 KiB) only up
     * to count; every catalog cache miss starts a scan. */
    memset(sc, 0, offsetof(btree_scan, lo_vals));
    sc->strings = strings;
    sc->strings_cap = cap;
    arena = sc->strings;
    sc->bt = bt;
    sc->s = s;
    if (lower != NULL) {
        bt_copy_vals(bt->desc, sc->lo_vals, lower->vals, lower->ncols, &arena);
        bt_scankey_init(bt, &sc->lo, sc->lo_vals, lower->ncols,
                        lower->inclusive ? -1 : 1);
    } else {
        bt_scankey_init(bt, &sc->lo, sc->lo_vals, 0, -1);
    }
    if (upper != NULL) {
        bt_copy_vals(bt->desc, sc->hi_vals, upper->vals, upper->ncols, &arena);
        bt_scankey_init(bt, &sc->hi, sc->hi_vals, upper->ncols,
                        upper->inclusive ? 1 : -1);
        sc->has_hi = true;
    }
    sc->next = BT_NONE;
    sc->walk = 0;
    *out = sc;
    return KEEL_OK;
}

int btree_scan_begin(btree *bt, buf_session *s, const btree_bound *lower,
                     const btree_bound *upper, btree_scan **out)
{
    return bt_scan_start(bt, s, lower, upper, NULL, out);
}

int btree_scan_begin_spare(btree *bt, buf_session *s, const btree_bound *lower,
                           const btree_bound *upper, btree_scan **spare,
                           btree_scan **out)
{
    int rc = bt_scan_start(bt, s, lower, upper, *spare, out);

    if (rc == KEEL_OK)
        *spare = NULL; /* taken (if there was one) */
    return rc;
}

/*
 * Reads the next leaf (the first: by descending to the lower bound) and
 * copies its entries in range into the batch, under a share lock held for
 * that page only.  The next leaf is the right-link seen now: a later split
 * of this page only moves entries already copied, and a split of the next
 * page keeps its entries reachable through its right-link.
 */
static int bt_scan_load(btree_scan *sc)
{
    btree *bt = sc->bt;
    buf_session *s = sc->s;
    bool stop = false;
    uint16_t pos, n;
    size_t used = 0;
    blocknum_t blk;
    int32_t id;
    void *page;
    int rc;

    if (!sc->started) {
        rc = bt_descend(bt, s, &sc->lo, 0, LW_SHARED, NULL, NULL, NULL, &id,
                        &blk, NULL, NULL, NULL);
        if (rc != KEEL_OK)
            return rc;
        sc->started = true;
        page = bt_page(s, id);
        pos = bt_lower_bound(bt, page, &sc->lo, NULL);
    } else {
        rc = bt_walk_step(bt, s, ++sc->walk, sc->next);
        if (rc == KEEL_OK)
            rc = bt_read_lock(bt, s, sc->next, LW_SHARED, 0, &id);
        if (rc != KEEL_OK)
            return rc;
        page = bt_page(s, id);
        pos = btpage_first(page);
    }
    sc->count = sc->cur = 0;
    n = btpage_nitems(page);
    for (; pos < n; pos++) {
        const bt_item *it = btpage_item(page, pos);
        uint16_t sz = btitem_size(it);

        if (sc->has_hi && bt_compare(bt, &sc->hi, it, true) <= 0) {
            stop = true;
            break;
        }
        memcpy((char *)sc->items + used, it, sz);
        sc->offs[sc->count++] = (uint16_t)used;
        used += sz;
    }
    if (stop || btpage_rightmost(page) ||
        (sc->has_hi &&
         bt_compare(bt, &sc->hi, btpage_item(page, BT_HIKEY), true) <= 0))
        sc->finished = true;
    else
        sc->next = btpage_opaque(page)->right;
    buf_unlock_release(s, id);
    return KEEL_OK;
}

int btree_scan_next(btree_scan *sc, tid *t, keel_value *keys)
{
    for (;;) {
        if (sc->cur < sc->count) {
            const bt_item *it = (const bt_item *)((const char *)sc->items +
                                                  sc->offs[sc->cur++]);
            *t = btitem_tid(it, true);
            if (keys != NULL)
                tuple_deform(sc->bt->desc, btitem_key(it, true),
                             (it->info & BT_INFO_NULLS) != 0, keys);
            return KEEL_OK;
        }
        if (sc->finished)
            return KEEL_ENOENT;
        /* A failed load changed nothing: the next call tries it again. */
        int rc = bt_scan_load(sc);
        if (rc != KEEL_OK)
            return rc;
    }
}

void btree_scan_end(btree_scan *sc)
{
    if (sc == NULL)
        return;
    free(sc->strings);
    mem_free_aligned(sc);
}

void btree_scan_end_spare(btree_scan *sc, btree_scan **spare)
{
    if (sc != NULL && *spare == NULL)
        *spare = sc; /* the next btree_scan_begin_spare()'s */
    else
        btree_scan_end(sc);
}
