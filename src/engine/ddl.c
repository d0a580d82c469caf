/*
 * ddl.c: schemas, tables and indexes created and dropped through the
 * catalogs, transactionally (see src/catalog/README.md).
 *
 * Every DDL call finds what it needs first and changes catalog rows last.
 * Its first catalog change either succeeds or changes nothing (a unique
 * conflict, or another failure of an index, undoes itself); an error after
 * that, or an undo that fails (catalog_txn.undo_failed), leaves the
 * transaction half done, so an explicit transaction is then marked failed
 * (it can only be aborted) and an implicit one is aborted.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "storage/buf_log.h"

static const char *schema_or_public(const char *schema)
{
    return schema == NULL ? "public" : schema;
}

/* EUNIQUE from a catalog's unique index means the name was just taken. */
static int exists_error(keel_session *s, int rc, const char *what,
                        const char *name)
{
    if (rc == KEEL_EUNIQUE)
        return kerr_set(&s->bs->err, KEEL_EEXIST, "%s \"%s\" already exists",
                        what, name);
    return rc;
}

keel_status keel_create_schema(keel_session *s, const char *name)
{
    catalog_txn ct;
    catalog_namespace ns = {0};
    keel_value vals[2];
    int rc = engine_check_name(s, "schema", name);

    if (rc == KEEL_OK)
        rc = engine_stmt_begin_catalog(s, true, &ct);
    if (rc != KEEL_OK)
        return rc;
    rc = catalog_namespace_by_name(s->db->cat, &ct, name, &ns);
    if (rc == KEEL_OK)
        rc = kerr_set(&s->bs->err, KEEL_EEXIST, "schema \"%s\" already exists",
                      name);
    else if (rc == KEEL_ENOENT)
        rc = engine_oid_next(s->db, &ns.oid, &s->bs->err);
    if (rc == KEEL_OK) {
        snprintf(ns.name, sizeof(ns.name), "%s", name);
        catalog_namespace_values(&ns, vals);
        rc = exists_error(s,
                          catalog_insert(s->db->cat, &ct, CAT_NAMESPACE, vals),
                          "schema", name);
    }
    return engine_stmt_end(s, rc, ct.undo_failed);
}

/* ---- claims on schemas and tables ----------------------------------- */

/* ESERIALIZE unless the catalog row at t of object oid (a schema's or a
 * table's, what and name for the message), or a version of it that
 * replaced it (keel_analyze() updates a table's), is live: has no deleter
 * that committed, nor is it this transaction.  The snapshot that found it
 * may be older than a drop. */
static int row_still_there(keel_session *s, catalog_txn *ct, catalog_id id,
                           oid_t relnumber, oid_t oid, tid t, const char *what,
                           const char *name)
{
    heap_rel h;
    heap_fate fate;
    bool live = true;
    int rc;

    heap_rel_init(&h, relnumber, catalog_desc(s->db->cat, id));
    rc = heap_fetch_fate(&h, s->bs, &ct->vis, t, &fate);
    if (rc == KEEL_OK && fate != HEAP_LIVE) {
        keel_value key;
        key.isnull = false;
        key.v.oid = oid;
        rc = catalog_key_live(s->db->cat, ct, id, 0, &key, 1, &live);
    }
    if (rc == KEEL_OK && !live)
        rc = kerr_set(&s->bs->err, KEEL_ESERIALIZE,
                      "%s \"%s\" was dropped since the transaction began", what,
                      name);
    return rc;
}

/* db's state of oid, made if absent (NULL: out of memory); claim_lock
 * held.  Searched in turn: release_from() keeps only the states that say
 * something, those of objects with DDL running or just committed. */
static engine_claim_state *claim_state_of(keel_db *db, oid_t oid)
{
    for (uint32_t i = 0; i < db->nclaims; i++)
        if (db->claims[i].oid == oid)
            return &db->claims[i];
    if (db->nclaims == db->claims_cap) {
        uint32_t cap = db->claims_cap ? 2 * db->claims_cap : 8;
        engine_claim_state *more = realloc(db->claims, cap * sizeof(*more));
        if (more == NULL)
            return NULL;
        db->claims = more;
        db->claims_cap = cap;
    }
    db->claims[db->nclaims] =
        (engine_claim_state){.oid = oid, .last_create = XID_INVALID};
    return &db->claims[db->nclaims++];
}

/* Whether state c says nothing any more: no claim on it, and its last
 * creator (if any) committed below horizon, so that every snapshot there
 * is or will be sees that commit (a state made afresh says the same). */
static bool claim_state_idle(const engine_claim_state *c, xid_t horizon)
{
    return c->creators == 0 && c->dropper == NULL &&
           (c->last_create == XID_INVALID ||
            (horizon != XID_INVALID && c->last_create < horizon));
}

/* Whether s's transaction holds a claim on oid to create in it. */
static bool holds_create(const keel_session *s, oid_t oid)
{
    for (uint32_t i = 0; i < s->nheld; i++)
        if (s->held[i].oid == oid && !s->held[i].drop)
            return true;
    return false;
}

