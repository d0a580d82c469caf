/*
 * btree_page.h: the B-tree's on-page layout, and the internals that
 * every B-tree file (btree*.c) shares (the handle, scan keys, key
 * comparison, forming items).  What only the operations share (reading
 * pages, the descent) is in btree_internal.h.  Not for use outside
 * src/access.
 *
 * Block 0 is the meta page: page header, then bt_meta (magic, version,
 * root block and level, unique flag, key column types).  Every other block
 * is a tree page:
 *
 *   | page header | line pointers -> |  free  | <- items | bt_opaque |
 *
 * A line pointer is the uint16_t offset of its item; items are 8-aligned
 * and their sizes multiples of 8, so key data (tuple.h encoding) starts
 * 8-aligned.  A bulk build and both halves of a split store the data items
 * from the page's end downwards in slot order, the high key lowest; an
 * insert into a page just puts its item below the others.  Nothing relies
 * on that order for correctness: searches use it to guess, for prefetching,
 * where an item sits.  An item is a bt_item header, on internal pages followed
 * by the separator's heap tid (bt_sep), then the key:
 *
 *   leaf item:      [block, offset = heap tid | info][key]
 *   internal item:  [block = child, offset 0 | info][bt_sep: tid][key]
 *
 * As in nbtree, a page that is not the rightmost of its level has its
 * high key in slot 0 (BT_HIKEY), in the page's own item format (on leaves
 * a (key, tid) pivot; on internal pages the child field is unused); data
 * items start at slot 1, or 0 on a rightmost page.  The first data item of
 * an internal page is "minus infinity": it carries only its downlink (flag
 * BT_INFO_MINUS_INF, no key).  A leaf's data item may carry
 * BT_INFO_UNIQUE_DEAD, set by a unique check under the page's exclusive lock
 * (btree_row); a high key never does.
 *
 * Keys are compared as (key columns, tid).  An internal item's (key, tid)
 * is the lower bound of its child's entries; the next item's (or the
 * page's high key) the exclusive upper bound.  A page's high key is the
 * exclusive upper bound of its entries and equals the separator of its
 * right sibling's downlink.
 */
#ifndef KEEL_ACCESS_BTREE_PAGE_H
#define KEEL_ACCESS_BTREE_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "access/btree.h"
#include "access/tid.h"
#include "access/tuple.h"
#include "port/atomics.h"
#include "storage/page.h"
#include "storage/smgr.h"

#define BT_MAGIC   UINT32_C(0x6b42547e) /* "~TBk" */
#define BT_VERSION 1

#define BT_META_BLOCK ((blocknum_t)0)
#define BT_NONE       ((blocknum_t)0xFFFFFFFF) /* no sibling */

/* Special space of every page (the meta page's too, flagged BT_META). */
typedef struct bt_opaque {
    blocknum_t left;  /* left sibling, BT_NONE for the leftmost */
    blocknum_t right; /* right sibling, BT_NONE for the rightmost */
    uint16_t level;   /* 0 = leaf */
    uint16_t flags;   /* BT_LEAF, BT_ROOT, BT_META */
    uint32_t reserved;
} bt_opaque;

_Static_assert(sizeof(bt_opaque) == 16, "special space is 16 bytes");

#define BT_LEAF 0x0001
#define BT_ROOT 0x0002
#define BT_META 0x0004

#define BT_SPECIAL_OFF ((uint16_t)(BLOCK_SIZE - sizeof(bt_opaque)))
/* Bytes for line pointers and items on a tree page. */
#define BT_PAGE_CAP (BT_SPECIAL_OFF - PAGE_HEADER_SIZE)

/* Key column types as stored in the meta page. */
typedef struct bt_meta_attr {
    uint8_t type;    /* keel_type */
    uint8_t notnull; /* 0 or 1 */
    uint16_t len;    /* char(n)'s n; else 0 */
} bt_meta_attr;

typedef struct bt_meta {
    uint32_t magic;   /* BT_MAGIC */
    uint32_t version; /* BT_VERSION */
    blocknum_t root;  /* the root page */
    uint32_t level;   /* the root's level */
    uint16_t natts;   /* key columns, 1..BTREE_MAX_KEYS */
    uint8_t unique;   /* 0 or 1 */
    uint8_t reserved1;
    uint32_t reserved2;
    bt_meta_attr attrs[BTREE_MAX_KEYS];
} bt_meta;

/* The header of every item. */
typedef struct bt_item {
    uint32_t block;  /* leaf: heap tid's block; internal: child block */
    uint16_t offset; /* leaf: heap tid's offset; internal: 0 */
    uint16_t info;   /* size in bytes (BT_INFO_SIZE) | flags */
} bt_item;

