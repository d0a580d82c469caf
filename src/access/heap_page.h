/*
 * heap_page.h: the heap's slotted page and the heap tuple header.
 *
 * A heap page is a page (page.h) with no special space.  Line pointers
 * grow up from the page header, one 4-byte word per item; the items they
 * point to (heap tuples) grow down from the end of the page.  An item is
 * addressed by its 1-based line pointer number (its "offset", the second
 * half of a tid), which never changes while the item lives, so tids stay
 * valid however the page's storage is rearranged.
 *
 *   0      24                    lower     upper                   8192
 *   | hdr | lp1 lp2 lp3 ... ->   |  free   | <- tuple3 tuple2 tuple1 |
 *
 * A line pointer is UNUSED (no item, free for reuse), NORMAL (points to an
 * item of `len` bytes at `off`), DEAD (the item was removed and its
 * storage reclaimed, but the number is kept because something may still
 * refer to it; a future vacuum turns DEAD pointers into UNUSED ones) or
 * REDIRECT (no item: `off` is the line number of the heap-only version
 * that now begins the row's chain, see "Heap-only updates" below).
 * Every item starts 8-byte aligned and occupies its length rounded up to 8.
 *
 * A heap tuple is a heap_tuple_header followed, at `hoff`, by the data area
 * of tuple.h.  The header carries what visibility needs: the inserting
 * transaction (xmin), the deleting or updating one (xmax, 0 = none), and
 * for an update, the new version's tid.
 *
 * None of these functions lock anything: the caller holds the buffer's
 * content lock (shared to read, exclusive to change), or works on a
 * private copy.  Pages passed in must be 8-byte aligned (buffer pages and
 * the copies this module's users make are).
 */
#ifndef KEEL_ACCESS_HEAP_PAGE_H
#define KEEL_ACCESS_HEAP_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "access/tid.h"
#include "port/error.h"
#include "storage/page.h"
#include "txn/snapshot.h"

/* ------------------------------------------------------------------ */
/* Line pointers                                                      */
/* ------------------------------------------------------------------ */

typedef enum heappage_lp_state {
    HEAPPAGE_LP_UNUSED = 0,
    HEAPPAGE_LP_NORMAL = 1,
    HEAPPAGE_LP_DEAD = 2,
    HEAPPAGE_LP_REDIRECT = 3,
} heappage_lp_state;

/*
 * One line pointer: a 32-bit word holding the item's offset in the page
 * (bits 0-14), its state (bits 15-16) and its length (bits 17-31), as
 * PostgreSQL's ItemIdData.  15 bits hold any offset or length in a page.
 */
typedef uint32_t heappage_lp;

#define HEAPPAGE_LP_SIZE ((uint16_t)sizeof(heappage_lp))

static inline uint16_t heappage_lp_off(heappage_lp lp)
{
    return (uint16_t)(lp & 0x7FFFu);
}

static inline heappage_lp_state heappage_lp_state_of(heappage_lp lp)
{
    return (heappage_lp_state)((lp >> 15) & 0x3u);
}

static inline uint16_t heappage_lp_len(heappage_lp lp)
{
    return (uint16_t)(lp >> 17);
}

static inline heappage_lp heappage_lp_make(uint16_t off, heappage_lp_state st,
                                           uint16_t len)
{
    return (heappage_lp)off | ((heappage_lp)st << 15) |
           ((heappage_lp)len << 17);
}

/* ------------------------------------------------------------------ */
/* The heap tuple header                                              */
/* ------------------------------------------------------------------ */

/*
 * 24 bytes, 8-aligned, so the data area that follows at hoff starts
 * 8-aligned as tuple.h requires.  Every field is written under the page's
 * exclusive content lock; xmax (and with it flags, next and cid) is the
 * only part that changes after insertion.
 *
 * cid is the command of the writing transaction that wrote the version
 * (txn/cid.h): the inserting one (cmin) while only the inserter has
 * touched it, the deleting one (cmax) once another transaction deletes
 * it, and a combo id with CID_COMBO set when the inserter deleted it in a
 * later command; an insert and a delete by one command leave cmin, which
 * is then cmax too.  Only the transaction that wrote it reads it, so
 * after that transaction ends it means nothing, and recovery need not
 * restore it.
 */
