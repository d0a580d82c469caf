/*
 * server.c: the listener.  Binds the TCP and Unix sockets, accepts
 * connections and starts a thread for each (conn.c), keeps the table of
 * connection slots that cancels and shutdown go through, and on a stop
 * request ends every connection and joins its thread.  README.md states
 * the protocol.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "server/protocol.h"
#include "server/server_internal.h"

/* Slots beyond max_connections: a CancelRequest, or a client to be told
 * that there are too many, needs a thread while the others are busy. */
#define SLOTS_SPARE(max) ((max) / 8 + 8)

/* How long a stop lets connections say goodbye before their sockets are
 * shut down for writing too. */
#define SERVER_STOP_GRACE_MS 1000

void server_log(uint32_t pid, const char *level, const char *fmt, ...)
{
    char line[2048];
    struct timespec ts;
    struct tm tm;
    size_t n;
    va_list ap;
    int w;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = strftime(line, sizeof(line), "%Y-%m-%d %H:%M:%S", &tm);
    w = snprintf(line + n, sizeof(line) - n,
                 ".%03ld UTC [%u] %s:  ", ts.tv_nsec / 1000000,
                 pid ? pid : (uint32_t)getpid(), level);
    if (w > 0)
        n += (size_t)w;
    va_start(ap, fmt);
    w = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
    va_end(ap);
    if (w > 0)
        n += (size_t)w;
    if (n > sizeof(line) - 2)
        n = sizeof(line) - 2;
    line[n++] = '\n';
    /* One write per line, so that threads' lines do not interleave. */
    if (write(STDERR_FILENO, line, n) < 0) {
        /* Nowhere left to say it. */
    }
}

/* ---- listening sockets ----------------------------------------------- */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int server_address_is_loopback(const char *listen)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE};
    struct addrinfo *res, *ai;
    int loopback = 1;

    if (*listen == '\0')
        return 1;
    if (getaddrinfo(listen, "5432", &hints, &res) != 0)
        return -1;
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        if (ai->ai_family == AF_INET) {
            const struct sockaddr_in *in = (const void *)ai->ai_addr;

            if ((ntohl(in->sin_addr.s_addr) >> 24) != 127)
                loopback = 0;
        } else if (ai->ai_family == AF_INET6) {
            const struct sockaddr_in6 *in6 = (const void *)ai->ai_addr;

            if (!IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
                loopback = 0;
        } else {
            loopback = 0;
        }
    }
    freeaddrinfo(res);
    return loopback;
}

static int listen_backlog(const server_options *o)
{
    return o->max_connections * 2 > 128 ? (int)(o->max_connections * 2) : 128;
}

/* Binds every address of opts->listen; -1 with err on the first failure
 * (the caller closes what was bound). */
static int bind_tcp(server *srv, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res, *ai;
    char port[8];
    int rc;

    snprintf(port, sizeof(port), "%u", srv->opts.port);
    rc = getaddrinfo(srv->opts.listen, port, &hints, &res);
    if (rc != 0) {
        set_err(err, errlen, "could not resolve listen address \"%s\": %s",
                srv->opts.listen, gai_strerror(rc));
        return -1;
    }
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        int one = 1;
        int fd;
        char host[NI_MAXHOST] = "?";

        getnameinfo(ai->ai_addr, ai->ai_addrlen, host, sizeof(host), NULL, 0,
                    NI_NUMERICHOST);
        if (srv->nlisten == SERVER_MAX_LISTEN)
            break;
        fd = socket(ai->ai_family,
                    ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
        if (fd < 0 && errno == EAFNOSUPPORT && ai->ai_next != NULL) {
            /* "localhost" on a machine without IPv6: the others will
             * do, as PostgreSQL goes on with the addresses it can bind. */
            server_log(0, "WARNING", "could not create socket for %s: %s", host,
                       strerror(errno));
            continue;
        }
        if (fd < 0) {
            set_err(err, errlen, "could not create socket for %s: %s", host,
                    strerror(errno));
            freeaddrinfo(res);
            return -1;
        }
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (ai->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
            listen(fd, listen_backlog(&srv->opts)) != 0) {
            set_err(err, errlen, "could not listen on %s port %u: %s%s", host,
                    srv->opts.port, strerror(errno),
                    errno == EADDRINUSE
                        ? " (is another server running on that port?)"
                        : "");
            close(fd);
            freeaddrinfo(res);
            return -1;
        }
        srv->listen_unix[srv->nlisten] = false;
        srv->listen_fds[srv->nlisten++] = fd;
        server_log(0, "LOG", "listening on IPv%d address \"%s\", port %u",
                   ai->ai_family == AF_INET6 ? 6 : 4, host, srv->opts.port);
    }
    freeaddrinfo(res);
    return 0;
}