int engine_claim(keel_session *s, oid_t oid, bool table, const char *name,
                 bool drop, const visibility *vis)
{
    const char *what = table ? "table" : "schema";
    keel_db *db = s->db;
    kerr *e = &s->bs->err;
    engine_claim_state *c;
    bool own, seen = true;
    int rc = KEEL_OK;

    if (!drop && holds_create(s, oid))
        return KEEL_OK;
    if (s->nheld == s->held_cap) {
        uint32_t cap = s->held_cap ? 2 * s->held_cap : 4;
        engine_claim_held *more = realloc(s->held, cap * sizeof(*more));
        if (more == NULL)
            return kerr_set(e, KEEL_ENOMEM, "out of memory");
        s->held = more;
        s->held_cap = cap;
    }
    pthread_mutex_lock(&db->claim_lock);
    c = claim_state_of(db, oid);
    own = holds_create(s, oid);
    if (c == NULL)
        rc = kerr_set(e, KEEL_ENOMEM, "out of memory");
    else if (c->dropper != NULL && c->dropper != s)
        rc = kerr_set(e, KEEL_ESERIALIZE,
                      "another transaction is dropping %s \"%s\"", what, name);
    /* Index builds on a table go one at a time, and each sees every one
     * before it, so that the count a build checks against the limit is
     * the table's (tables in a schema need no such count). */
    else if ((drop || table) && c->creators > (own ? 1u : 0u))
        rc = kerr_set(e, KEEL_EBUSY, "another transaction is %s %s \"%s\"",
                      table ? "building an index on" : "creating relations in",
                      what, name);
    else if ((drop || table) && c->last_create != XID_INVALID)
        rc = heap_tuple_visible(vis, c->last_create, XID_INVALID, &seen, e);
    if (rc == KEEL_OK && !seen)
        rc = kerr_set(e, KEEL_ESERIALIZE,
                      "%s was created %s %s \"%s\" since the transaction "
                      "began",
                      table ? "an index" : "a relation", table ? "on" : "in",
                      what, name);
    if (rc == KEEL_OK) {
        if (drop)
            c->dropper = s;
        else
            c->creators++;
        s->held[s->nheld++] = (engine_claim_held){oid, drop, NULL};
    }
    pthread_mutex_unlock(&db->claim_lock);
    return rc;
}

/* Releases s's claims from the from-th on (engine_claims_release()), and
 * forgets the states that say nothing any more (claim_state_idle()), so
 * that they do not pile up over an open's DDL. */
static void release_from(keel_session *s, uint32_t from, xid_t committed)
{
    keel_db *db = s->db;
    /* A horizon above the commit, if one comes cheaply (it may lag:
     * a lower one only keeps states longer). */
    xid_t horizon = txn_horizon_recent(db->txn, committed);

    pthread_mutex_lock(&db->claim_lock);
    for (uint32_t i = from; i < s->nheld; i++) {
        engine_claim_state *c = claim_state_of(db, s->held[i].oid);
        engine_rel *built = s->held[i].built;
        /* Before the build's lock goes (keel_commit() releases locks
         * last), so that a writer granted its lock after sees the xid. */
        if (built != NULL && committed != XID_INVALID)
            atomic_store_explicit(&built->last_build, committed,
                                  memory_order_release);
        if (c == NULL) /* it was made when the claim was taken */
            continue;
        if (s->held[i].drop) {
            if (c->dropper == s)
                c->dropper = NULL;
        } else {
            c->creators--;
            if (committed != XID_INVALID)
                c->last_create = committed;
        }
    }
    /* A committed drop ends what its state guards: a later create in the
     * object, or drop of it, finds its catalog row deleted. */
    for (uint32_t i = from; committed != XID_INVALID && i < s->nheld; i++) {
        engine_claim_state *c = claim_state_of(db, s->held[i].oid);
        if (c != NULL && s->held[i].drop)
            c->last_create = XID_INVALID;
    }
    for (uint32_t i = 0; i < db->nclaims;)
        if (claim_state_idle(&db->claims[i], horizon))
            db->claims[i] = db->claims[--db->nclaims];
        else
            i++;
    pthread_mutex_unlock(&db->claim_lock);
    s->nheld = from;
}

void engine_claims_release(keel_session *s, xid_t committed)
{
    release_from(s, 0, committed);
}

void engine_build_begin(keel_session *s, engine_rel *h)
{
    for (uint32_t i = 0; i < s->nheld; i++)
        if (s->held[i].oid == h->oid && !s->held[i].drop) {
            s->held[i].built = h;
            return;
        }
    assert(!"an index build without its claim");
}

int engine_write_guard(keel_session *s, const visibility *vis,
                       const engine_rel *h, const char *table)
{
    xid_t last;

    /* A build running now holds SHARE, which this writer's ROW EXCLUSIVE
     * excludes; one that committed stored its xid before its locks went.
     * A committed xid: the snapshot alone tells whether it sees it. */
    last = atomic_load_relaxed(&h->last_build);
    if (last != XID_INVALID && snapshot_running(vis->snap, last))
        return kerr_set(&s->bs->err, KEEL_ESERIALIZE,
                        "an index was built on table \"%s\" since the "
                        "transaction began",
                        table);
    return KEEL_OK;
}

int engine_note_file(keel_db *db, relnumber_t rel, kerr *err)
{
    int rc = KEEL_OK;

    pthread_mutex_lock(&db->claim_lock);
    if (db->nmade == db->made_cap) {
        uint32_t cap = db->made_cap ? 2 * db->made_cap : 16;
        relnumber_t *more = realloc(db->made, cap * sizeof(*more));
        if (more != NULL) {
            db->made = more;
            db->made_cap = cap;
        }
    }
    if (db->nmade < db->made_cap)
        db->made[db->nmade++] = rel;
    else
        rc = kerr_set(err, KEEL_ENOMEM, "out of memory");
    pthread_mutex_unlock(&db->claim_lock);
    return rc;
}