/* What follows the header of an internal item: the separator's heap tid. */
typedef struct bt_sep {
    uint32_t block;
    uint16_t offset;
    uint16_t pad;
} bt_sep;

#define BT_INFO_SIZE        0x1FFF /* item size, header included */
#define BT_INFO_UNIQUE_DEAD 0x2000 /* leaf data item: never live again */
#define BT_INFO_NULLS       0x4000 /* the key has a null bitmap */
#define BT_INFO_MINUS_INF   0x8000 /* first item of an internal page: no key */

#define BT_LEAF_KEY_OFF     ((uint16_t)sizeof(bt_item))
#define BT_INTERNAL_KEY_OFF ((uint16_t)(sizeof(bt_item) + sizeof(bt_sep)))
#define BT_MINUS_INF_SIZE   BT_INTERNAL_KEY_OFF

/* Largest item: an internal item with the largest key. */
#define BT_MAX_ITEM_SIZE (BT_INTERNAL_KEY_OFF + BTREE_MAX_KEY_SIZE)
_Static_assert(BT_MAX_ITEM_SIZE <= BT_INFO_SIZE, "an item's size fits info");
_Static_assert(3 * (BT_MAX_ITEM_SIZE + 2) <= BT_PAGE_CAP,
               "three largest items fit on a page");

/* Private memory for one item, aligned as items on a page are. */
typedef union bt_itembuf {
    bt_item hdr;
    uint64_t align;
    unsigned char b[BT_MAX_ITEM_SIZE];
} bt_itembuf;

/* Most line pointers a page can hold (items are at least 16 bytes). */
#define BT_MAX_ITEMS (BT_PAGE_CAP / (16 + 2) + 1)

#define BT_ALIGN8(n) (((size_t)(n) + 7) & ~(size_t)7)

/* How full a bulk build makes its pages (bytes of line pointers and
 * items). */
#define BT_LEAF_FILL     (BT_PAGE_CAP * 90 / 100)
#define BT_INTERNAL_FILL (BT_PAGE_CAP * 70 / 100)

/* Data items on a bulk-built leaf of an integer key (16-byte items and
 * their line pointers): where a search guesses a slot before it has read
 * the page's item count. */
#define BT_LEAF_FAST_ITEMS (BT_LEAF_FILL / (16 + 2) - 1)

/* Deepest tree: far more than 2^32 blocks allow with >= 3 items a page. */
#define BT_MAX_LEVELS 32

/* Which integer fast path the index's single key column takes. */
enum {
    BT_FAST_NONE = 0,
    BT_FAST_INT2,
    BT_FAST_INT4,
    BT_FAST_INT8,
    BT_FAST_OID
};

/*
 * The open handle.  Immutable after open except the root cache, which
 * any thread may refresh (it is validated on every use).
 */
struct btree {
    atomic_u64 root_cache; /* level << 32 | root block; 0 = not known */
    relnumber_t rel;
    uint16_t natts;
    bool unique;
    uint8_t fast; /* BT_FAST_* */
    tuple_desc *desc;
    atomic_u64 pruned; /* entries btree_insert_prune() removed */
};

/* ---- page access ------------------------------------------------------ */

static inline const page_header *btpage_header(const void *page)
{
    return (const page_header *)page;
}

static inline bt_opaque *btpage_opaque(void *page)
{
    return (bt_opaque *)((char *)page + BT_SPECIAL_OFF);
}

static inline const bt_opaque *btpage_opaque_c(const void *page)
{
    return (const bt_opaque *)((const char *)page + BT_SPECIAL_OFF);
}

static inline uint16_t *btpage_lp(void *page)
{
    return (uint16_t *)((char *)page + PAGE_HEADER_SIZE);
}

/* Number of line pointers (high key included). */
static inline uint16_t btpage_nitems(const void *page)
{
    return (uint16_t)((btpage_header(page)->lower - PAGE_HEADER_SIZE) / 2);
}

static inline bool btpage_rightmost(const void *page)
{
    return btpage_opaque_c(page)->right == BT_NONE;
}

static inline bool btpage_is_leaf(const void *page)
{
    return btpage_opaque_c(page)->level == 0;
}

/* Slot of the first data item: past the high key unless rightmost. */
static inline uint16_t btpage_first(const void *page)
{
    return btpage_rightmost(page) ? 0 : 1;
}

#define BT_HIKEY 0

/* The offset of item i (its line pointer). */
static inline uint16_t btpage_item_off(const void *page, uint16_t i)
{
    uint16_t off;

    memcpy(&off, (const char *)page + PAGE_HEADER_SIZE + 2 * (size_t)i, 2);
    return off;
}

