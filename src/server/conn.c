/*
 * conn.c: one client connection, on a thread of its own: the startup
 * exchange (SSL and GSS encryption refused, CancelRequest, StartupMessage,
 * trust authentication, ParameterStatus, BackendKeyData) and then the
 * message loop, where a simple Query runs through the connection's
 * sql_session and its results are written as RowDescription, DataRow,
 * CommandComplete, ... into the output buffer.
 *
 * I/O: one recv() fills the input buffer with whatever the client has
 * sent; every whole message in it is handled before the next recv(), and
 * the replies they produced leave in one send() before the thread waits
 * for more (or sooner, when the output buffer fills).  A pipelining client
 * thus costs one recv() and one send() per batch, not per message.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "port/clock.h"
#include "server/protocol.h"
#include "server/server_internal.h"

/* The input buffer's usual size; it grows for a larger message (up to
 * pq_message_limit()) and shrinks back after it. */
#define CONN_IN_SIZE (64u << 10)
/* Replies are sent once this much is waiting, even mid-statement. */
#define CONN_OUT_FLUSH (64u << 10)
/* The output buffer grows past this only for a single large message,
 * and is given back down to it once that is sent. */
#define CONN_OUT_KEEP (1u << 20)

typedef struct conn {
    /* Used by every message: the buffers first. */
    char *in;
    size_t in_off; /* bytes consumed */
    size_t in_len; /* bytes read */
    size_t in_cap;
    pq_out out;
    int fd;
    bool broken;           /* a send failed: the client is gone */
    bool ignore_till_sync; /* after an extended-protocol error */
    sql_session *sql;
    sql_sink sink;
    const char *query; /* the Query running, for the log */

    /* Startup and logging. */
    server *srv;
    conn_slot *slot;
    uint32_t pid;
    bool authorized;
    uint64_t start_ns;
    char user[64];
    char database[64];
    char host[80];
} conn;

/* ---- I/O ------------------------------------------------------------- */

/* Sends what the output buffer holds.  false (broken set) if the client
 * is gone. */
static bool conn_flush(conn *c)
{
    size_t off = 0;

    if (c->out.failed) {
        server_log(c->pid, "LOG",
                   "out of memory for a reply: closing the "
                   "connection");
        c->broken = true;
    }
    while (!c->broken && off < c->out.len) {
        ssize_t n =
            send(c->fd, c->out.buf + off, c->out.len - off, MSG_NOSIGNAL);

        if (n > 0)
            off += (size_t)n;
        else if (n < 0 && errno == EINTR)
            continue;
        else
            c->broken = true;
    }
    pq_out_reset(&c->out, CONN_OUT_KEEP);
    return !c->broken;
}

/*
 * Reads what the client sent into the input buffer, after making room
 * for a message of need bytes in all (0: any).  Returns the bytes read,
 * 0 at end of file, -1 on an error (a startup timeout reads as EAGAIN).
 */
