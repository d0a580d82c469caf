/*
 * conn.c: one client connection, on a thread of its own: the startup
 * exchange (SSL and GSS encryption refused, CancelRequest, StartupMessage,
 * trust or SCRAM-SHA-256 authentication, ParameterStatus, BackendKeyData)
 * and then the message loop, where a simple Query, or the extended protocol's
 * Parse, Bind, Describe, Execute, Close and Sync, run through the connection's
 * sql_session; results are written as RowDescription, DataRow,
 * CommandComplete, ... into the output buffer, and COPY's data passes
 * both ways through the sink.
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
#include "port/mem.h"
#include "server/protocol.h"
#include "server/sasl.h"
#include "server/server_internal.h"

/* The input buffer's usual size; it grows for a larger message (up to
 * pq_message_limit()) and shrinks back after it. */
#define CONN_IN_SIZE (64u << 10)
/* Replies are sent once this much is waiting, even mid-statement. */
#define CONN_OUT_FLUSH (64u << 10)
/* The output buffer grows past this only for a single large message,
 * and is given back down to it once that is sent. */
#define CONN_OUT_KEEP (1u << 20)

/* A parameter as last reported to the client. */
typedef struct conn_param {
    char *name;
    char *value;
} conn_param;

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
    bool copy_out;     /* a COPY TO STDOUT is sending CopyData */
    bool hold_output;  /* nothing is sent until the message is whole */
    /* A Describe of the portal that the next message executes: its
     * RowDescription comes from that Execute's run (describe_deferred),
     * and NoData before its first other reply if it has no rows
     * (nodata_pending, while that run goes). */
    bool describe_deferred, nodata_pending;
    /* COPY FROM STDIN reads through a side buffer, so that the message
     * that started it, which the SQL layer reads in place, never moves. */
    char *cin;
    size_t cin_off, cin_len, cin_cap;
    const char *fatal; /* a protocol violation inside a COPY: ends it */
    char fatal_msg[96];
    /* Decoded arrays of the extended protocol's messages, grown as
     * needed. */
    void *scratch;
    size_t scratch_cap;
    /* The parameters last reported (ParameterStatus), to report again
     * those that changed; the session's settings version they were
     * last compared at (sql_settings_version()). */
    conn_param *params;
    uint16_t nparams;
    uint64_t params_version;

    /* Startup and logging. */
    server *srv;
    conn_slot *slot;
    uint32_t pid;
    bool authorized;
    uint64_t start_ns;
    char user[64];
    char database[64];
    char host[80];
    char *startup_copy; /* the StartupMessage, kept while authenticating */
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
    if (f->context != NULL && f->context[0] != '\0')
        server_log(c->pid, "CONTEXT", "%s", f->context);
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
    err->context[0] = '\0';
    err->position = 0;
}

