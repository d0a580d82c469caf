/*
 * control.c: reading and atomically replacing the control file.
 *
 * On disk the file is CONTROL_FILE_SIZE bytes (one sector, so that even a
 * device without atomic renames tears it at most at a sector boundary):
 *
 *   0   magic "KEELCTL\0"
 *   8   the control_data fields, each little-endian, in declaration order
 *   ... zero
 *   508 CRC-32C of bytes 0 .. 507
 *
 * Beside it, the lock file (CONTROL_LOCK_NAME) is what keeps a database
 * open in one place at a time: two opens would each hand out the same
 * transaction ids and write their own copies of the same pages.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dup3 */
#endif

#include "engine/control.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "port/crc32c.h"
#include "storage/fault.h"
#include "storage/page.h"

#define CONTROL_FILE_SIZE 512
#define CONTROL_CRC_OFF   (CONTROL_FILE_SIZE - 4)
#define CONTROL_PATH_MAX  4096

static const char control_magic[8] = "KEELCTL";

_Static_assert(8 + sizeof(control_data) <= CONTROL_CRC_OFF,
               "control data fits before the checksum");

void control_init(control_data *c)
{
    memset(c, 0, sizeof(*c));
    c->layout_version = CONTROL_LAYOUT_VERSION;
    c->page_version = PAGE_LAYOUT_VERSION;
    c->block_size = BLOCK_SIZE;
    c->state = CONTROL_SHUT_DOWN;
}

static int control_path(const char *dir, const char *name, char *buf, kerr *err)
{
    int n = snprintf(buf, CONTROL_PATH_MAX, "%s/%s", dir, name);

    if (n < 0 || n >= CONTROL_PATH_MAX)
        return kerr_set(err, KEEL_EINVAL, "database path \"%s\" is too long",
                        dir);
    return KEEL_OK;
}

/* The on-disk image of c.  (The fields are stored in the machine's order;
 * keel supports little-endian machines only, as page.c assumes too.) */
static void control_encode(const control_data *c, unsigned char *img)
{
    uint32_t crc;

    memset(img, 0, CONTROL_FILE_SIZE);
    memcpy(img, control_magic, sizeof(control_magic));
    memcpy(img + 8, c, sizeof(*c));
    crc = crc32c(img, CONTROL_CRC_OFF);
    memcpy(img + CONTROL_CRC_OFF, &crc, 4);
}

/* Each call on the control file asks fault_errno() first, so that a test
 * can fail it (storage/fault.h). */
