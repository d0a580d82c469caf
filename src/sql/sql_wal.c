/*
 * sql_wal.c: the write-ahead log as SQL sees it: the CHECKPOINT
 * statement, and keel_stat_wal, the log's counters since the database
 * opened (keel_db_wal_stats()), over which pg_catalog.pg_stat_wal is a
 * view with PostgreSQL 15's columns (sql_catalog.c).
 */
#include <string.h>

#include "sql/sql_internal.h"

/* Seconds from 1970-01-01 to 2000-01-01, where timestamps count from. */
#define UNIX_TO_2000_S INT64_C(946684800)

/* keel_stat_wal's columns, in order. */
enum {
    WAL_COL_RECORDS,
    WAL_COL_FPI,
    WAL_COL_FPI_BYTES,
    WAL_COL_BYTES,
    WAL_COL_BUFFERS_FULL,
    WAL_COL_WRITE,
    WAL_COL_SYNC,
    WAL_COL_INSERT_LSN,
    WAL_COL_STATS_RESET,
    WAL_NCOLS
};

static const char *const wal_col_names[WAL_NCOLS] = {
    "wal_records", "wal_fpi",  "fpi_bytes",  "wal_bytes",   "wal_buffers_full",
    "wal_write",   "wal_sync", "insert_lsn", "stats_reset",
};

keel_status sql_stat_wal_rows(sql_session *s, bool describe, sql_rowset *out)
{
    sql_value row[WAL_NCOLS];
    keel_wal_stats st;
    int64_t v[WAL_COL_STATS_RESET];

    memset(out, 0, sizeof(*out));
    out->ncols = WAL_NCOLS;
    out->cols = sql_alloc(&s->arena, out->ncols * sizeof(*out->cols));
    out->types = sql_alloc(&s->arena, out->ncols * sizeof(uint32_t));
    if (out->cols == NULL || out->types == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memset(out->cols, 0, out->ncols * sizeof(*out->cols));
    for (int i = 0; i < WAL_NCOLS; i++) {
        memcpy(out->cols[i].name, wal_col_names[i],
               strlen(wal_col_names[i]) + 1);
        out->cols[i].type = KEEL_INT8;
        out->types[i] = SQL_TYPE_INT8;
    }
    out->cols[WAL_COL_STATS_RESET].type = KEEL_TIMESTAMPTZ;
    out->types[WAL_COL_STATS_RESET] = SQL_TYPE_TIMESTAMPTZ;
    if (describe)
        return KEEL_OK;
    keel_db_wal_stats(s->db, &st);
    v[WAL_COL_RECORDS] = (int64_t)st.records;
    v[WAL_COL_FPI] = (int64_t)st.fpi;
    v[WAL_COL_FPI_BYTES] = (int64_t)st.fpi_bytes;
    v[WAL_COL_BYTES] = (int64_t)st.bytes;
    v[WAL_COL_BUFFERS_FULL] = (int64_t)st.buffers_full;
    v[WAL_COL_WRITE] = (int64_t)st.writes;
    v[WAL_COL_SYNC] = (int64_t)st.syncs;
    v[WAL_COL_INSERT_LSN] = (int64_t)st.insert_lsn;
    for (int i = 0; i < WAL_COL_STATS_RESET; i++)
        row[i] = (sql_value){.type = SQL_TYPE_INT8, .v.i = v[i]};
    row[WAL_COL_STATS_RESET] =
        (sql_value){.type = SQL_TYPE_TIMESTAMPTZ,
                    .v.i = st.reset_us - UNIX_TO_2000_S * 1000000};
    return sql_rowset_add(s, out, row);
}

/*
 * CHECKPOINT: keel's checkpoint, returning once it is done (PostgreSQL's
 * CHECKPOINT waits for an immediate one).  A role that is not a
 * superuser is refused with PostgreSQL 15's 42501 for one without
 * pg_checkpoint; a user with no role of its own is the database's owner,
 * a superuser (as pg_roles shows it).
 */
keel_status sql_exec_checkpoint(sql_session *s)
{
    const char *me = sql_setting_get(s, "user");
    keel_status rc;
    keel_error e;
    bool super = true;

    if (s->describe_only)
        return KEEL_OK;
    rc = sql_role_is_super(s, me != NULL ? me : "", &super);
    if (rc != KEEL_OK)
        return rc;
    if (!super)
        return sql_fail(s, KEEL_EINVAL, "42501",
                        "must be superuser or have privileges of "
                        "pg_checkpoint to do CHECKPOINT");
    rc = keel_checkpoint(s->db, &e);
    if (rc != KEEL_OK)
        return sql_fail(s, rc, "58030", "checkpoint failed: %s", e.msg);
    return sql_complete(s, "CHECKPOINT");
}
