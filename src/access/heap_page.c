/*
 * heap_page.c: the heap's slotted page: line pointers, adding, finding and
 * removing items, compaction, and structural verification.  The layout is
 * described in heap_page.h.  Nothing here locks: callers hold the buffer's
 * content lock or work on a private copy.
 */
#include "access/heap_page.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN8(n) (((size_t)(n) + 7) & ~(size_t)7)

static inline page_header *hdr(void *page)
{
    assert(((uintptr_t)page & 7) == 0);
    return (page_header *)page;
}

static inline const page_header *hdr_const(const void *page)
{
    assert(((uintptr_t)page & 7) == 0);
    return (const page_header *)page;
}

static inline heappage_lp *lp_array(void *page)
{
    return (heappage_lp *)((unsigned char *)page + PAGE_HEADER_SIZE);
}

static inline const heappage_lp *lp_array_const(const void *page)
{
    return (const heappage_lp *)((const unsigned char *)page +
                                 PAGE_HEADER_SIZE);
}

void heappage_init(void *page)
{
    page_init(page, 0);
}

uint16_t heappage_nitems(const void *page)
{
    const page_header *h = hdr_const(page);

    /* A new page has lower == 0; treat it as empty. */
    if (h->lower <= PAGE_HEADER_SIZE)
        return 0;
    return (uint16_t)((h->lower - PAGE_HEADER_SIZE) / HEAPPAGE_LP_SIZE);
}

heappage_lp heappage_get_lp(const void *page, uint16_t offset)
{
    assert(offset >= 1 && offset <= heappage_nitems(page));
    return lp_array_const(page)[offset - 1];
}

/* True if a NORMAL line pointer's item lies outside the tuple space (below
 * the end of the line pointers or past the page's special space) or is
 * not 8-aligned, as every item is: its tuple header could not be read in
 * place. */
static bool lp_out_of_bounds(const void *page, heappage_lp lp)
{
    const page_header *h = hdr_const(page);
    size_t off = heappage_lp_off(lp), end = off + heappage_lp_len(lp);
    size_t limit =
        h->special != 0 && h->special <= BLOCK_SIZE ? h->special : BLOCK_SIZE;

    /* A misaligned item's end is put past any page: no further test on
     * the heap fetch's path. */
    end += (off & 7) << 16;
    return off < h->lower || end > limit;
}

bool heappage_item_damaged(const void *page, uint16_t offset)
{
    heappage_lp lp;

    if (offset < 1 || offset > heappage_nitems(page))
        return false;
    lp = lp_array_const(page)[offset - 1];
    return heappage_lp_state_of(lp) == HEAPPAGE_LP_NORMAL &&
           lp_out_of_bounds(page, lp);
}

const void *heappage_get_item_const(const void *page, uint16_t offset,
                                    size_t *len)
{
    heappage_lp lp;

    if (offset < 1 || offset > heappage_nitems(page))
        return NULL;
    lp = lp_array_const(page)[offset - 1];
    if (heappage_lp_state_of(lp) != HEAPPAGE_LP_NORMAL ||
        lp_out_of_bounds(page, lp))
        return NULL;
    *len = heappage_lp_len(lp);
    return (const unsigned char *)page + heappage_lp_off(lp);
}

void *heappage_get_item(void *page, uint16_t offset, size_t *len)
{
    return (void *)heappage_get_item_const(page, offset, len);
}

/* The first UNUSED line pointer's offset, or 0 if there is none.  Only
 * searched when the page's flag says there may be one. */
static uint16_t find_unused_lp(const void *page)
{
    const page_header *h = hdr_const(page);
    uint16_t n = heappage_nitems(page);

    if (!(h->flags & PAGE_FLAG_HAS_FREE_LINES))
        return 0;
    for (uint16_t i = 0; i < n; i++)
        if (heappage_lp_state_of(lp_array_const(page)[i]) == HEAPPAGE_LP_UNUSED)
            return (uint16_t)(i + 1);
    return 0;
}

