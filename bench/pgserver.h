/*
 * pgserver.h: a server that speaks PostgreSQL's protocol, run by `keel
 * bench compare` for pgbench to drive: `keel serve` (this binary) on a
 * new database, or a private PostgreSQL 15 cluster made with initdb.
 *
 * Each lives in a folder of the caller's temporary directory: its data,
 * its Unix socket's folder (the only way in: neither listens on TCP) and
 * its log.  PostgreSQL refuses to run as root, so when this process is
 * root initdb and postgres run as the `postgres` user, their folders
 * handed to it.  pgserver_stop() stops the server and waits for it; the
 * folders go with the caller's temporary directory.
 */
#ifndef KEEL_BENCH_PGSERVER_H
#define KEEL_BENCH_PGSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "child.h"

typedef enum { PGSERVER_KEEL, PGSERVER_POSTGRES } pgserver_kind;

typedef struct pgserver {
    pgserver_kind kind;
    const char *name;  /* "keel", "postgres" */
    const char *bin;   /* PostgreSQL's bin folder (initdb, postgres) */
    char data[4200];   /* the database's folder */
    char sock[4200];   /* the Unix socket's folder */
    char log[4200];    /* the server's stdout and stderr */
    const char *user;  /* to connect as */
    const char *db;    /* the database to connect to */
    uint16_t port;     /* names the socket: DIR/.s.PGSQL.PORT */
    pid_t pid;         /* the server (the postmaster), 0 when stopped */
    bool as_user;      /* initdb and postgres run as uid/gid */
    uid_t uid;
    gid_t gid;
    int idle_threads;  /* keel serve's threads with no client */
} pgserver;

/*
 * Sets s up as `kind` in folder `dir` (which must exist), without
 * starting anything: PostgreSQL's programs from `bin`.  0, or -1 with
 * the reason in err (as root without a `postgres` user, say).
 */
int pgserver_init(pgserver *s, pgserver_kind kind, const char *dir,
                  const char *bin, char *err, size_t len);

/*
 * Creates the database (keel init, or initdb) and starts the server on a
 * free port, waiting until it accepts connections (30 s at most).  0, or
 * -1 with the reason in err, nothing left running.
 */
int pgserver_start(pgserver *s, char *err, size_t len);

/* Stops the server (SIGTERM, or SIGQUIT after 20 s) and reaps it. */
void pgserver_stop(pgserver *s);

/*
 * The server's CPU time so far, in ns: keel serve's (every thread's), or
 * the postmaster's with its reaped children's (backends that exited) and
 * its live children's (the background processes).  0, or -1.
 */
int pgserver_cpu_ns(const pgserver *s, double *ns);

/*
 * Waits, at most timeout_ms, until no client's connection is left:
 * keel serve back to its idle thread count, the postmaster with no
 * client backend among its children.  0, or -1 on timeout.
 */
int pgserver_settle(const pgserver *s, int timeout_ms);

#endif /* KEEL_BENCH_PGSERVER_H */
