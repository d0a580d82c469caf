/*
 * btree_page.c: the B-tree page layout in action: initializing a page,
 * adding and removing items, splitting one page in two, and the item and
 * key helpers (forming items, comparing keys, validating encodings) that
 * the rest of the access method shares.  The layout is in btree_page.h.
 *
 * Nothing here locks or pins: callers hold the page's buffer exclusively
 * locked (or work on private memory).
 */
#include "access/btree_page.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "port/error.h"

void btpage_init(void *page, uint16_t level, uint16_t flags)
{
    bt_opaque *op;

    page_init(page, sizeof(bt_opaque));
    op = btpage_opaque(page);
    op->left = BT_NONE;
    op->right = BT_NONE;
    op->level = level;
    op->flags = (uint16_t)(flags | (level == 0 ? BT_LEAF : 0));
    op->reserved = 0;
}

static page_header *hdr_of(void *page)
{
    return (page_header *)page;
}

bool btpage_add(void *page, uint16_t pos, const void *item, uint16_t size)
{
    page_header *h = hdr_of(page);
    uint16_t n = btpage_nitems(page);
    uint16_t *lp = btpage_lp(page);

    assert(size % 8 == 0 && size >= sizeof(bt_item));
    assert(pos <= n);
    if (page_free_space(page) < (size_t)size + 2)
        return false;
    h->upper = (uint16_t)(h->upper - size);
    memcpy((char *)page + h->upper, item, size);
    memmove(lp + pos + 1, lp + pos, (size_t)(n - pos) * 2);
    lp[pos] = h->upper;
    h->lower = (uint16_t)(h->lower + 2);
    return true;
}

void btpage_remove(void *page, uint16_t pos)
{
    page_header *h = hdr_of(page);
    uint16_t n = btpage_nitems(page);
    uint16_t *lp = btpage_lp(page);
    uint16_t off = lp[pos];
    uint16_t size = btitem_size(btpage_item(page, pos));

    assert(pos < n);
    /* Close the hole: move the items stored below it up by size. */
    memmove((char *)page + h->upper + size, (char *)page + h->upper,
            (size_t)(off - h->upper));
    for (uint16_t i = 0; i < n; i++)
        if (lp[i] < off)
            lp[i] = (uint16_t)(lp[i] + size);
    memmove(lp + pos, lp + pos + 1, (size_t)(n - pos - 1) * 2);
    h->upper = (uint16_t)(h->upper + size);
    h->lower = (uint16_t)(h->lower - 2);
}

/* A page image in private memory, aligned for the items in it. */
typedef union bt_page_buf {
    unsigned char b[BLOCK_SIZE];
    uint64_t align;
} bt_page_buf;

uint16_t btpage_remove_marked(void *page, const bool *drop)
{
    page_header *h = hdr_of(page);
    uint16_t n = btpage_nitems(page), m = 0;
    uint16_t *lp = btpage_lp(page);
    bt_page_buf copy;
    const uint16_t *old = btpage_lp(copy.b);
    uint16_t upper = h->special;

    /* The kept items are copied back from a private image, packed against
     * the special space, their line pointers in their old order. */
    memcpy(copy.b, page, BLOCK_SIZE);
    for (uint16_t i = 0; i < n; i++) {
        const bt_item *it = (const bt_item *)(copy.b + old[i]);
        uint16_t size = btitem_size(it);

        if (drop[i])
            continue;
        upper = (uint16_t)(upper - size);
        memcpy((char *)page + upper, it, size);
        lp[m++] = upper;
    }
    h->upper = upper;
    h->lower = (uint16_t)(PAGE_HEADER_SIZE + 2 * m);
    return (uint16_t)(n - m);
}