/* Free space once compacted: the free space plus the holes that items
 * removed without compaction left (PAGE_FLAG_HAS_HOLES). */
static size_t free_after_compaction(const void *page)
{
    const page_header *h = hdr_const(page);
    uint16_t n = heappage_nitems(page);
    size_t used = 0;

    if (!(h->flags & PAGE_FLAG_HAS_HOLES))
        return page_free_space(page);
    for (uint16_t i = 0; i < n; i++) {
        heappage_lp lp = lp_array_const(page)[i];
        if (heappage_lp_state_of(lp) == HEAPPAGE_LP_NORMAL)
            used += ALIGN8(heappage_lp_len(lp));
    }
    return h->special - h->lower - used;
}

bool heappage_fits(const void *page, size_t len)
{
    size_t need = ALIGN8(len);

    if (len == 0 || len > HEAP_MAX_TUPLE_SIZE)
        return false;
    if (find_unused_lp(page) == 0) {
        if (heappage_nitems(page) >= HEAPPAGE_MAX_LINES)
            return false;
        need += HEAPPAGE_LP_SIZE;
    }
    return free_after_compaction(page) >= need;
}

static uint16_t add_item(void *page, const void *item, size_t len,
                         bool may_compact);

uint16_t heappage_add_item(void *page, const void *item, size_t len)
{
    return add_item(page, item, len, true);
}

uint16_t heappage_add_item_in_place(void *page, const void *item, size_t len)
{
    return add_item(page, item, len, false);
}

static uint16_t add_item(void *page, const void *item, size_t len,
                         bool may_compact)
{
    page_header *h = hdr(page);
    uint16_t offset = find_unused_lp(page);
    size_t need = ALIGN8(len);
    uint16_t upper;

    assert(h->lower >= PAGE_HEADER_SIZE && h->special == BLOCK_SIZE);
    if (len == 0 || len > HEAP_MAX_TUPLE_SIZE)
        return 0;
    if (offset == 0) {
        if (heappage_nitems(page) >= HEAPPAGE_MAX_LINES)
            return 0;
        need += HEAPPAGE_LP_SIZE;
    }
    if (page_free_space(page) < need) {
        if (!may_compact || !(h->flags & PAGE_FLAG_HAS_HOLES) ||
            free_after_compaction(page) < need || !heappage_compact(page))
            return 0;
    }

    upper = (uint16_t)(h->upper - ALIGN8(len));
    memcpy((unsigned char *)page + upper, item, len);
    if (ALIGN8(len) > len) /* keep the padding zero: pages are compared */
        memset((unsigned char *)page + upper + len, 0, ALIGN8(len) - len);
    h->upper = upper;
    if (offset == 0) {
        offset = (uint16_t)(heappage_nitems(page) + 1);
        h->lower = (uint16_t)(h->lower + HEAPPAGE_LP_SIZE);
    }
    lp_array(page)[offset - 1] =
        heappage_lp_make(upper, HEAPPAGE_LP_NORMAL, (uint16_t)len);
    if (h->flags & PAGE_FLAG_HAS_FREE_LINES && find_unused_lp(page) == 0)
        h->flags &= (uint16_t)~PAGE_FLAG_HAS_FREE_LINES;
    return offset;
}

/* For sorting items by their position in the page, highest first. */
typedef struct item_pos {
    uint16_t off;   /* current position */
    uint16_t len;   /* bytes */
    uint16_t index; /* line pointer index (offset - 1) */
} item_pos;

static int item_pos_desc(const void *a, const void *b)
{
    const item_pos *x = a, *y = b;

    return (x->off < y->off) - (x->off > y->off);
}