typedef struct heap_tuple_header {
    xid_t xmin;            /* inserting transaction (XID_FROZEN: everyone's) */
    xid_t xmax;            /* deleting/updating transaction, 0 = none */
    blocknum_t next_block; /* newer version's block if XMAX_UPDATE, */
    uint16_t next_offset;  /* ... and line pointer; else this tuple's own */
    uint16_t flags;        /* HEAP_TUPLE_* */
    uint16_t natts;        /* columns in the data area */
    uint16_t hoff;         /* offset of the data area from the tuple's start */
    uint32_t cid;          /* cmin, cmax or CID_COMBO | a combo id */
} heap_tuple_header;

_Static_assert(sizeof(heap_tuple_header) == 24, "heap tuple header is 24");

#define HEAP_TUPLE_HAS_NULLS   0x0001 /* the data area has a null bitmap */
#define HEAP_TUPLE_XMAX_UPDATE 0x0002 /* xmax updated (not just deleted) it */
#define HEAP_TUPLE_HOT_UPDATED 0x0004 /* ... and the new version is heap-only,
                                       * on this page */
#define HEAP_TUPLE_HEAP_ONLY   0x0008 /* no index entry names this version */
#define HEAP_TUPLE_FLAGS_KNOWN                                                 \
    (HEAP_TUPLE_HAS_NULLS | HEAP_TUPLE_XMAX_UPDATE | HEAP_TUPLE_HOT_UPDATED |  \
     HEAP_TUPLE_HEAP_ONLY)

/*
 * Heap-only updates.  An update that changes no indexed column and finds
 * room on its old version's page makes its new version HEAP_ONLY and marks
 * the old one HOT_UPDATED: no index gets an entry, since the row's entries
 * name the chain's root (its first, indexed, version), and a reader that
 * arrives there walks the chain on the page.  Each link is checked: the
 * next version's xmin equals the one before's xmax.  Pruning keeps the
 * root's line number while any version of the chain lives: a pruned root
 * becomes a REDIRECT to the first surviving version, and DEAD once the
 * whole chain is gone.  Pruned heap-only versions become UNUSED (nothing
 * else names them), and their numbers are reused.
 */

/* Where the data area starts: right after the header (already 8-aligned). */
#define HEAP_TUPLE_HOFF ((uint16_t)sizeof(heap_tuple_header))

/*
 * PAGE_FLAG_PRUNABLE (page.h) says that some version on the page has a
 * deleter; the header's am_hint then names the only one, if only one has
 * had a deleter since the flag was set, or is HEAPPAGE_HINT_MANY, so that
 * pruning a page with one changed row reads one tuple, not all of them.
 */
#define HEAPPAGE_HINT_MANY 0xFFFF

/*
 * The most line pointers a page gets.  Rows alone never reach it (a tuple
 * takes at least its 24-byte header: 291 fit); pruning leaves DEAD ones
 * behind, and a page that has this many takes no new item until they are
 * reused, so pruning never scans more than this.
 */
#define HEAPPAGE_MAX_LINES 512

/* The largest heap tuple (header included) a page can hold: the page less
 * its header and one line pointer, rounded down to 8. */
#define HEAP_MAX_TUPLE_SIZE                                                    \
    ((size_t)((BLOCK_SIZE - PAGE_HEADER_SIZE - HEAPPAGE_LP_SIZE) & ~7))

/* ------------------------------------------------------------------ */
/* Page operations                                                    */
/* ------------------------------------------------------------------ */

/* Initializes page (BLOCK_SIZE bytes) as an empty heap page. */
void heappage_init(void *page);

/*
 * Number of line pointers on the page (the highest valid offset).  0 for
 * a new (all-zero) page, which callers treat as empty.
 */
uint16_t heappage_nitems(const void *page);

/* The line pointer for offset (1 .. heappage_nitems()). */
heappage_lp heappage_get_lp(const void *page, uint16_t offset);

/*
 * The item at offset and its length in *len, or NULL if offset is out of
 * range, its line pointer is not NORMAL, or (a damaged page) the item
 * does not lie between the line pointers and the end of the page, or is
 * not 8-aligned: see heappage_item_damaged().  The pointer is into page,
 * so it is valid only as long as the caller's content lock (or copy) is.
 */
void *heappage_get_item(void *page, uint16_t offset, size_t *len);

/* True if the line pointer at offset (in range) is NORMAL but names bytes
 * outside the page's tuple space, or a misaligned item:
 * heappage_get_item() refuses it. */
bool heappage_item_damaged(const void *page, uint16_t offset);
const void *heappage_get_item_const(const void *page, uint16_t offset,
                                    size_t *len);

/*
 * Whether an item of len bytes fits on the page, counting its line pointer
 * (none is needed when an UNUSED one can be reused; a new one is refused
 * past HEAPPAGE_MAX_LINES) and the holes a compaction would close.
 */
