/*
 * server_internal.h: what the listener (server.c) and the connection
 * threads (conn.c) share: the server itself and its table of connection
 * slots, under one mutex (README.md says who may touch what).
 */
#ifndef KEEL_SERVER_SERVER_INTERNAL_H
#define KEEL_SERVER_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/server.h"
#include "sql/sql.h"

#define SERVER_MAX_LISTEN 8

/* One connection's place in the server.  The listener fills a free slot
 * and starts its thread; the thread marks it finished as its last act,
 * and the listener joins the thread and frees the slot. */
typedef struct conn_slot {
    pthread_t thread;
    bool used;     /* a thread was started here and is not joined yet */
    bool finished; /* that thread is done with the slot */
    bool counted;  /* it holds one of max_connections */
    int fd;        /* the client socket, -1 once its thread closed it */
    uint32_t pid;  /* BackendKeyData: the connection's id ... */
    uint32_t key;  /* ... and its secret key */
    /* The connection's SQL session while it exists (for cancels). */
    sql_session *session;
    char host[80]; /* "[local]" or "ADDR port=N", for the log */
} conn_slot;

struct server {
    keel_db *db;
    server_options opts;
    int listen_fds[SERVER_MAX_LISTEN];
    bool listen_unix[SERVER_MAX_LISTEN];
    int nlisten;
    char socket_path[108]; /* "" if there is no Unix socket */
    int stop_pipe[2];      /* server_request_stop() writes to [1] */
    /* Random, the server's own: derives the salts shown to clients that
     * name a role without a usable password (sasl.h). */
    uint8_t mock_key[32];

    pthread_mutex_t lock; /* guards everything below */
    bool stopping;
    uint32_t nclients;  /* slots counted */
    uint32_t nfinished; /* slots finished and not yet joined */
    uint32_t next_pid;
    uint32_t nslots; /* max_connections + room for cancels and refusals */
    conn_slot *slots;
};

/* A connection thread's argument. */
typedef struct conn_start {
    server *srv;
    conn_slot *slot;
} conn_start;

/*
 * Admits a started connection: takes one of max_connections for slot.
 * Returns NULL, or a SQLSTATE with *why set: 53300 when all are taken,
 * 57P03 while the server shuts down.
 */
const char *server_admit(server *srv, conn_slot *slot, const char **why);

/* Publishes (s non-NULL) or withdraws (NULL) slot's SQL session for
 * cancels; withdraw before destroying it. */
void server_set_session(server *srv, conn_slot *slot, sql_session *s);

/* Whether the server is stopping (its connections are to end). */
bool server_stopping(server *srv);

/* A CancelRequest: cancels the running statement of the connection with
 * this pid if key matches; anything else is ignored. */
void server_cancel(server *srv, uint32_t pid, uint32_t key);

/* The connection thread's last act: closes its socket, gives back its
 * place in max_connections and marks the slot finished. */
void server_release(server *srv, conn_slot *slot);

/* The connection thread (conn.c): arg is a malloc'd conn_start it frees. */
void *conn_main(void *arg);

#endif /* KEEL_SERVER_SERVER_INTERNAL_H */
