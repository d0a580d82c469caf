/*
 * btree.h: the B-tree access method.
 *
 * An index is a relation of 8 KiB pages read through the buffer pool.  Its
 * entries are (key, heap tid) pairs; the key has one or more columns of the
 * types in keel.h, encoded as tuple.h describes and compared column by
 * column with value_compare().  Entries are ordered by (key, tid), so every
 * entry is distinct and equal keys sit in tid order ("heapkeyspace", as in
 * PostgreSQL 12+).  A unique index refuses a second entry with an equal key
 * (no column null) unless the caller's is_live callback says the existing
 * entry's row is not live (btree_row).
 *
 * Concurrency follows Lehman and Yao as PostgreSQL's nbtree does it: every
 * page but the rightmost of its level has a high key and a right-link;
 * readers hold a share lock on one page at a time and move right when a
 * concurrent split moved their key; writers lock left before right and
 * child before parent.  The protocol is in src/access/README.md.
 *
 * A btree handle may be shared by threads; each thread passes its own
 * buf_session.  Every function that can fail returns a keel_status and
 * leaves the message in the session (buf_session_error()); a failed call
 * leaves nothing pinned or locked.
 *
 * Not done (by design, for now): page deletion and free-space reuse (a
 * delete removes the entry; empty pages stay in the tree), WAL, backward
 * scans.
 */
#ifndef KEEL_ACCESS_BTREE_H
#define KEEL_ACCESS_BTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "access/tid.h"
#include "access/tuple.h"
#include "keel/keel.h"
#include "storage/bufmgr.h"

/* Most key columns an index may have. */
#define BTREE_MAX_KEYS 16

/* Largest encoded key (tuple_size() of the key columns), in bytes: three
 * entries must fit on a page. */
#define BTREE_MAX_KEY_SIZE 2688

typedef struct btree btree;

/*
 * What a unique index's insertion learns of the row an entry with an
 * equal key points at: BTREE_ROW_LIVE, it may be live, and the key is
 * taken; BTREE_ROW_GONE, it is not live now (but may be again, as when
 * the caller's own transaction deleted it and may still abort);
 * BTREE_ROW_DEAD, it never can be live again (its inserter aborted, or its
 * deleter committed).  An entry found dead on a page the check holds
 * exclusively is marked so (BT_INFO_UNIQUE_DEAD), and later checks pass it
 * without asking: the fate of a row once dead does not change.  Searches
 * and scans ignore the mark, since older snapshots may still see the row.
 */
typedef enum btree_row {
    BTREE_ROW_LIVE,
    BTREE_ROW_GONE,
    BTREE_ROW_DEAD,
    BTREE_ROW_ERROR, /* it could not tell (an I/O error reading the row):
                        the insertion fails with the error the callback
                        left in the session's kerr, inserting nothing */
} btree_row;

/*
 * Tells what the heap row at t is to a unique index (btree_row).  Called
 * with the index leaf page exclusively locked; it may read heap pages but
 * must not touch the index.  On an error it answers BTREE_ROW_ERROR, with
 * the error in the session's kerr: the insertion is refused, as it would
 * be for a live row, but with the error that kept it from knowing rather
 * than a duplicate key that may not exist.
 */
typedef btree_row (*btree_is_live_fn)(void *ctx, tid t);

/*
 * Tells whether the row at t, whose entry is marked dead, can be seen by
 * no snapshot now or later (its inserter aborted, or its deleter committed
 * below the horizon, txn_horizon()), so that the entry may go.  Called as
 * btree_is_live_fn is; on an error or any doubt it must answer false.
 */
typedef bool (*btree_removable_fn)(void *ctx, tid t);

/* ---- opening and creating --------------------------------------------- */

/*
 * Creates an empty index in relation rel (its file is created if it does
 * not exist; EEXIST if it exists and is not empty) with the key columns
 * of keydesc (1..BTREE_MAX_KEYS columns, copied), unique or not, and
 * returns an open handle in *out.  The meta page and the empty root leaf
 * are written through the pool (durable at the next checkpoint).
 */
int btree_create(buf_session *s, relnumber_t rel, const tuple_desc *keydesc,
                 bool unique, btree **out);

/*
 * Opens the index in rel.  The key columns and the unique flag come from
 * its meta page.  ENOENT (no such relation), ECORRUPT (not a B-tree meta
 * page), EVERSION, ENOMEM.
 */
int btree_open(buf_session *s, relnumber_t rel, btree **out);

