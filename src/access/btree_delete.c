/*
 * btree_delete.c: taking entries out of a B-tree: the removal of one
 * entry (btree_delete()), and the shedding of entries a unique check
 * marked dead (BT_INFO_UNIQUE_DEAD) once no snapshot can need their rows,
 * which an insert does on a full leaf before it splits and a unique
 * check on the full pages it passes (src/access/README.md, "Dead marks").
 * Pages are never removed.
 */
#include "access/btree.h"

#include "access/btree_internal.h"
#include "access/btree_page.h"
#include "storage/bufmgr.h"
#include "wal/wal.h"

/* ---- shedding marked entries ------------------------------------------ */

uint16_t bt_prune(void *page, uint16_t *pos, uint16_t probe,
                  btree_removable_fn removable, void *ctx)
{
    bool drop[BT_MAX_ITEMS] = {false};
    uint16_t n = btpage_nitems(page), below = 0, k = 0;

    if (!removable(ctx, btitem_tid(btpage_item(page, probe), true)))
        return 0;
    for (uint16_t i = btpage_first(page); i < n; i++) {
        const bt_item *it = btpage_item(page, i);

        if ((it->info & BT_INFO_UNIQUE_DEAD) &&
            (i == probe || removable(ctx, btitem_tid(it, true)))) {
            drop[i] = true;
            k++;
            below += i < *pos;
        }
    }
    *pos = (uint16_t)(*pos - below);
    return btpage_remove_marked(page, drop);
}

uint16_t bt_first_marked(const void *page)
{
    uint16_t n = btpage_nitems(page);

    for (uint16_t i = btpage_first(page); i < n; i++)
        if (btpage_item(page, i)->info & BT_INFO_UNIQUE_DEAD)
            return i;
    return UINT16_MAX;
}

/* Marked entries a page the uniqueness check passes (not the insertion
 * target) must hold before it tries to shed them (bt_unique_check()). */
#define BT_PRUNE_PASSED 64

void bt_prune_passed(btree *bt, buf_session *s, int32_t id, void *page,
                     uint16_t marked, uint16_t last,
                     btree_removable_fn removable, void *ctx)
{
    uint16_t pos = 0, k;

    if (removable == NULL || marked < BT_PRUNE_PASSED)
        return;
    k = bt_prune(page, &pos, last, removable, ctx);
    if (k > 0) {
        buf_mark_dirty(s, id);
        if (s->log_info == WAL_INFO_PAGE)
            s->log_info = WAL_INFO_BTREE_SHED;
        atomic_fetch_add_explicit(&bt->pruned, k, memory_order_relaxed);
    }
}

/* ---- deletion ---------------------------------------------------------- */

int btree_delete(btree *bt, buf_session *s, const keel_value *keys, tid t)
{
    bt_scankey sk;
    blocknum_t blk;
    uint16_t pos;
    int32_t id;
    void *page;
    int rc;

    bt_scankey_init(bt, &sk, keys, bt->natts, -1);
    sk.has_tid = true;
    sk.t = t;
    rc = bt_descend(bt, s, &sk, 0, LW_EXCLUSIVE, NULL, NULL, NULL, &id, &blk,
                    NULL, NULL, NULL);
    if (rc != KEEL_OK)
        return rc;
    page = bt_page(s, id);
    pos = bt_lower_bound(bt, page, &sk, NULL);
    if (pos >= btpage_nitems(page) ||
        bt_compare(bt, &sk, btpage_item(page, pos), true) != 0) {
        buf_unlock_release(s, id);
        return kerr_set(&s->err, KEEL_ENOENT,
                        "index %u: no entry for tid (%u,%u) with that key",
                        bt->rel, t.block, t.offset);
    }
    btpage_remove(page, pos);
    buf_mark_dirty(s, id);
    buf_unlock_release(s, id);
    return KEEL_OK;
}
