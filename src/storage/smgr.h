/*
 * smgr.h: the storage manager: relation files of 8 KiB blocks.
 *
 * A database directory holds one file per relation, named by the
 * relation's file number in decimal ("16384").  The storage manager opens
 * each file once and shares the descriptor among all threads; pread and
 * pwrite need no locks.  Extension and truncation of one relation are
 * serialized by a per-relation mutex, and the relation's size in blocks is
 * cached in an atomic so that readers need no system call to learn it.
 *
 * Every block read is verified (page_verify()): a checksum mismatch, a bad
 * header, a short read or a block past the end is an error whose message
 * names the file and the block.  An access method may register a check of
 * its own pages for a relation (smgr_rel_set_check()), which the buffer
 * manager applies to each page it reads (smgr_check()).  Writes set the page's
 * checksum first, except that an all-zero page is written as is, so that it
 * reads back as a new page (see page.h).
 *
 * Thread safety: every function may be called concurrently, except that a
 * relation must not be used while smgr_unlink() or smgr_close() runs on it
 * (the buffer manager guarantees this by dropping the relation's buffers
 * first).
 */
#ifndef KEEL_STORAGE_SMGR_H
#define KEEL_STORAGE_SMGR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "port/error.h"
#include "storage/page.h"

typedef uint32_t relnumber_t; /* relation file number; 0 is invalid */
typedef uint32_t blocknum_t;  /* block number within a relation */

#define INVALID_RELNUMBER ((relnumber_t)0)
#define MAX_BLOCK_NUMBER  ((blocknum_t)0xFFFFFFFE)

typedef struct smgr smgr;         /* one database directory */
typedef struct smgr_rel smgr_rel; /* one open relation file */

/* Opens the storage manager over an existing directory.  ENOENT if the
 * directory does not exist. */
int smgr_open(const char *dir, smgr **out, kerr *err);

/* As smgr_open(), but files are opened O_RDONLY and every create, unlink,
 * write, extend, truncate and sync fails with EREADONLY. */
int smgr_open_read_only(const char *dir, smgr **out, kerr *err);

/* Closes every open relation file and frees s.  Does not sync. */
void smgr_close(smgr *s);

/* The directory s was opened on. */
const char *smgr_dir(const smgr *s);

/* Creates an empty relation file (EEXIST if there is one) and syncs the
 * directory so that the file's existence is durable.  On success *out (if
 * not NULL) is the open relation. */
int smgr_create(smgr *s, relnumber_t rel, smgr_rel **out, kerr *err);

/* Returns the open relation, opening its file on first use.  ENOENT if
 * the file does not exist.  The handle stays valid until smgr_unlink() of
 * the relation or smgr_close(). */
int smgr_rel_open(smgr *s, relnumber_t rel, smgr_rel **out, kerr *err);

/* True if the relation's file exists. */
bool smgr_exists(smgr *s, relnumber_t rel);

/* Deletes the relation's file, closes its handle and syncs the directory. */
int smgr_unlink(smgr *s, relnumber_t rel, kerr *err);

/* The relation number a file name spells, as the storage manager names
 * files (decimal, no leading zero, not 0, at most UINT32_MAX), in *out;
 * false if it spells none. */
bool smgr_relnumber_of(const char *name, relnumber_t *out);

/* The relation's file number and its file's path (for messages). */
relnumber_t smgr_rel_number(const smgr_rel *r);
const char *smgr_rel_path(const smgr_rel *r);

/* Number of blocks in the relation: whole blocks only; a partial block at
 * the end of the file (left by a crash during extension) is not counted,
 * and the next smgr_extend() overwrites it. */
blocknum_t smgr_nblocks(smgr_rel *r);

/*
 * Reads block blk into buf (BLOCK_SIZE bytes) and verifies it.  Errors:
 * EEOF if blk >= smgr_nblocks(), EIO on a failed or short read, ECORRUPT
 * on a checksum or header mismatch, EVERSION on a page of another layout
 * version.  An all-zero (new) page is not an error.  On error buf's
 * contents are undefined.
 */
int smgr_read(smgr_rel *r, blocknum_t blk, void *buf, kerr *err);

/*
 * A check of a page's contents beyond what page_verify() knows: whether
 * page, block blk of a relation as read from disk (checksum and header
 * right, not new), is sound for its access method.  arg is the check's
 * argument as registered.  Returns true, or false with what is wrong in
 * why (len bytes: "item 3: size 9 out of bounds").
 */
typedef bool (*smgr_check_fn)(const void *page, blocknum_t blk, const void *arg,
                              char *why, size_t len);

/*
 * Gives relation r the page check fn, with a copy of the len bytes at arg
 * (8-aligned) as its argument, for smgr_check().  An access method
 * registers its check before any of its pages but the first is read, and
 * a relation keeps it until smgr_unlink() or smgr_close().  Registering the
 * same check again changes nothing; a different one replaces it (the old
 * one stays valid for readers still using it).  ENOMEM.  May be called
 * concurrently with anything, smgr_check() included.
 */
int smgr_rel_set_check(smgr_rel *r, smgr_check_fn fn, const void *arg,
                       size_t len, kerr *err);

/*
 * Applies r's page check, if it has one, to page, block blk as just read
 * by smgr_read(); a new (all-zero) page is passed unchecked.  KEEL_OK, or
 * ECORRUPT with a message naming the file, the block and what is wrong.
 */
int smgr_check(smgr_rel *r, blocknum_t blk, const void *page, kerr *err);

/*
 * Sets the checksum of page (BLOCK_SIZE bytes, so the caller passes memory
 * nobody else reads: a private copy) and writes it as block blk, which must
 * already exist (EEOF otherwise).  An all-zero page is written unchanged,
 * without a checksum, and reads back as a new page.  On failure, the code
 * kerr_from_errno() gives for the system call's errno (EIO, ENOSPC, ...);
 * a short write is ENOSPC, and leaves the block torn.
 */
int smgr_write(smgr_rel *r, blocknum_t blk, void *page, kerr *err);

/*
 * Appends page (its checksum set first, as smgr_write) as a new block and
 * returns its number in *blk.  Concurrent extensions get distinct blocks.
 * On failure (errors as smgr_write; ENOSPC also when the relation already
 * has MAX_BLOCK_NUMBER + 1 blocks) smgr_nblocks() is unchanged and the file
 * is cut back to that many whole blocks.
 */
int smgr_extend(smgr_rel *r, void *page, blocknum_t *blk, kerr *err);

/*
 * smgr_extend() in two steps, for a caller that must act between choosing
 * the block and counting it (the buffer manager maps its buffer first):
 * smgr_extend_begin() returns in *blk the number the new block will have
 * (errors as smgr_extend()) and, on success, holds the relation's
 * extension lock, so that no other extension or truncation can run until
 * smgr_extend_finish() writes page as that block and counts it (errors as
 * smgr_extend(), the file as it was) or smgr_extend_abort() gives up.
 * Both release the lock.  Reads and writes of other blocks go on meanwhile.
 */
int smgr_extend_begin(smgr_rel *r, blocknum_t *blk, kerr *err);
int smgr_extend_finish(smgr_rel *r, void *page, kerr *err);
void smgr_extend_abort(smgr_rel *r);

/* Truncates the relation to nblocks blocks (EINVAL if that is more than it
 * has). */
int smgr_truncate(smgr_rel *r, blocknum_t nblocks, kerr *err);

/* fsyncs the relation's file.  EIO on failure. */
int smgr_sync(smgr_rel *r, kerr *err);

#endif /* KEEL_STORAGE_SMGR_H */
