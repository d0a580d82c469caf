/*
 * cid.h: command ids, what keeps a statement from seeing its own changes.
 *
 * A transaction's statements are numbered: command ids, from CID_FIRST.
 * Every row version a transaction writes records the command that wrote
 * it: the inserting command (cmin) or the deleting one (cmax).  Only the
 * writing transaction ever looks at them: a version it inserted is seen by
 * the commands after the inserting one, and a version it deleted is still
 * seen by the deleting command and the ones before it (src/access/README.md,
 * "Command ids").  Other transactions decide by xids alone.
 *
 * A heap tuple has room for one command id, a 32-bit word.  When one
 * transaction both inserted and deleted a version in different commands,
 * the word holds a combo id instead (PostgreSQL's combo command ids), with
 * CID_COMBO set: an index into this transaction's table of (cmin, cmax)
 * pairs, which only the transaction itself needs and which goes with it.
 * A version inserted and deleted by the same command needs no pair: it is
 * seen by no command, and its one id serves as both.  Command and combo
 * ids therefore stay below CID_COMBO (2^31).
 *
 * A cid_state is one session's: its transaction's current command, whether
 * that command has written yet (a command that has not is not left behind:
 * a statement that only reads takes no id), the command its readers read
 * as, and the combo table.  It is used by the session's thread only; the
 * transaction layer resets it when a transaction that wrote ends.  The
 * access methods reach it through the visibility they are given
 * (snapshot.h).
 */
#ifndef KEEL_TXN_CID_H
#define KEEL_TXN_CID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "port/error.h"

typedef uint32_t cid_t;

#define CID_FIRST ((cid_t)0)
/* The last command a transaction may have, and the most combo ids. */
#define CID_LAST ((cid_t)0x7FFFFFFEu)
/* In a tuple's command id word: the rest is a combo id. */
#define CID_COMBO ((uint32_t)0x80000000u)
/* As the command readers read as: every change of the transaction is seen
 * (every read but those of an open scan's command). */
#define CID_ALL ((cid_t)0xFFFFFFFFu)

typedef struct cid_pair {
    cid_t cmin, cmax;
} cid_pair;

typedef struct cid_state {
    cid_t current; /* the running command */
    bool used;     /* it has stamped a change */
    cid_t reading; /* what readers read as: CID_ALL, or an open scan's */
    uint32_t npairs, cap;
    cid_pair *pairs; /* combo id -> (cmin, cmax) */
    uint32_t *slots; /* hash of the pairs: combo id + 1, 0 if free */
    uint32_t nslots; /* a power of two, twice cap; 0 before the first */
} cid_state;

/* A state at CID_FIRST, read as CID_ALL, with no pairs. */
void cid_state_init(cid_state *c);

/* Back to CID_FIRST, read as CID_ALL, no pairs; memory kept, unless there
 * was a lot. */
void cid_state_reset(cid_state *c);

/* Frees what c holds (leaves it as cid_state_init()). */
void cid_state_free(cid_state *c);

/*
 * The command a change is written by, from now on counted as having
 * written.  NULL (a caller without command ids: tests, loads) is
 * CID_FIRST.
 */
static inline cid_t cid_stamp(cid_state *c)
{
    if (c == NULL)
        return CID_FIRST;
    c->used = true;
    return c->current;
}

/*
 * Ends the current command if it has written, so that the next change is
 * another command's and the next reader of the command sees it.  Nothing
 * if it has not.  EEXHAUSTED (the command unchanged) past CID_LAST.
 */
int cid_next(cid_state *c, kerr *err);

/* The most combo ids a transaction may have (the table's hash has twice
 * as many slots, which must fit 32 bits). */
#define CID_COMBO_MAX (UINT32_C(1) << 30)

/*
 * The combo id of (cmin, cmax), the same one for the same pair within a
 * transaction, in *combo (below CID_COMBO_MAX).  ENOMEM, or EEXHAUSTED
 * past CID_COMBO_MAX pairs.
 */
int cid_combo(cid_state *c, cid_t cmin, cid_t cmax, uint32_t *combo, kerr *err);

/* The pair behind combo id combo; an id the table does not hold (only a
 * damaged tuple can name one) reads as CID_FIRST both. */
static inline cid_pair cid_combo_pair(const cid_state *c, uint32_t combo)
{
    if (combo < c->npairs)
        return c->pairs[combo];
    return (cid_pair){CID_FIRST, CID_FIRST};
}

#endif /* KEEL_TXN_CID_H */