keel_status keel_drop_schema(keel_session *s, const char *name)
{
    catalog_txn ct;
    catalog_namespace ns;
    keel_value vals[2];
    bool any = false;
    uint32_t held;
    int rc = engine_check_name(s, "schema", name);

    if (rc == KEEL_OK)
        rc = engine_stmt_begin_catalog(s, true, &ct);
    if (rc != KEEL_OK)
        return rc;
    rc = catalog_namespace_by_name(s->db->cat, &ct, name, &ns);
    if (rc == KEEL_OK &&
        (ns.oid == NAMESPACE_CATALOG || ns.oid == NAMESPACE_PUBLIC))
        rc = kerr_set(&s->bs->err, KEEL_EINVAL,
                      "schema \"%s\" is built in and cannot be dropped", name);
    /* Claimed first: a create that commits after the check below would
     * leave a relation in no schema.  A failure gives the claim back. */
    held = s->nheld;
    if (rc == KEEL_OK)
        rc = engine_claim(s, ns.oid, false, name, true, &ct.vis);
    if (rc == KEEL_OK)
        rc = catalog_namespace_has_relations(s->db->cat, &ct, ns.oid, &any);
    if (rc == KEEL_OK && any)
        rc =
            kerr_set(&s->bs->err, KEEL_EBUSY,
                     "schema \"%s\" is not empty: drop its tables first", name);
    if (rc == KEEL_OK) {
        catalog_namespace_values(&ns, vals);
        rc = catalog_delete(s->db->cat, &ct, CAT_NAMESPACE, ns.tid, vals);
    }
    if (rc != KEEL_OK)
        release_from(s, held, XID_INVALID);
    return engine_stmt_end(s, rc, false);
}

/* Writes the keel_class and keel_index rows of a new index (its B-tree
 * already built). */
static int add_index_rows(keel_session *s, catalog_txn *ct, oid_t nsoid,
                          const char *name, const catalog_indexdef *ix,
                          bool *changed)
{
    catalog_relation r = {.oid = ix->indexoid,
                          .nsoid = nsoid,
                          .relnumber = ix->indexoid,
                          .kind = RELKIND_INDEX,
                          .natts = ix->nkeys};
    keel_value vals[8];
    char keys_text[6 * BTREE_MAX_KEYS + 1];
    int rc;

    snprintf(r.name, sizeof(r.name), "%s", name);
    catalog_relation_values(&r, vals);
    rc = exists_error(s, catalog_insert(s->db->cat, ct, CAT_CLASS, vals),
                      "relation", name);
    if (rc != KEEL_OK)
        return rc;
    *changed = true;
    catalog_index_values(ix, keys_text, vals);
    return catalog_insert(s->db->cat, ct, CAT_INDEX, vals);
}

/* Fails with EEXIST if a relation called name exists in nsoid. */
static int check_free_name(keel_session *s, catalog_txn *ct, const char *name,
                           oid_t nsoid)
{
    catalog_relation r;
    int rc = catalog_relation_by_name(s->db->cat, ct, name, nsoid, &r);

    if (rc == KEEL_OK)
        return kerr_set(&s->bs->err, KEEL_EEXIST,
                        "relation \"%s\" already exists", name);
    if (rc == KEEL_ENOENT) {
        kerr_clear(&s->bs->err);
        return KEEL_OK;
    }
    return rc;
}

static int check_columns(keel_session *s, const keel_column *cols,
                         uint16_t ncols, const uint16_t *pkey, uint16_t npkey)
{
    int rc;

    if (cols == NULL || ncols == 0 || ncols > CATALOG_MAX_COLUMNS)
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "a table has 1 to %d columns, not %u",
                        CATALOG_MAX_COLUMNS, ncols);
    if (npkey > BTREE_MAX_KEYS || (npkey > 0 && pkey == NULL))
        return kerr_set(&s->bs->err, KEEL_EINVAL,
                        "a primary key has 0 to %d columns, not %u",
                        BTREE_MAX_KEYS, npkey);
    for (uint16_t i = 0; i < ncols; i++) {
        rc = engine_check_name(s, "column", cols[i].name);
        if (rc != KEEL_OK)
            return rc;
        if (cols[i].type < KEEL_INT2 || cols[i].type > KEEL_JSONB)
            return kerr_set(&s->bs->err, KEEL_ETYPE,
                            "column \"%s\": unknown type %d", cols[i].name,
                            (int)cols[i].type);
        if (cols[i].type == KEEL_CHAR &&
            (cols[i].charlen == 0 || cols[i].charlen > TUPLE_MAX_CHAR_LEN))
            return kerr_set(&s->bs->err, KEEL_EINVAL,
                            "column \"%s\": char length %u is out of range",
                            cols[i].name, cols[i].charlen);
        for (uint16_t j = 0; j < i; j++)
            if (strcmp(cols[i].name, cols[j].name) == 0)
                return kerr_set(&s->bs->err, KEEL_EEXIST,
                                "column \"%s\" appears twice", cols[i].name);
    }
    for (uint16_t k = 0; k < npkey; k++) {
        if (pkey[k] == 0 || pkey[k] > ncols)
            return kerr_set(&s->bs->err, KEEL_EINVAL,
                            "primary key column %u does not exist", pkey[k]);
        for (uint16_t j = 0; j < k; j++)
            if (pkey[j] == pkey[k])
                return kerr_set(&s->bs->err, KEEL_EINVAL,
                                "primary key column %u appears twice", pkey[k]);
    }
    return KEEL_OK;
}

