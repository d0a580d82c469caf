/*
 * select_txn.h: pgbench's select-only transaction, as a PostgreSQL backend
 * executes `SELECT abalance FROM pgbench_accounts WHERE aid = :aid`: begin
 * (snapshot), the catalog look-ups planning makes through the session's
 * catalog cache, the primary-key B-tree descent and heap fetch with the
 * snapshot's visibility check, commit; all through the public API
 * (keel/keel.h).  Shared by `keel bench select`, `keel bench bloat` and
 * the tests.
 */
#ifndef KEEL_BENCH_SELECT_TXN_H
#define KEEL_BENCH_SELECT_TXN_H

#include <stdbool.h>
#include <stdint.h>

#include <stddef.h>

#include "engine/internal.h"
#include "keel/keel.h"

/* The table and column the transaction reads. */
#define SELECT_TABLE  "pgbench_accounts"
#define SELECT_COLUMN "abalance"

/* One client: its session, and the table's analyzed row count. */
typedef struct select_client {
    keel_session *s;
    double tuples; /* keel_class.tuples at open (0: never analyzed) */
} select_client;

/*
 * Starts a session on db, checks that abalance is int4 (ETYPE), and runs
 * the transaction's query once for a key no account has (aid 0), so that
 * a missing table, column or primary key fails here.  KEEL_OK, or a
 * keel_status with the message in msg (msglen bytes; the session, if
 * any, is ended): those of keel_session_begin(), keel_column_type() and
 * keel_select_column().
 */
int select_client_open(keel_db *db, select_client *c, char *msg, size_t msglen);

/*
 * The number of accounts in *n, whose aids the benchmarks draw from
 * 1..*n: keel_class.tuples if the table was analyzed; if not, a scan of
 * the primary key counts the rows the client's transaction sees, and
 * EINVAL if their aids are not 1..count (or there are none).  KEEL_OK, or
 * a keel_status with the message in msg (msglen bytes).
 */
int select_client_accounts(select_client *c, int32_t *n, char *msg,
                           size_t msglen);

/* Ends the client's session (a zeroed client is fine). */
void select_client_close(select_client *c);

/*
 * One select-only transaction for account aid, through the public API
 * only: keel_begin(); with probe != NULL, keel_relation_exists() of
 * public.probe, which must find nothing; keel_select_column() of
 * abalance (its catalog look-ups: the relation by name through the
 * search path keel_catalog, public, a negative entry then a hit; the
 * column by name; its statistics, a hit when analyzed and a negative
 * entry when not; the relation's index list, from which the primary key
 * is taken; then the B-tree descent and the heap fetch); keel_commit().
 * *abalance gets the row's abalance.
 *
 * KEEL_OK; KEEL_ENOENT if no row has aid (the transaction is committed
 * all the same; msg says so); any other status is a failure, the
 * transaction aborted and the message in msg (msglen bytes).  A null
 * abalance reads as 0.
 */
int select_txn_run(select_client *c, int32_t aid, const char *probe,
                   int32_t *abalance, char *msg, size_t msglen);

/* A client session's counters, or what they moved by. */
typedef struct select_counts {
    uint64_t txns; /* transactions (set by the caller) */
    uint64_t hits, negative_hits, misses, list_hits, list_misses;
    uint64_t snapshots_reused, snapshots_taken;
    uint64_t buffer_reads; /* buffer reads (pins) taken by the session */
    uint64_t dir_moves;    /* moves right from where an index directory
                            * led (one buffer read each) */
} select_counts;

/* The client's counters now (txns 0): keel_session_cache_stats() and
 * engine_session_stats_get(). */
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