bool btpage_split(void *page, blocknum_t lblk, void *rpage, blocknum_t rblk,
                  uint16_t pos, const void *item, uint16_t size)
{
    const bt_item *items[BT_MAX_ITEMS + 1];
    uint16_t sizes[BT_MAX_ITEMS + 1];
    bt_opaque *op = btpage_opaque(page);
    bool leaf = op->level == 0;
    bool rightmost = op->right == BT_NONE;
    uint16_t first = btpage_first(page), n = btpage_nitems(page);
    const bt_item *hikey = rightmost ? NULL : btpage_item(page, BT_HIKEY);
    size_t total = 0, best_cost = SIZE_MAX, left = 0;
    uint16_t m = 0, best = 0;
    bt_page_buf lbuf;
    double frac;

    /* The data items in order, the new one included. */
    assert(pos >= first && pos <= n);
    for (uint16_t i = first; i <= n; i++) {
        if (i == pos) {
            items[m] = item;
            sizes[m++] = size;
        }
        if (i < n) {
            items[m] = btpage_item(page, i);
            sizes[m] = btitem_size(items[m]);
            m++;
        }
    }
    for (uint16_t i = 0; i < m; i++)
        total += sizes[i] + 2u;

    /* Ascending inserts fill the left page; anything else splits evenly. */
    frac = (rightmost && pos == n) ? 0.9 : 0.5;
    for (uint16_t k = 1; k < m; k++) {
        size_t lbytes, rbytes, target = (size_t)(frac * (double)total), cost;

        left += sizes[k - 1] + 2u;
        lbytes = left + sizes[k] + 2u; /* plus the new high key */
        rbytes = total - left;
        if (!leaf) /* item k loses its key to become minus infinity */
            rbytes = rbytes - sizes[k] + BT_MINUS_INF_SIZE;
        if (hikey != NULL)
            rbytes += btitem_size(hikey) + 2u;
        if (lbytes > BT_PAGE_CAP || rbytes > BT_PAGE_CAP)
            continue;
        cost = left > target ? left - target : target - left;
        if (cost < best_cost) {
            best_cost = cost;
            best = k;
        }
    }
    if (best == 0)
        return false;

    /* Right page: items best..m-1, then the old high key into slot 0.
     * Both halves store their data items from the page's end downwards in
     * slot order, the high key below them, as a bulk build does: searches
     * then probe neighbouring memory, and can guess an item's address
     * from its slot (see bt_interp_search()). */
    bt_opaque *rop = btpage_opaque(rpage);
    rop->left = lblk;
    rop->right = op->right;
    for (uint16_t k = best; k < m; k++) {
        unsigned char mi[BT_MINUS_INF_SIZE];
        const void *src = items[k];
        uint16_t sz = sizes[k];
        bool ok;

        if (!leaf && k == best) {
            sz = bt_form_minus_inf(items[k]->block, mi);
            src = mi;
        }
        ok = btpage_add(rpage, btpage_nitems(rpage), src, sz);
        assert(ok);
        (void)ok;
    }
    if (hikey != NULL && !btpage_add(rpage, 0, hikey, btitem_size(hikey)))
        assert(false);

    /* Left page, built privately (its items point into page): items
     * 0..best-1, then the new high key (item best, whole, less a dead
     * mark: a pivot is no entry) into slot 0. */
    btpage_init(lbuf.b, op->level, op->flags);
    *btpage_opaque(lbuf.b) = *op;
    btpage_opaque(lbuf.b)->right = rblk;
    for (uint16_t k = 0; k < best; k++) {
        bool ok = btpage_add(lbuf.b, btpage_nitems(lbuf.b), items[k], sizes[k]);
        assert(ok);
        (void)ok;
    }
    if (!btpage_add(lbuf.b, 0, items[best], sizes[best]))
        assert(false);
    btpage_item_set_unique_dead(lbuf.b, BT_HIKEY, false);
    memcpy(page, lbuf.b, BLOCK_SIZE);
    return true;
}

/* ---- keys -------------------------------------------------------------- */

void bt_scankey_init(const btree *bt, bt_scankey *sk, const keel_value *vals,
                     uint16_t nvals, int8_t unspec)
{
    sk->vals = vals;
    sk->nvals = nvals;
    sk->unspec = unspec;
    sk->has_tid = false;
    sk->t = TID_INVALID;
    sk->fast = false;
    sk->ival = 0;
    if (bt->fast != BT_FAST_NONE && nvals == 1 && !vals[0].isnull) {
        sk->fast = true;
        switch (bt->fast) {
        case BT_FAST_INT2:
            sk->ival = vals[0].v.i2;
            break;
        case BT_FAST_INT4:
            sk->ival = vals[0].v.i4;
            break;
        case BT_FAST_OID:
            sk->ival = vals[0].v.oid;
            break;
        default:
            sk->ival = vals[0].v.i8;
            break;
        }
    }
}