static inline const bt_item *btpage_item(const void *page, uint16_t i)
{
    return (const bt_item *)((const char *)page + btpage_item_off(page, i));
}

static inline uint16_t btitem_size(const bt_item *it)
{
    return it->info & BT_INFO_SIZE;
}

/* Sets or clears BT_INFO_UNIQUE_DEAD on item i of page (held exclusively). */
static inline void btpage_item_set_unique_dead(void *page, uint16_t i,
                                               bool dead)
{
    bt_item *it = (bt_item *)btpage_item(page, i);

    if (dead)
        it->info |= BT_INFO_UNIQUE_DEAD;
    else
        it->info &= (uint16_t)~BT_INFO_UNIQUE_DEAD;
}

/* The item's tid: the heap tid on leaves, the separator's on internal
 * pages. */
static inline tid btitem_tid(const bt_item *it, bool leaf)
{
    tid t;

    if (leaf) {
        t.block = it->block;
        t.offset = it->offset;
    } else {
        const bt_sep *sp = (const bt_sep *)(it + 1);
        t.block = sp->block;
        t.offset = sp->offset;
    }
    return t;
}

static inline const void *btitem_key(const bt_item *it, bool leaf)
{
    return (const char *)it + (leaf ? BT_LEAF_KEY_OFF : BT_INTERNAL_KEY_OFF);
}

/* ---- page changes (btree_page.c) -------------------------------------- */

/* Initializes page as an empty tree page of level with flags, no
 * siblings. */
void btpage_init(void *page, uint16_t level, uint16_t flags);

/*
 * Inserts the item (size bytes, a multiple of 8) at slot pos (0..nitems),
 * shifting later slots.  Returns false, changing nothing, if it does not
 * fit.
 */
bool btpage_add(void *page, uint16_t pos, const void *item, uint16_t size);

/* Removes the item at slot pos, compacting the item space. */
void btpage_remove(void *page, uint16_t pos);

/*
 * Removes every item i with drop[i] (drop has one flag per slot), in one
 * pass that compacts the item space; the others keep their order.
 * Returns how many went.
 */
uint16_t btpage_remove_marked(void *page, const bool *drop);

/*
 * Splits page (block lblk, full) while inserting item at slot pos: the
 * lower part stays in page, the upper part goes to rpage (block rblk, a
 * fresh page from btpage_init), chosen by bytes so that both fit (the left
 * 90% full when the item goes to the end of a rightmost page, for
 * ascending inserts; else even).  page's new high key is the first upper
 * entry (on internal pages that entry's key moves up: rpage's first item
 * becomes minus infinity); rpage gets page's old high key and right-link;
 * the sibling links between page and rpage are set.  Flags other than
 * BT_LEAF are not carried to rpage.  Returns false, changing nothing, if
 * no split point works (corrupt page).
 */
bool btpage_split(void *page, blocknum_t lblk, void *rpage, blocknum_t rblk,
                  uint16_t pos, const void *item, uint16_t size);

/* ---- keys -------------------------------------------------------------- */

/*
 * A search key: the first nvals key columns, then either a tid or, for
 * what is not given, `unspec`: -1 makes the key sort before every entry
 * whose given columns are equal, +1 after, 0 equal to them.
 */
typedef struct bt_scankey {
    const keel_value *vals;
    uint16_t nvals;
    int8_t unspec;
    bool has_tid;
    bool fast; /* one integer column, given and not null: ival */
    tid t;
    int64_t ival;
} bt_scankey;

/* Initializes sk over vals (nvals columns), sets the fast path. */
void bt_scankey_init(const btree *bt, bt_scankey *sk, const keel_value *vals,
                     uint16_t nvals, int8_t unspec);

/* Compares the given columns of sk with a key of the index (slow path). */
int bt_compare_cols(const btree *bt, const bt_scankey *sk, const void *key,
                    bool has_nulls);

/* Reads the index's single integer key column (fast path). */
static inline int64_t bt_fast_value(const btree *bt, const void *key)
{
    switch (bt->fast) {
    case BT_FAST_INT2: {
        int16_t v;
        memcpy(&v, key, 2);
        return v;
    }
    case BT_FAST_INT4: {
        int32_t v;
        memcpy(&v, key, 4);
        return v;
    }
    case BT_FAST_OID: {
        uint32_t v;
        memcpy(&v, key, 4);
        return v;
    }
    default: {
        int64_t v;
        memcpy(&v, key, 8);
        return v;
    }
    }
}

/*
 * Compares sk with the item (not a minus-infinity one) of a leaf or
 * internal page: negative, zero or positive as sk sorts before, equal to
 * or after it.
 */