static ssize_t conn_recv(conn *c, size_t need)
{
    ssize_t n;

    if (c->in_off > 0) {
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    if (need > c->in_cap || (c->in_cap > CONN_IN_SIZE && need <= CONN_IN_SIZE &&
                             c->in_len <= CONN_IN_SIZE)) {
        size_t cap = need > CONN_IN_SIZE ? need : CONN_IN_SIZE;
        char *p = realloc(c->in, cap);

        if (p == NULL) {
            errno = ENOMEM;
            return -1;
        }
        c->in = p;
        c->in_cap = cap;
    }
    if (c->in_len == c->in_cap)
        return -1; /* cannot happen: need bounds what is buffered */
    do {
        n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
    } while (n < 0 && errno == EINTR);
    if (n > 0)
        c->in_len += (size_t)n;
    return n;
}

/* ---- errors ---------------------------------------------------------- */

/* Puts an ErrorResponse and logs it (with the statement, if one runs). */
static void conn_put_error(conn *c, const pq_error_fields *f)
{
    if (f->position > 0)
        server_log(c->pid, f->severity, "%s at character %u", f->message,
                   f->position);
    else
        server_log(c->pid, f->severity, "%s", f->message);
    if (f->detail != NULL && f->detail[0] != '\0')
        server_log(c->pid, "DETAIL", "%s", f->detail);
    if (f->hint != NULL && f->hint[0] != '\0')
        server_log(c->pid, "HINT", "%s", f->hint);
    if (c->query != NULL)
        server_log(c->pid, "STATEMENT", "%s", c->query);
    pq_put_error(&c->out, 'E', f);
}

static void conn_error(conn *c, const char *severity, const char *sqlstate,
                       const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* An error of the protocol layer's own; a FATAL one is sent at once (the
 * connection ends after it). */
static void conn_error(conn *c, const char *severity, const char *sqlstate,
                       const char *fmt, ...)
{
    char msg[256];
    pq_error_fields f = {
        .severity = severity, .sqlstate = sqlstate, .message = msg};
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    conn_put_error(c, &f);
    if (strcmp(severity, "FATAL") == 0)
        conn_flush(c);
}

/* Readies err for a call that may fail: what the failure leaves unset
 * reads as empty (the struct, 1 KiB, is not cleared on every Query). */
static void sql_error_reset(sql_error *err)
{
    err->severity[0] = '\0';
    memcpy(err->sqlstate, "XX000", 6);
    err->message[0] = '\0';
    err->detail[0] = '\0';
    err->hint[0] = '\0';
    err->position = 0;
}

static void conn_sql_error(conn *c, const sql_error *err)
{
    pq_error_fields f = {.severity = err->severity,
                         .sqlstate = err->sqlstate,
                         .message = err->message,
                         .detail = err->detail,
                         .hint = err->hint,
                         .position = err->position};

    if (f.severity[0] == '\0')
        f.severity = "ERROR";
    conn_put_error(c, &f);
}

/* ---- the sink: results into the output buffer ------------------------ */

/* After each message: send if enough is waiting.  The sink's answer: 0,
 * or -1 once the client is gone (which stops the statement). */
static int conn_after_message(conn *c)
{
    if (c->out.failed || c->out.len >= CONN_OUT_FLUSH)
        conn_flush(c);
    return c->broken ? -1 : 0;
}

static int sink_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    conn *c = ctx;
    pq_out *o = &c->out;

    pq_begin(o, 'T');
    pq_put_int16(o, n);
    for (uint16_t i = 0; i < n; i++) {
        pq_put_str(o, cols[i].name);
        pq_put_int32(o, cols[i].table);
        pq_put_int16(o, (uint16_t)cols[i].attnum);
        pq_put_int32(o, cols[i].type);
        pq_put_int16(o, (uint16_t)cols[i].typlen);
        pq_put_int32(o, (uint32_t)cols[i].typmod);
        pq_put_int16(o, 0); /* text format */
    }
    pq_end(o);
    return conn_after_message(c);
}

static int sink_row(void *ctx, const char *const *vals, const uint32_t *lens,
                    uint16_t n)
{
    conn *c = ctx;
    pq_out *o = &c->out;

    pq_begin(o, 'D');
    pq_put_int16(o, n);
    for (uint16_t i = 0; i < n; i++) {
        if (vals[i] == NULL) {
            pq_put_int32(o, UINT32_MAX); /* -1: NULL */
        } else {
            pq_put_int32(o, lens[i]);
            pq_put_bytes(o, vals[i], lens[i]);
        }
    }
    pq_end(o);
    return conn_after_message(c);
}

static int sink_complete(void *ctx, const char *tag)
{
    conn *c = ctx;

    pq_begin(&c->out, 'C');
    pq_put_str(&c->out, tag);
    pq_end(&c->out);
    return conn_after_message(c);
}

static int sink_notice(void *ctx, const char *severity, const char *sqlstate,
                       const char *message)
{
    conn *c = ctx;
    pq_error_fields f = {
        .severity = severity, .sqlstate = sqlstate, .message = message};

    pq_put_error(&c->out, 'N', &f);
    return conn_after_message(c);
}

static int sink_empty(void *ctx)
{
    conn *c = ctx;

    pq_begin(&c->out, 'I');
    pq_end(&c->out);
    return conn_after_message(c);
}