int engine_create_table(keel_session *s, catalog_txn *ct, const char *schema,
                        const char *name, const keel_column *cols,
                        uint16_t ncols, const uint16_t *pkey, uint16_t npkey,
                        bool create_pkey, oid_t *table_oid, oid_t *pkey_oid,
                        bool *changed)
{
    catalog_namespace ns;
    catalog_relation r = {0};
    catalog_indexdef ix = {0};
    char pkname[KEEL_NAME_LEN + 8];
    tuple_desc *keydesc = NULL;
    keel_value vals[8];
    uint32_t held = s->nheld;
    int rc;

    schema = schema_or_public(schema);
    *changed = false;
    rc = engine_check_name(s, "schema", schema);
    if (rc == KEEL_OK)
        rc = engine_check_name(s, "table", name);
    if (rc == KEEL_OK)
        rc = check_columns(s, cols, ncols, pkey, npkey);
    if (rc == KEEL_OK && npkey > 0) {
        snprintf(pkname, sizeof(pkname), "%s_pkey", name);
        rc = engine_check_name(s, "primary key index", pkname);
    }
    if (rc == KEEL_OK)
        rc = catalog_namespace_by_name(s->db->cat, ct, schema, &ns);
    if (rc == KEEL_OK && ns.oid == NAMESPACE_CATALOG)
        rc = kerr_set(&s->bs->err, KEEL_EINVAL,
                      "schema \"%s\" holds the system catalogs only", schema);
    /* Kept from a drop until the transaction ends, and refused if one
     * committed since the snapshot that found the schema. */
    if (rc == KEEL_OK)
        rc = engine_claim(s, ns.oid, false, schema, false, &ct->vis);
    if (rc == KEEL_OK)
        rc = row_still_there(s, ct, CAT_NAMESPACE, CATALOG_NAMESPACE_OID,
                             ns.oid, ns.tid, "schema", schema);
    if (rc == KEEL_OK)
        rc = check_free_name(s, ct, name, ns.oid);
    if (rc == KEEL_OK && npkey > 0)
        rc = check_free_name(s, ct, pkname, ns.oid);
    /* The files first: an abort leaves them behind (until the next clean
     * close removes them), never half a table. */
    if (rc == KEEL_OK)
        rc = engine_oid_next(s->db, &r.oid, &s->bs->err);
    if (rc == KEEL_OK)
        rc = engine_note_file(s->db, r.oid, &s->bs->err);
    if (rc == KEEL_OK)
        rc = buf_log_file_create(s->bs, r.oid);
    if (rc == KEEL_OK)
        rc = smgr_create(s->db->smgr, r.oid, NULL, &s->bs->err);
    if (rc == KEEL_OK && npkey > 0)
        rc = engine_oid_next(s->db, &ix.indexoid, &s->bs->err);
    if (rc == KEEL_OK && npkey > 0 && create_pkey) {
        btree *bt = NULL;
        if ((keydesc = tupdesc_alloc(npkey)) == NULL)
            rc = kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
        for (uint16_t k = 0; rc == KEEL_OK && k < npkey; k++) {
            const keel_column *c = &cols[pkey[k] - 1];
            rc =
                tupdesc_set(keydesc, k, c->type, c->charlen, true, &s->bs->err);
        }
        if (rc == KEEL_OK)
            rc = engine_note_file(s->db, ix.indexoid, &s->bs->err);
        if (rc == KEEL_OK)
            rc = btree_create(s->bs, ix.indexoid, keydesc, true, &bt);
        btree_close(bt);
        tupdesc_free(keydesc);
    }
    if (rc == KEEL_OK) {
        r.nsoid = ns.oid;
        r.relnumber = r.oid;
        r.kind = RELKIND_TABLE;
        r.natts = ncols;
        snprintf(r.name, sizeof(r.name), "%s", name);
        catalog_relation_values(&r, vals);
        rc = exists_error(s, catalog_insert(s->db->cat, ct, CAT_CLASS, vals),
                          "relation", name);
        *changed = rc == KEEL_OK;
    }
    for (uint16_t i = 0; rc == KEEL_OK && i < ncols; i++) {
        catalog_attribute a = {
            .relid = r.oid,
            .attnum = (uint16_t)(i + 1),
            .type = cols[i].type,
            .charlen = cols[i].type == KEEL_CHAR || cols[i].type == KEEL_TEXT ||
                               cols[i].type == KEEL_NUMERIC
                           ? cols[i].charlen
                           : 0,
            .notnull = cols[i].notnull};
        for (uint16_t k = 0; k < npkey; k++)
            if (pkey[k] == i + 1)
                a.notnull = true;
        snprintf(a.name, sizeof(a.name), "%s", cols[i].name);
        catalog_attribute_values(&a, vals);
        rc = catalog_insert(s->db->cat, ct, CAT_ATTRIBUTE, vals);
    }
    if (rc == KEEL_OK && npkey > 0) {
        ix.tableoid = r.oid;
        ix.unique = true;
        ix.primary = true;
        ix.nkeys = npkey;
        memcpy(ix.keys, pkey, npkey * sizeof(uint16_t));
        rc = add_index_rows(s, ct, ns.oid, pkname, &ix, changed);
    }
    if (rc == KEEL_OK) {
        *table_oid = r.oid;
        *pkey_oid = npkey > 0 ? ix.indexoid : 0;
    } else {
        release_from(s, held, XID_INVALID); /* a claim this call took */
    }
    return rc;
}

keel_status keel_create_table(keel_session *s, const char *schema, const char *name,
                      const keel_column *cols, uint16_t ncols,
                      const uint16_t *pkey, uint16_t npkey)
{
    catalog_txn ct;
    oid_t toid, ioid;
    bool changed = false;
    int rc;

    /* Argument errors first, outside any transaction. */
    rc = engine_check_name(s, "schema", schema_or_public(schema));
    if (rc == KEEL_OK)
        rc = engine_check_name(s, "table", name);
    if (rc == KEEL_OK)
        rc = check_columns(s, cols, ncols, pkey, npkey);
    if (rc == KEEL_OK)
        rc = engine_stmt_begin_catalog(s, true, &ct);
    if (rc != KEEL_OK)
        return rc;
    rc = engine_create_table(s, &ct, schema, name, cols, ncols, pkey, npkey,
                             true, &toid, &ioid, &changed);
    return engine_stmt_end(s, rc, changed || ct.undo_failed);
}

