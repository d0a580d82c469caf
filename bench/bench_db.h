/*
 * bench_db.h: the pgbench databases the whole-engine benchmarks run on:
 * created in a temporary directory when the caller names none, removed
 * afterwards.
 */
#ifndef KEEL_BENCH_BENCH_DB_H
#define KEEL_BENCH_BENCH_DB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "port/atomics.h"

/*
 * Creates a directory "$TMPDIR/keel-<tag>-XXXXXX" (TMPDIR defaulting to
 * /tmp) holding a scale-`scale` pgbench database (keel init's
 * pgbench_init()), its name in dir (len bytes).  Progress and errors go to
 * stderr, prefixed by `who`.  Returns 0, or -1 with nothing left behind.
 */
int bench_db_create(const char *who, const char *tag, uint32_t scale, char *dir,
                    size_t len);

/*
 * Creates a directory "$TMPDIR/keel-<tag>-XXXXXX" (TMPDIR defaulting to
 * /tmp), its name in dir (len bytes), and has it removed if the process
 * exits before bench_dir_remove() does so: at exit(), or on SIGINT,
 * SIGTERM or SIGHUP (those not ignored, as nohup ignores SIGHUP), which a
 * thread of its own waits for from the first such directory on (those
 * signals are blocked in the calling thread, and so in the threads it
 * creates afterwards; call it before starting others).  Errors go to stderr,
 * prefixed by `who`.  Returns 0, or -1 with nothing created.
 */
int bench_tmpdir_make(const char *who, const char *tag, char *dir, size_t len);

/* The total size of the regular files in dir (not below it) in *bytes:
 * 0, or -1 if dir cannot be read. */
int bench_dir_bytes(const char *dir, uint64_t *bytes);

/* Removes a directory and everything in it, and stops
 * tracking it if bench_tmpdir_make() made it; a missing directory is
 * fine. */
void bench_dir_remove(const char *dir);

/*
 * Tracks a child process (child.h) until it is reaped: wherever
 * bench_tmpdir_make()'s directories are removed on a signal or at exit,
 * each tracked child is first sent `sig` and waited for (10 s in all,
 * then killed), since its files may lie in them.  At most 16 at a time;
 * untracking one not tracked is fine.
 */
void bench_child_track(pid_t pid, int sig);
void bench_child_untrack(pid_t pid);

/* If a signal is ending the process (its directories being removed, its
 * children stopped), waits for it and never returns; else returns at
 * once.  For a thread that finds its child reaped by that removal. */
void bench_await_signal(void);

/*
 * exit(status) for the benchmarks' threads, which may fail because a
 * signal's removal of the temporary directories took their files: while
 * that removal runs, waits for the signal to end the process instead, so
 * that it dies of the signal.  Two threads in exit() at once would not
 * both run the exit handler that waits.
 */
_Noreturn void bench_exit(int status);

/*
 * Sleeps until clock_now_ns() reaches until_ns, waking at least every
 * 20 ms to return early once *failed (a client's report) is non-zero: the
 * main thread's wait while the clients of a timed run work.
 */
void bench_sleep_until(uint64_t until_ns, const atomic_u32 *failed);

#endif /* KEEL_BENCH_BENCH_DB_H */
