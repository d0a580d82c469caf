/*
 * child.c: other programs run by a benchmark: starting, waiting, stopping,
 * and their CPU time from /proc (child.h).
 */
#include "child.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_db.h"
#include "port/clock.h"

extern char **environ;

char *const *child_environment(void)
{
    static char **env;
    size_t n = 0, k = 0;

    if (env != NULL)
        return env;
    while (environ[n] != NULL)
        n++;
    env = calloc(n + 1, sizeof(*env));
    if (env == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "PG", 2) != 0)
            env[k++] = environ[i];
    env[k] = NULL;
    return env;
}

/* Writes s to fd, ignoring failure: the child's last words. */
static void child_say(int fd, const char *s)
{
    ssize_t w = write(fd, s, strlen(s));
    (void)w;
}

/*
 * In the child, between fork() and exec: only async-signal-safe calls.
 * Never returns.
 */
static _Noreturn void child_exec(const child_opts *o, char *const *env,
                                 pid_t parent)
{
    static const int reset[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
                                SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2};
    sigset_t none;
    int fd;

    setpgid(0, 0);
    for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
        signal(reset[i], SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    fd = open(o->out != NULL ? o->out : "/dev/null",
              O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        _exit(126);
    if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
        _exit(126);
    fd = open("/dev/null", O_RDONLY);
    if (fd >= 0)
        dup2(fd, STDIN_FILENO);
    if (o->as_user) {
        if (setgroups(0, NULL) != 0 || setgid(o->gid) != 0 ||
            setuid(o->uid) != 0) {
            child_say(STDERR_FILENO, "cannot switch to the server's user\n");
            _exit(126);
        }
    }
    /* After the switch, which clears it; and if the benchmark has gone
     * already, go too. */
    prctl(PR_SET_PDEATHSIG, o->stop_signal);
    if (getppid() != parent)
        _exit(125);
    execve(o->argv[0], (char *const *)o->argv, env);
    child_say(STDERR_FILENO, "cannot execute ");
    child_say(STDERR_FILENO, o->argv[0]);
    child_say(STDERR_FILENO, ": ");
    child_say(STDERR_FILENO, strerror(errno));
    child_say(STDERR_FILENO, "\n");
    _exit(127);
}

int child_start(const child_opts *o, pid_t *pid, char *err, size_t len)
{
    char *const *env = child_environment();
    pid_t parent = getpid(), p;

    if (env == NULL) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    fflush(NULL);
    p = fork();
    if (p < 0) {
        snprintf(err, len, "cannot start %s: %s", o->argv[0], strerror(errno));
        return -1;
    }
    if (p == 0)
        child_exec(o, env, parent);
    /* Also here, so that a signal right after the fork finds it in its
     * own group either way. */
    setpgid(p, p);
    bench_child_track(p, o->stop_signal);
    *pid = p;
    return 0;
}

int child_wait(pid_t pid, int timeout_ms, int *status)
{
    uint64_t until = clock_now_ns() + (uint64_t)timeout_ms * 1000000;

    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid) {
            bench_child_untrack(pid);
            return 0;
        }
        if (r < 0 && errno != EINTR) {
            /* Reaped by a signal's clean-up: the process is ending. */
            bench_await_signal();
            bench_child_untrack(pid);
            return -1;
        }
        if (clock_now_ns() >= until)
            return -1;
        clock_sleep_us(2000);
    }
}

int child_stop(pid_t pid, int sig, int timeout_ms)
{
    int status;

    kill(pid, sig);
    if (child_wait(pid, timeout_ms, &status) == 0)
        return status;
    kill(pid, SIGKILL);
    return child_wait(pid, 10000, &status) == 0 ? status : -1;
}

int child_run(const child_opts *o, int timeout_ms, char *err, size_t len)
{
    pid_t pid;
    int status;

    if (child_start(o, &pid, err, len) != 0)
        return -1;
    if (child_wait(pid, timeout_ms, &status) != 0) {
        child_stop(pid, o->stop_signal, 5000);
        snprintf(err, len, "%s ran past its %d s", o->argv[0],
                 timeout_ms / 1000);
        return -1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status))
        snprintf(err, len, "%s exited with status %d", o->argv[0],
                 WEXITSTATUS(status));
    else
        snprintf(err, len, "%s ended by signal %d", o->argv[0],
                 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return -1;
}

/* ---- /proc ------------------------------------------------------------- */

int child_cpu_read(pid_t pid, child_cpu *out)
{
    char path[64], buf[2048], *p;
    unsigned long long v[4];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name (field 2) may hold blanks and parentheses: the
     * fields after it start after its last ')'.  Field 3 is the state;
     * utime, stime, cutime and cstime are fields 14-17. */
    if ((p = strrchr(buf, ')')) == NULL)
        return -1;
    if (sscanf(p + 1,
               " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu "
               "%llu",
               &v[0], &v[1], &v[2], &v[3]) != 4)
        return -1;
    *out = (child_cpu){v[0], v[1], v[2], v[3]};
    return 0;
}

double child_ns_per_tick(void)
{
    long t = sysconf(_SC_CLK_TCK);

    return 1e9 / (double)(t > 0 ? t : 100);
}

/* pid's children by scanning every process's parent (a kernel without
 * /proc/PID/task/TID/children). */
static int children_by_scan(pid_t pid, pid_t *kids, int max)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        char path[300], buf[512], *p;
        int ppid;
        FILE *f;
        size_t r;
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
        if ((f = fopen(path, "r")) == NULL)
            continue;
        r = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[r] = '\0';
        p = strrchr(buf, ')');
        if (p != NULL && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == pid) {
            if (n < max)
                kids[n] = (pid_t)atoi(de->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

int child_children(pid_t pid, pid_t *kids, int max)
{
    char path[64];
    DIR *d;
    struct dirent *de;
    int n = 0;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if ((d = opendir(path)) == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        char cpath[320];
        FILE *f;
        int k;
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", (int)pid,
                 de->d_name);
        if ((f = fopen(cpath, "r")) == NULL) {
            closedir(d);
            return children_by_scan(pid, kids, max);
        }
        while (fscanf(f, "%d", &k) == 1) {
            if (n < max)
                kids[n] = (pid_t)k;
            n++;
        }
        fclose(f);
    }
    closedir(d);
    return n;
}

char child_state(pid_t pid)
{
    char path[64], buf[1024], *p, c = '\0';
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if ((f = fopen(path, "r")) == NULL)
        return '\0';
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if ((p = strrchr(buf, ')')) != NULL && sscanf(p + 1, " %c", &c) != 1)
        c = '\0';
    return c;
}

int child_threads(pid_t pid)
{
    char path[64], line[256];
    FILE *f;
    int n = -1;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    fclose(f);
    return n;
}

bool child_cmdline_has(pid_t pid, const char *what)
{
    char path[64], buf[1024];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    if ((f = fopen(path, "r")) == NULL)
        return false;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    return strstr(buf, what) != NULL;
}
