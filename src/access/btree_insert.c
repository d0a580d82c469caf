/*
 * btree_insert.c: inserting an entry: the descent to its leaf, the
 * uniqueness check, and page splits with downlinks into parents (new
 * roots included).  A writer descends as a reader does, remembering the
 * internal block it passed at each level, and locks the leaf
 * exclusively.  In short (src/access/README.md has the whole protocol):
 *
 *  - locks are taken left before right and child before parent, never
 *    leftwards or downwards while holding one, so writers cannot deadlock;
 *  - a split holds both halves until the downlink to the right half is in
 *    the parent (the parent found through the remembered path, moving
 *    right), so every page but a fresh right half has a downlink whenever
 *    no lock is held on it; it holds them to the end of the insert, and a
 *    failure further up puts every level back (bt_insert_item()).
 */
#include "access/btree.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "access/btree_internal.h"
#include "access/btree_page.h"
#include "storage/buf_log.h"
#include "storage/bufmgr.h"
#include "wal/wal.h"

/* ---- insertion --------------------------------------------------------- */

/*
 * The uniqueness check.  On entry *io_id is the leaf whose range holds
 * (key, minus infinity), exclusively locked.  Walks the entries equal to
 * keys rightwards, locking each next page before releasing the current
 * one, and fails if one may be live.  The insertion target (the page whose
 * range holds (key, t)) is reached on the way and kept exclusively locked;
 * pages beyond it are only share-locked.  Entries marked dead are passed
 * without asking is_live; those it finds dead are marked on the pages held
 * exclusively (the target and those before it), which become dirty.  On
 * success *io_id / *io_blk is the target, exclusively locked; on failure
 * nothing is held.
 */
static int bt_unique_check(btree *bt, buf_session *s, const keel_value *keys,
                           tid t, btree_is_live_fn is_live,
                           btree_removable_fn removable, void *ctx,
                           int32_t *io_id, blocknum_t *io_blk)
{
    int32_t cur = *io_id, target = BUF_INVALID;
    blocknum_t curblk = *io_blk, tblk = BT_NONE;
    uint32_t walk = 0;
    bt_scankey eq, full;
    void *page = bt_page(s, cur);
    uint16_t pos;
    int rc = KEEL_OK;

    bt_scankey_init(bt, &eq, keys, bt->natts, -1);
    full = eq;
    full.has_tid = true;
    full.t = t;
    pos = bt_lower_bound(bt, page, &eq, NULL);
    eq.unspec = 0;
    for (;;) {
        uint16_t n = btpage_nitems(page);
        blocknum_t next;
        int32_t nid;
        uint16_t start = pos, marked = 0, last = 0;
        bool all_equal = false;

        if (target == BUF_INVALID && !bt_beyond(bt, page, &full)) {
            target = cur;
            tblk = curblk;
        }
        for (; pos < n; pos++) {
            const bt_item *it = btpage_item(page, pos);
            btree_row fate;
            tid et;

            if (!all_equal && bt_compare(bt, &eq, it, true) != 0)
                goto done;
            /* From a second equal entry on: if the high key is keys too,
             * so is every entry to the page's end (see bt_int_collect()),
             * and none needs a compare. */
            if (!all_equal && pos == start + 1)
                all_equal = bt_beyond(bt, page, &eq);
            /* A marked (keys, t) is refused where the entry would go (and
             * a live entry after it may be reported first, as EUNIQUE). */
            if (it->info & BT_INFO_UNIQUE_DEAD) {
                marked++;
                last = pos;
                continue;
            }
            et = btitem_tid(it, true);
            if (tid_compare(et, t) == 0) {
                rc = kerr_set(&s->err, KEEL_EEXIST,
                              "index %u: entry for tid (%u,%u) already "
                              "exists",
                              bt->rel, t.block, t.offset);
                goto fail;
            }
            fate = is_live != NULL ? is_live(ctx, et) : BTREE_ROW_LIVE;
            if (fate == BTREE_ROW_ERROR) {
                rc = s->err.code != KEEL_OK
                         ? s->err.code
                         : kerr_set(&s->err, KEEL_EIO,
                                    "index %u: the row at (%u,%u) could "
                                    "not be read",
                                    bt->rel, et.block, et.offset);
                goto fail;
            }
            if (fate == BTREE_ROW_DEAD &&
                (target == BUF_INVALID || cur == target)) {
                btpage_item_set_unique_dead(page, pos, true);
                buf_mark_dirty_op(s, cur, BUF_OP_BT_DEAD, &pos, 2);
                if (s->log_info == WAL_INFO_PAGE)
                    s->log_info = WAL_INFO_BTREE_DEAD;
                marked++;
                last = pos;
            }
            if (fate == BTREE_ROW_LIVE) {
                char kb[160];
                bt_key_format(bt->desc, keys, bt->natts, kb, sizeof(kb));
                rc = kerr_set(&s->err, KEEL_EUNIQUE,
                              "duplicate key %s violates unique index %u", kb,
                              bt->rel);
                goto fail;
            }
        }
        /* Equal keys may continue right only if the high key is keys. */
        if (!all_equal && !bt_beyond(bt, page, &eq))
            goto done;
        /* Leaving a page held exclusively that is not the target. */
        if (target == BUF_INVALID)
            bt_prune_passed(bt, s, cur, page, marked, last, removable, ctx);
        next = btpage_opaque(page)->right;
        rc = bt_walk_step(bt, s, ++walk, next);
        if (rc == KEEL_OK) {
            bt_held held = {{curblk, tblk}, 2};
            rc = bt_read_lock_held(
                bt, s, next, target == BUF_INVALID ? LW_EXCLUSIVE : LW_SHARED,
                0, &held, &nid);
        }
        if (rc != KEEL_OK)
            goto fail;
        if (cur != target)
            buf_unlock_release(s, cur);
        cur = nid;
        curblk = next;
        page = bt_page(s, cur);
        pos = btpage_first(page);
    }
done:
    /* Past the target, only entries > (key, t) remain: it was found. */
    assert(target != BUF_INVALID);
    if (cur != target)
        buf_unlock_release(s, cur);
    *io_id = target;
    *io_blk = tblk;
    return KEEL_OK;
fail:
    if (cur != target)
        buf_unlock_release(s, cur);
    if (target != BUF_INVALID)
        buf_unlock_release(s, target);
    return rc;
}