bool heappage_compact(void *page)
{
    page_header *h = hdr(page);
    uint16_t n = heappage_nitems(page);
    item_pos pos[BLOCK_SIZE / HEAPPAGE_LP_SIZE];
    uint16_t count = 0;
    size_t upper = h->special, below = h->special;

    for (uint16_t i = 0; i < n; i++) {
        heappage_lp lp = lp_array(page)[i];
        if (heappage_lp_state_of(lp) != HEAPPAGE_LP_NORMAL)
            continue;
        pos[count].off = heappage_lp_off(lp);
        pos[count].len = heappage_lp_len(lp);
        pos[count].index = i;
        count++;
    }
    /*
     * Pack from the end of the page down, highest item first: each item
     * only moves towards the end, and every item not yet moved lies wholly
     * below the one being moved, so memmove never overwrites one.
     */
    for (uint16_t i = 1; i < count; i++)
        if (pos[i].off > pos[i - 1].off) {
            /* Not in place order already (as appending keeps them). */
            qsort(pos, count, sizeof(pos[0]), item_pos_desc);
            break;
        }
    /* Items of a damaged page that lie outside the tuple space, misaligned
     * or over one another would be moved over other items' bytes (or from
     * beyond the page): such a page is left as it is. */
    for (uint16_t i = 0; i < count; i++) {
        if (pos[i].off < h->lower || pos[i].off % 8 != 0 ||
            pos[i].off + ALIGN8(pos[i].len) > below)
            return false;
        below = pos[i].off;
    }
    /* Items lying end to end move together: one memmove per run. */
    for (uint16_t i = 0, j; i < count; i = (uint16_t)(j + 1)) {
        size_t top = pos[i].off + ALIGN8(pos[i].len);
        for (j = i;; j++) {
            upper -= ALIGN8(pos[j].len);
            lp_array(page)[pos[j].index] = heappage_lp_make(
                (uint16_t)upper, HEAPPAGE_LP_NORMAL, pos[j].len);
            if (j + 1 == count ||
                pos[j + 1].off + ALIGN8(pos[j + 1].len) != pos[j].off)
                break;
        }
        assert(upper >= pos[j].off);
        if (upper != pos[j].off)
            memmove((unsigned char *)page + upper,
                    (unsigned char *)page + pos[j].off, top - pos[j].off);
    }
    /* Free space is kept zero (pages are compared): clear what the items
     * left, above the old start of the items. */
    if (upper > h->upper) {
        size_t from = h->upper > h->lower ? h->upper : h->lower;
        memset((unsigned char *)page + from, 0, upper - from);
    }
    h->upper = (uint16_t)upper;
    h->flags &= (uint16_t)~PAGE_FLAG_HAS_HOLES;
    return true;
}

int heappage_delete_item(void *page, uint16_t offset, kerr *err)
{
    heappage_lp lp;
    size_t len;

    if (heappage_get_item(page, offset, &len) == NULL)
        return kerr_set(err, KEEL_EINVAL,
                        "heap page: line pointer %u is not a live item",
                        offset);
    lp = lp_array(page)[offset - 1];
    lp_array(page)[offset - 1] = heappage_lp_make(0, HEAPPAGE_LP_DEAD, 0);
    if (!heappage_compact(page)) {
        lp_array(page)[offset - 1] = lp;
        return kerr_set(err, KEEL_ECORRUPT,
                        "heap page: its items overlap or lie outside it");
    }
    return KEEL_OK;
}

/* Zeroes the storage of the NORMAL item at offset (free space is kept
 * zero, holes too: no removed row's bytes reach disk); *hole becomes its
 * position if it is the first removed item that holds need bytes. */
static void clear_item(void *page, uint16_t offset, size_t need,
                       uint16_t *hole)
{
    heappage_lp lp = lp_array(page)[offset - 1];

    assert(heappage_lp_state_of(lp) == HEAPPAGE_LP_NORMAL);
    if (*hole == 0 && need != 0 && ALIGN8(heappage_lp_len(lp)) >= need)
        *hole = heappage_lp_off(lp);
    memset((unsigned char *)page + heappage_lp_off(lp), 0,
           ALIGN8(heappage_lp_len(lp)));
    hdr(page)->flags |= PAGE_FLAG_HAS_HOLES;
}

