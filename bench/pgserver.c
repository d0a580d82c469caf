/*
 * pgserver.c: keel serve and a private PostgreSQL 15 cluster, started and
 * stopped for pgbench, and their CPU time (pgserver.h).
 */
#include "pgserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "port/clock.h"

#define START_TIMEOUT_MS 30000
#define INIT_TIMEOUT_MS  120000
#define STOP_TIMEOUT_MS  20000
#define MAX_KIDS         256

int pgserver_init(pgserver *s, pgserver_kind kind, const char *dir,
                  const char *bin, char *err, size_t len)
{
    char path[4300];

    memset(s, 0, sizeof(*s));
    s->kind = kind;
    s->bin = bin;
    if (kind == PGSERVER_KEEL) {
        s->name = "keel";
        s->user = "keel";
        s->db = "keel";
        snprintf(s->data, sizeof(s->data), "%s/keel-db", dir);
        snprintf(s->sock, sizeof(s->sock), "%s/keel-sock", dir);
        snprintf(s->log, sizeof(s->log), "%s/keel.log", dir);
        return 0;
    }
    s->name = "postgres";
    s->user = "postgres";
    s->db = "postgres";
    snprintf(s->data, sizeof(s->data), "%s/pg/data", dir);
    snprintf(s->sock, sizeof(s->sock), "%s/pg-sock", dir);
    snprintf(s->log, sizeof(s->log), "%s/postgres.log", dir);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s", bin, i ? "postgres" : "initdb");
        if (access(path, X_OK) != 0) {
            snprintf(err, len, "PostgreSQL 15 is not installed (no %s: %s)",
                     path, strerror(errno));
            return -1;
        }
    }
    if (geteuid() == 0) {
        /* getpwnam() here, never between fork and exec. */
        struct passwd *pw = getpwnam("postgres");
        if (pw == NULL) {
            snprintf(err, len,
                     "running as root, and PostgreSQL refuses to: there is "
                     "no `postgres` user to run it as");
            return -1;
        }
        s->as_user = true;
        s->uid = pw->pw_uid;
        s->gid = pw->pw_gid;
    }
    return 0;
}

/* A TCP port nothing listens on now (the kernel's choice): it names the
 * socket file, and PostgreSQL derives its shared memory key from it. */
static uint16_t free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t alen = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    uint16_t port = 0;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &alen) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port != 0 ? port : (uint16_t)(20000 + getpid() % 40000);
}

/* Makes a folder owned by the server's user (mode 0700).  0, or -1. */
static int server_mkdir(const pgserver *s, const char *dir, char *err,
                        size_t len)
{
    if (mkdir(dir, 0700) != 0 ||
        (s->as_user && chown(dir, s->uid, s->gid) != 0)) {
        snprintf(err, len, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* Whether file holds `what`. */
static bool file_has(const char *file, const char *what)
{
    char line[1024];
    FILE *f = fopen(file, "r");
    bool found = false;

    while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL)
        found = strstr(line, what) != NULL;
    if (f != NULL)
        fclose(f);
    return found;
}

/* The last line of file that is not blank, into buf. */
static void file_last_line(const char *file, char *buf, size_t len)
{
    char line[512];
    FILE *f = fopen(file, "r");

    snprintf(buf, len, "(no output)");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] != '\0')
            snprintf(buf, len, "%s", line);
    }
    if (f != NULL)
        fclose(f);
}

/* Whether PostgreSQL's postmaster.pid names pid and says "ready" (its
 * eighth line, the postmaster's status). */
static bool postmaster_ready(const pgserver *s)
{
    char path[4300], line[256];
    FILE *f;
    int n = 0;
    bool ready = false, ours = false;

    snprintf(path, sizeof(path), "%s/postmaster.pid", s->data);
    if ((f = fopen(path, "r")) == NULL)
        return false;
    while (fgets(line, sizeof(line), f) != NULL) {
        n++;
        if (n == 1)
            ours = atoi(line) == (int)s->pid;
        else if (n == 8)
            ready = strncmp(line, "ready", 5) == 0;
    }
    fclose(f);
    return ours && ready;
}

/* Waits until the server is ready; 0, or -1 with the reason. */
static int server_await_ready(pgserver *s, char *err, size_t len)
{
    uint64_t until = clock_now_ns() + (uint64_t)START_TIMEOUT_MS * 1000000;
    char last[512];
    int status;

    for (;;) {
        bool ready = s->kind == PGSERVER_KEEL
                         ? file_has(s->log, "ready to accept connections")
                         : postmaster_ready(s);
        if (ready)
            return 0;
        if (child_wait(s->pid, 0, &status) == 0) {
            s->pid = 0;
            file_last_line(s->log, last, sizeof(last));
            snprintf(err, len, "%s did not start: %s", s->name, last);
            return -1;
        }
        if (clock_now_ns() >= until) {
            snprintf(err, len, "%s did not become ready in %d s", s->name,
                     START_TIMEOUT_MS / 1000);
            pgserver_stop(s);
            return -1;
        }
        clock_sleep_us(20000);
    }
}