/*
 * Finds, for the page `lpage` (block child, level plevel - 1, exclusively
 * locked by the caller), its parent: the page of level plevel holding its
 * downlink, which is returned exclusively locked with the downlink's slot.
 * Starts at the remembered block of that level if the descent passed it,
 * else descends from the root towards lpage's high key; then moves right
 * until the downlink is found (the parent may have split meanwhile).
 */
static int bt_find_parent(btree *bt, buf_session *s, const blocknum_t *stack,
                          uint32_t stack_top, uint32_t plevel, blocknum_t child,
                          const void *lpage, const bt_held *held, int32_t *pid,
                          blocknum_t *pblk, uint16_t *ppos)
{
    uint32_t walk = 0;
    blocknum_t blk;
    int32_t id;
    int rc;

    if (plevel <= stack_top) {
        blk = stack[plevel];
        rc =
            bt_read_lock_held(bt, s, blk, LW_EXCLUSIVE, (int)plevel, held, &id);
    } else {
        keel_value vals[BTREE_MAX_KEYS];
        bt_scankey sk;

        bt_scankey_from_item(bt, btpage_item(lpage, BT_HIKEY),
                             btpage_is_leaf(lpage), vals, &sk);
        rc = bt_descend(bt, s, &sk, plevel, LW_EXCLUSIVE, NULL, NULL, NULL, &id,
                        &blk, NULL, NULL, held);
    }
    if (rc != KEEL_OK)
        return rc;
    for (;;) {
        void *page = bt_page(s, id);
        uint16_t n = btpage_nitems(page);

        for (uint16_t i = btpage_first(page); i < n; i++) {
            if (btpage_item(page, i)->block == child) {
                *pid = id;
                *pblk = blk;
                *ppos = i;
                return KEEL_OK;
            }
        }
        if (btpage_rightmost(page)) {
            buf_unlock_release(s, id);
            return kerr_set(&s->err, KEEL_ECORRUPT,
                            "index %u: no downlink to block %u on level %u",
                            bt->rel, child, plevel);
        }
        blk = btpage_opaque(page)->right;
        buf_unlock_release(s, id);
        rc = bt_walk_step(bt, s, ++walk, blk);
        if (rc == KEEL_OK)
            rc = bt_read_lock_held(bt, s, blk, LW_EXCLUSIVE, (int)plevel, held,
                                   &id);
        if (rc != KEEL_OK)
            return rc;
    }
}

