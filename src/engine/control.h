/*
 * control.h: the control file: what a database directory is.
 *
 * One small file, "keel_control", at the top of every database directory,
 * holding the layout version and the few counters that must survive a
 * restart.  It is replaced atomically (written to a temporary file, synced,
 * renamed over the old one, directory synced), so a crash leaves either the
 * old contents or the new, never a mix; a CRC-32C over the contents catches
 * anything else.
 */
#ifndef KEEL_ENGINE_CONTROL_H
#define KEEL_ENGINE_CONTROL_H

#include <stdint.h>

#include "port/error.h"

#define CONTROL_FILE_NAME      "keel_control"
#define CONTROL_LOCK_NAME      "keel_lock"
/* The directory's layout: the control file's, the log's record format
 * and the heap page's (3: compact block references and copies,
 * src/storage/buf_log.h; 4: the 24-byte record header, src/wal/wal.h;
 * 5: heap-only chains, which an older build would read as rows missing,
 * src/access/heap_page.h, and the record operations that make them;
 * 6: transactions' ends as bodiless records, src/txn/clog.h, and a heap
 * page's compaction as a record operation). */
#define CONTROL_LAYOUT_VERSION 6

typedef enum control_state {
    CONTROL_SHUT_DOWN = 1,     /* closed cleanly: everything is on disk */
    CONTROL_IN_PRODUCTION = 2, /* open, or it crashed while open */
} control_state;

typedef struct control_data {
    uint32_t layout_version; /* CONTROL_LAYOUT_VERSION when written */
    uint32_t page_version;   /* PAGE_LAYOUT_VERSION of the relation files */
    uint32_t block_size;     /* BLOCK_SIZE of the relation files */
    uint32_t state;          /* control_state */
    uint32_t xid_limit;      /* no transaction id at or past it was used */
    uint32_t next_oid;       /* the next object id to assign */
    uint32_t oid_limit;      /* no object id at or past it was used */
    uint32_t reserved;
    uint64_t checkpoints; /* successful checkpoints, ever */
    uint64_t redo_lsn;       /* recovery replays the log from here */
    uint64_t checkpoint_lsn; /* the last checkpoint's record, or 0 */
} control_data;

/* Fills c with the values of a database just created. */
void control_init(control_data *c);

/*
 * Writes a new control file in dir.  EEXIST if there is one already (the
 * directory is a database), other errors as the system reports them.
 */
int control_create(const char *dir, const control_data *c, kerr *err);

/*
 * Reads and verifies dir's control file.  Errors, each naming the
 * directory: ENOENT (no control file: not a keel database), ECORRUPT (wrong
 * size, not a keel control file, checksum mismatch), EVERSION (written by
 * an incompatible layout version, or with another page size).
 */
int control_read(const char *dir, control_data *c, kerr *err);

/* Replaces dir's control file atomically with c.  On error the old file is
 * intact. */
int control_write(const char *dir, const control_data *c, kerr *err);

/*
 * Takes the database's lock: an exclusive flock(2) on dir's lock file
 * (created if absent), which then holds the holder's process id for the
 * message of the next one to try.  The lock belongs to the open file
 * description, so a second open of the database fails in the same process
 * as in another, and the kernel releases it when the process ends, however
 * it ends.  *fd is the descriptor to pass to control_unlock().  Errors:
 * EBUSY (held, by this process or which other), the system's otherwise.
 */
int control_lock(const char *dir, int *fd, kerr *err);

/* A read-only open's lock: a shared flock(2) on the lock file, opened
 * O_RDONLY and never created or written (no file: *fd is -1, KEEL_OK).
 * Shared locks exclude control_lock(), not one another. */
int control_lock_shared(const char *dir, int *fd, kerr *err);

/* Releases the lock control_lock() took (nothing for fd < 0). */
void control_unlock(int fd);

#endif /* KEEL_ENGINE_CONTROL_H */