/* Deletes every statistics row of relid. */
static int drop_statistics(keel_session *s, catalog_txn *ct, oid_t relid)
{
    catalog_statistic st[64];
    keel_value vals[13];
    uint32_t n = 0;
    int rc;

    do {
        rc = catalog_statistics_of(s->db->cat, ct, relid, st, 64, &n);
        for (uint32_t i = 0; rc == KEEL_OK && i < n && i < 64; i++) {
            catalog_statistic_values(&st[i], vals);
            rc = catalog_delete(s->db->cat, ct, CAT_STATISTIC, st[i].tid, vals);
        }
    } while (rc == KEEL_OK && n > 64);
    return rc;
}

/* Keeps table h in the session's drops, marked when its transaction
 * commits (keel_commit()).  ENOMEM. */
static int note_drop(keel_session *s, engine_rel *h)
{
    if (s->ndrops == s->drops_cap) {
        size_t cap = s->drops_cap;
        engine_rel **more =
            engine_array_grow(s->drops, &cap, 4, sizeof(*more));
        if (more == NULL)
            return kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
        s->drops = more;
        s->drops_cap = (uint32_t)cap;
    }
    s->drops[s->ndrops++] = h;
    return KEEL_OK;
}

/* The start of a statement that changes a table's catalog rows (its
 * drop, a rename): room for the table and its attributes, and the
 * statement begun (nothing held on failure). */
static int table_ddl_begin(keel_session *s, catalog_txn *ct, engine_table **t,
                           catalog_attribute **atts)
{
    int rc = KEEL_OK;

    *t = calloc(1, sizeof(**t));
    *atts = calloc(CATALOG_MAX_COLUMNS, sizeof(**atts));
    if (*t == NULL || *atts == NULL)
        rc = kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    if (rc == KEEL_OK)
        rc = engine_stmt_begin_unlocked(s, ct);
    if (rc != KEEL_OK) {
        free(*t);
        free(*atts);
        *t = NULL;
        *atts = NULL;
    }
    return rc;
}

keel_status keel_drop_table(keel_session *s, const char *schema, const char *name)
{
    catalog_txn ct;
    engine_table *t;
    catalog_attribute *atts;
    keel_value vals[13];
    char keys_text[6 * BTREE_MAX_KEYS + 1];
    bool changed = false;
    uint32_t n = 0, held = s->nheld;
    int rc = table_ddl_begin(s, &ct, &t, &atts);

    if (rc != KEEL_OK)
        return rc;
    /* The xid once locked: a lock that waited then takes the snapshot
     * again (engine_catalog_txn_unlocked()). */
    rc = engine_table_open(s, &ct, schema, name, false,
                           KEEL_LOCK_ACCESS_EXCLUSIVE, t);
    if (rc == KEEL_OK)
        rc = engine_catalog_txn(s, true, &ct);
    /* The lock keeps every other transaction off the table; the claim
     * refuses the drop if a build committed since the snapshot (its
     * index would stay). */
    if (rc == KEEL_OK)
        rc = engine_claim(s, t->rel.oid, true, name, true, &ct.vis);
    if (rc == KEEL_OK)
        rc = catalog_attributes(s->db->cat, &ct, t->rel.oid, atts,
                                CATALOG_MAX_COLUMNS, &n);
    /* The table's own row first: a concurrent drop fails here, unchanged. */
    if (rc == KEEL_OK) {
        catalog_relation_values(&t->rel, vals);
        rc = catalog_delete(s->db->cat, &ct, CAT_CLASS, t->rel.tid, vals);
        changed = rc == KEEL_OK;
    }
    if (rc == KEEL_OK)
        rc = engine_note_file(s->db, t->rel.relnumber, &s->bs->err);
    for (uint32_t i = 0; rc == KEEL_OK && i < n; i++) {
        catalog_attribute_values(&atts[i], vals);
        rc = catalog_delete(s->db->cat, &ct, CAT_ATTRIBUTE, atts[i].tid, vals);
    }
    for (uint32_t i = 0; rc == KEEL_OK && i < t->nidx; i++) {
        catalog_relation ir;
        rc = catalog_relation_by_oid(s->db->cat, &ct, t->idx[i].indexoid, &ir);
        if (rc == KEEL_OK) {
            catalog_relation_values(&ir, vals);
            rc = catalog_delete(s->db->cat, &ct, CAT_CLASS, ir.tid, vals);
        }
        if (rc == KEEL_OK)
            rc = engine_note_file(s->db, ir.relnumber, &s->bs->err);
        if (rc == KEEL_OK) {
            catalog_index_values(&t->idx[i], keys_text, vals);
            rc =
                catalog_delete(s->db->cat, &ct, CAT_INDEX, t->idx[i].tid, vals);
        }
    }
    if (rc == KEEL_OK)
        rc = drop_statistics(s, &ct, t->rel.oid);
    if (rc == KEEL_OK)
        rc = note_drop(s, t->h);
    if (rc != KEEL_OK)
        release_from(s, held, XID_INVALID);
    free(t);
    free(atts);
    return engine_stmt_end(s, rc, changed);
}