/* ---- startup --------------------------------------------------------- */

/* Sends one byte now (the answer to SSLRequest or GSSENCRequest). */
static bool conn_send_byte(conn *c, char b)
{
    pq_put_byte(&c->out, b); /* a bare byte, not a message */
    return conn_flush(c);
}

static void copy_name(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src);
}

static void report_parameter(void *ctx, const char *name, const char *value)
{
    pq_put_parameter_status(ctx, name, value);
}

/*
 * Runs the startup exchange up to the first ReadyForQuery.  Returns true
 * when the connection is ready for queries; false when it is to be
 * closed (a cancel request, a refusal already sent, a client gone).
 */
static bool conn_startup(conn *c)
{
    bool ssl_done = false, gss_done = false;
    pq_startup st;
    const char *unknown[PQ_STARTUP_PARAMS_MAX];
    uint16_t nunknown = 0;
    const char *user = NULL, *database = NULL;
    const char *why, *state, *app = NULL;
    sql_error err;
    uint32_t major, minor;

    for (;;) {
        const char *pkt;
        size_t total;
        pq_result r;

        while ((r = pq_frame_startup(c->in + c->in_off, c->in_len - c->in_off,
                                     &total)) == PQ_NEED_MORE) {
            ssize_t n = conn_recv(c, total);

            if (n > 0)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                server_log(c->pid, "LOG", "startup timed out");
            else if (c->in_len > c->in_off)
                server_log(c->pid, "LOG", "incomplete startup packet");
            return false;
        }
        if (r != PQ_OK) {
            conn_error(c, "FATAL", "08P01",
                       "invalid length of startup "
                       "packet");
            return false;
        }
        pkt = c->in + c->in_off;
        c->in_off += total;
        if (pq_parse_startup(pkt, total, &st) != PQ_OK) {
            conn_error(c, "FATAL", "08P01", "%s", st.error);
            return false;
        }
        if ((st.code == PQ_SSL_REQUEST_CODE && !ssl_done) ||
            (st.code == PQ_GSSENC_REQUEST_CODE && !gss_done)) {
            /* Nothing may follow the request before our answer: it would
             * be plaintext a man in the middle could have put there. */
            if (c->in_len > c->in_off) {
                conn_error(c, "FATAL", "08P01",
                           "received unencrypted data after %s request",
                           st.code == PQ_SSL_REQUEST_CODE ? "SSL"
                                                          : "GSSAPI "
                                                            "encryption");
                return false;
            }
            if (st.code == PQ_SSL_REQUEST_CODE)
                ssl_done = true;
            else
                gss_done = true;
            if (!conn_send_byte(c, 'N'))
                return false;
            continue;
        }
        if (st.code == PQ_CANCEL_REQUEST_CODE) {
            server_cancel(c->srv, st.cancel_pid, st.cancel_key);
            return false;
        }
        break;
    }

    major = st.code >> 16;
    minor = st.code & 0xffff;
    if (major != 3) {
        conn_error(c, "FATAL", "0A000",
                   "unsupported frontend protocol %u.%u: server supports "
                   "3.0 to 3.0",
                   major, minor);
        return false;
    }
    for (uint16_t i = 0; i < st.nparams; i++) {
        if (strncmp(st.names[i], "_pq_.", 5) == 0)
            unknown[nunknown++] = st.names[i];
        else if (strcmp(st.names[i], "user") == 0)
            user = st.values[i];
        else if (strcmp(st.names[i], "database") == 0)
            database = st.values[i];
        else if (strcmp(st.names[i], "application_name") == 0)
            app = st.values[i];
    }
    if (user == NULL || *user == '\0') {
        conn_error(c, "FATAL", "28000",
                   "no PostgreSQL user name specified in startup packet");
        return false;
    }
    if (database == NULL || *database == '\0')
        database = user;
    copy_name(c->user, sizeof(c->user), user);
    copy_name(c->database, sizeof(c->database), database);
    if (minor > 0 || nunknown > 0)
        pq_put_negotiate(&c->out, 0, unknown, nunknown);

    sql_error_reset(&err);
    state = server_admit(c->srv, c->slot, &why);
    if (state != NULL) {
        conn_error(c, "FATAL", state, "%s", why);
        return false;
    }
    if (sql_session_create(c->srv->db, &c->sql, &err) != KEEL_OK) {
        c->sql = NULL;
        snprintf(err.severity, sizeof(err.severity), "FATAL");
        conn_sql_error(c, &err);
        conn_flush(c);
        return false;
    }
    server_set_session(c->srv, c->slot, c->sql);
    for (uint16_t i = 0; i < st.nparams; i++) {
        const char *name = st.names[i];
        const char *value = st.values[i];

        if (strncmp(name, "_pq_.", 5) == 0)
            continue;
        if (strcmp(name, "database") == 0)
            value = database;
        if (sql_set_startup(c->sql, name, value, &err) != KEEL_OK) {
            snprintf(err.severity, sizeof(err.severity), "FATAL");
            conn_sql_error(c, &err);
            conn_flush(c);
            return false;
        }
    }
    /* The database name defaults to the user's, as PostgreSQL's does. */
    if (database == user &&
        sql_set_startup(c->sql, "database", database, &err) != KEEL_OK) {
        snprintf(err.severity, sizeof(err.severity), "FATAL");
        conn_sql_error(c, &err);
        conn_flush(c);
        return false;
    }

    if (app != NULL && *app != '\0')
        server_log(c->pid, "LOG",
                   "connection authorized: user=%s database=%s "
                   "application_name=%s",
                   c->user, c->database, app);
    else
        server_log(c->pid, "LOG",
                   "connection authorized: user=%s "
                   "database=%s",
                   c->user, c->database);
    c->authorized = true;
    pq_put_auth_ok(&c->out);
    sql_report_parameters(c->sql, report_parameter, &c->out);
    pq_put_backend_key(&c->out, c->pid, c->slot->key);
    pq_put_ready(&c->out, sql_txn_status(c->sql));
    return conn_flush(c);
}