/* Binds the Unix socket; a file left at its path is removed first if
 * nothing answers on it (a server that crashed), refused if something
 * does. */
static int bind_unix(server *srv, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int n, fd;

    n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/.s.PGSQL.%u",
                 srv->opts.socket_dir, srv->opts.port);
    if (n < 0 || (size_t)n >= sizeof(sa.sun_path)) {
        set_err(err, errlen,
                "Unix socket path \"%s/.s.PGSQL.%u\" is too long (maximum "
                "%zu bytes)",
                srv->opts.socket_dir, srv->opts.port, sizeof(sa.sun_path) - 1);
        return -1;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        set_err(err, errlen, "could not create Unix socket: %s",
                strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
        set_err(err, errlen,
                "another server is listening on \"%s\" (is another keel or "
                "PostgreSQL server running on port %u?)",
                sa.sun_path, srv->opts.port);
        close(fd);
        return -1;
    }
    if (errno == ECONNREFUSED)
        unlink(sa.sun_path); /* stale: nobody answers on it */
    close(fd);

    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        set_err(err, errlen, "could not create Unix socket: %s",
                strerror(errno));
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        set_err(err, errlen, "could not bind Unix socket \"%s\": %s",
                sa.sun_path, strerror(errno));
        close(fd);
        return -1;
    }
    /* From here on the file is ours to remove. */
    memcpy(srv->socket_path, sa.sun_path, sizeof(srv->socket_path));
    if (chmod(sa.sun_path, 0777) != 0 ||
        listen(fd, listen_backlog(&srv->opts)) != 0) {
        set_err(err, errlen, "could not listen on Unix socket \"%s\": %s",
                sa.sun_path, strerror(errno));
        close(fd);
        return -1;
    }
    srv->listen_unix[srv->nlisten] = true;
    srv->listen_fds[srv->nlisten++] = fd;
    server_log(0, "LOG", "listening on Unix socket \"%s\"", sa.sun_path);
    return 0;
}

int server_start(keel_db *db, const server_options *opts, server **out,
                 char *err, size_t errlen)
{
    server *srv = calloc(1, sizeof(*srv));

    *out = NULL;
    if (srv == NULL) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    srv->db = db;
    srv->opts = *opts;
    srv->stop_pipe[0] = srv->stop_pipe[1] = -1;
    srv->nslots = opts->max_connections + SLOTS_SPARE(opts->max_connections);
    srv->slots = calloc(srv->nslots, sizeof(conn_slot));
    if (srv->slots == NULL) {
        set_err(err, errlen, "out of memory");
        free(srv);
        return -1;
    }
    for (uint32_t i = 0; i < srv->nslots; i++)
        srv->slots[i].fd = -1;
    pthread_mutex_init(&srv->lock, NULL);
    srv->next_pid = 1;
    if (getrandom(srv->mock_key, sizeof(srv->mock_key), 0) !=
        (ssize_t)sizeof(srv->mock_key)) {
        set_err(err, errlen, "could not read random bytes: %s",
                strerror(errno));
        server_free(srv);
        return -1;
    }
    if (pipe2(srv->stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        set_err(err, errlen, "could not create pipe: %s", strerror(errno));
        server_free(srv);
        return -1;
    }
    if ((*opts->listen != '\0' && bind_tcp(srv, err, errlen) != 0) ||
        (*opts->socket_dir != '\0' && bind_unix(srv, err, errlen) != 0)) {
        server_free(srv);
        return -1;
    }
    if (srv->nlisten == 0) {
        set_err(err, errlen, "no address to listen on");
        server_free(srv);
        return -1;
    }
    *out = srv;
    return 0;
}

void server_request_stop(server *srv)
{
    char c = 1;

    if (write(srv->stop_pipe[1], &c, 1) < 0) {
        /* Full: a stop is already pending. */
    }
}

void server_free(server *srv)
{
    if (srv == NULL)
        return;
    for (int i = 0; i < srv->nlisten; i++)
        close(srv->listen_fds[i]);
    srv->nlisten = 0;
    if (srv->socket_path[0] != '\0')
        unlink(srv->socket_path);
    if (srv->stop_pipe[0] >= 0)
        close(srv->stop_pipe[0]);
    if (srv->stop_pipe[1] >= 0)
        close(srv->stop_pipe[1]);
    pthread_mutex_destroy(&srv->lock);
    free(srv->slots);
    free(srv);
}

/* ---- the slot table -------------------------------------------------- */

/* Joins the threads that have finished and frees their slots.  Called
 * by the listener only (the one thread that starts and joins). */
static void slots_reap(server *srv)
{
    uint32_t pending;

    pthread_mutex_lock(&srv->lock);
    pending = srv->nfinished;
    pthread_mutex_unlock(&srv->lock);
    for (uint32_t i = 0; pending > 0 && i < srv->nslots; i++) {
        conn_slot *sl = &srv->slots[i];
        bool done;

        if (!sl->used)
            continue;
        pthread_mutex_lock(&srv->lock);
        done = sl->finished;
        pthread_mutex_unlock(&srv->lock);
        if (done) {
            pthread_join(sl->thread, NULL);
            pthread_mutex_lock(&srv->lock);
            sl->used = false;
            sl->finished = false;
            srv->nfinished--;
            pthread_mutex_unlock(&srv->lock);
            pending--;
        }
    }
}

/* A free slot (reaping finished ones if none is), or NULL. */
static conn_slot *slot_get(server *srv)
{
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < srv->nslots; i++)
            if (!srv->slots[i].used)
                return &srv->slots[i];
        slots_reap(srv);
    }
    return NULL;
}