/* Frees the handle (NULL is fine).  No other thread may be using it. */
void btree_close(btree *bt);

/* Registers the B-tree's log operations' redo (storage/buf_log.h); once,
 * before a database with a log is opened. */
void btree_log_register(void);

/* What the handle says about its index.  The descriptor stays valid until
 * btree_close(). */
relnumber_t btree_relnumber(const btree *bt);
const tuple_desc *btree_key_desc(const btree *bt);
bool btree_is_unique(const btree *bt);
/* Entries btree_insert_prune() has removed through this handle. */
uint64_t btree_pruned(const btree *bt);

/* ---- changing ---------------------------------------------------------- */

/*
 * Inserts the entry (keys, t); keys has one value per key column.  In a
 * unique index, if an entry with an equal key (no column null) exists
 * whose row is_live(ctx, its tid) says may be live (is_live NULL: every
 * entry is live), nothing is inserted and KEEL_EUNIQUE is returned with a
 * message naming the key.  Entries marked dead by an earlier check are
 * passed without a call; entries is_live finds dead are marked where the
 * check holds their page exclusively (every page up to the one (keys, t)
 * goes into, so nearly all of a row's older versions when t is newer).  The
 * check and the insertion happen under the leaf's exclusive lock, so of two
 * concurrent inserts of one key at most one succeeds.  Errors: EINVAL (invalid
 * tid), EEXIST (this exact (key, tid) is already indexed), ETYPE / ETOOBIG (a
 * value does not fit its column, or the key is over BTREE_MAX_KEY_SIZE),
 * EUNIQUE, and I/O, memory or pool errors.  A failed insert leaves the
 * tree as it was, also after an error in the middle of a split (see
 * README, "A split is all or nothing").
 */
int btree_insert(btree *bt, buf_session *s, const keel_value *keys, tid t,
                 btree_is_live_fn is_live, void *ctx);

/*
 * btree_insert() that, where the entry's leaf is full, first removes the
 * leaf's entries marked dead that removable(ctx, tid) allows, and splits
 * the leaf only if the entry still does not fit (see README.md, "Dead
 * marks").  Readers never miss such an entry: no snapshot sees its row.
 * Without it a row updated n times keeps n entries; with it a row's
 * entries are those of its versions some snapshot may still see, plus
 * those not yet marked.
 */
int btree_insert_prune(btree *bt, buf_session *s, const keel_value *keys, tid t,
                       btree_is_live_fn is_live, btree_removable_fn removable,
                       void *ctx);

/* Removes the entry (keys, t).  ENOENT if it is not there. */
int btree_delete(btree *bt, buf_session *s, const keel_value *keys, tid t);

/* ---- searching --------------------------------------------------------- */

/*
 * Point search: finds every entry whose key equals keys (all key columns),
 * in tid order.  Stores the first min(count, max) tids in tids and the
 * number of matches in *count.  Allocates nothing.
 */
int btree_search(btree *bt, buf_session *s, const keel_value *keys, tid *tids,
                 uint32_t max, uint32_t *count);

struct heap_rel;

/*
 * A session's directory of an index: a private copy of the downlinks of
 * the index's lowest internal level that fits in its size (by default a
 * few thousand entries: for a table of a few million rows, every leaf),
 * so that a lookup of an integer key goes straight to its leaf (or to the
 * page above it) without pinning or locking the root and the internal
 * pages: no shared cache line is written for them, and two sessions'
 * lookups do not pass those lines between their cores.
 *
 * It is only a starting point.  B-tree pages are never deleted and a split
 * keeps a page's lower bound, so the page a directory names for a key,
 * however old the directory, holds the key or lies left of it, and the
 * lookup moves right as after any split.  A lookup that would move right
 * more than twice starts from the root instead; when splits since the
 * directory was read have made lookups move right more than 16 times and
 * more than once in 32 lookups, or the tree grows a level, the directory
 * is read again (a share lock on one page at a time).
 *
 * One session uses a directory, for any number of indexes one after the
 * other (it is rebuilt when the index changes).  Indexes whose root is a
 * leaf, or of other key types, are searched from the root as without one.
 */
typedef struct btree_dir btree_dir;

/* What a directory holds and what it did. */
typedef struct btree_dir_stats {
    uint64_t uses;      /* lookups that asked for it */
    uint64_t moves;     /* moves right at its level, after starting there */
    uint64_t fallbacks; /* lookups that went back to the root */
    uint64_t builds;    /* times it was read from the index */
    uint32_t level;     /* level of the pages its entries lead to (0 when
                         * it has none) */
    uint32_t entries;   /* 0: not in use */
    size_t bytes;       /* memory it holds */
} btree_dir_stats;