/* ---- messages -------------------------------------------------------- */

/* A Query message: every statement in it, then ReadyForQuery.  false
 * when the connection is to end. */
static bool conn_query(conn *c, const pq_message *m)
{
    const char *text;
    sql_error err;
    keel_status st;

    if (pq_parse_query(m->body, m->body_len, &text) != PQ_OK) {
        conn_error(c, "ERROR", "08P01", "invalid message format");
        pq_put_ready(&c->out, sql_txn_status(c->sql));
        return true;
    }
    sql_error_reset(&err);
    c->query = text;
    st = sql_exec_simple(c->sql, text, &c->sink, &err);
    if (c->broken) {
        c->query = NULL;
        return false;
    }
    if (st != KEEL_OK) {
        conn_sql_error(c, &err);
        if (strcmp(err.severity, "FATAL") == 0) {
            c->query = NULL;
            conn_flush(c);
            return false;
        }
    }
    c->query = NULL;
    pq_put_ready(&c->out, sql_txn_status(c->sql));
    return true;
}

/* Handles one message.  false when the connection is to end. */
static bool conn_message(conn *c, const pq_message *m)
{
    if (c->ignore_till_sync && m->type != 'S' && m->type != 'X')
        return true;
    switch (m->type) {
    case 'Q':
        return conn_query(c, m);
    case 'X': /* Terminate */
        return false;
    case 'S': /* Sync: the end of an extended-protocol round */
        c->ignore_till_sync = false;
        pq_put_ready(&c->out, sql_txn_status(c->sql));
        return true;
    case 'H': /* Flush: replies leave at the end of each batch anyway */
        return true;
    case 'P': /* Parse */
    case 'B': /* Bind */
    case 'D': /* Describe */
    case 'E': /* Execute */
    case 'C': /* Close */
        /* As PostgreSQL recovers from an error in an extended-protocol
         * message: report it, then skip everything up to the Sync. */
        conn_error(c, "ERROR", "0A000",
                   "extended query protocol is not supported yet");
        c->ignore_till_sync = true;
        return true;
    case 'F': /* FunctionCall */
        conn_error(c, "ERROR", "0A000",
                   "function call protocol is not supported");
        pq_put_ready(&c->out, sql_txn_status(c->sql));
        return true;
    case 'd': /* CopyData, CopyDone, CopyFail outside a COPY: ignored, */
    case 'c': /* as PostgreSQL ignores them */
    case 'f':
        return true;
    default:
        conn_error(c, "FATAL", "08P01", "invalid frontend message type %d",
                   (unsigned char)m->type);
        return false;
    }
}

