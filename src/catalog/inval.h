/*
 * inval.h: the shared invalidation queue.
 *
 * A transaction that changes catalog rows collects one message per changed
 * row and cache key ({catalog cache id, hash of the key}) in its private
 * inval_pending list; at commit the engine appends the list to the
 * database's queue, at abort it discards it.  Readers (catalog caches)
 * each keep a position in the queue and, before using
 * cached catalog data, read the messages appended since.
 *
 * The queue is a bounded ring: a reader that falls more than `capacity`
 * messages behind has lost messages; inval_read() tells it so (INVAL_RESET)
 * and moves it to the head, and it must then drop everything it caches.  A
 * transaction with more messages than the ring holds appends a single
 * "reset all" message instead.
 *
 * Concurrency: appends and reads take the queue's mutex; the write position
 * is also an atomic, so that a reader can see that nothing is new with one
 * acquire load and no lock (inval_has_news()).
 *
 * Commit ordering.  A transaction's messages can only be appended after its
 * commit is visible (an aborted transaction's must never be seen), which
 * leaves a window in which a new snapshot sees the changed catalog rows
 * while the queue does not yet say so.  It is closed by a counter: a
 * committing transaction with messages announces itself
 * (inval_commit_begin(), a seq_cst increment) before its commit becomes
 * visible and withdraws (inval_commit_end()) only after appending; a reader
 * starting a transaction takes its snapshot first and then calls
 * inval_wait_commits() (a seq_cst load, waiting while the counter is not
 * zero) before reading the queue.  If its snapshot sees the commit, the
 * announcement preceded it, so the reader waits for the append and then
 * reads the messages.  Transactions without messages do not touch the
 * counter, and readers pay one load of a line that DDL alone writes.
 */
#ifndef KEEL_CATALOG_INVAL_H
#define KEEL_CATALOG_INVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "port/error.h"

/* cache_id of the message that tells every reader to drop everything. */
#define INVAL_RESET_ALL UINT32_MAX

typedef struct inval_msg {
    uint32_t cache_id; /* a catalog_cache_id, or INVAL_RESET_ALL */
    uint32_t hash;     /* hash of the cache key (catalog_key_hash()) */
} inval_msg;

/* A transaction's messages, private to its session. */
typedef struct inval_pending {
    inval_msg *msgs;
    uint32_t count;
    uint32_t cap;
    bool overflow; /* memory ran out: commit appends a reset instead */
    uint64_t adds; /* inval_pending_add() calls since the last clear, the
                      ones merged into an equal message included: a
                      change to watch for new rows (count may not move) */
} inval_pending;

/* Adds a message (never fails: on ENOMEM the list turns into a reset). */
void inval_pending_add(inval_pending *p, uint32_t cache_id, uint32_t hash);

/* Forgets the messages (abort), keeping the memory. */
void inval_pending_clear(inval_pending *p);

/* Frees the list's memory. */
void inval_pending_free(inval_pending *p);

typedef struct inval_queue inval_queue;

/* A reader's position: the number of messages ever appended that it has
 * consumed. */
typedef struct inval_reader {
    uint64_t pos;
} inval_reader;

/* Creates a queue holding capacity (>= 1) messages.  EINVAL, ENOMEM. */
int inval_queue_create(uint32_t capacity, inval_queue **out, kerr *err);

/* Frees the queue (NULL is fine). */
void inval_queue_destroy(inval_queue *q);

/* Messages ever appended (the write position). */
uint64_t inval_queue_head(const inval_queue *q);

/*
 * Appends a committed transaction's messages and clears p.  If p holds
 * more messages than the ring (or overflowed), one INVAL_RESET_ALL is
 * appended instead.  Cannot fail.
 */
void inval_queue_append(inval_queue *q, inval_pending *p);

/*
 * Brackets the commit of a transaction whose messages are in p:
 * inval_commit_begin() before the commit becomes visible;
 * inval_commit_end() after it, appending p if committed and clearing it in
 * any case.  Both do nothing for an empty p (a begin and its end must see
 * the same p).
 */
void inval_commit_begin(inval_queue *q, const inval_pending *p);
void inval_commit_end(inval_queue *q, inval_pending *p, bool committed);

/*
 * Waits (spinning, then sleeping) until no announced commit is between
 * its begin and end.  A reader calls it after taking its snapshot and
 * before reading the queue (see "Commit ordering" above).
 */
void inval_wait_commits(const inval_queue *q);

/* Appends one message (tests, and a forced reset). */
void inval_queue_append_one(inval_queue *q, uint32_t cache_id, uint32_t hash);

/* Positions a new reader at the head: it sees only later messages. */
void inval_reader_init(inval_queue *q, inval_reader *r);

/* True if messages were appended since r last read (one acquire load). */
bool inval_has_news(const inval_queue *q, const inval_reader *r);

/* inval_read() results. */
#define INVAL_MESSAGES 0 /* *n messages copied (0: nothing new) */
#define INVAL_RESET    1 /* the reader fell behind: drop every cache entry */

/*
 * Copies up to max of the messages r has not read into out, in append
 * order, and advances r past them; *n is how many.  Returns INVAL_RESET
 * (with *n = 0, r moved to the head) if messages r had not read were
 * overwritten; the caller must then treat everything it caches as stale.
 */
int inval_read(inval_queue *q, inval_reader *r, inval_msg *out, uint32_t max,
               uint32_t *n);

#endif /* KEEL_CATALOG_INVAL_H */