static int sync_fd(int fd)
{
    int e = fault_errno(FAULT_OP_CONTROL, 0, NULL);

    if (e != 0) {
        errno = e;
        return -1;
    }
    return fsync(fd);
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        size_t ask = len;
        int e = fault_errno(FAULT_OP_CONTROL, 0, &ask);
        ssize_t n;

        if (e != 0) {
            errno = e;
            return -1;
        }
        n = write(fd, p, ask);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            errno = ENOSPC;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc, e;

    if (fd < 0)
        return -1;
    rc = sync_fd(fd);
    e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* Writes img to path (created with O_EXCL when exclusive) and syncs it. */
static int write_file(const char *path, const unsigned char *img,
                      bool exclusive, kerr *err)
{
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
    int fd = open(path, flags, 0600);
    int e;

    if (fd < 0) {
        e = errno;
        return kerr_set(err, kerr_from_errno(e),
                        "could not create control file \"%s\": %s", path,
                        strerror(e));
    }
    if (write_all(fd, img, CONTROL_FILE_SIZE) != 0 || sync_fd(fd) != 0) {
        e = errno;
        close(fd);
        unlink(path);
        return kerr_set(
            err, kerr_from_errno(e) == KEEL_ENOSPC ? KEEL_ENOSPC : KEEL_EIO,
            "could not write control file \"%s\": %s", path, strerror(e));
    }
    if (close(fd) != 0) {
        e = errno;
        unlink(path);
        return kerr_set(err, KEEL_EIO,
                        "could not write control file \"%s\": %s", path,
                        strerror(e));
    }
    return KEEL_OK;
}

int control_create(const char *dir, const control_data *c, kerr *err)
{
    unsigned char img[CONTROL_FILE_SIZE];
    char path[CONTROL_PATH_MAX];
    int rc;

    rc = control_path(dir, CONTROL_FILE_NAME, path, err);
    if (rc != KEEL_OK)
        return rc;
    control_encode(c, img);
    rc = write_file(path, img, true, err);
    if (rc == KEEL_EEXIST)
        return kerr_set(err, KEEL_EEXIST,
                        "\"%s\" already holds a keel database", dir);
    if (rc != KEEL_OK)
        return rc;
    if (sync_dir(dir) != 0)
        return kerr_set(err, KEEL_EIO,
                        "could not sync directory \"%s\" after writing its "
                        "control file: %s",
                        dir, strerror(errno));
    return KEEL_OK;
}

int control_write(const char *dir, const control_data *c, kerr *err)
{
    unsigned char img[CONTROL_FILE_SIZE];
    char path[CONTROL_PATH_MAX], tmp[CONTROL_PATH_MAX];
    int rc;

    rc = control_path(dir, CONTROL_FILE_NAME, path, err);
    if (rc == KEEL_OK)
        rc = control_path(dir, CONTROL_FILE_NAME ".tmp", tmp, err);
    if (rc != KEEL_OK)
        return rc;
    control_encode(c, img);
    rc = write_file(tmp, img, false, err);
    if (rc != KEEL_OK)
        return rc;
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return kerr_set(err, KEEL_EIO,
                        "could not replace control file \"%s\": %s", path,
                        strerror(e));
    }
    if (sync_dir(dir) != 0)
        return kerr_set(err, KEEL_EIO,
                        "could not sync directory \"%s\" after writing its "
                        "control file: %s",
                        dir, strerror(errno));
    return KEEL_OK;
}

int control_read(const char *dir, control_data *c, kerr *err)
{
    unsigned char img[CONTROL_FILE_SIZE + 1];
    char path[CONTROL_PATH_MAX];
    uint32_t stored, computed;
    ssize_t n;
    int fd, rc, e;

    rc = control_path(dir, CONTROL_FILE_NAME, path, err);
    if (rc != KEEL_OK)
        return rc;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        e = errno;
        if (e == ENOENT && access(dir, F_OK) != 0)
            return kerr_set(err, KEEL_ENOENT,
                            "\"%s\" is not a keel database: there is no "
                            "such directory",
                            dir);
        if (e == ENOTDIR)
            return kerr_set(err, KEEL_ENOENT,
                            "\"%s\" is not a keel database: it is not a "
                            "directory",
                            dir);
        if (e == ENOENT)
            return kerr_set(err, KEEL_ENOENT,
                            "\"%s\" is not a keel database: it has no "
                            "control file",
                            dir);
        return kerr_set(err, kerr_from_errno(e),
                        "could not open control file \"%s\": %s", path,
                        strerror(e));
    }
    do
        n = pread(fd, img, sizeof(img), 0);
    while (n < 0 && errno == EINTR);
    e = errno;
    close(fd);
    if (n < 0)
        return kerr_set(err, KEEL_EIO, "could not read control file \"%s\": %s",
                        path, strerror(e));
    if (n != CONTROL_FILE_SIZE)
        return kerr_set(err, KEEL_ECORRUPT,
                        "control file \"%s\" is corrupt: %zd bytes, expected "
                        "%d",
                        path, n, CONTROL_FILE_SIZE);
    if (memcmp(img, control_magic, sizeof(control_magic)) != 0)
        return kerr_set(err, KEEL_ECORRUPT, "\"%s\" is not a keel control file",
                        path);
    memcpy(&stored, img + CONTROL_CRC_OFF, 4);
    computed = crc32c(img, CONTROL_CRC_OFF);
    if (stored != computed)
        return kerr_set(err, KEEL_ECORRUPT,
                        "control file \"%s\" is corrupt: checksum mismatch "
                        "(stored 0x%08x, computed 0x%08x)",
                        path, stored, computed);
    memcpy(c, img + 8, sizeof(*c));
    if (c->layout_version != CONTROL_LAYOUT_VERSION)
        return kerr_set(err, KEEL_EVERSION,
                        "database \"%s\" has layout version %u; this keel "
                        "reads version %d",
                        dir, c->layout_version, CONTROL_LAYOUT_VERSION);
    if (c->page_version != PAGE_LAYOUT_VERSION || c->block_size != BLOCK_SIZE)
        return kerr_set(err, KEEL_EVERSION,
                        "database \"%s\" has page version %u and %u-byte "
                        "blocks; this keel uses version %d and %d-byte blocks",
                        dir, c->page_version, c->block_size,
                        PAGE_LAYOUT_VERSION, BLOCK_SIZE);
    if (c->state != CONTROL_SHUT_DOWN && c->state != CONTROL_IN_PRODUCTION)
        return kerr_set(err, KEEL_ECORRUPT,
                        "control file \"%s\" is corrupt: unknown state %u",
                        path, c->state);
    return KEEL_OK;
}