/* Puts item (len bytes) at hole, a removed item's storage, with a line
 * pointer as heappage_add_item() would give it; its offset, or 0. */
static uint16_t place_in_hole(void *page, uint16_t hole, const void *item,
                              size_t len)
{
    page_header *h = hdr(page);
    uint16_t nitems = heappage_nitems(page), offset;

    if (hole == 0 || item == NULL || len == 0 || len > HEAP_MAX_TUPLE_SIZE)
        return 0;
    offset = find_unused_lp(page);
    if (offset == 0) {
        if (nitems >= HEAPPAGE_MAX_LINES ||
            page_free_space(page) < HEAPPAGE_LP_SIZE)
            return 0;
        offset = (uint16_t)(nitems + 1);
        h->lower = (uint16_t)(h->lower + HEAPPAGE_LP_SIZE);
    }
    memcpy((unsigned char *)page + hole, item, len);
    lp_array(page)[offset - 1] =
        heappage_lp_make(hole, HEAPPAGE_LP_NORMAL, (uint16_t)len);
    if (h->flags & PAGE_FLAG_HAS_FREE_LINES && find_unused_lp(page) == 0)
        h->flags &= (uint16_t)~PAGE_FLAG_HAS_FREE_LINES;
    return offset;
}

uint16_t heappage_place_in_hole(void *page, uint16_t pos, const void *item,
                                size_t len)
{
    const page_header *h = hdr(page);

    if (pos % 8 != 0 || pos < h->upper || len > HEAP_MAX_TUPLE_SIZE ||
        (size_t)pos + ALIGN8(len) > h->special ||
        !(h->flags & PAGE_FLAG_HAS_HOLES))
        return 0;
    return place_in_hole(page, pos, item, len);
}

uint16_t heappage_remove_items(void *page, const uint16_t *offsets, uint16_t n,
                               const void *item, size_t len)
{
    return heappage_prune_items(page, NULL, NULL, 0, offsets, n, NULL, 0,
                                item, len);
}

uint16_t heappage_prune_items(void *page, const uint16_t *redirect,
                              const uint16_t *redirect_to, uint16_t nr,
                              const uint16_t *dead, uint16_t nd,
                              const uint16_t *unused, uint16_t nu,
                              const void *item, size_t len)
{
    uint16_t nitems = heappage_nitems(page), hole = 0;
    size_t need = item != NULL ? ALIGN8(len) : 0;

    (void)nitems;
    for (uint16_t i = 0; i < nr; i++) {
        uint16_t o = redirect[i];
        assert(o >= 1 && o <= nitems && redirect_to[i] >= 1 &&
               redirect_to[i] <= nitems);
        if (heappage_lp_state_of(lp_array(page)[o - 1]) == HEAPPAGE_LP_NORMAL)
            clear_item(page, o, need, &hole);
        lp_array(page)[o - 1] =
            heappage_lp_make(redirect_to[i], HEAPPAGE_LP_REDIRECT, 0);
    }
    for (uint16_t i = 0; i < nd; i++) {
        uint16_t o = dead[i];
        assert(o >= 1 && o <= nitems);
        if (heappage_lp_state_of(lp_array(page)[o - 1]) == HEAPPAGE_LP_NORMAL)
            clear_item(page, o, need, &hole);
        lp_array(page)[o - 1] = heappage_lp_make(0, HEAPPAGE_LP_DEAD, 0);
    }
    for (uint16_t i = 0; i < nu; i++) {
        uint16_t o = unused[i];
        assert(o >= 1 && o <= nitems);
        clear_item(page, o, need, &hole);
        lp_array(page)[o - 1] = heappage_lp_make(0, HEAPPAGE_LP_UNUSED, 0);
    }
    if (nu > 0)
        hdr(page)->flags |= PAGE_FLAG_HAS_FREE_LINES;
    return place_in_hole(page, hole, item, len);
}