/*
 * The root (page lid, block lblk, level `level`, exclusively locked) has
 * split into lblk and rblk: makes a new root above them holding minus
 * infinity -> lblk and the downlink dl -> rblk, points the meta page at it
 * (under the meta page's exclusive lock, taken last) and clears the old
 * root's flag.  The caller still holds and releases both halves.
 */
static int bt_new_root(btree *bt, buf_session *s, int32_t lid, blocknum_t lblk,
                       uint16_t level, const void *dl, uint16_t dlsize)
{
    unsigned char mi[BT_MINUS_INF_SIZE];
    int32_t mid, nid;
    blocknum_t nblk;
    bt_meta meta;
    void *npage, *mpage;
    int rc;

    rc = buf_read(s, bt->rel, BT_META_BLOCK, NULL, &mid);
    if (rc != KEEL_OK)
        return rc;
    buf_lock(s, mid, LW_EXCLUSIVE);
    rc = buf_extend(s, bt->rel, sizeof(bt_opaque), NULL, &nid, &nblk);
    if (rc != KEEL_OK) {
        buf_unlock_release(s, mid);
        return rc;
    }
    npage = bt_page(s, nid);
    s->log_info = WAL_INFO_BTREE_NEWROOT; /* the whole split's record */
    btpage_init(npage, (uint16_t)(level + 1), BT_ROOT);
    if (!btpage_add(npage, 0, mi, bt_form_minus_inf(lblk, mi)) ||
        !btpage_add(npage, 1, dl, dlsize))
        assert(false);
    buf_mark_dirty(s, nid);

    mpage = bt_page(s, mid);
    memcpy(&meta, (char *)mpage + PAGE_HEADER_SIZE, sizeof(meta));
    meta.root = nblk;
    meta.level = (uint32_t)level + 1;
    memcpy((char *)mpage + PAGE_HEADER_SIZE, &meta, sizeof(meta));
    buf_mark_dirty(s, mid);

    btpage_opaque(bt_page(s, lid))->flags &= (uint16_t)~BT_ROOT;
    atomic_store_relaxed(&bt->root_cache, (uint64_t)(level + 1) << 32 | nblk);
    buf_unlock_release(s, mid);
    buf_unlock_release(s, nid);
    return KEEL_OK;
}

/*
 * One split of an insert, held until the insert ends: the halves (locked),
 * the old right sibling (pinned: its left-link is pointed at the right half
 * only once the insert has succeeded, so that no checkpoint can write a
 * link that an undo takes back) and the left page as it was before, so
 * that a failure further up can put the level back.
 */
typedef struct bt_split_undo {
    int32_t lid, rid, orid; /* orid: BUF_INVALID if lid was rightmost */
    blocknum_t rblk;
    void *before; /* BLOCK_SIZE bytes */
} bt_split_undo;

/* The page of a split's right half, which belongs to nothing: zeroes, as
 * the file had it before the split (a new page, which readers and the
 * checker take for unused). */
static void bt_forget_page(buf_session *s, int32_t id)
{
    memset(bt_page(s, id), 0, BLOCK_SIZE);
    buf_mark_dirty(s, id);
    buf_unlock_release(s, id);
}

/*
 * Ends an insert's splits, last (highest) first.  After success, each old
 * right sibling's left-link is pointed at its new left neighbour (locked
 * left of the right half and above the levels still held: the lock order
 * holds).  After a failure (undo) each level is put back: the left page as
 * it was, the right half zeroed.  Releases everything the splits held.
 */
