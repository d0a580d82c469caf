/*
 * procarray.h: the process array: one slot per session, holding what other
 * sessions need to know about it to take snapshots: the transaction id it
 * is running (0 if none) and the oldest xmin of the snapshots it holds.
 *
 * Two layouts, chosen when the array is created:
 *
 * PROCARRAY_PADDED (the default, after PostgreSQL 14): what snapshots scan,
 * the slots' xids, is a dense array of 32-bit atomics (16 to a cache line),
 * written only when a session gets an xid or ends a transaction that had
 * one.  What a session writes on every snapshot, its xmin, lives in its own
 * 64-byte, cache-line-aligned slot, which no other session writes and
 * snapshots never read: taking a snapshot invalidates no line anyone else
 * is reading.
 *
 * PROCARRAY_PACKED (after PostgreSQL's 2016 PGXACT): one array of 12-byte
 * structs {xid, xmin, flags} side by side, unpadded.  Five or six sessions
 * share each cache line, so every snapshot's xmin store invalidates the line
 * that the other sessions' snapshots are scanning.  Kept to measure what the
 * padding buys (the benchmarks); correct, but slower under load.
 *
 * Both arrays start on a cache line.  A high-water mark (one past the
 * highest slot in use) bounds every scan.
 *
 * The memory orders, and why a snapshot needs no lock, are in
 * src/txn/README.md.  In short: xids are published with release stores and
 * read with acquire loads, one load per slot, and xid assignment (txn.c)
 * publishes under a lock.
 */
#ifndef KEEL_TXN_PROCARRAY_H
#define KEEL_TXN_PROCARRAY_H

#include <stdbool.h>
#include <stdint.h>

#include "port/atomics.h"
#include "port/error.h"
#include "port/mem.h"
#include "txn/snapshot.h"

typedef enum procarray_layout {
    PROCARRAY_PADDED = 0, /* dense xid array + padded per-session slots */
    PROCARRAY_PACKED = 1, /* 2016 layout: small structs side by side */
} procarray_layout;

/* Most sessions one array can hold. */
#define PROCARRAY_MAX_SESSIONS 65536u

/* Padded layout: one session's own line.  Only its owner writes xmin. */
typedef struct procarray_slot {
    CACHE_ALIGNED atomic_u32 xmin; /* oldest xmin the session's snapshots
                                      need, 0 if it holds none */
    uint32_t in_use;               /* under the attach lock */
} procarray_slot;

_Static_assert(sizeof(procarray_slot) == CACHE_LINE_SIZE,
               "a padded slot is exactly one cache line");

/* Packed layout: PGXACT-like, 12 bytes, deliberately unpadded. */
typedef struct procarray_packed_slot {
    atomic_u32 xid;
    atomic_u32 xmin;
    uint8_t in_use; /* under the attach lock */
    uint8_t spare[3];
} procarray_packed_slot;

_Static_assert(sizeof(procarray_packed_slot) == 12,
               "the packed slot is PGXACT-sized");

typedef struct procarray procarray;

/*
 * Creates an array of max_sessions (1 .. PROCARRAY_MAX_SESSIONS) free
 * slots in the given layout.  EINVAL for a bad count or layout, ENOMEM.
 */
int procarray_create(uint32_t max_sessions, procarray_layout layout,
                     procarray **out, kerr *err);

/* Frees pa.  Every slot must have been detached.  NULL is ignored. */
void procarray_destroy(procarray *pa);

procarray_layout procarray_get_layout(const procarray *pa);
uint32_t procarray_max_sessions(const procarray *pa);

/* One past the highest slot in use (what scans read). */
uint32_t procarray_high_water(const procarray *pa);

/*
 * Takes the lowest free slot, its xid and xmin 0, and returns its index in
 * *slot.  EEXHAUSTED when all max_sessions slots are taken.
 */
int procarray_attach(procarray *pa, uint32_t *slot, kerr *err);

/* Frees slot.  Its xid must already be 0; its xmin is cleared. */
void procarray_detach(procarray *pa, uint32_t slot);

/*
 * Publishes xid as slot's running transaction (release store), or clears it
 * with XID_INVALID.  Only the slot's owner calls it.
 */
void procarray_set_xid(procarray *pa, uint32_t slot, xid_t xid);

/* The slot's published xid (acquire load). */
xid_t procarray_get_xid(const procarray *pa, uint32_t slot);

/* Publishes slot's xmin (relaxed store; 0 = no snapshot).  Owner only. */
void procarray_set_xmin(procarray *pa, uint32_t slot, xid_t xmin);
xid_t procarray_get_xmin(const procarray *pa, uint32_t slot);

/*
 * The snapshot scan: stores in out (room for max_sessions entries) every
 * xid published in a used slot other than skip_slot that is below xmax,
 * in slot order, and returns how many.  Each slot's xid is one acquire
 * load.  Pass skip_slot = UINT32_MAX to skip none.
 */
uint32_t procarray_collect(const procarray *pa, xid_t xmax, uint32_t skip_slot,
                           xid_t *out);

#ifdef KEEL_FAULT_INJECTION
/*
 * Tests only: makes every procarray_collect() call fn(arg) after it has
 * read slot `after` and before it reads the next one, so that a test can
 * end transactions in the middle of a scan, deterministically.  fn NULL
 * removes the hook.  Set it while no scan runs.
 */
void procarray_set_scan_hook(procarray *pa, uint32_t after,
                             void (*fn)(void *arg), void *arg);
#endif

/*
 * The lowest of bound and every xmin published in a used slot (and, with
 * xids, every xid), for the horizon (txn_horizon()): relaxed loads of the
 * xmins, acquire loads of the xids.
 */
xid_t procarray_oldest(const procarray *pa, xid_t bound, bool xids);

/* True if xid is published in some slot now (acquire loads). */
bool procarray_contains(const procarray *pa, xid_t xid);

#endif /* KEEL_TXN_PROCARRAY_H */