static void conn_sql_error(conn *c, const sql_error *err)
{
    pq_error_fields f = {.severity = err->severity,
                         .sqlstate = err->sqlstate,
                         .message = err->message,
                         .detail = err->detail,
                         .hint = err->hint,
                         .context = err->context,
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
    if (c->out.failed || (c->out.len >= CONN_OUT_FLUSH && !c->hold_output))
        conn_flush(c);
    return c->broken ? -1 : 0;
}

/* The NoData of a deferred Describe whose run turned out to have no
 * rows, before the run's first reply. */
static void conn_put_pending_nodata(conn *c)
{
    if (c->nodata_pending) {
        c->nodata_pending = false;
        pq_begin(&c->out, 'n');
        pq_end(&c->out);
    }
}

static int sink_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    conn *c = ctx;
    pq_out *o = &c->out;

    c->nodata_pending = false;
    pq_begin(o, 'T');
    pq_put_int16(o, n);
    for (uint16_t i = 0; i < n; i++) {
        pq_put_str(o, cols[i].name);
        pq_put_int32(o, cols[i].table);
        pq_put_int16(o, (uint16_t)cols[i].attnum);
        pq_put_int32(o, cols[i].type);
        pq_put_int16(o, (uint16_t)cols[i].typlen);
        pq_put_int32(o, (uint32_t)cols[i].typmod);
        pq_put_int16(o, (uint16_t)cols[i].format);
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

    conn_put_pending_nodata(c);
    if (c->copy_out) {
        pq_begin(&c->out, 'c'); /* CopyDone */
        pq_end(&c->out);
        c->copy_out = false;
    }
    pq_begin(&c->out, 'C');
    pq_put_str(&c->out, tag);
    pq_end(&c->out);
    return conn_after_message(c);
}

static int sink_notice(void *ctx, const char *severity, const char *sqlstate,
                       const char *message)
{
    conn *c = ctx;

    conn_put_pending_nodata(c);    pq_error_fields f = {
        .severity = severity, .sqlstate = sqlstate, .message = message};

    pq_put_error(&c->out, 'N', &f);
    return conn_after_message(c);
}

static int sink_empty(void *ctx)
{
    conn *c = ctx;

    conn_put_pending_nodata(c);
    pq_begin(&c->out, 'I');
    pq_end(&c->out);
    return conn_after_message(c);
}

/* CopyInResponse or CopyOutResponse: the overall format and each
 * column's. */
static void put_copy_response(pq_out *o, char type, uint16_t ncols,
                              int16_t format)
{
    pq_begin(o, type);
    pq_put_byte(o, (char)format);
    pq_put_int16(o, ncols);
    for (uint16_t i = 0; i < ncols; i++)
        pq_put_int16(o, (uint16_t)format);
    pq_end(o);
}

static int sink_copy_out_begin(void *ctx, uint16_t ncols, int16_t format)
{
    conn *c = ctx;

    conn_put_pending_nodata(c);
    put_copy_response(&c->out, 'H', ncols, format);
    c->copy_out = true;
    return conn_after_message(c);
}

static int sink_copy_out_data(void *ctx, const char *data, size_t len)
{
    conn *c = ctx;

    pq_begin(&c->out, 'd');
    pq_put_bytes(&c->out, data, len);
    pq_end(&c->out);
    return conn_after_message(c);
}

static int sink_copy_in_begin(void *ctx, uint16_t ncols, int16_t format)
{
    conn *c = ctx;

    conn_put_pending_nodata(c);
    put_copy_response(&c->out, 'G', ncols, format);
    /* The client sends nothing until it has this. */
    return conn_flush(c) ? 0 : -1;
}

static bool conn_copy_no_memory(conn *c)
{
    server_log(c->pid, "LOG",
               "out of memory for COPY data: closing the "
               "connection");
    c->broken = true;
    return false;
}

/*
 * The next whole message during COPY FROM STDIN: first from what the
 * input buffer holds past the message being run; once that runs short,
 * its rest moves to the side buffer, which all further reads fill (the
 * input buffer is neither moved nor grown meanwhile).  false when the
 * client is gone or breaks the framing (fatal set).
 */
static bool conn_copy_next(conn *c, pq_message *m)
{
    pq_result r = pq_frame_message(c->in + c->in_off, c->in_len - c->in_off, m);
    size_t rest = c->in_len - c->in_off;

    if (r == PQ_OK) {
        c->in_off += m->total;
        return true;
    }
    if (r == PQ_NEED_MORE && rest > 0) {
        if (c->cin_cap - c->cin_len < rest) {
            size_t cap = c->cin_len + rest + CONN_IN_SIZE;
            char *p = realloc(c->cin, cap);

            if (p == NULL)
                return conn_copy_no_memory(c);
            c->cin = p;
            c->cin_cap = cap;
        }
        memcpy(c->cin + c->cin_len, c->in + c->in_off, rest);
        c->cin_len += rest;
        c->in_len = c->in_off;
    }
    for (;;) {
        ssize_t n;

        if (r != PQ_NEED_MORE)
            break;
        m->total = 0;
        if (c->cin_len > c->cin_off) {
            r = pq_frame_message(c->cin + c->cin_off, c->cin_len - c->cin_off,
                                 m);
            if (r == PQ_OK) {
                c->cin_off += m->total;
                return true;
            }
            if (r != PQ_NEED_MORE)
                break;
            /* The data returned before is no longer needed: make room. */
            memmove(c->cin, c->cin + c->cin_off, c->cin_len - c->cin_off);
        }
        c->cin_len -= c->cin_off;
        c->cin_off = 0;
        if (c->cin_cap < m->total || c->cin_cap - c->cin_len < 4096) {
            size_t cap = m->total > c->cin_len + CONN_IN_SIZE
                             ? m->total
                             : c->cin_len + CONN_IN_SIZE;
            char *p = realloc(c->cin, cap);

            if (p == NULL)
                return conn_copy_no_memory(c);
            c->cin = p;
            c->cin_cap = cap;
        }
        do {
            n = recv(c->fd, c->cin + c->cin_len, c->cin_cap - c->cin_len, 0);
        } while (n < 0 && errno == EINTR);
        if (n <= 0) {
            server_log(c->pid, "LOG",
                       "unexpected EOF on client connection "
                       "during COPY");
            c->broken = true;
            return false;
        }
        c->cin_len += (size_t)n;
    }
    c->fatal = "invalid message length";
    return false;
}

static int sink_copy_in_read(void *ctx, const char **data, size_t *len,
                             char *why, size_t whylen)
{
    conn *c = ctx;
    pq_message m;

    for (;;) {
        if (c->broken || c->fatal != NULL || !conn_copy_next(c, &m))
            return -1;
        switch (m.type) {
        case 'd': /* CopyData */
            if (m.body_len == 0)
                continue; /* 0 would read as CopyDone */
            *data = m.body;
            *len = m.body_len;
            return 0;
        case 'c': /* CopyDone */
            *data = NULL;
            *len = 0;
            return 0;
        case 'f': /* CopyFail: its message says why */
            snprintf(why, whylen, "%.*s", (int)mem_strnlen(m.body, m.body_len),
                     m.body);
            if (why[0] == '\0')
                snprintf(why, whylen, "(no message)");
            return -1;
        case 'H': /* Flush and Sync: ignored during COPY, as PostgreSQL */
        case 'S': /* ignores them */
            continue;
        default:
            snprintf(c->fatal_msg, sizeof(c->fatal_msg),
                     "unexpected message type 0x%02X during COPY from stdin",
                     (unsigned char)m.type);
            c->fatal = c->fatal_msg;
            return -1;
        }
    }
}

/*
 * After a statement: what a COPY FROM STDIN read into the side buffer
 * beyond its end (messages the client pipelined after CopyDone) goes
 * back to the input buffer, which then holds nothing else.  false when
 * there is no memory for it.
 */
static bool conn_copy_end(conn *c)
{
    size_t rest = c->cin_len - c->cin_off;

    c->copy_out = false;
    if (rest > 0) {
        /* Everything in the input buffer was consumed before the side
         * buffer was used. */
        if (rest > c->in_cap) {
            char *p = realloc(c->in, rest);

            if (p == NULL)
                return false;
            c->in = p;
            c->in_cap = rest;
        }
        memcpy(c->in, c->cin + c->cin_off, rest);
        c->in_off = 0;
        c->in_len = rest;
    }
    c->cin_off = c->cin_len = 0;
    if (c->cin_cap > CONN_OUT_KEEP) {
        free(c->cin);
        c->cin = NULL;
        c->cin_cap = 0;
    }
    return true;
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

/* sql_report_parameters()'s callback: reports a parameter whose value
 * differs from what the client was last told (all of them at startup). */
static void report_parameter(void *ctx, const char *name, const char *value)
{
    conn *c = ctx;
    conn_param *p = NULL;

    for (uint16_t i = 0; i < c->nparams; i++) {
        if (strcmp(c->params[i].name, name) == 0) {
            p = &c->params[i];
            break;
        }
    }
    if (p != NULL && strcmp(p->value, value) == 0)
        return;
    if (p == NULL) {
        conn_param *grown =
            realloc(c->params, (c->nparams + 1u) * sizeof(conn_param));
        char *n = strdup(name);

        if (grown == NULL || n == NULL) {
            if (grown != NULL)
                c->params = grown;
            free(n);
            pq_put_parameter_status(&c->out, name, value);
            return; /* reported, but it cannot be followed: no memory */
        }
        c->params = grown;
        p = &c->params[c->nparams++];
        p->name = n;
        p->value = NULL;
    }
    free(p->value);
    p->value = strdup(value);
    if (p->value == NULL)
        p->value = strdup("");
    pq_put_parameter_status(&c->out, name, value);
}

/* Before a ReadyForQuery: reports the parameters that changed, if any
 * setting moved since they were last compared (a SET, set_config() in
 * any statement, a transaction's end or abort setting one back). */
static void conn_report_changes(conn *c)
{
    uint64_t v = sql_settings_version(c->sql);

    if (v == c->params_version)
        return;
    c->params_version = v;
    sql_report_parameters(c->sql, report_parameter, c);
}

/* ---- authentication -------------------------------------------------- */

/* A SASL message's body is at most this (PostgreSQL's limit on an
 * authentication token); a longer one is refused before it is read. */
#define CONN_AUTH_MESSAGE_MAX 65535

/* Authentication failed: FATAL 28P01 to the client, which is told no
 * more than that (as PostgreSQL, whether the role exists stays
 * unsaid); the log gets why. */
static void conn_auth_failed(conn *c, const char *why)
{
    char msg[160];
    pq_error_fields f = {
        .severity = "FATAL", .sqlstate = "28P01", .message = msg};

    snprintf(msg, sizeof(msg), "password authentication failed for user \"%s\"",
             c->user);
    server_log(c->pid, "FATAL", "%s", msg);
    server_log(c->pid, "DETAIL", "%s", why);
    pq_put_error(&c->out, 'E', &f);
    conn_flush(c);
}

/*
 * Sends what is waiting and reads the client's next message, which must
 * be a SASL response ('p').  false when the connection is to end: the
 * client went (quietly, as psql leaves to ask for a password), timed
 * out, or sent something else (FATAL 08P01).
 */
static bool conn_auth_read(conn *c, pq_message *m)
{
    pq_result r;

    if (!conn_flush(c))
        return false;
    while ((r = pq_frame_message(c->in + c->in_off, c->in_len - c->in_off,
                                 m)) == PQ_NEED_MORE) {
        ssize_t n;

        if (m->total > (size_t)CONN_AUTH_MESSAGE_MAX + 5) {
            r = PQ_TOO_LONG;
            break;
        }
        n = conn_recv(c, m->total);
        if (n > 0)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            server_log(c->pid, "LOG", "authentication timed out");
        return false;
    }
    if (r != PQ_OK || m->body_len > CONN_AUTH_MESSAGE_MAX) {
        conn_error(c, "FATAL", "08P01", "invalid message length");
        return false;
    }
    c->in_off += m->total;
    if (m->type != 'p') {
        conn_error(c, "FATAL", "08P01",
                   "expected SASL response, got message type %d",
                   (unsigned char)m->type);
        return false;
    }
    return true;
}

/*
 * SCRAM-SHA-256 (sasl.h) against the role's verifier in keel_authid:
 * AuthenticationSASL, the client-first-message in SASLInitialResponse,
 * AuthenticationSASLContinue, the client-final-message in SASLResponse,
 * AuthenticationSASLFinal.  The AuthenticationOk that follows is the
 * caller's.  Then a role without LOGIN is refused (28000).  false when
 * the connection is to end, the client told why.
 */
static bool conn_authenticate(conn *c)
{
    sql_role role;
    sql_error err;
    sasl_exchange *x;
    pq_message m;
    const char *mech, *data;
    uint32_t data_len;
    bool ok = false;

    sql_error_reset(&err);
    if (sql_role_find(c->sql, c->user, &role, &err) != KEEL_OK) {
        snprintf(err.severity, sizeof(err.severity), "FATAL");
        conn_sql_error(c, &err);
        conn_flush(c);
        return false;
    }
    x = malloc(sizeof(*x));
    if (x == NULL || !sasl_begin(x, c->user, role.exists ? role.password : NULL,
                                 c->srv->mock_key)) {
        free(x);
        conn_error(c, "FATAL", "53200", "out of memory");
        return false;
    }
    pq_put_auth_sasl(&c->out, SASL_MECHANISM);
    if (!conn_auth_read(c, &m))
        goto out;
    if (pq_parse_sasl_initial(m.body, m.body_len, &mech, &data, &data_len) !=
        PQ_OK) {
        conn_auth_failed(c, "malformed SASLInitialResponse message");
        goto out;
    }
    if (strcmp(mech, SASL_MECHANISM) != 0) {
        conn_auth_failed(c, "client selected an invalid SASL "
                            "authentication mechanism");
        goto out;
    }
    if (sasl_client_first(x, data, data_len) != SASL_CONTINUE) {
        conn_auth_failed(c, x->why);
        goto out;
    }
    pq_put_auth_sasl_data(&c->out, false, x->out, x->out_len);
    if (!conn_auth_read(c, &m))
        goto out;
    if (sasl_client_final(x, m.body, m.body_len) != SASL_DONE) {
        conn_auth_failed(c, x->why);
        goto out;
    }
    pq_put_auth_sasl_data(&c->out, true, x->out, x->out_len);
    if (!role.canlogin) {
        conn_error(c, "FATAL", "28000",
                   "role \"%s\" is not permitted to log in", c->user);
        goto out;
    }
    server_log(c->pid, "LOG",
               "connection authenticated: identity=\"%s\" "
               "method=scram-sha-256",
               c->user);
    ok = true;
out:
    free(x);
    return ok;
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
    const char *pkt = NULL;
    size_t total = 0;

    for (;;) {
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
    /* Authentication reads more into the input buffer, which moves what
     * it holds: the StartupMessage is read from a copy of its own. */
    if (c->srv->opts.auth != SERVER_AUTH_TRUST) {
        c->startup_copy = malloc(total);
        if (c->startup_copy == NULL) {
            server_log(c->pid, "LOG", "out of memory for a connection");
            return false;
        }
        memcpy(c->startup_copy, pkt, total);
        if (pq_parse_startup(c->startup_copy, total, &st) != PQ_OK)
            return false; /* parsed once already: cannot happen */
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
    sql_set_backend_pid(c->sql, c->pid);
    if (c->srv->opts.auth == SERVER_AUTH_SCRAM && !conn_authenticate(c))
        return false;
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
    sql_report_parameters(c->sql, report_parameter, c);
    c->params_version = sql_settings_version(c->sql);
    pq_put_backend_key(&c->out, c->pid, c->slot->key);
    pq_put_ready(&c->out, sql_txn_status(c->sql));
    return conn_flush(c);
}

/* ---- messages -------------------------------------------------------- */

/* After a statement ran: false (the connection to end) if the client is
 * gone or broke the protocol inside a COPY, which is then reported. */
static bool conn_statement_end(conn *c)
{
    if (c->broken)
        return false;
    if (c->fatal != NULL) {
        conn_error(c, "FATAL", "08P01", "%s", c->fatal);
        return false;
    }
    if (!conn_copy_end(c)) {
        server_log(c->pid, "LOG", "out of memory after COPY");
        return false;
    }
    return true;
}

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
    if (!conn_statement_end(c)) {
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
    conn_report_changes(c);
    pq_put_ready(&c->out, sql_txn_status(c->sql));
    return true;
}

/* ---- the extended protocol ------------------------------------------ */

/* Room for n bytes of decoded arrays; NULL if there is no memory. */
static void *conn_scratch(conn *c, size_t n)
{
    if (n > c->scratch_cap) {
        void *p = realloc(c->scratch, n);

        if (p == NULL)
            return NULL;
        c->scratch = p;
        c->scratch_cap = n;
    }
    return c->scratch;
}

/* An extended-protocol message failed: report it and skip to Sync, as
 * PostgreSQL does.  false if the error was FATAL. */
static bool conn_extended_error(conn *c, const sql_error *err)
{
    conn_sql_error(c, err);
    c->ignore_till_sync = true;
    if (strcmp(err->severity, "FATAL") == 0) {
        conn_flush(c);
        return false;
    }
    return true;
}

static bool conn_bad_format(conn *c)
{
    conn_error(c, "ERROR", "08P01", "invalid message format");
    c->ignore_till_sync = true;
    return true;
}

static bool conn_no_memory(conn *c)
{
    conn_error(c, "ERROR", "53200", "out of memory");
    c->ignore_till_sync = true;
    return true;
}

static void put_empty_message(pq_out *o, char type)
{
    pq_begin(o, type);
    pq_end(o);
}

static bool conn_parse(conn *c, const pq_message *m)
{
    pq_parse_msg pm;
    uint32_t *types;
    sql_error err;

    if (pq_parse_parse(m->body, m->body_len, &pm) != PQ_OK)
        return conn_bad_format(c);
    types = conn_scratch(c, (size_t)pm.nparams * sizeof(uint32_t) + 1);
    if (types == NULL)
        return conn_no_memory(c);
    pq_decode_int32s(pm.types, pm.nparams, types);
    sql_error_reset(&err);
    c->query = pm.query;
    if (sql_parse(c->sql, pm.name, pm.query, types, pm.nparams, &err) !=
        KEEL_OK) {
        bool ok = conn_extended_error(c, &err);

        c->query = NULL;
        return ok;
    }
    c->query = NULL;
    put_empty_message(&c->out, '1'); /* ParseComplete */
    return true;
}

static bool conn_bind(conn *c, const pq_message *m)
{
    pq_bind_msg bm;
    sql_error err;
    size_t n16, need;
    int16_t *formats, *rformats;
    const char **vals;
    uint32_t *lens;
    char *base;

    if (pq_parse_bind(m->body, m->body_len, &bm) != PQ_OK)
        return conn_bad_format(c);
    /* One block: value pointers, lengths, then both format arrays. */
    n16 = (size_t)bm.nformats + bm.nrformats;
    need = (size_t)bm.nvalues * (sizeof(char *) + sizeof(uint32_t)) +
           n16 * sizeof(int16_t) + 1;
    base = conn_scratch(c, need);
    if (base == NULL)
        return conn_no_memory(c);
    vals = (const char **)(void *)base;
    lens = (uint32_t *)(void *)(base + (size_t)bm.nvalues * sizeof(char *));
    formats = (int16_t *)(void *)(lens + bm.nvalues);
    rformats = formats + bm.nformats;
    pq_bind_values(&bm, vals, lens);
    pq_decode_int16s(bm.formats, bm.nformats, formats);
    pq_decode_int16s(bm.rformats, bm.nrformats, rformats);
    sql_error_reset(&err);
    if (sql_bind(c->sql, bm.portal, bm.stmt, bm.nformats, formats, bm.nvalues,
                 vals, lens, bm.nrformats, rformats, &err) != KEEL_OK)
        return conn_extended_error(c, &err);
    put_empty_message(&c->out, '2'); /* BindComplete */
    return true;
}

static int sink_no_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    return 0;
}

/*
 * Describe of a statement: ParameterDescription, then RowDescription (or
 * NoData).  The SQL layer writes the rows' description through the sink
 * while it reports the parameters, so ParameterDescription is put after
 * it and then moved in front (the buffer is not sent meanwhile).
 */
static bool conn_describe_statement(conn *c, const char *name)
{
    uint32_t small[64], *types = small;
    uint16_t nparams = 0;
    size_t mark = c->out.len;
    bool no_data = false;
    sql_error err;
    keel_status st;

    sql_error_reset(&err);
    c->hold_output = true;
    st = sql_describe_statement(c->sql, name, small, 64, &nparams, &c->sink,
                                &no_data, &err);
    if (st == KEEL_OK && nparams > 64) {
        sql_sink quiet = c->sink;
        bool nd;

        quiet.columns = sink_no_columns;
        types = conn_scratch(c, (size_t)nparams * sizeof(uint32_t));
        if (types == NULL) {
            c->hold_output = false;
            c->out.len = mark;
            return conn_no_memory(c);
        }
        st = sql_describe_statement(c->sql, name, types, nparams, &nparams,
                                    &quiet, &nd, &err);
    }
    c->hold_output = false;
    if (st != KEEL_OK) {
        c->out.len = mark;
        return conn_extended_error(c, &err);
    }
    pq_begin(&c->out, 't'); /* ParameterDescription */
    pq_put_int16(&c->out, nparams);
    for (uint16_t i = 0; i < nparams; i++)
        pq_put_int32(&c->out, types[i]);
    pq_end(&c->out);
    pq_out_move_last(&c->out, mark);
    if (no_data)
        put_empty_message(&c->out, 'n'); /* NoData */
    return conn_after_message(c) == 0;
}

static bool conn_describe(conn *c, const pq_message *m)
{
    char kind;
    const char *name;
    sql_error err;
    bool no_data = false;

    if (pq_parse_target(m->body, m->body_len, &kind, &name) != PQ_OK)
        return conn_bad_format(c);
    if (kind == 'S')
        return conn_describe_statement(c, name);
    {
        /* Execute of all of the same portal's rows already read
         * (pgbench and drivers send Bind, Describe, Execute, Sync
         * together): the run will describe itself, so the statement is
         * analysed once. */
        pq_message next;
        const char *portal;
        uint32_t max_rows;
        if (pq_frame_message(c->in + c->in_off, c->in_len - c->in_off, &next) ==
                PQ_OK &&
            next.type == 'E' &&
            pq_parse_execute(next.body, next.body_len, &portal, &max_rows) ==
                PQ_OK &&
            max_rows == 0 && strcmp(portal, name) == 0) {
            c->describe_deferred = true;
            return true;
        }
    }
    sql_error_reset(&err);
    if (sql_describe_portal(c->sql, name, &c->sink, &no_data, &err) != KEEL_OK)
        return !c->broken && conn_extended_error(c, &err);
    if (no_data)
        put_empty_message(&c->out, 'n'); /* NoData */
    return !c->broken;
}

static bool conn_execute(conn *c, const pq_message *m)
{
    const char *portal;
    uint32_t max_rows;
    sql_error err;
    bool suspended = false;
    keel_status st;

    if (pq_parse_execute(m->body, m->body_len, &portal, &max_rows) != PQ_OK)
        return conn_bad_format(c);
    if (max_rows > INT32_MAX)
        max_rows = 0; /* negative: all, as PostgreSQL reads it */
    sql_error_reset(&err);
    c->nodata_pending = c->describe_deferred;
    st = sql_execute(c->sql, portal, max_rows, c->describe_deferred, &c->sink,
                     &suspended, &err);
    c->describe_deferred = false;
    if (st == KEEL_OK)
        conn_put_pending_nodata(c);
    c->nodata_pending = false;
    if (!conn_statement_end(c))
        return false;
    if (st != KEEL_OK)
        return conn_extended_error(c, &err);
    if (suspended)
        put_empty_message(&c->out, 's'); /* PortalSuspended */
    return true;
}

static bool conn_close(conn *c, const pq_message *m)
{
    char kind;
    const char *name;

    if (pq_parse_target(m->body, m->body_len, &kind, &name) != PQ_OK)
        return conn_bad_format(c);
    sql_close(c->sql, kind, name);
    put_empty_message(&c->out, '3'); /* CloseComplete */
    return true;
}

static bool conn_sync(conn *c)
{
    sql_error err;

    c->ignore_till_sync = false;
    c->describe_deferred = false;
    sql_error_reset(&err);
    if (sql_sync(c->sql, &err) != KEEL_OK) {
        conn_sql_error(c, &err);
        if (strcmp(err.severity, "FATAL") == 0) {
            conn_flush(c);
            return false;
        }
    }
    conn_report_changes(c);
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
    case 'P':
        return conn_parse(c, m);
    case 'B':
        return conn_bind(c, m);
    case 'D':
        return conn_describe(c, m);
    case 'E':
        return conn_execute(c, m);
    case 'C':
        return conn_close(c, m);
    case 'S': /* Sync: the end of an extended-protocol round */
        return conn_sync(c);
    case 'H': /* Flush: replies leave at the end of each batch anyway */
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
        if (n == 0 && server_stopping(c->srv)) {
            conn_error(c, "FATAL", "57P01",
                       "terminating connection due to administrator "
                       "command");
            return;
        }
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
                        .empty = sink_empty,
                        .copy_in_begin = sink_copy_in_begin,
                        .copy_in_read = sink_copy_in_read,
                        .copy_out_begin = sink_copy_out_begin,
                        .copy_out_data = sink_copy_out_data};
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
    for (uint16_t i = 0; i < c.nparams; i++) {
        free(c.params[i].name);
        free(c.params[i].value);
    }
    free(c.params);
    free(c.in);
    free(c.cin);
    free(c.startup_copy);
    free(c.scratch);
    pq_out_free(&c.out);
    server_release(c.srv, c.slot);
    return NULL;
}