bool heappage_fits(const void *page, size_t len);

/*
 * Copies len bytes of item onto the page and returns its offset, reusing an
 * UNUSED line pointer if the page has one, else appending one (unless the
 * page has HEAPPAGE_MAX_LINES already), compacting the page first if it
 * needs the holes removed items left.  Returns 0,
 * leaving the page unchanged, if it does not fit (or the page is too
 * damaged to compact).  The caller holds the exclusive lock and marks the
 * buffer dirty.
 */
uint16_t heappage_add_item(void *page, const void *item, size_t len);

/* heappage_add_item(), but 0 rather than compacting the page: nothing on
 * it moves (so that the log can name what changed). */
uint16_t heappage_add_item_in_place(void *page, const void *item, size_t len);

/*
 * Removes the item at offset: its line pointer becomes DEAD and its storage
 * is reclaimed by compacting the remaining items (their offsets, i.e. tids,
 * do not change; their addresses in the page do).  EINVAL if offset does
 * not name a NORMAL item, ECORRUPT (the page unchanged) if the page is
 * damaged so that it cannot be compacted (heappage_compact()).
 */
int heappage_delete_item(void *page, uint16_t offset, kerr *err);

/*
 * Removes n items without moving any other: each of offsets[0..n), which
 * must name distinct NORMAL items, becomes DEAD, and their storage, zeroed,
 * holes until a compaction (PAGE_FLAG_HAS_HOLES; heappage_add_item() compacts
 * when it needs the room).  If item is not NULL and one removed item's
 * storage holds len bytes, item is copied there, with a new line pointer
 * (as heappage_add_item() would give it), and its offset is returned; else
 * 0 (item not placed).
 */
uint16_t heappage_remove_items(void *page, const uint16_t *offsets, uint16_t n,
                               const void *item, size_t len);

/*
 * Pruning's change, for do and redo alike: each redirect[i] (a NORMAL
 * item or a REDIRECT) becomes a REDIRECT to redirect_to[i]; each of
 * dead[0..nd) (NORMAL or REDIRECT) becomes DEAD; each of unused[0..nu)
 * (NORMAL) becomes UNUSED.  Removed items' storage is zeroed and left as
 * holes (PAGE_FLAG_HAS_HOLES), nothing else moves; UNUSED numbers set
 * PAGE_FLAG_HAS_FREE_LINES.  item (len bytes, or NULL) then goes into a
 * hole large enough, if there is one, as heappage_remove_items() places
 * it; returns its offset, or 0.  The caller has checked the states.
 */
uint16_t heappage_prune_items(void *page, const uint16_t *redirect,
                              const uint16_t *redirect_to, uint16_t nr,
                              const uint16_t *dead, uint16_t nd,
                              const uint16_t *unused, uint16_t nu,
                              const void *item, size_t len);

/*
 * Redo of heappage_prune_items()'s placement: item (len bytes) at pos, a
 * hole pruning left, with a line pointer as heappage_add_item() would
 * give it; its offset, or 0 if pos is no place for it (outside the tuple
 * space, misaligned, or on a page without holes).
 */
uint16_t heappage_place_in_hole(void *page, uint16_t pos, const void *item,
                                size_t len);

/*
 * Moves every NORMAL item so that they are packed against the end of the
 * page, leaving all free space in one piece.  Line pointer numbers do not
 * change.  Returns false, changing nothing, on a damaged page whose items
 * lie outside its tuple space, are misaligned or overlap.
 */
bool heappage_compact(void *page);

/*
 * Verifies a heap page's structure, for `keel check` and tests: the header
 * (no special space, lower/upper in range), every line pointer (NORMAL
 * items 8-aligned, inside [upper, special), not overlapping one another,
 * long enough for a tuple header; UNUSED and DEAD ones without storage) and
 * every tuple header (hoff, natts, known flags, valid xids, an update's next
 * tid, a combo command id only on a version whose inserter deleted it;
 * any other command id is accepted, since only its writer reads it), and
 * heap-only chains' links: a REDIRECT, and a HOT_UPDATED version's next
 * tid, name a heap-only version on the page, inserted by the updater.  A new page is valid.  Returns KEEL_OK, or KEEL_ECORRUPT with a
 * message naming the first problem found and its offset; blk is only used
 * in that message.
 */
int heappage_verify(const void *page, blocknum_t blk, kerr *err);

#endif /* KEEL_ACCESS_HEAP_PAGE_H */