static inline int bt_compare(const btree *bt, const bt_scankey *sk,
                             const bt_item *it, bool leaf)
{
    const void *key = btitem_key(it, leaf);

    if (sk->fast && !(it->info & BT_INFO_NULLS)) {
        int64_t v = bt_fast_value(bt, key);
        if (sk->ival != v)
            return sk->ival < v ? -1 : 1;
    } else if (sk->nvals > 0) {
        int c = bt_compare_cols(bt, sk, key, (it->info & BT_INFO_NULLS) != 0);
        if (c != 0)
            return c;
    }
    if (sk->nvals < bt->natts || !sk->has_tid)
        return sk->unspec;
    return tid_compare(sk->t, btitem_tid(it, leaf));
}

/*
 * Makes sk (with vals, BTREE_MAX_KEYS entries, to hold the columns) the
 * full (key, tid) of an item that is not minus infinity.
 */
void bt_scankey_from_item(const btree *bt, const bt_item *it, bool leaf,
                          keel_value *vals, bt_scankey *sk);

/*
 * Forms the leaf item for (keys, t) in buf (BT_MAX_ITEM_SIZE bytes,
 * 8-aligned); its size in *size.  ETYPE / ETOOBIG (message in err) if a
 * value does not fit its column or the key is over BTREE_MAX_KEY_SIZE.
 */
int bt_form_leaf(const btree *bt, const keel_value *keys, tid t, void *buf,
                 uint16_t *size, kerr *err);

/*
 * Forms in buf the internal item with the key and tid of pivot (an item of
 * a leaf page if from_leaf, else of an internal page; not minus infinity)
 * and downlink child.  Returns its size.
 */
uint16_t bt_form_downlink(const bt_item *pivot, bool from_leaf,
                          blocknum_t child, void *buf);

/* Forms in buf a minus-infinity item pointing to child; returns its size. */
uint16_t bt_form_minus_inf(blocknum_t child, void *buf);

/*
 * True if the key data at key (len bytes available) is a well-formed
 * encoding for desc: every column, and every text length, within len.
 */
bool bt_key_valid(const tuple_desc *desc, const void *key, size_t len,
                  bool has_nulls);

/*
 * Checks, from the page alone, what every reader of a tree page relies on:
 * the header's offsets; level and flags that agree, and no meta flag; the
 * high key unless rightmost, and a downlink on an internal page; at most
 * BT_MAX_ITEMS line pointers, each leading to an 8-aligned item inside the
 * item space and overlapping no other, of a size that fits its kind; minus
 * infinity exactly as the first data item of an internal page; dead marks
 * on leaf data items only; keys that parse for desc; and no downlink to
 * the meta block or BT_NONE.  Not the order of keys or what links lead to.
 * Returns true, or false with what is wrong in why (len bytes).
 */
bool btpage_check(const void *page, const tuple_desc *desc, char *why,
                  size_t len);

/*
 * The page check (smgr_check_fn) every open index registers for its
 * relation (arg: its key descriptor): btpage_check() of each page read
 * from disk but the meta page.  Every B-tree page in the buffer pool has
 * so passed it, or was formed in memory by this code, so the B-tree reads
 * a page's items without checking their layout again.
 */
bool bt_read_check(const void *page, blocknum_t blk, const void *arg, char *why,
                   size_t len);

/* Writes "(v1, v2, ...)" for the key values into buf (size bytes). */
void bt_key_format(const tuple_desc *desc, const keel_value *vals,
                   uint16_t nvals, char *buf, size_t size);

/* ---- handle and meta page (btree.c) ----------------------------------- */

/* A handle for rel over a copy of desc (validated: 1..BTREE_MAX_KEYS
 * columns).  EINVAL, ENOMEM with the message in err. */
int bt_handle_new(relnumber_t rel, const tuple_desc *desc, bool unique,
                  btree **out, kerr *err);

/* Registers bt_read_check() with bt's key descriptor as the page check
 * of its relation (smgr_rel_set_check()), whose file must exist: before
 * any of its pages but the meta page is read.  ENOENT, ENOMEM. */
int bt_register_check(const btree *bt, buf_session *s);

/* Makes rel ready to receive a new index: creates its file if absent;
 * EEXIST if it has blocks. */
int bt_rel_prepare(buf_session *s, relnumber_t rel);

/* Writes the meta page for bt into page (whole page initialized). */
void bt_meta_write(const btree *bt, void *page, blocknum_t root,
                   uint32_t level);

/*
 * Validates the meta page image at page and builds a descriptor of its key
 * columns (*desc, caller frees).  ECORRUPT / EVERSION with the message in
 * err.
 */
int bt_meta_parse(const void *page, relnumber_t rel, bt_meta *meta,
                  tuple_desc **desc, kerr *err);

#endif /* KEEL_ACCESS_BTREE_PAGE_H */
