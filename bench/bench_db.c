/*
 * bench_db.c: temporary pgbench databases for the benchmarks.
 */
#include "bench_db.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "port/clock.h"
#include "tools/pgbench.h"

/* The directories bench_tmpdir_make() made and no one has removed yet. */
#define TMPDIRS_MAX 8
static pthread_mutex_t tmpdirs_lock = PTHREAD_MUTEX_INITIALIZER;
static char tmpdirs[TMPDIRS_MAX][4096];
static bool tmpdirs_guarded;
/* The signals the guard thread waits for (those not ignored when it
 * started). */
static sigset_t tmpdirs_signals;
/* Set by the guard thread once one came: the process is to die of it,
 * not exit of whatever the removal makes fail in the other threads. */
static atomic_bool tmpdirs_dying;

/* The children child_start() started and no one has reaped yet, each with
 * the signal that stops it: stopped before the directories go. */
#define CHILDREN_MAX 16
static pthread_mutex_t children_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    pid_t pid;
    int sig;
} children[CHILDREN_MAX];

/* Removes dir's files and dir.  A thread still running may create a file
 * between the reading and the rmdir: then again, a few times. */
static void dir_remove_files(const char *dir)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        DIR *d = opendir(dir);
        struct dirent *de;
        char path[4200];

        if (d == NULL)
            return;
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
            if (unlink(path) != 0 && errno == EISDIR)
                dir_remove_files(path); /* the log's folder */
        }
        closedir(d);
        if (rmdir(dir) == 0 || errno != ENOTEMPTY)
            return;
    }
}

/* Sends every tracked child its stop signal and waits up to 10 s in all
 * for them (then kills what is left), so that no server still writes in
 * a directory about to be removed. */
static void children_stop_all(void)
{
    uint64_t until = clock_now_ns() + 10000000000ull;
    bool left = true;

    pthread_mutex_lock(&children_lock);
    for (int i = 0; i < CHILDREN_MAX; i++)
        if (children[i].pid > 0)
            kill(children[i].pid, children[i].sig);
    while (left) {
        left = false;
        for (int i = 0; i < CHILDREN_MAX; i++) {
            pid_t r;
            if (children[i].pid <= 0)
                continue;
            r = waitpid(children[i].pid, NULL, WNOHANG);
            if (r == children[i].pid || (r < 0 && errno == ECHILD))
                children[i].pid = 0;
            else if (clock_now_ns() >= until)
                kill(children[i].pid, SIGKILL);
            else
                left = true;
        }
        if (left)
            clock_sleep_us(5000);
    }
    pthread_mutex_unlock(&children_lock);
}

void bench_child_track(pid_t pid, int sig)
{
    pthread_mutex_lock(&children_lock);
    for (int i = 0; i < CHILDREN_MAX; i++)
        if (children[i].pid <= 0) {
            children[i].pid = pid;
            children[i].sig = sig;
            break;
        }
    pthread_mutex_unlock(&children_lock);
}

void bench_child_untrack(pid_t pid)
{
    pthread_mutex_lock(&children_lock);
    for (int i = 0; i < CHILDREN_MAX; i++)
        if (children[i].pid == pid)
            children[i].pid = 0;
    pthread_mutex_unlock(&children_lock);
}

/* Removes every tracked directory (the benchmark's threads may still be
 * using their files: unlinking an open file is harmless), after stopping
 * the tracked children. */
static void tmpdirs_remove_all(void)
{
    children_stop_all();
    pthread_mutex_lock(&tmpdirs_lock);
    for (int i = 0; i < TMPDIRS_MAX; i++)
        if (tmpdirs[i][0] != '\0') {
            dir_remove_files(tmpdirs[i]);
            tmpdirs[i][0] = '\0';
        }
    pthread_mutex_unlock(&tmpdirs_lock);
}

/* SIGINT, SIGTERM and SIGHUP, less those ignored now (nohup's SIGHUP):
 * they must stay ignored. */
static void guarded_signals(sigset_t *set)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};

    sigemptyset(set);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction now;
        if (sigaction(sigs[i], NULL, &now) != 0 || now.sa_handler != SIG_IGN)
            sigaddset(set, sigs[i]);
    }
}

/* Waits for one of tmpdirs_signals, removes the directories, and dies of
 * the signal as it would have without us. */
static void *tmpdirs_guard(void *arg)
{
    sigset_t one;
    int sig;

    (void)arg;
    if (sigwait(&tmpdirs_signals, &sig) != 0)
        return NULL;
    atomic_store(&tmpdirs_dying, true);
    tmpdirs_remove_all();
    signal(sig, SIG_DFL);
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(128 + sig);
}

/* If a signal came, never returns: the guard thread is removing the
 * directories and then raises it, ending the process. */
static void tmpdirs_await_signal(void)
{
    if (atomic_load(&tmpdirs_dying))
        for (;;)
            pause();
}