/*
 * The descriptors of the locks this process holds.  A child made by fork()
 * would share their open file descriptions, and with them the locks: the
 * parent's close would then release nothing while the child lives.  So in
 * the child each is pointed at /dev/null instead (its number stays valid
 * for a close), and the lock stays the parent's alone.
 */
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t held_once = PTHREAD_ONCE_INIT;
static int *held_fds;
static size_t nheld, held_cap;

static void held_prepare(void)
{
    pthread_mutex_lock(&held_lock);
}

static void held_parent(void)
{
    pthread_mutex_unlock(&held_lock);
}

static void held_child(void)
{
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

    for (size_t i = 0; i < nheld && null >= 0; i++)
        (void)dup3(null, held_fds[i], O_CLOEXEC);
    if (null >= 0)
        close(null);
    pthread_mutex_unlock(&held_lock);
}

static void held_init(void)
{
    (void)pthread_atfork(held_prepare, held_parent, held_child);
}

/*
 * Opens path for the lock and registers the descriptor, both under
 * held_lock, so that no fork() comes between them (a child would keep the
 * lock that follows).  -1 with errno: the open's, or ENOMEM.
 */
static int held_open(const char *path, bool shared)
{
    int fd;

    pthread_once(&held_once, held_init);
    pthread_mutex_lock(&held_lock);
    if (nheld == held_cap) {
        size_t cap = held_cap ? 2 * held_cap : 4;
        int *more = realloc(held_fds, cap * sizeof(*more));
        if (more == NULL) {
            pthread_mutex_unlock(&held_lock);
            errno = ENOMEM;
            return -1;
        }
        held_fds = more;
        held_cap = cap;
    }
    /* O_NONBLOCK: an O_RDONLY open of a FIFO would wait for a writer,
     * with held_lock (and so every fork()) held; as smgr does for
     * relation files, a file that is not regular is refused, and the flag
     * dropped from one that is. */
    fd = shared ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
                : open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
        struct stat st;
        int e = 0;
        if (fstat(fd, &st) != 0)
            e = errno;
        else if (!S_ISREG(st.st_mode))
            e = EINVAL;
        else if (shared &&
                 fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
            e = errno;
        if (e != 0) {
            close(fd);
            pthread_mutex_unlock(&held_lock);
            errno = e;
            return -1;
        }
        held_fds[nheld++] = fd;
    }
    pthread_mutex_unlock(&held_lock);
    return fd;
}

/* Unregisters and closes fd, under held_lock for the same reason. */
static void held_close(int fd)
{
    pthread_mutex_lock(&held_lock);
    for (size_t i = 0; i < nheld; i++)
        if (held_fds[i] == fd) {
            held_fds[i] = held_fds[--nheld];
            break;
        }
    close(fd);
    pthread_mutex_unlock(&held_lock);
}

/* The message for a lock held elsewhere: fd's file names the holder,
 * unless it is between truncating the file and writing its id. */
