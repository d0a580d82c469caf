/*
 * child.h: other programs run by a benchmark (keel serve, PostgreSQL's
 * initdb and postgres, pgbench, psql): started, waited for with a time
 * limit, stopped, and their CPU time read from /proc.
 *
 * A child starts in a process group of its own (a Ctrl-C at the terminal
 * reaches only the benchmark, which then stops it), with no signal
 * blocked or ignored, an environment without PG* variables (each program
 * is told its server on its command line), optionally as another user,
 * and its death signal set (PR_SET_PDEATHSIG), so that it does not
 * outlive a benchmark killed outright.  A started child is tracked by
 * bench_db.c until it is reaped: on SIGINT, SIGTERM, SIGHUP or exit() the
 * benchmark sends it its stop signal and waits for it before removing the
 * temporary directories its files are in.
 */
#ifndef KEEL_BENCH_CHILD_H
#define KEEL_BENCH_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How a child is started. */
typedef struct child_opts {
    const char *const *argv; /* argv[0] the program's path; NULL-ended */
    const char *out;         /* its stdout and stderr (truncated), or NULL:
                                /dev/null */
    bool as_user;            /* switch to uid/gid before the exec */
    uid_t uid;
    gid_t gid;
    int stop_signal; /* what stops it (SIGTERM, SIGQUIT, SIGKILL) */
} child_opts;

/*
 * Starts a child.  0 and its pid in *pid, or -1 with the reason in err
 * (len bytes).  A program that cannot be executed makes the child exit
 * 127 with the reason in its output file.
 */
int child_start(const child_opts *o, pid_t *pid, char *err, size_t len);

/*
 * Waits up to timeout_ms for pid to exit and reaps it.  0 with its wait
 * status in *status, or -1 if it is still running (or not a child).
 */
int child_wait(pid_t pid, int timeout_ms, int *status);

/*
 * Sends sig to pid, waits up to timeout_ms, then kills it (SIGKILL) and
 * waits again; pid is reaped either way.  Its wait status, or -1.
 */
int child_stop(pid_t pid, int sig, int timeout_ms);

/*
 * Runs a child to its end, at most timeout_ms (then it is stopped with
 * its stop signal).  0 if it exited 0; -1 otherwise, with what happened
 * ("exited with status 1", "ran past its 60 s") in err.
 */
int child_run(const child_opts *o, int timeout_ms, char *err, size_t len);

/*
 * The environment children get: this process's less every variable whose
 * name starts with PG.  Built once; NULL-ended.
 */
char *const *child_environment(void);

/* CPU time from /proc/PID/stat, in clock ticks: the process's own (every
 * thread's, exited ones included) and its reaped children's. */
typedef struct child_cpu {
    uint64_t utime, stime, cutime, cstime;
} child_cpu;

/* Reads pid's CPU time.  0, or -1 if it cannot be read. */
int child_cpu_read(pid_t pid, child_cpu *out);

/* Nanoseconds per clock tick of child_cpu. */
double child_ns_per_tick(void);

/*
 * The children of pid (of each of its threads), up to max into kids.
 * Their number (which may exceed max), or -1 if /proc cannot tell.
 */
int child_children(pid_t pid, pid_t *kids, int max);

/* The number of threads of pid (/proc/PID/status), or -1. */
int child_threads(pid_t pid);

/* pid's state letter from /proc/PID/stat ('R', 'S', 'Z' for a zombie
 * not yet reaped), or '\0' if it is gone. */
char child_state(pid_t pid);

/* Whether pid's command line (its process title, as ps shows it)
 * holds `what`. */
bool child_cmdline_has(pid_t pid, const char *what);

#endif /* KEEL_BENCH_CHILD_H */