/* The message loop: until the client ends, breaks the protocol or goes. */
static void conn_loop(conn *c)
{
    for (;;) {
        pq_message m;
        pq_result r;
        ssize_t n;

        while ((r = pq_frame_message(c->in + c->in_off, c->in_len - c->in_off,
                                     &m)) == PQ_OK) {
            c->in_off += m.total;
            if (!conn_message(c, &m) || c->broken)
                return;
        }
        if (r != PQ_NEED_MORE) {
            conn_error(c, "FATAL", "08P01", "invalid message length");
            return;
        }
        /* Every whole message is handled: the replies leave together. */
        if (c->out.len > 0 && !conn_flush(c))
            return;
        n = conn_recv(c, m.total);
        if (n == 0) {
            if (c->in_len > c->in_off)
                server_log(c->pid, "LOG", "unexpected EOF within message");
            else if (sql_txn_status(c->sql) != 'I')
                server_log(c->pid, "LOG",
                           "unexpected EOF on client "
                           "connection with an open "
                           "transaction");
            return;
        }
        if (n < 0) {
            if (errno == ENOMEM)
                server_log(c->pid, "LOG",
                           "out of memory for a message of "
                           "%zu bytes",
                           m.total);
            else if (errno != ECONNRESET && errno != EPIPE)
                server_log(c->pid, "LOG",
                           "could not receive data from "
                           "client: %s",
                           strerror(errno));
            return;
        }
    }
}

static void set_recv_timeout(int fd, uint32_t ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

void *conn_main(void *arg)
{
    conn_start *cs = arg;
    conn c = {.srv = cs->srv, .slot = cs->slot};
    sigset_t stop_signals;

    free(cs);
    /* Stop signals go to the listener's thread, never interrupting a
     * connection's I/O or its statement. */
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    c.fd = c.slot->fd;
    c.pid = c.slot->pid;
    c.start_ns = clock_now_ns();
    memcpy(c.host, c.slot->host, sizeof(c.host));
    c.sink = (sql_sink){.ctx = &c,
                        .columns = sink_columns,
                        .row = sink_row,
                        .complete = sink_complete,
                        .notice = sink_notice,
                        .empty = sink_empty};
    server_log(c.pid, "LOG", "connection received: host=%s", c.host);
    c.in = malloc(CONN_IN_SIZE);
    c.in_cap = CONN_IN_SIZE;
    if (c.in == NULL || !pq_out_init(&c.out, CONN_OUT_FLUSH)) {
        server_log(c.pid, "LOG", "out of memory for a connection");
    } else {
        set_recv_timeout(c.fd, c.srv->opts.startup_timeout_ms);
        if (conn_startup(&c)) {
            set_recv_timeout(c.fd, 0);
            conn_loop(&c);
        }
    }
    if (c.sql != NULL) {
        /* Withdrawn first, so that no cancel reaches a freed session. */
        server_set_session(c.srv, c.slot, NULL);
        sql_session_destroy(c.sql);
    }
    if (c.authorized) {
        uint64_t ms = (clock_now_ns() - c.start_ns) / 1000000;

        server_log(c.pid, "LOG",
                   "disconnection: session time: %u:%02u:%02u.%03u "
                   "user=%s database=%s host=%s",
                   (unsigned)(ms / 3600000), (unsigned)(ms / 60000 % 60),
                   (unsigned)(ms / 1000 % 60), (unsigned)(ms % 1000), c.user,
                   c.database, c.host);
    }
    free(c.in);
    pq_out_free(&c.out);
    server_release(c.srv, c.slot);
    return NULL;
}
