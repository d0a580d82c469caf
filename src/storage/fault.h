/*
 * fault.h: I/O fault injection for tests.
 *
 * Compiled in only when KEEL_FAULT_INJECTION is defined (the test builds).
 * A test arms a fault for one kind of operation; the storage manager (and,
 * for the control file, the engine) asks fault_next() before each real
 * system call and, when told to, fails the call the way the kernel would
 * (EIO, ENOSPC) or performs only part of it (a short read or write).
 * State is process-wide and thread-safe.
 *
 * In builds without fault injection fault_next() is a constant
 * FAULT_NONE, so the storage manager's checks compile away.
 */
#ifndef KEEL_STORAGE_FAULT_H
#define KEEL_STORAGE_FAULT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

typedef enum fault_op {
    FAULT_OP_READ = 0, /* pread of a block */
    FAULT_OP_WRITE,    /* pwrite of a block, including extension */
    FAULT_OP_SYNC,     /* fsync of a relation file */
    FAULT_OP_DIR_SYNC, /* fsync of the directory after a relation file
                        * is created or removed */
    FAULT_OP_WAL_WRITE, /* a write of the write-ahead log */
    FAULT_OP_WAL_SYNC,  /* an fdatasync of the write-ahead log */
    FAULT_OP_CONTROL,  /* a write or fsync of the control file, or the
                        * fsync of its directory (relnumber 0) */
    FAULT_OP_COUNT
} fault_op;

typedef enum fault_kind {
    FAULT_NONE = 0,
    FAULT_EIO,    /* the call fails with EIO */
    FAULT_ENOSPC, /* the call fails with ENOSPC */
    FAULT_SHORT,  /* the call transfers only half the bytes asked for */
} fault_kind;

#ifdef KEEL_FAULT_INJECTION

/*
 * Arms op: after `skip` further calls of op succeed, the next `count` calls
 * fail with `kind`.  If relnumber is not 0 only calls on that relation
 * count.  Replaces whatever was armed for op before.
 */
void fault_arm(fault_op op, fault_kind kind, uint32_t skip, uint32_t count,
               uint32_t relnumber);

/* Disarms every op. */
void fault_disarm_all(void);

/* Called by the storage manager before each operation: the fault to
 * simulate for this call, usually FAULT_NONE. */
fault_kind fault_next(fault_op op, uint32_t relnumber);

/* How many faults have been delivered for op since it was last armed. */
uint32_t fault_delivered(fault_op op);

/*
 * Points in the code where a test may run a function of its own, to make
 * another session act in a window too narrow to hit by timing:
 * FAULT_POINT_EXTENDED is buf_extend(), after the file has grown by block
 * blk, whose buffer the session holds pinned, valid and exclusively
 * locked, just before it returns; FAULT_POINT_INDEX_UNDO
 * is an insert or update whose index entry failed, before it removes the
 * entries it made (relnumber is the table's, blk the new version's
 * block).  fault_point_set()
 * registers fn (NULL: none); it runs in the thread that reaches the point.
 * Set and clear a point only while no thread can reach it (a thread that
 * had loaded the old function could otherwise pair it with the new ctx).
 */
typedef enum fault_point_id {
    FAULT_POINT_EXTENDED = 0,
    FAULT_POINT_INDEX_UNDO,
    FAULT_POINT_COUNT
} fault_point_id;

typedef void (*fault_point_fn)(void *ctx, uint32_t relnumber, uint32_t blk);

void fault_point_set(fault_point_id p, fault_point_fn fn, void *ctx);
void fault_point(fault_point_id p, uint32_t relnumber, uint32_t blk);

#else

typedef enum fault_point_id {
    FAULT_POINT_EXTENDED = 0,
    FAULT_POINT_INDEX_UNDO,
    FAULT_POINT_COUNT
} fault_point_id;

static inline void fault_point(fault_point_id p, uint32_t relnumber,
                               uint32_t blk)
{
    (void)p;
    (void)relnumber;
    (void)blk;
}

static inline fault_kind fault_next(fault_op op, uint32_t relnumber)
{
    (void)op;
    (void)relnumber;
    return FAULT_NONE;
}

#endif /* KEEL_FAULT_INJECTION */

/*
 * The fault fault_next() gives this call of op, as the errno the kernel
 * would have set; 0 to go ahead, with *len halved for a short transfer.
 * A call without a length (len NULL: an fsync) cannot be short: one that
 * did only part of its work failed, with EIO.
 */
static inline int fault_errno(fault_op op, uint32_t relnumber, size_t *len)
{
    switch (fault_next(op, relnumber)) {
    case FAULT_NONE:
        return 0;
    case FAULT_EIO:
        return EIO;
    case FAULT_ENOSPC:
        return ENOSPC;
    case FAULT_SHORT:
        if (len == NULL)
            return EIO;
        *len /= 2;
        return 0;
    }
    return 0;
}

#endif /* KEEL_STORAGE_FAULT_H */
