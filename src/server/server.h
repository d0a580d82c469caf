/*
 * server.h: keel's PostgreSQL protocol server, as the `keel serve` command
 * (src/tools/serve.c) drives it: listen on a TCP address and a Unix
 * socket, give each client connection a thread and a SQL session of its
 * own, and end them all on request.  The protocol is in README.md.
 */
#ifndef KEEL_SERVER_SERVER_H
#define KEEL_SERVER_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "keel/keel.h"

/* How clients authenticate. */
typedef enum server_auth {
    SERVER_AUTH_TRUST, /* anyone who connects is whom they say */
    SERVER_AUTH_SCRAM, /* SCRAM-SHA-256 against keel_auth.keel_authid */
} server_auth;

typedef struct server_options {
    /* The TCP address to listen on (a name or a numeric address, each of
     * whose addresses is bound), or "" for no TCP. */
    const char *listen;
    /* The directory of the Unix socket .s.PGSQL.<port>, or "" for none. */
    const char *socket_dir;
    uint16_t port;
    /* Client sessions at once; the database must allow a few more
     * sessions than this (SERVER_SPARE_SESSIONS). */
    uint32_t max_connections;
    /* How long a client may take to finish its startup (authentication
     * included), ms. */
    uint32_t startup_timeout_ms;
    server_auth auth;
} server_options;

/* Sessions the database should allow beyond max_connections. */
#define SERVER_SPARE_SESSIONS 4

typedef struct server server;

/* Whether every address listen resolves to is a loopback address (127/8,
 * ::1): 1 yes, 0 no, -1 if it does not resolve.  "" (no TCP) counts as
 * loopback. */
int server_address_is_loopback(const char *listen);

/*
 * Binds the listening sockets (a stale Unix socket file, one no server
 * answers on, is removed first) and prepares a server over db, which
 * must stay open until server_free().  Needs sql_init() done.  Returns 0,
 * or -1 with a one-line message in err (an address in use, another server
 * on the socket, no memory), having bound nothing.
 */
int server_start(keel_db *db, const server_options *opts, server **out,
                 char *err, size_t errlen);

/*
 * Accepts connections until server_request_stop(); then stops accepting,
 * ends every connection (its socket shut down, its running statement
 * cancelled; each thread destroys its session, which aborts its
 * transaction) and joins their threads.  Returns when none is left.
 */
void server_run(server *srv);

/* Asks server_run() to stop.  Async-signal-safe: a signal handler may
 * call it (it writes one byte to a pipe). */
void server_request_stop(server *srv);

/* Closes the listening sockets, removes the Unix socket file and frees
 * srv (after server_run() returned, or instead of it). */
void server_free(server *srv);

/* Writes one log line on stderr, as PostgreSQL's default prefix shows it:
 * "TIME [PID] LEVEL:  message".  pid 0 is the server's own. */
void server_log(uint32_t pid, const char *level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* KEEL_SERVER_SERVER_H */
