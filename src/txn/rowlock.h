/*
 * rowlock.h: row locks (SELECT ... FOR KEY SHARE, FOR SHARE, FOR NO KEY
 * UPDATE and FOR UPDATE, and the lock a foreign key's check takes on the
 * row it refers to).
 *
 * A write (delete or update) marks a row version with its xid (xmax), so
 * the heap itself says who is changing a row.  A row lock changes
 * nothing on the page: it is an entry (relation, version, mode, xid) in
 * this table, in memory only.  Any number of transactions may hold locks
 * that agree on a version; a deleter or updater of the version waits for
 * each holder of a lock it conflicts with that is still running.  Both
 * sides work under the version's page lock (the locker shared, the
 * writer exclusive), so a locker never misses a writer's xmax nor a
 * writer a locker's entry; lockers meet each other under the partition's
 * mutex.
 *
 * An entry lives while its xid is in the process array: a transaction's
 * end releases its locks without touching the table, and a crash (which
 * ends every transaction) leaves none to recover, so nothing here is
 * logged.  Each transaction still removes its entries as it ends
 * (rowlock_release()), keeping the table small and its "no entries at
 * all" test, which every write makes, true most of the time.
 */
#ifndef KEEL_TXN_ROWLOCK_H
#define KEEL_TXN_ROWLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "port/error.h"
#include "txn/procarray.h"
#include "txn/snapshot.h"

typedef struct rowlock_table rowlock_table;

/*
 * A lock's strength, PostgreSQL's four: KEY_SHARE (FOR KEY SHARE, a
 * foreign key's check) holds off deletes and updates of a key column;
 * SHARE (FOR SHARE) every delete and update; NO_KEY_UPDATE and UPDATE
 * (FOR NO KEY UPDATE, FOR UPDATE) are a writer's, taken ahead.  Two
 * locks conflict when their strengths add up to more than 4: KEY_SHARE
 * only with UPDATE, SHARE with both updates, NO_KEY_UPDATE with all but
 * KEY_SHARE, UPDATE with all.  A delete or an update of a key meets
 * locks as UPDATE does, another update as NO_KEY_UPDATE.
 */
typedef enum rowlock_mode {
    ROWLOCK_KEY_SHARE = 1,
    ROWLOCK_SHARE = 2,
    ROWLOCK_NO_KEY_UPDATE = 3,
    ROWLOCK_UPDATE = 4,
} rowlock_mode;

#define ROWLOCK_CONFLICTS(a, b) ((int)(a) + (int)(b) > 4)

/* The entries one transaction added, for rowlock_release(). */
typedef struct rowlock_owner {
    uint32_t *entries;
    uint32_t n, cap;
} rowlock_owner;

/* Room for 64 partitions of per_part entries (rounded up to a power of
 * two, at least 8; memory is touched only as entries are first used);
 * entries are live while pa holds their xid. */
int rowlock_create(const procarray *pa, uint32_t per_part, rowlock_table **out,
                   kerr *err);
void rowlock_destroy(rowlock_table *t);

/*
 * Adds xid's lock of mode on version (block, offset) of relation rel,
 * unless it holds one as strong already (a weaker one is made
 * stronger), and notes the entry in owner (if it can, and owner is not
 * NULL: an entry not noted is reclaimed once xid ends).  With holder,
 * a running transaction holding a conflicting lock on the version is
 * looked for first, under the same mutex: if there is one it goes in
 * *holder and nothing is added (KEEL_EBUSY).  KEEL_ENOMEM when the
 * entry's partition is full of live entries.  The caller holds the
 * version's page lock, shared at least.
 */
int rowlock_add(rowlock_table *t, rowlock_owner *owner, uint32_t rel,
                uint32_t block, uint16_t offset, xid_t xid, rowlock_mode mode,
                xid_t *holder, kerr *err);

/*
 * A running transaction other than self that holds a lock of mode `at
 * least` or stronger on the version, or XID_INVALID: a delete or an
 * update of a key asks for KEY_SHARE (any lock holds it off), another
 * update for SHARE (the locks that conflict with NO_KEY_UPDATE).  The
 * caller holds the version's page lock exclusively (a writer about to
 * mark it).
 */
xid_t rowlock_holder(rowlock_table *t, uint32_t rel, uint32_t block,
                     uint16_t offset, xid_t self, rowlock_mode at_least);

/*
 * An update that kept the row's key let KEY_SHARE holders be (no other
 * lock of another transaction lets it through): their locks go on to
 * its new version (to_block, to_offset), so that a later
 * delete of it still waits for them.  Holders other than self that are
 * running, noted by no owner (reclaimed once they end); KEEL_ENOMEM as
 * rowlock_add().  The updater, still running, is the only one that can
 * change the new version meanwhile.
 */
int rowlock_carry(rowlock_table *t, uint32_t rel, uint32_t block,
                  uint16_t offset, uint32_t to_block, uint16_t to_offset,
                  xid_t self, kerr *err);

/* Removes the entries owner noted for xid, and forgets them; _from:
 * those it noted after the first `from`. */
void rowlock_release(rowlock_table *t, rowlock_owner *owner, xid_t xid);
void rowlock_release_from(rowlock_table *t, rowlock_owner *owner,
                          uint32_t from, xid_t xid);
void rowlock_owner_free(rowlock_owner *owner);

/* Entries in the table now, live or not (relaxed). */
uint32_t rowlock_count(const rowlock_table *t);

#endif /* KEEL_TXN_ROWLOCK_H */