static int lock_busy(int fd, const char *dir, bool shared, kerr *err)
{
    char text[32];
    ssize_t n;
    long pid = 0;

    /* Refused an exclusive lock, but granted a shared one: only read-only
     * opens hold it, and the file names none of them. */
    if (!shared && flock(fd, LOCK_SH | LOCK_NB) == 0) {
        (void)flock(fd, LOCK_UN);
        return kerr_set(err, KEEL_EBUSY,
                        "database \"%s\" is open read-only elsewhere", dir);
    }
    n = pread(fd, text, sizeof(text) - 1, 0);

    if (n > 0) {
        char *end;
        text[n] = '\0';
        pid = strtol(text, &end, 10);
        if (end == text || *end != '\n')
            pid = 0;
    }
    if (pid == (long)getpid())
        return kerr_set(err, KEEL_EBUSY,
                        "database \"%s\" is already open in this process", dir);
    if (pid > 0)
        return kerr_set(err, KEEL_EBUSY,
                        "database \"%s\" is in use by process %ld", dir, pid);
    return kerr_set(err, KEEL_EBUSY,
                    "database \"%s\" is in use by another process", dir);
}

static int lock_take(const char *dir, bool shared, int *out, kerr *err)
{
    char path[CONTROL_PATH_MAX], text[32];
    int fd, e, rc, len;

    *out = -1;
    rc = control_path(dir, CONTROL_LOCK_NAME, path, err);
    if (rc != KEEL_OK)
        return rc;
    for (int attempt = 0;; attempt++) {
        struct stat held, named;
        fd = held_open(path, shared);
        /* No lock file (a copy made without it): no open for writing is
         * running, since each makes the file before anything else, and a
         * read-only open makes nothing, so it goes on without a lock. */
        if (fd < 0 && shared && errno == ENOENT)
            return KEEL_OK;
        if (fd < 0) {
            e = errno;
            return kerr_set(err, kerr_from_errno(e),
                            "could not open lock file \"%s\": %s", path,
                            strerror(e));
        }
        while (flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
            e = errno;
            if (e == EINTR)
                continue;
            rc = e == EWOULDBLOCK
                     ? lock_busy(fd, dir, shared, err)
                     : kerr_set(err, KEEL_EIO, "could not lock \"%s\": %s",
                                path, strerror(e));
            held_close(fd);
            return rc;
        }
        /* Locked, but a failed create's cleanup may have removed the file
         * since it was opened: then the lock guards nothing, and the file
         * the path names now is the one to lock. */
        if (fstat(fd, &held) == 0 && stat(path, &named) == 0 &&
            held.st_dev == named.st_dev && held.st_ino == named.st_ino)
            break;
        held_close(fd);
        if (shared && stat(path, &named) != 0 && errno == ENOENT)
            return KEEL_OK;
        if (attempt == 8)
            return kerr_set(err, KEEL_EBUSY,
                            "database \"%s\": its lock file keeps being "
                            "replaced",
                            dir);
    }
    if (shared) {
        *out = fd; /* read-only: the holder's id is not written */
        return KEEL_OK;
    }
    len = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
    e = 0;
    if (ftruncate(fd, 0) != 0)
        e = errno;
    else {
        ssize_t n = pwrite(fd, text, (size_t)len, 0);
        if (n != len)
            e = n < 0 ? errno : ENOSPC; /* short: the disk is full */
    }
    if (e != 0) {
        held_close(fd);
        return kerr_set(
            err, kerr_from_errno(e) == KEEL_ENOSPC ? KEEL_ENOSPC : KEEL_EIO,
            "could not write lock file \"%s\": %s", path, strerror(e));
    }
    *out = fd;
    return KEEL_OK;
}

int control_lock(const char *dir, int *out, kerr *err)
{
    return lock_take(dir, false, out, err);
}

int control_lock_shared(const char *dir, int *out, kerr *err)
{
    return lock_take(dir, true, out, err);
}

void control_unlock(int fd)
{
    /* Unlocked before the close: a child fork()ed a moment ago shares the
     * open file description until its fork handler has pointed its copy
     * at /dev/null, and the lock goes with the description's last
     * descriptor only.  The file stays, for the next holder to
     * overwrite. */
    if (fd >= 0) {
        (void)flock(fd, LOCK_UN);
        held_close(fd);
    }
}