int bt_compare_cols(const btree *bt, const bt_scankey *sk, const void *key,
                    bool has_nulls)
{
    keel_value vals[BTREE_MAX_KEYS];

    tuple_deform(bt->desc, key, has_nulls, vals);
    for (uint16_t i = 0; i < sk->nvals; i++) {
        int c = value_compare(&bt->desc->attrs[i], &sk->vals[i], &vals[i]);
        if (c != 0)
            return c;
    }
    return 0;
}

void bt_scankey_from_item(const btree *bt, const bt_item *it, bool leaf,
                          keel_value *vals, bt_scankey *sk)
{
    assert(!(it->info & BT_INFO_MINUS_INF));
    tuple_deform(bt->desc, btitem_key(it, leaf),
                 (it->info & BT_INFO_NULLS) != 0, vals);
    bt_scankey_init(bt, sk, vals, bt->natts, 0);
    sk->has_tid = true;
    sk->t = btitem_tid(it, leaf);
}

int bt_form_leaf(const btree *bt, const keel_value *keys, tid t, void *buf,
                 uint16_t *size, kerr *err)
{
    size_t ksize;
    bool nulls;
    int rc = tuple_size(bt->desc, keys, &ksize, &nulls, err);
    bt_item *it = buf;

    if (rc != KEEL_OK)
        return rc;
    if (ksize > BTREE_MAX_KEY_SIZE)
        return kerr_set(err, KEEL_ETOOBIG,
                        "index key of %zu bytes is longer than %d", ksize,
                        BTREE_MAX_KEY_SIZE);
    *size = (uint16_t)BT_ALIGN8(BT_LEAF_KEY_OFF + ksize);
    memset(buf, 0, *size);
    it->block = t.block;
    it->offset = t.offset;
    it->info = (uint16_t)(*size | (nulls ? BT_INFO_NULLS : 0));
    tuple_fill(bt->desc, keys, nulls, (char *)buf + BT_LEAF_KEY_OFF);
    return KEEL_OK;
}

uint16_t bt_form_downlink(const bt_item *pivot, bool from_leaf,
                          blocknum_t child, void *buf)
{
    uint16_t koff = from_leaf ? BT_LEAF_KEY_OFF : BT_INTERNAL_KEY_OFF;
    uint16_t klen = (uint16_t)(btitem_size(pivot) - koff);
    uint16_t size = (uint16_t)(BT_INTERNAL_KEY_OFF + klen);
    tid t = btitem_tid(pivot, from_leaf);
    bt_item *it = buf;
    bt_sep *sp = (bt_sep *)(it + 1);

    assert(!(pivot->info & BT_INFO_MINUS_INF));
    it->block = child;
    it->offset = 0;
    it->info = (uint16_t)(size | (pivot->info & BT_INFO_NULLS));
    sp->block = t.block;
    sp->offset = t.offset;
    sp->pad = 0;
    memcpy((char *)buf + BT_INTERNAL_KEY_OFF, (const char *)pivot + koff, klen);
    return size;
}

uint16_t bt_form_minus_inf(blocknum_t child, void *buf)
{
    bt_item *it = buf;

    memset(buf, 0, BT_MINUS_INF_SIZE);
    it->block = child;
    it->info = BT_MINUS_INF_SIZE | BT_INFO_MINUS_INF;
    return BT_MINUS_INF_SIZE;
}

