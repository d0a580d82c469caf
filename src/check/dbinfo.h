/*
 * dbinfo.h: what relations a database holds, read from its catalogs, for
 * `keel stat` and `keel check`.
 */
#ifndef KEEL_CHECK_DBINFO_H
#define KEEL_CHECK_DBINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keel/keel.h"

/* Kind of a listed relation: RELKIND_TABLE, RELKIND_INDEX, or this one for
 * the commit log (which has no keel_class row). */
#define DBINFO_KIND_CLOG 'c'

typedef struct dbinfo_rel {
    char schema[KEEL_NAME_LEN];
    char name[KEEL_NAME_LEN];
    char kind;          /* 't', 'i' or DBINFO_KIND_CLOG */
    uint32_t oid;       /* = relnumber; 1 for the commit log */
    uint32_t relnumber; /* the file's name in the directory */
    uint32_t table;     /* an index's table (oid), else 0 */
    uint16_t natts;     /* its columns, as its keel_class row says */
    bool unique;        /* an index's */
    uint32_t built;     /* an index: the xid that built it (its keel_index
                           row's inserter) */
    uint32_t blocks;    /* whole blocks in the file (0 if it is missing or
                           cannot be opened) */
    bool missing;       /* the file does not exist */
    bool unreadable;    /* it exists but cannot be opened: why says why */
    char why[KEEL_ERROR_MSG_MAX];
    bool no_schema; /* keel_namespace lacks its schema (then named by
                     * its oid) */
} dbinfo_rel;

/* Whether r's file could not be read: missing, or not to be opened. */
static inline bool dbinfo_no_file(const dbinfo_rel *r)
{
    return r->missing || r->unreadable;
}

/*
 * Lists every relation that the session's snapshot sees in keel_class, and
 * the commit log first, in relation number order, in a malloc'd array
 * (*out, *n; free with free()).  Reads the catalogs' heaps directly (no
 * index), in a transaction of its own.  A row of keel_namespace,
 * keel_class or keel_index that does not decode (heap_scan_next()'s
 * ECORRUPT for that row) fails the listing when skipped is NULL; else it
 * is left out, and counted in *skipped: what it describes is then missing
 * from the list (a relation, a schema's name, an index's table), and the
 * caller must say so.  Returns a keel_status, the message in the session.
 */
int dbinfo_relations(keel_session *s, dbinfo_rel **out, size_t *n,
                     uint64_t *skipped);

/* "table", "index" or "clog". */
const char *dbinfo_kind_name(char kind);

#endif /* KEEL_CHECK_DBINFO_H */
