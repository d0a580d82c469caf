/*
 * tpcb_txn.h: pgbench's default read-write transaction ("TPC-B (sort
 * of)") over the public API (keel/keel.h), as a PostgreSQL backend runs
 *
 *   BEGIN;
 *   UPDATE pgbench_accounts SET abalance = abalance + :delta
 *       WHERE aid = :aid;
 *   SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
 *   UPDATE pgbench_tellers SET tbalance = tbalance + :delta
 *       WHERE tid = :tid;
 *   UPDATE pgbench_branches SET bbalance = bbalance + :delta
 *       WHERE bid = :bid;
 *   INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
 *       VALUES (:tid, :bid, :aid, :delta, now);
 *   END;
 *
 * at the session's isolation (keel_set_isolation()): under repeatable
 * read an update of a row another transaction changed first fails
 * (KEEL_ESERIALIZE) and the transaction is retried from the start, as
 * pgbench --max-tries does; under read committed, PostgreSQL's default,
 * each statement takes a new snapshot and an update waits for the row's
 * changer and adds to its newest version.  Every committed
 * transaction adds delta to one account, one teller and one branch and
 * records it in the history, so the four sums (tpcb_totals) stay equal
 * whatever the clients' interleaving: the check the benchmark and the
 * tests end with.  Shared by `keel bench tpcb` and the tests.
 */
#ifndef KEEL_BENCH_TPCB_TXN_H
#define KEEL_BENCH_TPCB_TXN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keel/keel.h"

/* The rows of the pgbench tables and the history: row counts and sums. */
typedef struct tpcb_totals {
    int32_t branches, tellers, accounts;  /* ids are 1..count */
    uint64_t history;                     /* rows */
    int64_t bbalance, tbalance, abalance; /* sums */
    int64_t delta;                        /* the history's */
} tpcb_totals;

/*
 * Reads the totals in one transaction of session s (which must have none
 * running), scanning the four tables.  KEEL_OK, or a keel_status with the
 * message in msg (msglen bytes): the scans', or KEEL_EINVAL if a table's
 * ids are not 1..count (the draws rely on it) or one is empty.
 */
int tpcb_totals_read(keel_session *s, tpcb_totals *t, char *msg, size_t msglen);

/* Whether the three balance sums and the history's delta sum are equal. */
bool tpcb_totals_consistent(const tpcb_totals *t);

/* One transaction's draw, as pgbench makes it: aid, tid and bid uniform
 * over their tables, delta in -5000..5000. */
typedef struct tpcb_params {
    int32_t aid, tid, bid, delta;
} tpcb_params;

/* The next draw for tables of t's sizes from the generator *rng. */
void tpcb_params_next(uint64_t *rng, const tpcb_totals *t, tpcb_params *p);

/*
 * One attempt at the transaction for p on session s (none running), on
 * tables tpcb_totals_read() accepted (it checks their column counts), with
 * mtime its history row's time: KEEL_OK once committed, with the
 * account's new balance, as the transaction's SELECT read it back, in
 * *abalance.  On failure the transaction is aborted and the status
 * returned, the message in msg (msglen bytes): KEEL_ESERIALIZE when a
 * concurrent transaction changed one of the rows first (repeatable read;
 * retrying may succeed), KEEL_EDEADLOCK when a wait for one closed a
 * cycle (read committed; likewise); KEEL_ENOENT when a row is missing; KEEL_ECORRUPT when the
 * SELECT did not read the balance the UPDATE wrote; any other status of
 * the calls made.
 */
int tpcb_txn_try(keel_session *s, const tpcb_params *p, int64_t mtime,
                 int32_t *abalance, char *msg, size_t msglen);

/*
 * tpcb_txn_try() until it commits or fails with a status other than
 * KEEL_ESERIALIZE or KEEL_EDEADLOCK, at most max_tries times (0: no limit); *tries gets the
 * attempts made.  Its result is the last attempt's.
 */
int tpcb_txn_run(keel_session *s, const tpcb_params *p, int64_t mtime,
                 uint32_t max_tries, uint32_t *tries, char *msg, size_t msglen);

#endif /* KEEL_BENCH_TPCB_TXN_H */