keel_status keel_drop_index(keel_session *s, const char *schema, const char *name)
{
    catalog_txn ct;
    catalog_namespace ns;
    catalog_relation ir, tr;
    catalog_indexdef def;
    engine_table *t = calloc(1, sizeof(*t));
    keel_value vals[13];
    char keys_text[6 * BTREE_MAX_KEYS + 1];
    bool changed = false, found = false;
    uint32_t held = s->nheld;
    int rc = KEEL_OK;

    if (t == NULL)
        return kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    if (schema == NULL)
        schema = "public";
    rc = engine_check_name(s, "index", name);
    if (rc == KEEL_OK)
        rc = engine_stmt_begin_unlocked(s, &ct);
    if (rc != KEEL_OK) {
        free(t);
        return rc;
    }
    rc = catalog_namespace_by_name(s->db->cat, &ct, schema, &ns);
    if (rc == KEEL_OK) {
        rc = catalog_relation_by_name(s->db->cat, &ct, name, ns.oid, &ir);
        if (rc == KEEL_ENOENT)
            rc = kerr_set(&s->bs->err, KEEL_ENOENT,
                          "index \"%s.%s\" does not exist", schema, name);
    }
    if (rc == KEEL_OK && ir.kind != RELKIND_INDEX)
        rc = kerr_set(&s->bs->err, KEEL_EINVAL, "\"%s.%s\" is not an index",
                      schema, name);
    if (rc == KEEL_OK)
        rc = catalog_index_by_oid(s->db->cat, &ct, ir.oid, &def);
    if (rc == KEEL_OK)
        rc = catalog_relation_by_oid(s->db->cat, &ct, def.tableoid, &tr);
    /* Its table locked as DROP TABLE locks it, then the index looked for
     * again among the table's: a drop that waited may find it gone. */
    if (rc == KEEL_OK)
        rc = engine_table_open(s, &ct, schema, tr.name, false,
                               KEEL_LOCK_ACCESS_EXCLUSIVE, t);
    /* The xid once locked (engine_catalog_txn_unlocked()). */
    if (rc == KEEL_OK)
        rc = engine_catalog_txn(s, true, &ct);
    for (uint32_t i = 0; rc == KEEL_OK && i < t->nidx; i++)
        if (t->idx[i].indexoid == ir.oid) {
            def = t->idx[i];
            found = true;
        }
    if (rc == KEEL_OK && !found)
        rc = kerr_set(&s->bs->err, KEEL_ENOENT,
                      "index \"%s.%s\" does not exist", schema, name);
    if (rc == KEEL_OK && def.primary)
        rc = kerr_set(&s->bs->err, KEEL_EINVAL,
                      "cannot drop index %s because it is the primary key of "
                      "table %s",
                      name, tr.name);
    /* No claim: the lock keeps every other transaction off the table
     * until this one ends. */
    if (rc == KEEL_OK) {
        catalog_relation_values(&ir, vals);
        rc = catalog_delete(s->db->cat, &ct, CAT_CLASS, ir.tid, vals);
        changed = rc == KEEL_OK;
    }
    if (rc == KEEL_OK)
        rc = engine_note_file(s->db, ir.relnumber, &s->bs->err);
    if (rc == KEEL_OK) {
        catalog_index_values(&def, keys_text, vals);
        rc = catalog_delete(s->db->cat, &ct, CAT_INDEX, def.tid, vals);
    }
    if (rc != KEEL_OK)
        release_from(s, held, XID_INVALID);
    free(t);
    return engine_stmt_end(s, rc, changed);
}

/* ---- create index ---------------------------------------------------- */

typedef struct build_entry {
    keel_value *keys; /* copies, strings malloc'd */
    tid t;
} build_entry;

typedef struct build_state {
    const tuple_desc *keydesc;
    build_entry *e;
    size_t n, cap;
    size_t pos;
    keel_value *cur; /* for btree_build's next */
} build_state;

static int entry_cmp(const void *a, const void *b, void *arg)
{
    const build_state *bs = arg;
    const build_entry *x = a, *y = b;

    for (uint16_t k = 0; k < bs->keydesc->natts; k++) {
        int c = value_compare(&bs->keydesc->attrs[k], &x->keys[k], &y->keys[k]);
        if (c != 0)
            return c;
    }
    return tid_compare(x->t, y->t);
}

static bool build_next(void *ctx, const keel_value **keys, tid *t)
{
    build_state *bs = ctx;

    if (bs->pos >= bs->n)
        return false;
    *keys = bs->e[bs->pos].keys;
    *t = bs->e[bs->pos].t;
    bs->pos++;
    return true;
}

static void build_free(build_state *bs)
{
    for (size_t i = 0; i < bs->n; i++) {
        for (uint16_t k = 0; k < bs->keydesc->natts; k++)
            engine_value_free(&bs->keydesc->attrs[k], &bs->e[i].keys[k]);
        free(bs->e[i].keys);
    }
    free(bs->e);
}

/* Copies the key columns of row into a new entry. */
static int build_add(build_state *bs, const catalog_indexdef *ix,
                     const heap_row *row, tid root)
{
    build_entry *e;
    uint16_t nk = bs->keydesc->natts;

    if (bs->n == bs->cap) {
        build_entry *ne = engine_array_grow(bs->e, &bs->cap, 256, sizeof(*ne));
        if (ne == NULL)
            return KEEL_ENOMEM;
        bs->e = ne;
    }
    e = &bs->e[bs->n];
    e->t = root;
    e->keys = calloc(nk, sizeof(keel_value));
    if (e->keys == NULL)
        return KEEL_ENOMEM;
    bs->n++;
    for (uint16_t k = 0; k < nk; k++)
        if (engine_value_copy(&bs->keydesc->attrs[k],
                              &row->values[ix->keys[k] - 1],
                              &e->keys[k]) != KEEL_OK)
            return KEEL_ENOMEM;
    return KEEL_OK;
}

/*
 * keel_create_index(), and with primary keel_add_primary_key(): the key
 * columns must then hold no nulls, and become not null.
 */