/* Checks one NORMAL item's tuple header. */
static int verify_tuple(const unsigned char *item, size_t len, blocknum_t blk,
                        uint16_t offset, kerr *err)
{
    heap_tuple_header t;

    if (len < sizeof(t))
        return kerr_set(err, KEEL_ECORRUPT,
                        "heap block %u item %u: %zu bytes, shorter than a "
                        "tuple header",
                        blk, offset, len);
    memcpy(&t, item, sizeof(t));
    if (t.hoff < sizeof(t) || t.hoff % 8 != 0 || t.hoff > len)
        return kerr_set(err, KEEL_ECORRUPT,
                        "heap block %u item %u: bad data offset %u "
                        "(length %zu)",
                        blk, offset, t.hoff, len);
    if (t.flags & ~HEAP_TUPLE_FLAGS_KNOWN)
        return kerr_set(err, KEEL_ECORRUPT,
                        "heap block %u item %u: unknown flags %#x", blk, offset,
                        t.flags);
    if (t.xmin != XID_FROZEN && t.xmin < XID_FIRST_NORMAL)
        return kerr_set(err, KEEL_ECORRUPT,
                        "heap block %u item %u: invalid inserting xid %u", blk,
                        offset, t.xmin);
    if (t.xmax != XID_INVALID && t.xmax < XID_FIRST_NORMAL)
        return kerr_set(err, KEEL_ECORRUPT,
                        "heap block %u item %u: invalid deleting xid %u", blk,
                        offset, t.xmax);
    if ((t.flags & HEAP_TUPLE_XMAX_UPDATE) && t.xmax == XID_INVALID)
        return kerr_set(err, KEEL_ECORRUPT,
                        "heap block %u item %u: marked updated without an "
                        "updating xid",
                        blk, offset);
    if (t.next_offset == 0)
        return kerr_set(err, KEEL_ECORRUPT,
                        "heap block %u item %u: invalid next-version tid", blk,
                        offset);
    if ((t.flags & HEAP_TUPLE_HOT_UPDATED) &&
        (!(t.flags & HEAP_TUPLE_XMAX_UPDATE) || t.next_block != blk ||
         t.next_offset == offset))
        return kerr_set(err, KEEL_ECORRUPT,
                        "heap block %u item %u: heap-only updated, but its "
                        "new version (%u,%u) is not another item of its page",
                        blk, offset, t.next_block, t.next_offset);
    if ((t.cid & CID_COMBO) && t.xmax != t.xmin)
        return kerr_set(err, KEEL_ECORRUPT,
                        "heap block %u item %u: a combo command id, but "
                        "inserted by %u and deleted by %u",
                        blk, offset, t.xmin, t.xmax);
    return KEEL_OK;
}

/* The header of the heap-only version at offset, or NULL if offset names
 * no NORMAL heap-only tuple (the items were verified already). */
static const heap_tuple_header *heap_only_at(const void *page, uint16_t n,
                                             uint16_t offset)
{
    heappage_lp lp;
    const heap_tuple_header *h;

    if (offset < 1 || offset > n)
        return NULL;
    lp = lp_array_const(page)[offset - 1];
    if (heappage_lp_state_of(lp) != HEAPPAGE_LP_NORMAL)
        return NULL;
    h = (const heap_tuple_header *)((const unsigned char *)page +
                                    heappage_lp_off(lp));
    return (h->flags & HEAP_TUPLE_HEAP_ONLY) ? h : NULL;
}

/* The links of heap-only chains: a redirect names a heap-only version, and
 * a heap-only update's new version is one, inserted by its updater. */