/* Entries a directory holds at most by default: 24 bytes each, so 96 KiB.
 * A scale-10 pgbench accounts index has about 2,500 leaves. */
#define BTREE_DIR_DEFAULT_ENTRIES 4096
/* The most a directory may be given. */
#define BTREE_DIR_MAX_ENTRIES (UINT32_C(1) << 24)

/* A new, empty directory of at most max_entries entries (0: the default;
 * more than BTREE_DIR_MAX_ENTRIES: that many); NULL when out of memory. */
btree_dir *btree_dir_new(uint32_t max_entries);

/* Whether a directory can serve lookups in bt: an index of one integer
 * column (int2, int4, int8, oid). */
bool btree_dir_applies(const btree *bt);

/* Frees d (NULL is fine). */
void btree_dir_free(btree_dir *d);

/* Whether d was last built for bt. */
bool btree_dir_is_for(const btree_dir *d, const btree *bt);

void btree_dir_stats_get(const btree_dir *d, btree_dir_stats *out);

/*
 * btree_search() for a caller about to fetch the entries' rows from heap,
 * the index's table: on an index of one integer column the first entry's
 * row is guessed and prefetched as btree_lookup_heap() does (the guess in
 * *guessed, offset 0 if none; NULL allowed).  The results are
 * btree_search()'s.
 */
int btree_search_heap(btree *bt, buf_session *s, const keel_value *keys,
                      const struct heap_rel *heap, btree_dir *dir, tid *tids,
                      uint32_t max, uint32_t *count, tid *guessed);

/*
 * btree_search() for the versions of a row, where the last entries in
 * tid order are the likeliest to be seen (a row's new version usually
 * lands after its old one): stores the last min(count, max) tids, in tid
 * order, and the number of matches in *count.  Through dir as
 * btree_search_heap() (NULL: from the root).  Allocates nothing; every
 * entry is still read (for the count), but only the last max are kept.
 * No heap row is prefetched: the row the descent could guess is the
 * key's first entry's, the oldest version.
 */
int btree_search_last(btree *bt, buf_session *s, const keel_value *keys,
                      btree_dir *dir, tid *tids, uint32_t max, uint32_t *count);

/*
 * The lean path for primary-key lookups: the first entry (in tid order)
 * whose key equals keys, in *t.  KEEL_OK, or KEEL_ENOENT when there is
 * none.  Allocates nothing.
 */
int btree_lookup(btree *bt, buf_session *s, const keel_value *keys, tid *t);

/*
 * btree_lookup() for a caller about to fetch the entry's row from heap,
 * the index's table (NULL: plain btree_lookup()).  On an index of one
 * integer column whose entries around the key point into the heap in key
 * order (heap_tid_guess() on the tids of the leaf's bounding separators),
 * the row's lines are prefetched before the leaf is read, so that the
 * two pages' cache misses overlap instead of following one another; the
 * tid guessed goes to *guessed (offset 0 when there was no guess; NULL
 * allowed).  Only a hint: the result is btree_lookup()'s whatever the
 * heap's order.
 *
 * dir (NULL allowed) is the calling session's directory of the index (see
 * btree_dir_new()): an index of one integer column is then entered at
 * the page it names, not at the root.
 */
int btree_lookup_heap(btree *bt, buf_session *s, const keel_value *keys,
                      const struct heap_rel *heap, btree_dir *dir, tid *t,
                      tid *guessed);

/*
 * A bound of a range scan: the first ncols key columns (1..natts) in vals,
 * inclusive or not.  With ncols < natts it is a prefix bound: every key
 * whose first ncols columns equal vals is inside an inclusive bound and
 * outside an exclusive one.
 */
typedef struct btree_bound {
    const keel_value *vals;
    uint16_t ncols;
    bool inclusive;
} btree_bound;

typedef struct btree_scan btree_scan;

/*
 * Starts a range scan of the entries with lower <= key <= upper (either
 * bound NULL: unbounded on that side; exclusive bounds as stated in them),
 * in (key, tid) order.  The bounds' values are copied.  The scan holds no
 * pin or lock between calls: it copies the matching entries of one leaf at
 * a time and follows the leaf's right-link for the next batch, so a
 * concurrent split never makes it miss or repeat an entry that stays in
 * the index for the whole scan.  ENOMEM, EINVAL (bad bound).
 */