static int create_index(keel_session *s, const char *schema, const char *table,
                        const char *index, const uint16_t *keys, uint16_t nkeys,
                        bool unique, bool primary)
{
    catalog_txn ct;
    engine_table *t = calloc(1, sizeof(*t));
    catalog_indexdef ix = {0};
    build_state bst = {0};
    tuple_desc *keydesc = NULL;
    heap_scan *sc = NULL;
    heap_row row = {0};
    bool changed = false, found;
    tid root;
    uint32_t held = s->nheld;
    int rc = engine_check_name(s, "index", index);

    if (rc == KEEL_OK && t == NULL)
        rc = kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    if (rc == KEEL_OK && (nkeys == 0 || nkeys > BTREE_MAX_KEYS || !keys))
        rc = kerr_set(&s->bs->err, KEEL_EINVAL,
                      "an index has 1 to %d key columns, not %u",
                      BTREE_MAX_KEYS, nkeys);
    if (rc == KEEL_OK)
        rc = engine_stmt_begin_unlocked(s, &ct);
    if (rc != KEEL_OK) {
        free(t);
        return rc;
    }
    /* SHARE keeps writers off while the build reads the table (and
     * drops: ACCESS EXCLUSIVE); a primary key also changes the columns
     * every reader decodes, as PostgreSQL's ALTER TABLE. */
    rc = engine_table_open(s, &ct, schema, table, false,
                           primary ? KEEL_LOCK_ACCESS_EXCLUSIVE
                                   : KEEL_LOCK_SHARE,
                           t);
    /* The xid after the lock, so after the snapshot the build reads with,
     * taken again if the lock waited: a version whose deleter committed
     * before that snapshot gets no entry, and that deleter's xid is below
     * the build's (what keel check allows such a version). */
    if (rc == KEEL_OK)
        rc = engine_catalog_txn(s, true, &ct);
    /* Builds on one table go one at a time (the claim), and one that
     * committed since the snapshot that found it is refused. */
    if (rc == KEEL_OK)
        rc = engine_claim(s, t->rel.oid, true, table, false, &ct.vis);
    if (rc == KEEL_OK)
        rc = row_still_there(s, &ct, CAT_CLASS, CATALOG_CLASS_OID, t->rel.oid,
                             t->rel.tid, "table", table);
    if (rc == KEEL_OK && t->nidx >= ENGINE_MAX_INDEXES)
        rc = kerr_set(&s->bs->err, KEEL_EINVAL,
                      "table \"%s\" has %d indexes already", table,
                      ENGINE_MAX_INDEXES);
    for (uint32_t i = 0; rc == KEEL_OK && primary && i < t->nidx; i++)
        if (t->idx[i].primary)
            rc = kerr_set(&s->bs->err, KEEL_EEXIST,
                          "multiple primary keys for table \"%s\" are not "
                          "allowed",
                          table);
    if (rc == KEEL_OK)
        rc = check_free_name(s, &ct, index, t->rel.nsoid);
    if (rc == KEEL_OK && (keydesc = tupdesc_alloc(nkeys)) == NULL)
        rc = kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    for (uint16_t k = 0; rc == KEEL_OK && k < nkeys; k++) {
        const tuple_attr *a;
        if (keys[k] == 0 || keys[k] > t->rel.natts) {
            rc = kerr_set(&s->bs->err, KEEL_EINVAL,
                          "table \"%s\" has no column %u", table, keys[k]);
            break;
        }
        a = &t->h->desc->attrs[keys[k] - 1];
        rc = tupdesc_set(keydesc, k, a->type, a->type == KEEL_CHAR ? a->len : 0,
                         false, &s->bs->err);
        ix.keys[k] = keys[k];
    }
    /* Read the rows the transaction sees, sort their keys, build. */
    bst.keydesc = keydesc;
    if (rc == KEEL_OK)
        rc = heap_row_init(&row, &t->h->heap, &s->bs->err);
    /* If it commits, writers whose snapshots miss it fail. */
    if (rc == KEEL_OK)
        engine_build_begin(s, t->h);
    if (rc == KEEL_OK)
        rc = heap_scan_begin(&t->h->heap, s->bs, &ct.vis, &sc);
    if (rc == KEEL_OK)
        heap_scan_count_newer(sc);
    while (rc == KEEL_OK) {
        rc = heap_scan_next(sc, &row, &found);
        if (rc != KEEL_OK || !found)
            break;
        for (uint16_t k = 0; primary && k < nkeys; k++)
            if (row.values[keys[k] - 1].isnull)
                rc = kerr_set(&s->bs->err, KEEL_ETYPE,
                              "column %u of relation \"%s\" contains null "
                              "values",
                              (unsigned)keys[k], table);
        if (rc != KEEL_OK)
            break;
        /* A heap-only version's entry names its chain's root (writers are
         * shut out, so the chain has no other version this snapshot
         * sees, and every snapshot that can use the index sees none of
         * its older ones). */
        rc = heap_scan_root(sc, row.tid, &root);
        if (rc != KEEL_OK)
            break;
        rc = build_add(&bst, &ix, &row, root);
        if (rc == KEEL_ENOMEM)
            kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    }
    /* Built from the rows the transaction sees, the index would lack the
     * versions it does not: those of transactions that committed after it
     * began (and of any still running). */
    if (rc == KEEL_OK && heap_scan_newer(sc) > 0)
        rc = kerr_set(&s->bs->err, KEEL_ESERIALIZE,
                      "could not create index \"%s\": table \"%s\" has "
                      "rows changed since the transaction began, or by one "
                      "still running",
                      index, table);
    heap_scan_end(sc);
    heap_row_free(&row);
    if (rc == KEEL_OK)
        rc = engine_oid_next(s->db, &ix.indexoid, &s->bs->err);
    if (rc == KEEL_OK)
        rc = engine_note_file(s->db, ix.indexoid, &s->bs->err);
    if (rc == KEEL_OK) {
        if (bst.n > 1) /* an empty table has no array to sort */
            qsort_r(bst.e, bst.n, sizeof(build_entry), entry_cmp, &bst);
        rc = btree_build(s->bs, ix.indexoid, keydesc, unique, build_next, &bst,
                         NULL, NULL);
        if (rc == KEEL_EUNIQUE)
            kerr_set(&s->bs->err, KEEL_EUNIQUE,
                     "could not create unique index \"%s\": table \"%s\" has "
                     "duplicate keys",
                     index, table);
    }
    if (rc == KEEL_OK) {
        ix.tableoid = t->rel.oid;
        ix.unique = unique;
        ix.primary = primary;
        ix.nkeys = nkeys;
        rc = add_index_rows(s, &ct, t->rel.nsoid, index, &ix, &changed);
    }
    /* A primary key's columns become not null. */
    for (uint16_t k = 0; rc == KEEL_OK && primary && k < nkeys; k++) {
        catalog_attribute at[1];
        keel_value vals[8];
        catcache_entry *e;
        rc = syscache_search2(s->cache, CACHE_ATTRIBUTE_NUM, t->rel.oid, keys[k],
                              &e);
        if (rc == KEEL_ENOENT)
            rc = kerr_set(&s->bs->err, KEEL_ECORRUPT,
                          "table \"%s\" has no column %u in keel_attribute",
                          table, (unsigned)keys[k]);
        if (rc != KEEL_OK)
            break;
        at[0] = *(const catalog_attribute *)syscache_row(e);
        syscache_release(s->cache, e);
        if (at[0].notnull)
            continue;
        at[0].notnull = true;
        catalog_attribute_values(&at[0], vals);
        rc = catalog_update(s->db->cat, &ct, CAT_ATTRIBUTE, at[0].tid, vals);
        changed = true;
    }
    if (keydesc != NULL)
        build_free(&bst);
    tupdesc_free(keydesc);
    free(t);
    if (rc != KEEL_OK)
        release_from(s, held, XID_INVALID);
    return engine_stmt_end(s, rc, changed || ct.undo_failed);
}