static uint32_t random_key(void)
{
    uint32_t key;

    if (getrandom(&key, sizeof(key), 0) == (ssize_t)sizeof(key))
        return key;
    /* No entropy source: a key that is at least not guessable from the
     * pid alone. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)(ts.tv_nsec * 2654435761u) ^ (uint32_t)getpid();
}

/* Tells a client for which there is no slot that there are too many,
 * without waiting for it. */
static void refuse_now(int fd)
{
    pq_out o;
    pq_error_fields f = {.severity = "FATAL",
                         .sqlstate = "53300",
                         .message = "sorry, too many clients already"};

    if (pq_out_init(&o, 128)) {
        pq_put_error(&o, 'E', &f);
        if (!o.failed &&
            send(fd, o.buf, o.len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
            /* It is gone already. */
        }
        pq_out_free(&o);
    }
    close(fd);
}

static void accept_one(server *srv, int lfd, bool is_unix)
{
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    conn_slot *sl;
    conn_start *cs;
    int fd;

    fd = accept4(lfd, (struct sockaddr *)&sa, &salen, SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
            errno == ENOMEM) {
            server_log(0, "LOG", "could not accept new connection: %s",
                       strerror(errno));
            /* Let connections end before trying again. */
            poll(NULL, 0, 100);
        }
        return;
    }
    sl = slot_get(srv);
    cs = sl != NULL ? malloc(sizeof(*cs)) : NULL;
    if (cs == NULL) {
        server_log(0, "LOG", "too many connection attempts: refused one");
        refuse_now(fd);
        return;
    }
    if (is_unix) {
        snprintf(sl->host, sizeof(sl->host), "[local]");
    } else {
        char host[64], port[8];
        int one = 1;

        /* Replies leave in one send per round trip: nothing is gained by
         * Nagle's delay, and a round trip would wait for it. */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (getnameinfo((struct sockaddr *)&sa, salen, host, sizeof(host), port,
                        sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
            snprintf(host, sizeof(host), "?");
            snprintf(port, sizeof(port), "?");
        }
        snprintf(sl->host, sizeof(sl->host), "%s port=%s", host, port);
    }
    pthread_mutex_lock(&srv->lock);
    sl->used = true;
    sl->finished = false;
    sl->counted = false;
    sl->fd = fd;
    sl->pid = srv->next_pid++;
    if (srv->next_pid == 0 || srv->next_pid > INT32_MAX)
        srv->next_pid = 1;
    sl->key = random_key();
    sl->session = NULL;
    pthread_mutex_unlock(&srv->lock);
    cs->srv = srv;
    cs->slot = sl;
    if (pthread_create(&sl->thread, NULL, conn_main, cs) != 0) {
        server_log(0, "LOG", "could not start a connection thread");
        free(cs);
        pthread_mutex_lock(&srv->lock);
        sl->used = false;
        sl->fd = -1;
        pthread_mutex_unlock(&srv->lock);
        refuse_now(fd);
    }
}

void server_run(server *srv)
{
    struct pollfd pfd[SERVER_MAX_LISTEN + 1];
    int n = srv->nlisten;

    for (int i = 0; i < n; i++)
        pfd[i] = (struct pollfd){.fd = srv->listen_fds[i], .events = POLLIN};
    pfd[n] = (struct pollfd){.fd = srv->stop_pipe[0], .events = POLLIN};
    for (;;) {
        /* Wake now and then to join the threads of ended connections,
         * so that their stacks go back even while nobody connects. */
        int rc = poll(pfd, (nfds_t)n + 1, 1000);

        if (rc < 0 && errno != EINTR)
            break;
        if (rc > 0 && pfd[n].revents != 0)
            break;
        for (int i = 0; rc > 0 && i < n; i++)
            if (pfd[i].revents & POLLIN)
                accept_one(srv, pfd[i].fd, srv->listen_unix[i]);
        slots_reap(srv);
    }

    /* Stop accepting, then end every connection: a shut-down socket
     * makes its thread's blocked read or write return, and a cancel
     * ends a statement that runs. */
    for (int i = 0; i < srv->nlisten; i++)
        close(srv->listen_fds[i]);
    srv->nlisten = 0;
    pthread_mutex_lock(&srv->lock);
    srv->stopping = true;
    for (uint32_t i = 0; i < srv->nslots; i++) {
        conn_slot *sl = &srv->slots[i];

        /* Reads end (a thread waiting for the client's next message
         * tells it why, FATAL 57P01, and goes); writes still work. */
        if (sl->fd >= 0)
            shutdown(sl->fd, SHUT_RD);
        if (sl->session != NULL)
            sql_cancel(sl->session);
    }
    pthread_mutex_unlock(&srv->lock);
    /* A thread blocked sending to a client that reads nothing would wait
     * for ever: after a grace period writes end too. */
    for (int waited = 0; waited < SERVER_STOP_GRACE_MS; waited += 10) {
        bool all_done = true;

        pthread_mutex_lock(&srv->lock);
        for (uint32_t i = 0; i < srv->nslots && all_done; i++)
            if (srv->slots[i].used && !srv->slots[i].finished)
                all_done = false;
        pthread_mutex_unlock(&srv->lock);
        if (all_done)
            break;
        poll(NULL, 0, 10);
    }
    pthread_mutex_lock(&srv->lock);
    for (uint32_t i = 0; i < srv->nslots; i++)
        if (srv->slots[i].fd >= 0)
            shutdown(srv->slots[i].fd, SHUT_RDWR);
    pthread_mutex_unlock(&srv->lock);
    for (uint32_t i = 0; i < srv->nslots; i++) {
        if (srv->slots[i].used) {
            pthread_join(srv->slots[i].thread, NULL);
            srv->slots[i].used = false;
            srv->slots[i].finished = false;
        }
    }
}

/* ---- what connection threads call ----------------------------------- */

bool server_stopping(server *srv)
{
    bool stopping;

    pthread_mutex_lock(&srv->lock);
    stopping = srv->stopping;
    pthread_mutex_unlock(&srv->lock);
    return stopping;
}

const char *server_admit(server *srv, conn_slot *slot, const char **why)
{
    const char *state = NULL;

    pthread_mutex_lock(&srv->lock);
    if (srv->stopping) {
        state = "57P03";
        *why = "the database system is shutting down";
    } else if (srv->nclients >= srv->opts.max_connections) {
        state = "53300";
        *why = "sorry, too many clients already";
    } else {
        srv->nclients++;
        slot->counted = true;
    }
    pthread_mutex_unlock(&srv->lock);
    return state;
}

void server_set_session(server *srv, conn_slot *slot, sql_session *s)
{
    pthread_mutex_lock(&srv->lock);
    slot->session = s;
    /* A stop that came before the session was published still ends its
     * first statement. */
    if (s != NULL && srv->stopping)
        sql_cancel(s);
    pthread_mutex_unlock(&srv->lock);
}

void server_cancel(server *srv, uint32_t pid, uint32_t key)
{
    pthread_mutex_lock(&srv->lock);
    for (uint32_t i = 0; i < srv->nslots; i++) {
        conn_slot *sl = &srv->slots[i];

        /* Under the lock the session cannot be destroyed meanwhile:
         * its thread withdraws it here first. */
        if (sl->used && !sl->finished && sl->pid == pid) {
            if (sl->key == key && sl->session != NULL)
                sql_cancel(sl->session);
            break;
        }
    }
    pthread_mutex_unlock(&srv->lock);
}

void server_release(server *srv, conn_slot *slot)
{
    pthread_mutex_lock(&srv->lock);
    /* Closed under the lock, so that a shutdown() by the listener never
     * meets a descriptor number already reused. */
    if (slot->fd >= 0)
        close(slot->fd);
    slot->fd = -1;
    if (slot->counted) {
        srv->nclients--;
        slot->counted = false;
    }
    slot->session = NULL;
    slot->finished = true;
    srv->nfinished++;
    pthread_mutex_unlock(&srv->lock);
}
