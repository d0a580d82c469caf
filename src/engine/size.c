/*
 * size.c: what relations and the database take on disk, for the SQL
 * layer's pg_relation_size() and its kin (keel_relation_size(),
 * keel_database_size()).
 *
 * A relation's size is what its file holds, as PostgreSQL stats its
 * files: whole 8 KiB blocks (smgr_nblocks(), which every extension grows
 * when it adds a block, before the block's contents reach the file from
 * the pool).  keel keeps one file per relation, with no free space map,
 * visibility map or TOAST table beside it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/engine.h"

/* The bytes of relation file rel's whole blocks in *out; 0 when it has
 * no file, as PostgreSQL counts a fork that has none. */
static int file_bytes(keel_session *s, relnumber_t rel, uint64_t *out)
{
    smgr_rel *r;
    int rc;

    *out = 0;
    if (!smgr_exists(s->db->smgr, rel))
        return KEEL_OK;
    rc = smgr_rel_open(s->db->smgr, rel, &r, &s->bs->err);
    if (rc == KEEL_OK)
        *out = (uint64_t)smgr_nblocks(r) * BLOCK_SIZE;
    return rc;
}

/* The keel_class row of oid in *rel through the session's cache; *found
 * false if there is none. */
static int class_row(keel_session *s, oid_t oid, catalog_relation *rel,
                     bool *found)
{
    catcache_entry *e;
    int rc;

    engine_cache_sync(s);
    rc = syscache_search1(s->cache, CACHE_CLASS_OID, oid, &e);
    *found = rc == KEEL_OK;
    if (rc == KEEL_ENOENT)
        return KEEL_OK;
    if (rc != KEEL_OK)
        return rc;
    *rel = *(const catalog_relation *)syscache_row(e);
    syscache_release(s->cache, e);
    return KEEL_OK;
}

/*
 * Finds relation oid and locks the table it is or belongs to in ACCESS
 * SHARE, as PostgreSQL opens a relation whose size it reports: *rel is its
 * row, *table the table's.  *found false when the transaction sees no
 * such relation, or when a drop of its table committed while the lock was
 * waited for (PostgreSQL's functions answer NULL for a relation dropped
 * under them).
 */
static int relation_lock(keel_session *s, catalog_txn *ct, oid_t oid,
                         catalog_relation *rel, catalog_relation *table,
                         bool *found)
{
    const keel_lock_mode mode = KEEL_LOCK_ACCESS_SHARE;
    catcache_entry *e;
    engine_rel *h;
    int rc = KEEL_OK;

    for (int round = 0; rc == KEEL_OK; round++) {
        char nsp[KEEL_NAME_LEN] = "?";
        rc = class_row(s, oid, rel, found);
        if (rc != KEEL_OK || !*found)
            return rc;
        *table = *rel;
        if (rel->kind == RELKIND_INDEX) {
            oid_t t;
            rc = syscache_search1(s->cache, CACHE_INDEX_OID, oid, &e);
            if (rc == KEEL_ENOENT)
                return kerr_set(&s->bs->err, KEEL_ECORRUPT,
                                "index %u has no keel_index row", oid);
            if (rc != KEEL_OK)
                return rc;
            t = ((const catalog_indexdef *)syscache_row(e))->tableoid;
            syscache_release(s->cache, e);
            rc = class_row(s, t, table, found);
            if (rc == KEEL_OK && !*found)
                rc = kerr_set(&s->bs->err, KEEL_ECORRUPT,
                              "index %u belongs to table %u, which has no "
                              "keel_class row",
                              oid, t);
            if (rc != KEEL_OK)
                return rc;
        }
        rc = engine_table_handle(s, ct, table, &h);
        if (rc != KEEL_OK)
            return rc;
        rc = engine_table_lock(s, h, mode);
        if (rc == KEEL_OK)
            return KEEL_OK;
        /* Off the common path: the schema's name, for messages. */
        if (syscache_search1(s->cache, CACHE_NAMESPACE_OID, table->nsoid, &e) ==
            KEEL_OK) {
            memcpy(nsp, ((const catalog_namespace *)syscache_row(e))->name,
                   KEEL_NAME_LEN);
            syscache_release(s->cache, e);
        }
        rc = engine_table_settle(s, h, mode, rc,
                                 round == 0 ? ENGINE_REFRESH_ONCE
                                 : round < ENGINE_RESOLVE_ROUNDS
                                     ? ENGINE_REFRESH_AGAIN
                                     : 0,
                                 nsp, table->name);
        if (rc == KEEL_ENOENT && atomic_load_acquire(&h->dropped) != 0) {
            kerr_clear(&s->bs->err);
            *found = false;
            return KEEL_OK;
        }
        if (rc != ENGINE_AGAIN)
            return rc;
        rc = KEEL_OK;
    }
    return rc;
}