keel_status keel_rename(keel_session *s, const char *schema,
                        const char *table, const char *column,
                        const char *newname)
{
    catalog_txn ct;
    engine_table *t;
    catalog_attribute *atts;
    keel_value vals[13];
    bool changed = false;
    uint32_t n = 0, held = s->nheld;
    int rc = table_ddl_begin(s, &ct, &t, &atts);

    if (rc != KEEL_OK)
        return rc;
    rc = engine_check_name(s, column != NULL ? "column" : "table", newname);
    if (rc == KEEL_OK)
        rc = engine_table_open(s, &ct, schema, table, false,
                               KEEL_LOCK_ACCESS_EXCLUSIVE, t);
    if (rc == KEEL_OK)
        rc = engine_catalog_txn(s, true, &ct);
    /* As a build's: refused if a drop or a build committed since the
     * snapshot that found the table. */
    if (rc == KEEL_OK)
        rc = engine_claim(s, t->rel.oid, true, table, false, &ct.vis);
    if (rc == KEEL_OK)
        rc = row_still_there(s, &ct, CAT_CLASS, CATALOG_CLASS_OID, t->rel.oid,
                             t->rel.tid, "table", table);
    if (rc == KEEL_OK && column == NULL) {
        catalog_relation r = t->rel;
        if (strcmp(table, newname) != 0)
            rc = check_free_name(s, &ct, newname, t->rel.nsoid);
        snprintf(r.name, sizeof(r.name), "%s", newname);
        catalog_relation_values(&r, vals);
        if (rc == KEEL_OK)
            rc = catalog_update(s->db->cat, &ct, CAT_CLASS, t->rel.tid, vals);
        changed = rc == KEEL_OK;
    } else if (rc == KEEL_OK) {
        catalog_attribute *at = NULL;
        rc = catalog_attributes(s->db->cat, &ct, t->rel.oid, atts,
                                CATALOG_MAX_COLUMNS, &n);
        for (uint32_t i = 0; rc == KEEL_OK && i < n; i++) {
            if (strcmp(atts[i].name, column) == 0)
                at = &atts[i];
            else if (strcmp(atts[i].name, newname) == 0)
                rc = kerr_set(&s->bs->err, KEEL_EEXIST,
                              "column \"%s\" of relation \"%s\" already "
                              "exists",
                              newname, table);
        }
        if (rc == KEEL_OK && at == NULL)
            rc = kerr_set(&s->bs->err, KEEL_ENOENT,
                          "column \"%s\" does not exist", column);
        if (rc == KEEL_OK) {
            snprintf(at->name, sizeof(at->name), "%s", newname);
            catalog_attribute_values(at, vals);
            rc = catalog_update(s->db->cat, &ct, CAT_ATTRIBUTE, at->tid, vals);
            changed = rc == KEEL_OK;
        }
    }
    if (rc != KEEL_OK)
        release_from(s, held, XID_INVALID);
    free(t);
    free(atts);
    return engine_stmt_end(s, rc, changed || ct.undo_failed);
}

keel_status keel_create_index(keel_session *s, const char *schema,
                              const char *table, const char *index,
                              const uint16_t *keys, uint16_t nkeys, bool unique)
{
    return create_index(s, schema, table, index, keys, nkeys, unique, false);
}

keel_status keel_add_primary_key(keel_session *s, const char *schema,
                                 const char *table, const char *index,
                                 const uint16_t *keys, uint16_t nkeys)
{
    char name[KEEL_NAME_LEN];

    if (index == NULL) {
        if (table == NULL || strlen(table) > KEEL_NAME_LEN - 1 - 5) {
            kerr_clear(&s->bs->err);
            return kerr_set(&s->bs->err, KEEL_ETOOBIG,
                            "a primary key's name \"%s_pkey\" is over 63 "
                            "bytes",
                            table != NULL ? table : "");
        }
        snprintf(name, sizeof(name), "%s_pkey", table);
        index = name;
    }
    return create_index(s, schema, table, index, keys, nkeys, true, true);
}