static int verify_chains(const void *page, blocknum_t blk, uint16_t n,
                         kerr *err)
{
    for (uint16_t i = 1; i <= n; i++) {
        heappage_lp lp = lp_array_const(page)[i - 1];
        const heap_tuple_header *h, *nh;

        if (heappage_lp_state_of(lp) == HEAPPAGE_LP_REDIRECT) {
            if (heap_only_at(page, n, heappage_lp_off(lp)) == NULL)
                return kerr_set(err, KEEL_ECORRUPT,
                                "heap block %u item %u: redirect to %u, "
                                "which is not a heap-only version",
                                blk, i, heappage_lp_off(lp));
            continue;
        }
        if (heappage_lp_state_of(lp) != HEAPPAGE_LP_NORMAL)
            continue;
        h = (const heap_tuple_header *)((const unsigned char *)page +
                                        heappage_lp_off(lp));
        if (!(h->flags & HEAP_TUPLE_HOT_UPDATED))
            continue;
        nh = heap_only_at(page, n, h->next_offset);
        if (nh == NULL || nh->xmin != h->xmax)
            return kerr_set(err, KEEL_ECORRUPT,
                            "heap block %u item %u: heap-only updated by %u, "
                            "but item %u is not a heap-only version it "
                            "inserted",
                            blk, i, h->xmax, h->next_offset);
    }
    return KEEL_OK;
}

static int item_pos_asc(const void *a, const void *b)
{
    return -item_pos_desc(a, b);
}

int heappage_verify(const void *page, blocknum_t blk, kerr *err)
{
    page_header h;
    uint16_t n;
    item_pos pos[BLOCK_SIZE / HEAPPAGE_LP_SIZE];
    uint16_t count = 0;

    if (page_is_new(page))
        return KEEL_OK;
    memcpy(&h, page, sizeof(h));
    if (h.special != BLOCK_SIZE)
        return kerr_set(err, KEEL_ECORRUPT,
                        "heap block %u: special space at %u (a heap page has "
                        "none)",
                        blk, h.special);
    if (h.lower < PAGE_HEADER_SIZE || h.lower > h.upper ||
        h.upper > h.special ||
        (h.lower - PAGE_HEADER_SIZE) % HEAPPAGE_LP_SIZE != 0 ||
        h.upper % 8 != 0)
        return kerr_set(err, KEEL_ECORRUPT,
                        "heap block %u: bad header (lower %u, upper %u)", blk,
                        h.lower, h.upper);
    n = heappage_nitems(page);
    for (uint16_t i = 1; i <= n; i++) {
        heappage_lp lp = heappage_get_lp(page, i);
        uint16_t off = heappage_lp_off(lp), len = heappage_lp_len(lp);
        int rc;

        switch (heappage_lp_state_of(lp)) {
        case HEAPPAGE_LP_UNUSED:
        case HEAPPAGE_LP_DEAD:
            if (off != 0 || len != 0)
                return kerr_set(err, KEEL_ECORRUPT,
                                "heap block %u item %u: unused or dead line "
                                "pointer with storage (%u, %u)",
                                blk, i, off, len);
            continue;
        case HEAPPAGE_LP_REDIRECT:
            if (len != 0 || off < 1 || off > n || off == i)
                return kerr_set(err, KEEL_ECORRUPT,
                                "heap block %u item %u: redirect to %u "
                                "(length %u) names no other item",
                                blk, i, off, len);
            continue;
        case HEAPPAGE_LP_NORMAL:
            break;
        }
        if (off % 8 != 0 || off < h.upper || (size_t)off + len > h.special)
            return kerr_set(err, KEEL_ECORRUPT,
                            "heap block %u item %u: storage (%u, %u) outside "
                            "[%u, %u) or misaligned",
                            blk, i, off, len, h.upper, h.special);
        rc = verify_tuple((const unsigned char *)page + off, len, blk, i, err);
        if (rc != KEEL_OK)
            return rc;
        pos[count].off = off;
        pos[count].len = len;
        pos[count].index = (uint16_t)(i - 1);
        count++;
    }
    qsort(pos, count, sizeof(pos[0]), item_pos_asc);
    for (uint16_t i = 1; i < count; i++)
        if ((size_t)pos[i - 1].off + ALIGN8(pos[i - 1].len) > pos[i].off)
            return kerr_set(err, KEEL_ECORRUPT,
                            "heap block %u: items %u and %u overlap", blk,
                            pos[i - 1].index + 1, pos[i].index + 1);
    return verify_chains(page, blk, n, err);
}
