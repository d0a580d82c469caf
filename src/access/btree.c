/*
 * btree.c: the B-tree access method's handle and meta page: creating and
 * opening an index, what a handle says about it, and the redo of the log
 * operations its pages take.  Searching is in btree_search.c, insertion
 * in btree_insert.c, removing entries in btree_delete.c and range scans
 * in btree_scan.c; what they share is in btree_internal.h, the page
 * layout in btree_page.h, and the protocol in src/access/README.md.
 */
#include "access/btree.h"

#include <stdlib.h>
#include <string.h>

#include "access/btree_internal.h"
#include "access/btree_page.h"
#include "storage/buf_log.h"
#include "storage/bufmgr.h"

/* ---- handle and meta page ---------------------------------------------- */

int bt_handle_new(relnumber_t rel, const tuple_desc *desc, bool unique,
                  btree **out, kerr *err)
{
    btree *bt;

    if (desc == NULL || desc->natts == 0 || desc->natts > BTREE_MAX_KEYS)
        return kerr_set(err, KEEL_EINVAL,
                        "an index has 1 to %d key columns, not %u",
                        BTREE_MAX_KEYS, desc == NULL ? 0 : desc->natts);
    bt = calloc(1, sizeof(*bt));
    if (bt == NULL || (bt->desc = tupdesc_copy(desc)) == NULL) {
        free(bt);
        return kerr_set(err, KEEL_ENOMEM, "out of memory for index %u", rel);
    }
    atomic_store_relaxed(&bt->root_cache, 0);
    bt->rel = rel;
    bt->natts = desc->natts;
    bt->unique = unique;
    bt->fast = BT_FAST_NONE;
    if (desc->natts == 1) {
        switch (desc->attrs[0].type) {
        case KEEL_INT2:
            bt->fast = BT_FAST_INT2;
            break;
        case KEEL_INT4:
            bt->fast = BT_FAST_INT4;
            break;
        case KEEL_INT8:
            bt->fast = BT_FAST_INT8;
            break;
        case KEEL_OID:
            bt->fast = BT_FAST_OID;
            break;
        default:
            break;
        }
    }
    *out = bt;
    return KEEL_OK;
}

int bt_rel_prepare(buf_session *s, relnumber_t rel)
{
    smgr *sm = buf_pool_smgr(s->pool);
    smgr_rel *r;
    int rc;

    if (rel == INVALID_RELNUMBER)
        return kerr_set(&s->err, KEEL_EINVAL, "invalid relation number 0");
    if (!smgr_exists(sm, rel)) {
        rc = buf_log_file_create(s, rel);
        if (rc == KEEL_OK)
            rc = smgr_create(sm, rel, NULL, &s->err);
        if (rc != KEEL_OK && rc != KEEL_EEXIST)
            return rc;
    }
    rc = smgr_rel_open(sm, rel, &r, &s->err);
    if (rc != KEEL_OK)
        return rc;
    if (smgr_nblocks(r) != 0)
        return kerr_set(&s->err, KEEL_EEXIST,
                        "relation %u is not empty: cannot create an index "
                        "in it",
                        rel);
    return KEEL_OK;
}

void bt_meta_write(const btree *bt, void *page, blocknum_t root, uint32_t level)
{
    bt_meta m;

    btpage_init(page, 0, 0);
    btpage_opaque(page)->flags = BT_META;
    memset(&m, 0, sizeof(m));
    m.magic = BT_MAGIC;
    m.version = BT_VERSION;
    m.root = root;
    m.level = level;
    m.natts = bt->natts;
    m.unique = bt->unique ? 1 : 0;
    for (uint16_t i = 0; i < bt->natts; i++) {
        const tuple_attr *a = &bt->desc->attrs[i];
        m.attrs[i].type = (uint8_t)a->type;
        m.attrs[i].notnull = a->notnull ? 1 : 0;
        m.attrs[i].len = a->type == KEEL_CHAR ? a->len : 0;
    }
    memcpy((char *)page + PAGE_HEADER_SIZE, &m, sizeof(m));
    ((page_header *)page)->lower = (uint16_t)(PAGE_HEADER_SIZE + sizeof(m));
}

int bt_meta_parse(const void *page, relnumber_t rel, bt_meta *meta,
                  tuple_desc **desc, kerr *err)
{
    const bt_opaque *op = btpage_opaque_c(page);
    tuple_desc *d;

    if (page_is_new(page) || btpage_header(page)->special != BT_SPECIAL_OFF ||
        !(op->flags & BT_META))
        return kerr_set(err, KEEL_ECORRUPT,
                        "relation %u block 0 is not a B-tree meta page", rel);
    memcpy(meta, (const char *)page + PAGE_HEADER_SIZE, sizeof(*meta));
    if (meta->magic != BT_MAGIC)
        return kerr_set(err, KEEL_ECORRUPT, "relation %u: bad B-tree magic %#x",
                        rel, meta->magic);
    if (meta->version != BT_VERSION)
        return kerr_set(err, KEEL_EVERSION,
                        "index %u has B-tree version %u, expected %d", rel,
                        meta->version, BT_VERSION);
    if (meta->natts == 0 || meta->natts > BTREE_MAX_KEYS ||
        meta->root == BT_META_BLOCK || meta->root == BT_NONE ||
        meta->level >= BT_MAX_LEVELS || meta->unique > 1)
        return kerr_set(err, KEEL_ECORRUPT,
                        "index %u: meta page out of range (root %u, level "
                        "%u, %u key columns)",
                        rel, meta->root, meta->level, meta->natts);
    if (desc == NULL)
        return KEEL_OK;
    d = tupdesc_alloc(meta->natts);
    if (d == NULL)
        return kerr_set(err, KEEL_ENOMEM, "out of memory for index %u", rel);
    for (uint16_t i = 0; i < meta->natts; i++) {
        kerr e;
        if (tupdesc_set(d, i, (keel_type)meta->attrs[i].type,
                        meta->attrs[i].len, meta->attrs[i].notnull != 0,
                        &e) != KEEL_OK) {
            tupdesc_free(d);
            return kerr_set(err, KEEL_ECORRUPT, "index %u meta page: %s", rel,
                            e.msg);
        }
    }
    *desc = d;
    return KEEL_OK;
}