int btree_scan_begin(btree *bt, buf_session *s, const btree_bound *lower,
                     const btree_bound *upper, btree_scan **out);

/*
 * The next entry: KEEL_OK with its tid in *t and, if keys is not NULL, its
 * key columns in keys (btree_key_desc()->natts values, pointing into the
 * scan's memory, valid until the next call); KEEL_ENOENT at the end; or an
 * error (reading the next leaf: no buffer free, an I/O error), after which
 * the next call tries that leaf again.
 */
int btree_scan_next(btree_scan *sc, tid *t, keel_value *keys);

/* Ends a scan (NULL is fine). */
void btree_scan_end(btree_scan *sc);

/*
 * As btree_scan_begin() and btree_scan_end(), keeping one ended scan's
 * memory (11 KiB) in *spare for the next begin, so that a caller that
 * scans often (a catalog cache miss reads the catalog through a scan)
 * allocates nothing: begin takes *spare if it holds one (*spare is then
 * NULL, on success only), end puts sc there if it is empty and frees it
 * otherwise.  btree_scan_end(*spare) frees the spare.
 */
int btree_scan_begin_spare(btree *bt, buf_session *s, const btree_bound *lower,
                           const btree_bound *upper, btree_scan **spare,
                           btree_scan **out);
void btree_scan_end_spare(btree_scan *sc, btree_scan **spare);

/* ---- bulk build -------------------------------------------------------- */

/*
 * Supplies the next input entry of a bulk build: returns true with *keys
 * (one value per key column, valid until the next call) and *t set, or
 * false at the end.
 */
typedef bool (*btree_build_next_fn)(void *ctx, const keel_value **keys, tid *t);

/*
 * Builds an index in rel (created if absent; EEXIST if not empty) from
 * entries supplied in ascending (key, tid) order: leaves are filled left
 * to right to 90%, upper levels to 70%, through a bulk-write ring.  EINVAL
 * if the input is not strictly ascending, EUNIQUE if a unique index gets
 * two equal keys without nulls; the message names the entry's position.
 * On failure the relation holds a partial index and must be dropped.  On
 * success *out (if not NULL) is an open handle, and *count (if not NULL)
 * the number of entries.
 */
int btree_build(buf_session *s, relnumber_t rel, const tuple_desc *keydesc,
                bool unique, btree_build_next_fn next, void *ctx, btree **out,
                uint64_t *count);

/* One entry of an array input to btree_build_array(). */
typedef struct btree_entry {
    const keel_value *keys;
    tid t;
} btree_entry;

/* btree_build() over an array of n entries. */
int btree_build_array(buf_session *s, relnumber_t rel,
                      const tuple_desc *keydesc, bool unique,
                      const btree_entry *entries, size_t n, btree **out);

/* ---- checking ---------------------------------------------------------- */

/* Receives one problem: a line naming the block (and item) concerned. */
typedef void (*btree_problem_fn)(void *ctx, const char *line);

/* Receives one leaf entry, in (key, tid) order, and whether a unique check
 * marked it dead (BT_INFO_UNIQUE_DEAD); keys point into a private copy of
 * the page, valid during the call. */
typedef void (*btree_entry_fn)(void *ctx, const keel_value *keys, tid t,
                               bool unique_dead);

/*
 * The structural checker, for tests and `keel check`.  Reads the index in
 * rel page by page under share locks; it assumes no concurrent writers
 * (with them it may report spurious problems, never crash).  Checks: the
 * meta page; each page's header, special space, item bounds and key
 * encodings; keys strictly ascending in (key, tid) order within each page;
 * every entry below its page's high key and not below its left sibling's;
 * each level's right-link chain matching its parents' downlinks in order
 * (so every page is reachable from the root), with left-links, levels,
 * flags and high keys equal to the next downlink's separator; no heap
 * tuple indexed twice.  (Equal keys in a unique index are not a problem:
 * their rows may be dead versions.)  Each problem goes
 * to problem (may be NULL) as one line; entry (may be NULL) receives every
 * leaf entry in key order, so the caller can check that each heap tuple is
 * indexed exactly once.  Returns KEEL_OK with the number of problems in
 * *problems, or ENOENT / ENOMEM (nothing checked).
 */
int btree_check(buf_session *s, relnumber_t rel, btree_problem_fn problem,
                btree_entry_fn entry, void *ctx, uint64_t *problems);

#endif /* KEEL_ACCESS_BTREE_H */