static void bt_splits_end(buf_session *s, bt_split_undo *u, uint32_t n,
                          bool undo)
{
    while (n-- > 0) {
        if (undo) {
            memcpy(bt_page(s, u[n].lid), u[n].before, BLOCK_SIZE);
            buf_mark_dirty(s, u[n].lid);
            bt_forget_page(s, u[n].rid);
        } else {
            if (u[n].orid != BUF_INVALID) {
                buf_lock(s, u[n].orid, LW_EXCLUSIVE);
                btpage_opaque(bt_page(s, u[n].orid))->left = u[n].rblk;
                buf_mark_dirty(s, u[n].orid);
                buf_unlock(s, u[n].orid);
            }
            buf_unlock_release(s, u[n].rid);
        }
        if (u[n].orid != BUF_INVALID)
            buf_release(s, u[n].orid);
        buf_unlock_release(s, u[n].lid);
        free(u[n].before);
    }
}

/*
 * Inserts item (size bytes) at slot pos of page id (block blk, exclusively
 * locked), splitting it if it is full and then inserting the downlink to
 * the new right half into the parent, and so on up.  All or nothing: every
 * split stays locked until the insert has found room at the top, and a
 * failure on the way (an I/O error, no buffer free for a new page) puts
 * each level back as it was, so that the tree never lacks a downlink and
 * a failed insert leaves no entry behind.  Releases everything it holds
 * before returning, error or not.
 */
static int bt_insert_item(btree *bt, buf_session *s, const blocknum_t *stack,
                          uint32_t stack_top, int32_t id, blocknum_t blk,
                          uint16_t pos, const void *item, uint16_t size,
                          btree_removable_fn removable, void *ctx)
{
    bt_split_undo undo[BT_MAX_LEVELS];
    uint32_t nundo = 0;
    bt_held held = {{blk}, 1};
    bt_itembuf dlbuf;
    int rc;

    for (;;) {
        void *page = bt_page(s, id), *rpage, *before;
        bt_opaque *op = btpage_opaque(page);
        uint16_t level = op->level, dlsize;
        blocknum_t oldright = op->right, rblk;
        int32_t rid, orid = BUF_INVALID, pid = BUF_INVALID;
        blocknum_t pblk = BT_NONE;
        uint16_t ppos = 0, k;

        if (btpage_add(page, pos, item, size)) {
            /* For the log: the insert itself (position and item), which
             * redo repeats (bt_redo_add()), not the line pointers it
             * shifted. */
            char add[2 + sizeof(bt_itembuf)];
            memcpy(add, &pos, 2);
            memcpy(add + 2, item, size);
            buf_mark_dirty_op(s, id, BUF_OP_BT_ADD, add, (uint16_t)(2 + size));
            if (s->log_info == WAL_INFO_PAGE)
                s->log_info = nundo > 0 ? WAL_INFO_BTREE_SPLIT
                                        : WAL_INFO_BTREE_INSERT;
            buf_unlock_release(s, id);
            rc = KEEL_OK;
            break;
        }
        /* A full leaf: first make room by removing entries nobody can
         * need any more (the oldest marked one asked first), and split
         * only if that was not enough. */
        if (level == 0 && removable != NULL &&
            (k = bt_first_marked(page)) != UINT16_MAX &&
            (k = bt_prune(page, &pos, k, removable, ctx)) > 0) {
            buf_mark_dirty(s, id);
            atomic_fetch_add_explicit(&bt->pruned, k, memory_order_relaxed);
            if (btpage_add(page, pos, item, size)) {
                buf_unlock_release(s, id);
                rc = KEEL_OK;
                break;
            }
        }

        /* Split: new right half, then the old right sibling (pinned, its
         * left-link changed once the insert has succeeded), both to the
         * right of this page. */
        before = malloc(BLOCK_SIZE);
        if (before == NULL) {
            buf_unlock_release(s, id);
            rc = kerr_set(&s->err, KEEL_ENOMEM,
                          "index %u: out of memory splitting block %u", bt->rel,
                          blk);
            break;
        }
        rc = buf_extend(s, bt->rel, sizeof(bt_opaque), NULL, &rid, &rblk);
        if (rc != KEEL_OK) {
            free(before);
            buf_unlock_release(s, id);
            break;
        }
        rpage = bt_page(s, rid);
        btpage_init(rpage, level, 0);
        held.blk[held.n++] = rblk;
        if (oldright != BT_NONE) {
            rc = bt_read_lock_held(bt, s, oldright, LW_SHARED, level, &held,
                                   &orid);
            if (rc != KEEL_OK) {
                free(before);
                bt_forget_page(s, rid);
                buf_unlock_release(s, id);
                break;
            }
        }
        memcpy(before, page, BLOCK_SIZE);
        if (!btpage_split(page, blk, rpage, rblk, pos, item, size)) {
            free(before);
            bt_forget_page(s, rid);
            if (orid != BUF_INVALID)
                buf_unlock_release(s, orid);
            buf_unlock_release(s, id);
            rc = kerr_set(&s->err, KEEL_ECORRUPT,
                          "index %u block %u: no way to split the page",
                          bt->rel, blk);
            break;
        }
        if (orid != BUF_INVALID)
            buf_unlock(s, orid); /* kept pinned: see bt_split_undo */
        buf_mark_dirty(s, rid);
        buf_mark_dirty(s, id);
        assert(nundo < BT_MAX_LEVELS);
        undo[nundo++] = (bt_split_undo){id, rid, orid, rblk, before};

        dlsize = bt_form_downlink(btpage_item(page, BT_HIKEY), level == 0, rblk,
                                  dlbuf.b);
        if (op->flags & BT_ROOT) {
            rc = bt_new_root(bt, s, id, blk, level, dlbuf.b, dlsize);
            break;
        }
        /* Nobody can split the right half before its downlink exists:
         * both halves stay locked until the insert ends. */
        rc = bt_find_parent(bt, s, stack, stack_top, (uint32_t)level + 1, blk,
                            page, &held, &pid, &pblk, &ppos);
        if (rc != KEEL_OK)
            break;
        id = pid;
        blk = pblk;
        held.blk[held.n++] = blk;
        pos = (uint16_t)(ppos + 1);
        item = dlbuf.b;
        size = dlsize;
    }
    bt_splits_end(s, undo, nundo, rc != KEEL_OK);
    return rc;
}

