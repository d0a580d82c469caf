/*
 * powerloss.h: simulated power loss for crash tests (test builds, with
 * KEEL_FAULT_INJECTION; otherwise the hooks compile to nothing).
 *
 * powerloss_arm(seed, n, code) starts journaling every write of a
 * relation file or of the log that no fsync has covered yet; at the n-th
 * write or sync after it, or at powerloss_crash(), the journaled writes
 * are undone (all of them, or, as seed decides, a random subset of their
 * 512-byte sectors: torn pages) and the process ends with _exit(code).
 * The storage manager and the log call powerloss_write() before each
 * pwrite and powerloss_sync() after each successful fsync/fdatasync.
 */
#ifndef KEEL_STORAGE_POWERLOSS_H
#define KEEL_STORAGE_POWERLOSS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef KEEL_FAULT_INJECTION

void powerloss_arm(uint64_t seed, uint64_t crash_at, int exit_code);
void powerloss_crash(void) __attribute__((noreturn));
uint64_t powerloss_ops(void);
void powerloss_write(int fd, size_t len, off_t off);
void powerloss_sync(int fd);

#else

static inline void powerloss_write(int fd, size_t len, off_t off)
{
    (void)fd;
    (void)len;
    (void)off;
}

static inline void powerloss_sync(int fd)
{
    (void)fd;
}

#endif

#endif /* KEEL_STORAGE_POWERLOSS_H */
