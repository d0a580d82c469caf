/*
 * select_txn.h: pgbench's select-only transaction, as a PostgreSQL backend
 * executes `SELECT abalance FROM pgbench_accounts WHERE aid = :aid`: begin
 * (snapshot), the catalog look-ups planning makes through the session's
 * catalog cache, the primary-key B-tree descent and heap fetch with the
 * snapshot's visibility check, commit.  Shared by `keel bench select`,
 * `keel bench bloat` and the tests.
 */
#ifndef KEEL_BENCH_SELECT_TXN_H
#define KEEL_BENCH_SELECT_TXN_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

/* The table and column the transaction reads. */
#define SELECT_TABLE  "pgbench_accounts"
#define SELECT_COLUMN "abalance"

/*
 * One client: a session and what it keeps between transactions.  The
 * relation handles are the session's own one-entry relation cache (what
 * PostgreSQL's backend-local relcache is for this table): each transaction
 * checks that the oids its catalog look-ups found are still the ones the
 * handles belong to, and resolves them again if not.
 */
typedef struct select_client {
    keel_session *s;
    oid_t relid;       /* pgbench_accounts, as last resolved */
    oid_t indexoid;    /* its primary key */
    engine_rel *heap;  /* relid's heap handle */
    engine_rel *pkey;  /* indexoid's B-tree handle */
    heap_row row;      /* the fetched row */
    engine_table *tab; /* scratch for resolving the handles */
    double tuples;     /* keel_class.tuples at open (0: never analyzed) */
} select_client;

/*
 * Starts a session on db and resolves pgbench_accounts' handles in a
 * transaction of its own.  KEEL_OK, or a keel_status with the message in
 * msg (msglen bytes; the session, if any, is ended): ENOENT without the
 * table, EINVAL if it has no primary key or the session has no catalog
 * cache, the errors of keel_session_begin().
 */
int select_client_open(keel_db *db, select_client *c, char *msg, size_t msglen);

/*
 * The number of accounts in *n, whose aids the benchmarks draw from
 * 1..*n: keel_class.tuples if the table was analyzed; if not, a scan of
 * the primary key counts the rows the client's transaction sees, and
 * EINVAL if their aids are not 1..count (or there are none).  KEEL_OK, or
 * a keel_status with the message in the session.
 */
int select_client_accounts(select_client *c, int32_t *n);

/* Ends the client's session and frees what it holds (a zeroed client is
 * fine). */
void select_client_close(select_client *c);

/*
 * One select-only transaction for account aid: keel_begin(); the catalog
 * look-ups (relation by name through the search path keel_catalog,
 * public: a negative entry then a hit; the column by name; its
 * statistics: a hit when analyzed, a negative entry when not; the
 * relation's index list, from which the primary key is taken), all
 * released before execution; with probe != NULL, a look-up of relation
 * `probe` in public that must find nothing; the B-tree descent and heap
 * fetch; keel_commit().  *abalance gets the row's abalance.
 *
 * KEEL_OK; KEEL_ENOENT if no row has aid (the transaction is committed
 * all the same); any other status is a failure, the transaction aborted
 * and the message in the session (keel_session_error()).
 */
int select_txn_run(select_client *c, int32_t aid, const char *probe,
                   int32_t *abalance);

/* A client session's counters, or what they moved by. */
typedef struct select_counts {
    uint64_t txns; /* transactions (set by the caller) */
    uint64_t hits, negative_hits, misses, list_hits, list_misses;
    uint64_t snapshots_reused, snapshots_taken;
    uint64_t buffer_reads; /* buffer reads (pins) taken by the session */
    uint64_t dir_moves;    /* moves right from where the primary key's
                            * directory led (one buffer read each) */
} select_counts;

/* The client's counters now (txns 0): its catalog cache's, its
 * snapshots', its buffer reads and its primary key directory's. */
void select_counts_read(const select_client *c, select_counts *out);

/* out = b - a, counter by counter (txns too). */
void select_counts_diff(const select_counts *a, const select_counts *b,
                        select_counts *out);

/* sum += c, counter by counter. */
void select_counts_add(select_counts *sum, const select_counts *c);

/* A pseudo-random account number in 1..accounts (xorshift64*). */
static inline int32_t select_next_aid(uint64_t *rng, int32_t accounts)
{
    uint64_t x = *rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    return (int32_t)(((x * UINT64_C(0x2545F4914F6CDD1D)) >> 33) %
                     (uint64_t)accounts) +
           1;
}

#endif /* KEEL_BENCH_SELECT_TXN_H */