int btree_insert(btree *bt, buf_session *s, const keel_value *keys, tid t,
                 btree_is_live_fn is_live, void *ctx)
{
    return btree_insert_prune(bt, s, keys, t, is_live, NULL, ctx);
}

int btree_insert_prune(btree *bt, buf_session *s, const keel_value *keys, tid t,
                       btree_is_live_fn is_live, btree_removable_fn removable,
                       void *ctx)
{
    bt_itembuf itembuf;
    blocknum_t stack[BT_MAX_LEVELS], blk;
    uint32_t stack_top = 0;
    bt_scankey sk;
    uint16_t size, pos;
    bool check;
    int32_t id;
    void *page;
    int rc;

    if (!tid_valid(t))
        return kerr_set(&s->err, KEEL_EINVAL,
                        "index %u: insert of an invalid tid", bt->rel);
    rc = bt_form_leaf(bt, keys, t, itembuf.b, &size, &s->err);
    if (rc != KEEL_OK)
        return rc;
    /* Keys with a null are never equal to anything (SQL's rule), so only
     * a unique index's all-non-null keys are checked. */
    check = bt->unique && !(itembuf.hdr.info & BT_INFO_NULLS);
    bt_scankey_init(bt, &sk, keys, bt->natts, -1);
    sk.has_tid = !check;
    sk.t = t;
    rc = bt_descend(bt, s, &sk, 0, LW_EXCLUSIVE, stack, &stack_top, NULL, &id,
                    &blk, NULL, NULL, NULL);
    if (rc != KEEL_OK)
        return rc;
    if (check) {
        rc =
            bt_unique_check(bt, s, keys, t, is_live, removable, ctx, &id, &blk);
        if (rc != KEEL_OK)
            return rc;
        sk.has_tid = true;
    }
    page = bt_page(s, id);
    pos = bt_lower_bound(bt, page, &sk, NULL);
    if (pos < btpage_nitems(page) &&
        bt_compare(bt, &sk, btpage_item(page, pos), true) == 0) {
        buf_unlock_release(s, id);
        return kerr_set(&s->err, KEEL_EEXIST,
                        "index %u: entry for tid (%u,%u) already exists",
                        bt->rel, t.block, t.offset);
    }
    return bt_insert_item(bt, s, stack, stack_top, id, blk, pos, itembuf.b,
                          size, removable, ctx);
}