int bt_register_check(const btree *bt, buf_session *s)
{
    smgr_rel *r;
    int rc = smgr_rel_open(buf_pool_smgr(s->pool), bt->rel, &r, &s->err);

    if (rc == KEEL_OK)
        rc = smgr_rel_set_check(r, bt_read_check, bt->desc,
                                tupdesc_size(bt->desc), &s->err);
    return rc;
}

int btree_create(buf_session *s, relnumber_t rel, const tuple_desc *keydesc,
                 bool unique, btree **out)
{
    int32_t mid, rid;
    blocknum_t mblk, rblk;
    btree *bt;
    int rc;

    rc = bt_handle_new(rel, keydesc, unique, &bt, &s->err);
    if (rc != KEEL_OK)
        return rc;
    rc = bt_rel_prepare(s, rel);
    if (rc == KEEL_OK)
        rc = bt_register_check(bt, s);
    if (rc == KEEL_OK)
        rc = buf_extend(s, rel, sizeof(bt_opaque), NULL, &mid, &mblk);
    if (rc != KEEL_OK) {
        btree_close(bt);
        return rc;
    }
    if (mblk != BT_META_BLOCK) {
        buf_unlock_release(s, mid);
        btree_close(bt);
        return kerr_set(&s->err, KEEL_EEXIST,
                        "relation %u grew while its index was created", rel);
    }
    rc = buf_extend(s, rel, sizeof(bt_opaque), NULL, &rid, &rblk);
    if (rc != KEEL_OK) {
        buf_unlock_release(s, mid);
        btree_close(bt);
        return rc;
    }
    btpage_init(bt_page(s, rid), 0, BT_ROOT);
    buf_mark_dirty(s, rid);
    buf_unlock_release(s, rid);
    bt_meta_write(bt, bt_page(s, mid), rblk, 0);
    buf_mark_dirty(s, mid);
    buf_unlock_release(s, mid);
    atomic_store_relaxed(&bt->root_cache, rblk);
    *out = bt;
    return KEEL_OK;
}

int btree_open(buf_session *s, relnumber_t rel, btree **out)
{
    tuple_desc *desc = NULL;
    bt_meta meta;
    btree *bt;
    int32_t id;
    int rc;

    rc = buf_read(s, rel, BT_META_BLOCK, NULL, &id);
    if (rc == KEEL_EEOF)
        return kerr_set(&s->err, KEEL_ECORRUPT,
                        "relation %u has no B-tree meta page", rel);
    if (rc != KEEL_OK)
        return rc;
    buf_lock(s, id, LW_SHARED);
    rc = bt_meta_parse(bt_page(s, id), rel, &meta, &desc, &s->err);
    buf_unlock_release(s, id);
    if (rc != KEEL_OK)
        return rc;
    rc = bt_handle_new(rel, desc, meta.unique != 0, &bt, &s->err);
    tupdesc_free(desc);
    if (rc != KEEL_OK)
        return rc;
    rc = bt_register_check(bt, s);
    if (rc != KEEL_OK) {
        btree_close(bt);
        return rc;
    }
    atomic_store_relaxed(&bt->root_cache,
                         (uint64_t)meta.level << 32 | meta.root);
    *out = bt;
    return KEEL_OK;
}

/* Redo of a leaf's insert (BUF_OP_BT_ADD): u16 position, the item. */
static bool bt_redo_add(void *page, uint32_t blk, const void *payload,
                        uint16_t len)
{
    (void)blk;
    uint16_t pos;

    if (len < 2 + sizeof(bt_item) || (len - 2) % 8 != 0)
        return false;
    memcpy(&pos, payload, 2);
    if (pos > btpage_nitems(page))
        return false;
    return btpage_add(page, pos, (const char *)payload + 2,
                      (uint16_t)(len - 2));
}

/* Redo of a unique check's dead mark (BUF_OP_BT_DEAD): u16 position. */
static bool bt_redo_dead(void *page, uint32_t blk, const void *payload,
                        uint16_t len)
{
    (void)blk;
    uint16_t pos;

    if (len != 2)
        return false;
    memcpy(&pos, payload, 2);
    if (pos >= btpage_nitems(page))
        return false;
    btpage_item_set_unique_dead(page, pos, true);
    return true;
}

void btree_log_register(void)
{
    buf_log_register_op(BUF_OP_BT_ADD, bt_redo_add);
    buf_log_register_op(BUF_OP_BT_DEAD, bt_redo_dead);
}

void btree_close(btree *bt)
{
    if (bt == NULL)
        return;
    tupdesc_free(bt->desc);
    free(bt);
}

relnumber_t btree_relnumber(const btree *bt)
{
    return bt->rel;
}

const tuple_desc *btree_key_desc(const btree *bt)
{
    return bt->desc;
}

uint64_t btree_pruned(const btree *bt)
{
    return atomic_load_relaxed(&bt->pruned);
}

bool btree_is_unique(const btree *bt)
{
    return bt->unique;
}