keel_status keel_relation_size(keel_session *s, uint32_t oid,
                               keel_relation_sizes *out, bool *found)
{
    catalog_relation rel, table;
    catalog_txn ct;
    catcache_list *l = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    *found = false;
    rc = engine_stmt_begin_catalog(s, false, &ct);
    if (rc != KEEL_OK)
        return rc;
    rc = relation_lock(s, &ct, oid, &rel, &table, found);
    if (rc == KEEL_OK && *found) {
        out->index = rel.kind == RELKIND_INDEX;
        rc = file_bytes(s, rel.relnumber, &out->bytes);
    }
    /* A table's indexes, as the transaction sees them. */
    if (rc == KEEL_OK && *found && !out->index) {
        syscache_key key = rel.oid;
        rc = syscache_list(s->cache, CACHE_INDEX_TABLE, 1, &key, &l);
        for (uint32_t i = 0; rc == KEEL_OK && i < syscache_list_count(l); i++) {
            const catalog_indexdef *ix = syscache_list_row(l, i);
            catalog_relation irel;
            bool ifound = false;
            uint64_t b = 0;
            rc = class_row(s, ix->indexoid, &irel, &ifound);
            if (rc == KEEL_OK && !ifound)
                rc = kerr_set(&s->bs->err, KEEL_ECORRUPT,
                              "index %u of table %u has no keel_class row",
                              ix->indexoid, rel.oid);
            if (rc == KEEL_OK)
                rc = file_bytes(s, irel.relnumber, &b);
            out->index_bytes += b;
        }
        if (l != NULL)
            syscache_list_release(s->cache, l);
    }
    if (rc != KEEL_OK) {
        memset(out, 0, sizeof(*out));
        *found = false;
    }
    return engine_stmt_end(s, rc, false);
}

keel_status keel_database_size(keel_session *s, uint64_t *bytes)
{
    const char *dir = smgr_dir(s->db->smgr);
    struct dirent *d;
    DIR *dp;
    int rc = KEEL_OK;

    *bytes = 0;
    kerr_clear(&s->bs->err);
    dp = opendir(dir);
    if (dp == NULL)
        return kerr_set(&s->bs->err, KEEL_EIO,
                        "could not open directory \"%s\": %s", dir,
                        strerror(errno));
    /* Every relation file, those a clean close is yet to remove
     * included, as PostgreSQL counts its database directory's files. */
    while (rc == KEEL_OK && (d = readdir(dp)) != NULL) {
        char path[4096];
        struct stat st;
        relnumber_t rel;
        if (!smgr_relnumber_of(d->d_name, &rel))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
        if (stat(path, &st) != 0) {
            if (errno != ENOENT)
                rc = kerr_set(&s->bs->err, KEEL_EIO,
                              "could not stat file \"%s\": %s", path,
                              strerror(errno));
            continue;
        }
        *bytes += (uint64_t)st.st_size;
    }
    closedir(dp);
    if (rc != KEEL_OK)
        *bytes = 0;
    return rc;
}
