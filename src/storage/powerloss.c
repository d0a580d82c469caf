/*
 * powerloss.c: simulated power loss for crash tests (test builds only;
 * see powerloss.h).
 *
 * While armed, every write of a relation file or of the log is journaled
 * before it is made: which file, where, and the bytes it replaces.  An
 * fsync or fdatasync of the file forgets its entries: they are durable.
 * When the chosen operation comes (the n-th write or sync since arming),
 * or when powerloss_crash() is called, the unsynced writes are undone,
 * newest first, either wholly or sector by sector (each 512-byte sector
 * of a write kept or put back at random: a torn page), and the process
 * ends at once with _exit(), as the power failing would end it.  This is
 * what SQLite's crash-test file layer and LazyFS do below a database.
 *
 * Directory changes (files made, renamed, removed) are not journaled:
 * keel syncs the directory after each before it relies on it.
 */
#ifdef KEEL_FAULT_INJECTION

#include "storage/powerloss.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECTOR 512

typedef struct pl_entry {
    dev_t dev;
    ino_t ino;
    char path[512];
    off_t off;
    size_t len;
    size_t had;         /* bytes of [off, off + len) the file held */
    unsigned char *old; /* those bytes, len long (zeroes past `had`) */
} pl_entry;

static pthread_mutex_t pl_lock = PTHREAD_MUTEX_INITIALIZER;
/* Read without the lock by every write and sync of every test build: a
 * process that never arms pays one load, and takes no lock that would
 * order its threads' I/O (and hide their races from the sanitizers). */
static atomic_bool pl_armed;
static uint64_t pl_ops, pl_crash_at, pl_rng;
static int pl_exit_code;
static bool pl_tear; /* keep random sectors, rather than drop all */
static pl_entry *pl_entries;
static size_t pl_n, pl_cap;

static uint64_t pl_next(void)
{
    pl_rng ^= pl_rng << 13;
    pl_rng ^= pl_rng >> 7;
    pl_rng ^= pl_rng << 17;
    return pl_rng;
}

void powerloss_arm(uint64_t seed, uint64_t crash_at, int exit_code)
{
    pthread_mutex_lock(&pl_lock);
    atomic_store(&pl_armed, true);
    pl_ops = 0;
    pl_crash_at = crash_at;
    pl_rng = seed | 1;
    pl_tear = (pl_next() & 1) != 0;
    pl_exit_code = exit_code;
    pthread_mutex_unlock(&pl_lock);
}

uint64_t powerloss_ops(void)
{
    uint64_t n;

    pthread_mutex_lock(&pl_lock);
    n = pl_ops;
    pthread_mutex_unlock(&pl_lock);
    return n;
}

/* Under pl_lock: undoes what was never synced and ends the process. */
static void pl_crash_locked(void) __attribute__((noreturn));
static void pl_crash_locked(void)
{
    for (size_t i = pl_n; i-- > 0;) {
        pl_entry *e = &pl_entries[i];
        int fd = open(e->path, O_WRONLY);
        if (fd < 0)
            continue; /* removed since: nothing to undo */
        for (size_t s = 0; s < e->len; s += SECTOR) {
            size_t k = e->len - s < SECTOR ? e->len - s : SECTOR;
            if (pl_tear && (pl_next() & 1))
                continue; /* this sector reached the disk */
            (void)!pwrite(fd, e->old + s, k, e->off + (off_t)s);
        }
        close(fd);
    }
    _exit(pl_exit_code);
}

void powerloss_crash(void)
{
    pthread_mutex_lock(&pl_lock);
    pl_crash_locked();
}

/* Under pl_lock: counts an operation, and crashes at the chosen one. */
static void pl_count(void)
{
    if (++pl_ops >= pl_crash_at)
        pl_crash_locked();
}

void powerloss_write(int fd, size_t len, off_t off)
{
    pl_entry *e;
    struct stat st;
    char link[64];
    ssize_t n;

    if (!atomic_load(&pl_armed))
        return;
    pthread_mutex_lock(&pl_lock);
    if (fstat(fd, &st) != 0) {
        pthread_mutex_unlock(&pl_lock);
        return;
    }
    pl_count();
    if (pl_n == pl_cap) {
        size_t cap = pl_cap ? pl_cap * 2 : 256;
        pl_entry *more = realloc(pl_entries, cap * sizeof(*more));
        if (more == NULL)
            abort(); /* a test harness without memory: nothing to test */
        pl_entries = more;
        pl_cap = cap;
    }
    e = &pl_entries[pl_n];
    memset(e, 0, sizeof(*e));
    e->dev = st.st_dev;
    e->ino = st.st_ino;
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, e->path, sizeof(e->path) - 1);
    if (n <= 0) {
        pthread_mutex_unlock(&pl_lock);
        return;
    }
    e->path[n] = '\0';
    e->off = off;
    e->len = len;
    e->old = calloc(1, len);
    if (e->old == NULL)
        abort();
    e->had = st.st_size > off ? (size_t)(st.st_size - off) : 0;
    if (e->had > len)
        e->had = len;
    if (e->had > 0 && pread(fd, e->old, e->had, off) != (ssize_t)e->had)
        abort();
    pl_n++;
    pthread_mutex_unlock(&pl_lock);
}

void powerloss_sync(int fd)
{
    struct stat st;
    size_t k = 0;

    if (!atomic_load(&pl_armed))
        return;
    pthread_mutex_lock(&pl_lock);
    if (fstat(fd, &st) != 0) {
        pthread_mutex_unlock(&pl_lock);
        return;
    }
    pl_count();
    for (size_t i = 0; i < pl_n; i++) {
        if (pl_entries[i].dev == st.st_dev && pl_entries[i].ino == st.st_ino)
            free(pl_entries[i].old);
        else
            pl_entries[k++] = pl_entries[i];
    }
    pl_n = k;
    pthread_mutex_unlock(&pl_lock);
}

#endif /* KEEL_FAULT_INJECTION */
