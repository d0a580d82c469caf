/*
 * btree_internal.h: what the B-tree's operations share across their files
 * (btree.c, btree_search.c, btree_insert.c, btree_delete.c, btree_scan.c):
 * reading and locking a page, counting moves right, the descent and the
 * search of a leaf, and the shedding of marked entries.  The page layout
 * and the handle are in btree_page.h.  Not for use outside src/access.
 *
 * The protocol, in short (src/access/README.md has all of it): a reader
 * holds a share lock on one page at a time and never locks a parent; at
 * each page, if its key is >= the page's high key, a split moved it right
 * and the reader follows the right-link.  A writer descends the same way
 * and locks the leaf exclusively; locks are taken left before right and
 * child before parent (btree_insert.c).
 */
#ifndef KEEL_ACCESS_BTREE_INTERNAL_H
#define KEEL_ACCESS_BTREE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "access/btree.h"
#include "access/btree_page.h"
#include "storage/bufmgr.h"

struct heap_rel;

/* A page's key bounds as its parent saw them (btree_search.c). */
typedef struct bt_hint bt_hint;

/* ---- reading pages (btree_search.c) ----------------------------------- */

static inline void *bt_page(buf_session *s, int32_t id)
{
    return buf_session_page(s, id);
}

/*
 * Reads block blk of the index, pins and locks it in mode, and checks that
 * it is a tree page of level `level` (any level if level < 0).  A link past
 * the end of the index is ECORRUPT.  On error nothing is left pinned.
 */
int bt_read_lock(const btree *bt, buf_session *s, blocknum_t blk,
                 lwlock_mode mode, int level, int32_t *id);

/*
 * The blocks an insert holds locked while it reads others: the pages it
 * has split (both halves of each) and the one it is changing; a unique
 * check's target and current page.  In a sound tree no link it follows
 * leads back to one of them; a damaged one may, and locking that page
 * would wait for the insert's own lock for ever.
 */
typedef struct bt_held {
    blocknum_t blk[2 * BT_MAX_LEVELS + 2];
    uint32_t n;
} bt_held;

/* bt_read_lock(), unless held (NULL: nothing) holds blk: then ECORRUPT. */
static inline int bt_read_lock_held(const btree *bt, buf_session *s,
                                    blocknum_t blk, lwlock_mode mode, int level,
                                    const bt_held *held, int32_t *id)
{
    if (held != NULL)
        for (uint32_t i = 0; i < held->n; i++)
            if (held->blk[i] == blk)
                return kerr_set(&s->err, KEEL_ECORRUPT,
                                "index %u: link to block %u, a page this "
                                "insert holds locked",
                                bt->rel, blk);
    return bt_read_lock(bt, s, blk, mode, level, id);
}

/*
 * A search (or scan) counts the moves right it makes, at every level
 * together, and after each one calls bt_walk_step() with the count.  A
 * search reaches each page at most once, and every page it reaches
 * exists, so it cannot make as many moves as the index has blocks: if it
 * does, the right-links loop (a damaged page), and the search must end.
 * The index's size is looked at after moves 64, 128, 256 and so on only,
 * so a loop ends within twice the index's size, and a search that moves
 * rarely costs a register.
 */
#define BT_WALK_FREE 64

/* The cold part of bt_walk_step(): ECORRUPT if the index has no more
 * blocks than the n moves made, the last to block blk. */
__attribute__((noinline, cold)) int
bt_walk_limit(const btree *bt, buf_session *s, uint32_t n, blocknum_t blk);

/* After a search's n-th move right, to block blk: KEEL_OK, or ECORRUPT if
 * its right-links loop. */
static inline int bt_walk_step(const btree *bt, buf_session *s, uint32_t n,
                               blocknum_t blk)
{
    if (n < BT_WALK_FREE || (n & (n - 1)) != 0)
        return KEEL_OK;
    return bt_walk_limit(bt, s, n, blk);
}

/* ---- searching (btree_search.c) -------------------------------------- */

/* First data slot whose item is >= sk (nitems if none): the position of
 * sk on a leaf.  h (may be NULL) hints at the page's key bounds. */
uint16_t bt_lower_bound(const btree *bt, const void *page, const bt_scankey *sk,
                        const bt_hint *h);

/* True if sk belongs right of this page: the page has a high key and sk
 * is not below it. */
bool bt_beyond(const btree *bt, const void *page, const bt_scankey *sk);

/*
 * Descends from the root to the page of level `target` whose key range
 * holds sk, and returns it pinned and locked in mode in *out_id (block in
 * *out_blk).  Pages above target are share-locked one at a time.  If
 * stack is not NULL, stack[l] receives the block passed at each level l
 * above target, and *stack_top the root's level.  A cached root that is
 * no longer the root (or a level that does not exist yet) is refreshed
 * from the meta page.  If hint is not NULL, the caller takes over the
 * high-key test at the target page (if sk is at or above its high key it
 * must move right itself), and *hint receives the page's key bounds as
 * its parent saw them; this saves a cache miss when the caller's search
 * of the page finds an entry above sk anyway.  held (NULL if none) are
 * the blocks the caller holds locked, which no link may lead to.
 */
int bt_descend(btree *bt, buf_session *s, const bt_scankey *sk, uint32_t target,
               lwlock_mode mode, blocknum_t *stack, uint32_t *stack_top,
               bt_hint *hint, int32_t *out_id, blocknum_t *out_blk,
               const struct heap_rel *heap, tid *guessed, const bt_held *held);

/* ---- shedding marked entries (btree_delete.c) ------------------------ */

/*
 * Removes from leaf page (exclusively locked) its entries marked dead that
 * removable allows, keeping *pos, the slot an entry is to go in, where it
 * was among the others.  The entry at slot probe (a marked one) is asked
 * about first, and if it must stay, nothing is removed and no other is
 * asked about: a row's entries lie in the order of its versions (tid
 * order, as new versions go after old ones), so with probe the oldest
 * marked entry, none of the newer ones could go either, and with probe
 * the newest, the older ones are likely to.  Returns how many went.
 */
uint16_t bt_prune(void *page, uint16_t *pos, uint16_t probe,
                  btree_removable_fn removable, void *ctx);

/* The first marked entry of leaf page, or UINT16_MAX if none is. */
uint16_t bt_first_marked(const void *page);

/*
 * For the uniqueness check, on a page it holds exclusively and is leaving
 * (not the insertion target): if marked entries of the key fill much of it
 * (marked of them, the last at slot last), removes those no snapshot can
 * need, so that later checks and searches walk fewer entries.  The last
 * one is asked first (bt_prune()), so that while a snapshot holds the
 * horizon back each check asks one question here, not one per entry.
 */
void bt_prune_passed(btree *bt, buf_session *s, int32_t id, void *page,
                     uint16_t marked, uint16_t last,
                     btree_removable_fn removable, void *ctx);

#endif /* KEEL_ACCESS_BTREE_INTERNAL_H */