/*
 * At exit: removes the directories, unless a signal came first.  Then the
 * guard thread is removing them and raises the signal once done; an exit
 * meanwhile (a benchmark thread failing on a file that went) waits for
 * it, so that the process still dies of the signal.  The benchmarks'
 * threads exit through bench_exit(), which waits before exit() itself: of
 * two threads in exit() at once, only one runs this.
 */
static void tmpdirs_at_exit(void)
{
    tmpdirs_await_signal();
    tmpdirs_remove_all();
}

void bench_await_signal(void)
{
    tmpdirs_await_signal();
}

void bench_exit(int status)
{
    tmpdirs_await_signal();
    exit(status);
}

/* Called with tmpdirs_lock held, once. */
static int tmpdirs_guard_start(void)
{
    sigset_t old;
    pthread_t tid;

    guarded_signals(&tmpdirs_signals);
    if (pthread_sigmask(SIG_BLOCK, &tmpdirs_signals, &old) != 0)
        return -1;
    if (pthread_create(&tid, NULL, tmpdirs_guard, NULL) != 0) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return -1;
    }
    pthread_detach(tid);
    atexit(tmpdirs_at_exit);
    /* A reader of the output that goes away (`| head`) raises SIGPIPE in
     * the writing thread, where the guard cannot wait for it: ignored,
     * the write fails instead, and the run ends and removes its
     * directories as usual. */
    {
        struct sigaction now;
        if (sigaction(SIGPIPE, NULL, &now) == 0 && now.sa_handler == SIG_DFL)
            signal(SIGPIPE, SIG_IGN);
    }
    return 0;
}

int bench_tmpdir_make(const char *who, const char *tag, char *dir, size_t len)
{
    const char *t = getenv("TMPDIR");
    int slot = -1, n;

    pthread_mutex_lock(&tmpdirs_lock);
    if (!tmpdirs_guarded) {
        if (tmpdirs_guard_start() != 0) {
            pthread_mutex_unlock(&tmpdirs_lock);
            fprintf(stderr,
                    "%s: cannot start the thread that removes "
                    "temporary directories on a signal\n",
                    who);
            return -1;
        }
        tmpdirs_guarded = true;
    }
    for (int i = 0; i < TMPDIRS_MAX && slot < 0; i++)
        if (tmpdirs[i][0] == '\0')
            slot = i;
    if (slot < 0) {
        pthread_mutex_unlock(&tmpdirs_lock);
        fprintf(stderr, "%s: more than %d temporary directories\n", who,
                TMPDIRS_MAX);
        return -1;
    }
    /* The name must fit the caller's buffer and the list's slot. */
    n = snprintf(dir, len, "%s/keel-%s-XXXXXX", t ? t : "/tmp", tag);
    if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof(tmpdirs[0])) {
        pthread_mutex_unlock(&tmpdirs_lock);
        fprintf(stderr, "%s: the temporary directory's name is too long\n",
                who);
        return -1;
    }
    if (mkdtemp(dir) == NULL) {
        int e = errno;
        pthread_mutex_unlock(&tmpdirs_lock);
        fprintf(stderr, "%s: cannot create %s: %s\n", who, dir, strerror(e));
        return -1;
    }
    memcpy(tmpdirs[slot], dir, strlen(dir) + 1);
    pthread_mutex_unlock(&tmpdirs_lock);
    return 0;
}

int bench_db_create(const char *who, const char *tag, uint32_t scale, char *dir,
                    size_t len)
{
    keel_error e = {0};
    uint64_t t0 = clock_now_ns();

    if (bench_tmpdir_make(who, tag, dir, len) != 0)
        return -1;
    fprintf(stderr, "creating a scale-%u pgbench database in %s\n", scale, dir);
    if (pgbench_init(dir, scale, 0, PGBENCH_PROGRESS_NONE, &e) != KEEL_OK) {
        fprintf(stderr, "%s: %s\n", who, e.msg);
        bench_dir_remove(dir);
        return -1;
    }
    fprintf(stderr, "  done in %.2f s\n", (double)(clock_now_ns() - t0) / 1e9);
    return 0;
}

int bench_dir_bytes(const char *dir, uint64_t *bytes)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[4200];

    *bytes = 0;
    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            *bytes += (uint64_t)st.st_size;
    }
    closedir(d);
    return 0;
}

void bench_dir_remove(const char *dir)
{
    /* Under the lock, so that a signal's removal waits for this one. */
    pthread_mutex_lock(&tmpdirs_lock);
    dir_remove_files(dir);
    for (int i = 0; i < TMPDIRS_MAX; i++)
        if (strcmp(tmpdirs[i], dir) == 0)
            tmpdirs[i][0] = '\0';
    pthread_mutex_unlock(&tmpdirs_lock);
}

void bench_sleep_until(uint64_t until_ns, const atomic_u32 *failed)
{
    for (;;) {
        uint64_t now = clock_now_ns();
        if (now >= until_ns ||
            atomic_load_explicit(failed, memory_order_relaxed))
            return;
        clock_sleep_us((uint32_t)((until_ns - now) / 1000 < 20000
                                      ? (until_ns - now) / 1000 + 1
                                      : 20000));
    }
}