/* Writes the reason a page fails btpage_check() into why; returns false. */
static bool bt_why(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool bt_why(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return false;
}

/* Marks the 8-byte units [from, to) (from < to) of a page taken in the
 * bitmap taken; false if one was taken already. */
static inline bool bt_take(uint64_t *taken, uint32_t from, uint32_t to)
{
    for (uint32_t next; from < to; from = next) {
        uint32_t end = (from | 63) + 1; /* the next word's first unit */
        uint64_t mask;

        next = to < end ? to : end;
        mask = (~UINT64_C(0) >> (64 - (next - from))) << (from % 64);
        if (taken[from / 64] & mask)
            return false;
        taken[from / 64] |= mask;
    }
    return true;
}

/*
 * btpage_check() of item i (of size sz, inside the page) where it is not
 * the common case: the high key, the first data item, an item with flags,
 * a key with a column of variable width.
 */
static bool bt_check_item(const bt_item *it, uint16_t i, uint16_t sz, bool leaf,
                          uint16_t first, const tuple_desc *desc, char *why,
                          size_t len)
{
    uint16_t koff = leaf ? BT_LEAF_KEY_OFF : BT_INTERNAL_KEY_OFF;
    bool mi = (it->info & BT_INFO_MINUS_INF) != 0;
    bool want_mi = !leaf && i == first;

    if (sz < (mi ? BT_MINUS_INF_SIZE : koff))
        return bt_why(why, len, "item %u: size %u out of bounds", i, sz);
    if (mi != want_mi)
        return bt_why(why, len, "item %u: %s", i,
                      want_mi ? "first downlink is not minus infinity"
                              : "unexpected minus-infinity item");
    if ((it->info & BT_INFO_UNIQUE_DEAD) && (!leaf || i < first))
        return bt_why(why, len, "item %u: a %s marked dead", i,
                      i < first ? "high key" : "downlink");
    if (!mi && !bt_key_valid(desc, (const char *)it + koff, (size_t)(sz - koff),
                             (it->info & BT_INFO_NULLS) != 0))
        return bt_why(why, len, "item %u: malformed key", i);
    return true;
}

bool btpage_check(const void *page, const tuple_desc *desc, char *why,
                  size_t len)
{
    const page_header *h = btpage_header(page);
    const bt_opaque *op = btpage_opaque_c(page);
    /* A bit per 8 bytes of the page: taken by an item already seen. */
    uint64_t taken[BLOCK_SIZE / 8 / 64] = {0};
    uint16_t n, first, koff, upper = h->upper;
    /* While the data items lie from the page's end downwards in slot
     * order (as a build or split leaves them): where the last one starts,
     * below which every other item must lie. */
    uint32_t low = BT_SPECIAL_OFF;
    bool ordered = true;
    /* The least size of a data item without flags, when every key column
     * has a fixed width (its key is then valid if it has the bytes). */
    size_t plain_min;
    bool leaf;

    if (h->special != BT_SPECIAL_OFF || h->lower < PAGE_HEADER_SIZE ||
        (h->lower - PAGE_HEADER_SIZE) % 2 != 0 || h->lower > upper ||
        upper > h->special || upper % 8 != 0)
        return bt_why(why, len,
                      "not a B-tree page (lower %u, upper %u, special %u)",
                      h->lower, upper, h->special);
    leaf = op->level == 0;
    if ((op->flags & BT_META) || op->level >= BT_MAX_LEVELS ||
        ((op->flags & BT_LEAF) != 0) != leaf)
        return bt_why(why, len, "B-tree page of level %u with flags %#x",
                      op->level, op->flags);
    n = btpage_nitems(page);
    first = btpage_first(page);
    if (n > BT_MAX_ITEMS)
        return bt_why(why, len, "%u items, more than a page holds", n);
    if (n < first + !leaf)
        return bt_why(why, len, "a page of level %u without its %s", op->level,
                      n < first ? "high key" : "first downlink");
    koff = leaf ? BT_LEAF_KEY_OFF : BT_INTERNAL_KEY_OFF;
    plain_min = tuple_fixed_size(desc);
    plain_min = plain_min > 0 ? koff + plain_min : 0;
    for (uint16_t i = 0; i < n; i++) {
        uint16_t off, sz;
        const bt_item *it;

        memcpy(&off, (const char *)page + PAGE_HEADER_SIZE + 2 * (size_t)i, 2);
        if (off < upper || off % 8 != 0 ||
            off > BT_SPECIAL_OFF - sizeof(bt_item))
            return bt_why(why, len, "item %u: offset %u out of bounds", i, off);
        it = (const bt_item *)((const char *)page + off);
        sz = btitem_size(it);
        if (sz % 8 != 0 || sz > BT_SPECIAL_OFF - off)
            return bt_why(why, len, "item %u: size %u out of bounds", i, sz);
        if (__builtin_expect(i <= first || plain_min == 0 ||
                                 (it->info & ~BT_INFO_SIZE) != 0,
                             0)) {
            if (!bt_check_item(it, i, sz, leaf, first, desc, why, len))
                return false;
        } else if (sz < plain_min) {
            return bt_why(why, len, "item %u: malformed key", i);
        }
        if (i >= first && (uint32_t)off + sz <= low)
            low = off;
        else if (i >= first)
            ordered = false;
        if (!leaf && i >= first &&
            (it->block == BT_META_BLOCK || it->block == BT_NONE))
            return bt_why(why, len, "item %u: downlink to block %u", i,
                          it->block);
    }
    /* Ordered data items overlap none of their own; the high key lies
     * below them.  Otherwise (items an insert put below the others), a
     * bit per 8 bytes finds any two that overlap. */
    if (ordered && first == 1)
        ordered = (uint32_t)btpage_item_off(page, BT_HIKEY) +
                      btitem_size(btpage_item(page, BT_HIKEY)) <=
                  low;
    for (uint16_t i = 0; i < n && !ordered; i++) {
        uint16_t off = btpage_item_off(page, i);
        if (!bt_take(taken, off / 8u,
                     (off + btitem_size(btpage_item(page, i))) / 8u))
            return bt_why(why, len, "item %u: overlaps another item", i);
    }
    return true;
}

bool bt_read_check(const void *page, blocknum_t blk, const void *arg, char *why,
                   size_t len)
{
    /* The meta page is parsed (bt_meta_parse()) wherever it is read. */
    if (blk == BT_META_BLOCK)
        return true;
    return btpage_check(page, arg, why, len);
}

bool bt_key_valid(const tuple_desc *desc, const void *key, size_t len,
                  bool has_nulls)
{
    return tuple_valid(desc, key, len, has_nulls);
}

void bt_key_format(const tuple_desc *desc, const keel_value *vals,
                   uint16_t nvals, char *buf, size_t size)
{
    size_t used = 0;

#define BT_PUT(...)                                                            \
    do {                                                                       \
        if (used < size) {                                                     \
            int w_ = snprintf(buf + used, size - used, __VA_ARGS__);           \
            used += w_ > 0 ? (size_t)w_ : 0;                                   \
        }                                                                      \
    } while (0)

    if (size == 0)
        return;
    buf[0] = '\0';
    BT_PUT("(");
    for (uint16_t i = 0; i < nvals; i++) {
        const keel_value *v = &vals[i];

        if (i > 0)
            BT_PUT(", ");
        if (v->isnull) {
            BT_PUT("null");
            continue;
        }
        switch (desc->attrs[i].type) {
        case KEEL_INT2:
            BT_PUT("%d", v->v.i2);
            break;
        case KEEL_INT4:
        case KEEL_DATE:
            BT_PUT("%d", v->v.i4);
            break;
        case KEEL_INT8:
        case KEEL_TIMESTAMP:
        case KEEL_TIMESTAMPTZ:
            BT_PUT("%lld", (long long)v->v.i8);
            break;
        case KEEL_OID:
            BT_PUT("%u", v->v.oid);
            break;
        case KEEL_BOOL:
            BT_PUT("%s", v->v.b ? "true" : "false");
            break;
        case KEEL_FLOAT8:
            BT_PUT("%g", v->v.f8);
            break;
        case KEEL_NAME:
        case KEEL_CHAR:
        case KEEL_TEXT:
        case KEEL_JSON:
        case KEEL_JSONB:
            BT_PUT("'%.*s'", (int)(v->v.s.len > 40 ? 40 : v->v.s.len),
                   v->v.s.ptr);
            if (v->v.s.len > 40)
                BT_PUT("...");
            break;
        case KEEL_UUID:
        case KEEL_BYTEA: {
            char t[48];
            value_bytes_text(desc->attrs[i].type, v, t, sizeof(t));
            BT_PUT("'%s'", t);
            break;
        }
        case KEEL_NUMERIC: /* its stored form, in hex */
            BT_PUT("x");
            for (uint32_t b = 0; b < v->v.s.len && b < 20; b++)
                BT_PUT("%02x", (unsigned char)v->v.s.ptr[b]);
            break;
        }
    }
    BT_PUT(")");
#undef BT_PUT
}