static int keel_start(pgserver *s, char *err, size_t len)
{
    char port[16], why[512], last[512];
    const char *init[] = {"/proc/self/exe", "init", s->data, NULL};
    const char *serve[] = {"/proc/self/exe", "serve",         s->data,
                           "--port",         port,            "--socket-dir",
                           s->sock,          "--listen",      "",
                           NULL};
    child_opts o = {.argv = init, .out = s->log, .stop_signal = SIGTERM};

    if (server_mkdir(s, s->sock, err, len) != 0)
        return -1;
    if (child_run(&o, INIT_TIMEOUT_MS, why, sizeof(why)) != 0) {
        file_last_line(s->log, last, sizeof(last));
        snprintf(err, len, "keel init: %s: %s", why, last);
        return -1;
    }
    s->port = free_port();
    snprintf(port, sizeof(port), "%u", s->port);
    o.argv = serve;
    if (child_start(&o, &s->pid, err, len) != 0)
        return -1;
    if (server_await_ready(s, err, len) != 0)
        return -1;
    clock_sleep_us(100000);
    s->idle_threads = child_threads(s->pid);
    return 0;
}

static int postgres_start(pgserver *s, char *err, size_t len)
{
    char port[16], initdb[4300], postgres[4300], parent[4300], ilog[4400],
        why[512], last[512];
    const char *init[] = {initdb,          "-D",         s->data,
                          "-U",            "postgres",   "-A",
                          "trust",         "-E",         "UTF8",
                          "--locale=C",    "--no-sync",  "--no-instructions",
                          NULL};
    const char *run[] = {postgres, "-D", s->data, "-p", port,
                         "-k",     s->sock, "-c", "listen_addresses=",
                         NULL};
    child_opts o = {.argv = init,
                    .out = ilog,
                    .as_user = s->as_user,
                    .uid = s->uid,
                    .gid = s->gid,
                    .stop_signal = SIGINT};
    char *slash;

    snprintf(initdb, sizeof(initdb), "%s/initdb", s->bin);
    snprintf(postgres, sizeof(postgres), "%s/postgres", s->bin);
    snprintf(parent, sizeof(parent), "%s", s->data);
    if ((slash = strrchr(parent, '/')) != NULL)
        *slash = '\0';
    snprintf(ilog, sizeof(ilog), "%s/initdb.log", parent);
    if (server_mkdir(s, parent, err, len) != 0 ||
        server_mkdir(s, s->sock, err, len) != 0)
        return -1;
    if (child_run(&o, INIT_TIMEOUT_MS, why, sizeof(why)) != 0) {
        file_last_line(ilog, last, sizeof(last));
        snprintf(err, len, "initdb: %s: %s", why, last);
        return -1;
    }
    s->port = free_port();
    snprintf(port, sizeof(port), "%u", s->port);
    o.argv = run;
    o.out = s->log;
    if (child_start(&o, &s->pid, err, len) != 0)
        return -1;
    return server_await_ready(s, err, len);
}

int pgserver_start(pgserver *s, char *err, size_t len)
{
    return s->kind == PGSERVER_KEEL ? keel_start(s, err, len)
                                    : postgres_start(s, err, len);
}

void pgserver_stop(pgserver *s)
{
    if (s->pid <= 0)
        return;
    /* keel serve: SIGTERM ends its connections and closes the database;
     * the postmaster: SIGINT, a fast shutdown. */
    child_stop(s->pid, s->kind == PGSERVER_KEEL ? SIGTERM : SIGINT,
               STOP_TIMEOUT_MS);
    s->pid = 0;
}

int pgserver_cpu_ns(const pgserver *s, double *ns)
{
    pid_t kids[MAX_KIDS];
    child_cpu c;
    uint64_t ticks;
    int n;

    if (s->pid <= 0 || child_cpu_read(s->pid, &c) != 0)
        return -1;
    ticks = c.utime + c.stime;
    if (s->kind == PGSERVER_POSTGRES) {
        ticks += c.cutime + c.cstime;
        n = child_children(s->pid, kids, MAX_KIDS);
        if (n < 0 || n > MAX_KIDS)
            return -1;
        for (int i = 0; i < n; i++) {
            child_cpu k;
            /* One that exited since is in cutime at the next reading. */
            if (child_cpu_read(kids[i], &k) == 0)
                ticks += k.utime + k.stime;
        }
    }
    *ns = (double)ticks * child_ns_per_tick();
    return 0;
}

/* Whether the postmaster has a client backend, or a child exited and not
 * yet reaped (whose time is not yet in its cutime). */
static bool postmaster_busy(const pgserver *s)
{
    pid_t kids[MAX_KIDS];
    int n = child_children(s->pid, kids, MAX_KIDS);

    if (n < 0 || n > MAX_KIDS)
        return true;
    for (int i = 0; i < n; i++)
        if (child_state(kids[i]) == 'Z' ||
            child_cmdline_has(kids[i], "[local]"))
            return true;
    return false;
}

int pgserver_settle(const pgserver *s, int timeout_ms)
{
    uint64_t until = clock_now_ns() + (uint64_t)timeout_ms * 1000000;

    for (;;) {
        bool busy = s->kind == PGSERVER_KEEL
                        ? child_threads(s->pid) > s->idle_threads
                        : postmaster_busy(s);
        if (!busy)
            return 0;
        if (clock_now_ns() >= until)
            return -1;
        clock_sleep_us(5000);
    }
}
