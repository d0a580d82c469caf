/*
 * protocol.c: framing and parsing of frontend messages, and the output
 * buffer backend messages are built in (protocol.h).  Pure functions over
 * byte buffers: the connection code (conn.c) does the I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "server/protocol.h"

static uint32_t get_be32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;

    return ((uint32_t)u[0] << 24) | ((uint32_t)u[1] << 16) |
           ((uint32_t)u[2] << 8) | (uint32_t)u[3];
}

uint32_t pq_message_limit(char type)
{
    switch (type) {
    case 'Q': /* Query */
    case 'P': /* Parse */
    case 'B': /* Bind */
    case 'F': /* FunctionCall */
    case 'd': /* CopyData */
    case 'p': /* password and SASL responses */
        return PQ_LARGE_MESSAGE_MAX;
    default:
        return PQ_SMALL_MESSAGE_MAX;
    }
}

pq_result pq_frame_message(const char *buf, size_t len, pq_message *m)
{
    uint32_t n;

    m->total = 0;
    if (len < 5)
        return PQ_NEED_MORE;
    n = get_be32(buf + 1);
    if (n < 4)
        return PQ_BAD_LENGTH;
    if (n > pq_message_limit(buf[0]))
        return PQ_TOO_LONG;
    m->total = (size_t)n + 1;
    if (len < m->total)
        return PQ_NEED_MORE;
    m->type = buf[0];
    m->body = buf + 5;
    m->body_len = n - 4;
    return PQ_OK;
}

pq_result pq_frame_startup(const char *buf, size_t len, size_t *total)
{
    uint32_t n;

    *total = 0;
    if (len < 4)
        return PQ_NEED_MORE;
    n = get_be32(buf);
    if (n < 8)
        return PQ_BAD_LENGTH;
    if (n > PQ_STARTUP_MAX)
        return PQ_TOO_LONG;
    *total = n;
    return len < n ? PQ_NEED_MORE : PQ_OK;
}

pq_result pq_parse_startup(const char *pkt, size_t len, pq_startup *st)
{
    size_t off = 8;

    memset(st, 0, sizeof(*st));
    if (len < 8) {
        st->error = "invalid length of startup packet";
        return PQ_BAD_FORMAT;
    }
    st->code = get_be32(pkt + 4);
    if (st->code == PQ_SSL_REQUEST_CODE || st->code == PQ_GSSENC_REQUEST_CODE)
        return PQ_OK;
    if (st->code == PQ_CANCEL_REQUEST_CODE) {
        if (len != 16) {
            st->error = "invalid length of cancel request packet";
            return PQ_BAD_FORMAT;
        }
        st->cancel_pid = get_be32(pkt + 8);
        st->cancel_key = get_be32(pkt + 12);
        return PQ_OK;
    }
    /* name\0value\0 ... \0, the final NUL the packet's last byte.  With
     * pkt[len - 1] a NUL, every strlen() below stops inside the packet. */
    if (len <= off || pkt[len - 1] != '\0')
        goto bad_layout;
    for (;;) {
        const char *name = pkt + off;
        size_t voff;

        if (*name == '\0')
            break; /* the terminator */
        voff = off + strlen(name) + 1;
        if (voff >= len)
            goto bad_layout; /* a name without a value */
        off = voff + strlen(pkt + voff) + 1;
        if (off >= len)
            goto bad_layout; /* no terminator after the last value */
        if (st->nparams == PQ_STARTUP_PARAMS_MAX) {
            st->error = "too many parameters in startup packet";
            return PQ_BAD_FORMAT;
        }
        st->names[st->nparams] = name;
        st->values[st->nparams] = pkt + voff;
        st->nparams++;
    }
    if (off != len - 1)
        goto bad_layout;
    return PQ_OK;

bad_layout:
    st->nparams = 0;
    st->error = "invalid startup packet layout: expected terminator as last "
                "byte";
    return PQ_BAD_FORMAT;
}

pq_result pq_parse_query(const char *body, uint32_t len, const char **text)
{
    if (len == 0 || body[len - 1] != '\0' || memchr(body, '\0', len - 1))
        return PQ_BAD_FORMAT;
    *text = body;
    return PQ_OK;
}

/* ---- the extended protocol's bodies ---------------------------------- */

/* A cursor over a body: every take fails (ok cleared) rather than read
 * past its end. */
typedef struct reader {
    const char *p;
    uint32_t len;
    uint32_t off;
    bool ok;
} reader;

static const char *take_str(reader *r)
{
    const char *s = r->p + r->off;
    const char *nul;

    if (!r->ok || r->off >= r->len ||
        (nul = memchr(s, '\0', r->len - r->off)) == NULL) {
        r->ok = false;
        return "";
    }
    r->off += (uint32_t)(nul - s) + 1;
    return s;
}

static const char *take_bytes(reader *r, uint64_t n)
{
    const char *s = r->p + r->off;

    if (!r->ok || n > r->len - r->off) {
        r->ok = false;
        return NULL;
    }
    r->off += (uint32_t)n;
    return s;
}

static uint16_t take_int16(reader *r)
{
    const unsigned char *u = (const unsigned char *)take_bytes(r, 2);

    return u != NULL ? (uint16_t)((u[0] << 8) | u[1]) : 0;
}

static uint32_t take_int32(reader *r)
{
    const char *s = take_bytes(r, 4);

    return s != NULL ? get_be32(s) : 0;
}

static pq_result reader_end(const reader *r)
{
    return r->ok && r->off == r->len ? PQ_OK : PQ_BAD_FORMAT;
}

pq_result pq_parse_parse(const char *body, uint32_t len, pq_parse_msg *m)
{
    reader r = {body, len, 0, true};

    m->name = take_str(&r);
    m->query = take_str(&r);
    m->nparams = take_int16(&r);
    m->types = take_bytes(&r, (uint64_t)m->nparams * 4);
    return reader_end(&r);
}

pq_result pq_parse_bind(const char *body, uint32_t len, pq_bind_msg *m)
{
    reader r = {body, len, 0, true};

    m->portal = take_str(&r);
    m->stmt = take_str(&r);
    m->nformats = take_int16(&r);
    m->formats = take_bytes(&r, (uint64_t)m->nformats * 2);
    m->nvalues = take_int16(&r);
    m->values = r.p + r.off;
    for (uint16_t i = 0; i < m->nvalues && r.ok; i++) {
        uint32_t n = take_int32(&r);

        if (n != UINT32_MAX) /* -1: NULL, no bytes */
            take_bytes(&r, n);
    }
    m->nrformats = take_int16(&r);
    m->rformats = take_bytes(&r, (uint64_t)m->nrformats * 2);
    return reader_end(&r);
}

void pq_bind_values(const pq_bind_msg *m, const char **vals, uint32_t *lens)
{
    const char *p = m->values;

    for (uint16_t i = 0; i < m->nvalues; i++) {
        uint32_t n = get_be32(p);

        p += 4;
        if (n == UINT32_MAX) {
            vals[i] = NULL;
            lens[i] = 0;
        } else {
            vals[i] = p;
            lens[i] = n;
            p += n;
        }
    }
}

pq_result pq_parse_target(const char *body, uint32_t len, char *kind,
                          const char **name)
{
    reader r = {body, len, 0, true};
    const char *k = take_bytes(&r, 1);

    *kind = k != NULL ? *k : '\0';
    *name = take_str(&r);
    if (*kind != 'S' && *kind != 'P')
        return PQ_BAD_FORMAT;
    return reader_end(&r);
}

pq_result pq_parse_execute(const char *body, uint32_t len, const char **portal,
                           uint32_t *max_rows)
{
    reader r = {body, len, 0, true};

    *portal = take_str(&r);
    *max_rows = take_int32(&r);
    return reader_end(&r);
}

pq_result pq_parse_sasl_initial(const char *body, uint32_t len,
                                const char **mechanism, const char **data,
                                uint32_t *data_len)
{
    reader r = {body, len, 0, true};
    uint32_t n;

    *mechanism = take_str(&r);
    n = take_int32(&r);
    *data_len = n == UINT32_MAX ? 0 : n; /* -1: no data */
    *data = take_bytes(&r, *data_len);
    return reader_end(&r);
}

void pq_decode_int16s(const char *raw, uint16_t n, int16_t *out)
{
    const unsigned char *u = (const unsigned char *)raw;

    for (uint16_t i = 0; i < n; i++)
        out[i] = (int16_t)((u[2 * i] << 8) | u[2 * i + 1]);
}

void pq_decode_int32s(const char *raw, uint16_t n, uint32_t *out)
{
    for (uint16_t i = 0; i < n; i++)
        out[i] = get_be32(raw + 4 * (size_t)i);
}

/* ---- output ---------------------------------------------------------- */

bool pq_out_init(pq_out *o, size_t cap)
{
    memset(o, 0, sizeof(*o));
    o->buf = malloc(cap);
    if (o->buf == NULL)
        return false;
    o->cap = cap;
    return true;
}

void pq_out_free(pq_out *o)
{
    free(o->buf);
    memset(o, 0, sizeof(*o));
}

void pq_out_reset(pq_out *o, size_t keep)
{
    o->len = 0;
    o->start = 0;
    if (o->cap > keep) {
        char *p = realloc(o->buf, keep);

        if (p != NULL) {
            o->buf = p;
            o->cap = keep;
        }
    }
}

/* Room for n more bytes; false (and failed set) if it cannot be made. */
static bool out_reserve(pq_out *o, size_t n)
{
    size_t cap;
    char *p;

    if (o->failed)
        return false;
    if (o->cap - o->len >= n)
        return true;
    cap = o->cap ? o->cap : 256;
    while (cap - o->len < n) {
        if (cap > SIZE_MAX / 2) {
            o->failed = true;
            return false;
        }
        cap *= 2;
    }
    p = realloc(o->buf, cap);
    if (p == NULL) {
        o->failed = true;
        return false;
    }
    o->buf = p;
    o->cap = cap;
    return true;
}

void pq_begin(pq_out *o, char type)
{
    if (!out_reserve(o, 5))
        return;
    o->start = o->len;
    o->buf[o->len] = type;
    o->len += 5; /* the length word, written by pq_end() */
}

void pq_put_byte(pq_out *o, char c)
{
    if (out_reserve(o, 1))
        o->buf[o->len++] = c;
}

void pq_put_int16(pq_out *o, uint16_t v)
{
    if (!out_reserve(o, 2))
        return;
    o->buf[o->len] = (char)(v >> 8);
    o->buf[o->len + 1] = (char)v;
    o->len += 2;
}

static void put_be32_at(char *p, uint32_t v)
{
    p[0] = (char)(v >> 24);
    p[1] = (char)(v >> 16);
    p[2] = (char)(v >> 8);
    p[3] = (char)v;
}

void pq_put_int32(pq_out *o, uint32_t v)
{
    if (!out_reserve(o, 4))
        return;
    put_be32_at(o->buf + o->len, v);
    o->len += 4;
}

void pq_put_bytes(pq_out *o, const void *p, size_t n)
{
    if (n == 0 || !out_reserve(o, n))
        return;
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

void pq_put_str(pq_out *o, const char *s)
{
    pq_put_bytes(o, s, strlen(s) + 1);
}

void pq_end(pq_out *o)
{
    if (o->failed)
        return;
    /* A message's length never reaches 4 GiB: its parts are bounded. */
    put_be32_at(o->buf + o->start + 1, (uint32_t)(o->len - o->start - 1));
}

static void reverse(char *p, size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        char t = p[i];

        p[i] = p[n - 1 - i];
        p[n - 1 - i] = t;
    }
}

void pq_out_move_last(pq_out *o, size_t mark)
{
    if (o->failed || mark >= o->start)
        return;
    /* A B -> B A by three reversals, in place. */
    reverse(o->buf + mark, o->start - mark);
    reverse(o->buf + o->start, o->len - o->start);
    reverse(o->buf + mark, o->len - mark);
    o->start = mark;
}

void pq_put_auth_ok(pq_out *o)
{
    pq_begin(o, 'R');
    pq_put_int32(o, 0);
    pq_end(o);
}

void pq_put_auth_sasl(pq_out *o, const char *mechanism)
{
    pq_begin(o, 'R');
    pq_put_int32(o, 10); /* AuthenticationSASL */
    pq_put_str(o, mechanism);
    pq_put_byte(o, '\0'); /* the list's end */
    pq_end(o);
}

void pq_put_auth_sasl_data(pq_out *o, bool final, const char *data, size_t len)
{
    pq_begin(o, 'R');
    pq_put_int32(o, final ? 12 : 11); /* SASLFinal : SASLContinue */
    pq_put_bytes(o, data, len);
    pq_end(o);
}

void pq_put_parameter_status(pq_out *o, const char *name, const char *value)
{
    pq_begin(o, 'S');
    pq_put_str(o, name);
    pq_put_str(o, value);
    pq_end(o);
}

void pq_put_backend_key(pq_out *o, uint32_t pid, uint32_t key)
{
    pq_begin(o, 'K');
    pq_put_int32(o, pid);
    pq_put_int32(o, key);
    pq_end(o);
}

void pq_put_ready(pq_out *o, char txn_status)
{
    pq_begin(o, 'Z');
    pq_put_byte(o, txn_status);
    pq_end(o);
}

void pq_put_negotiate(pq_out *o, uint32_t minor, const char *const *options,
                      uint16_t noptions)
{
    pq_begin(o, 'v');
    pq_put_int32(o, PQ_PROTOCOL(3, minor));
    pq_put_int32(o, noptions);
    for (uint16_t i = 0; i < noptions; i++)
        pq_put_str(o, options[i]);
    pq_end(o);
}

static void put_field(pq_out *o, char code, const char *s)
{
    if (s == NULL || *s == '\0')
        return;
    pq_put_byte(o, code);
    pq_put_str(o, s);
}

void pq_put_error(pq_out *o, char type, const pq_error_fields *f)
{
    pq_begin(o, type);
    put_field(o, 'S', f->severity);
    put_field(o, 'V', f->severity);
    put_field(o, 'C', f->sqlstate);
    put_field(o, 'M', f->message);
    put_field(o, 'D', f->detail);
    put_field(o, 'H', f->hint);
    put_field(o, 'W', f->context);
    if (f->position > 0) {
        char pos[12];
        uint32_t v = f->position;
        int i = (int)sizeof(pos) - 1;

        pos[i] = '\0';
        do {
            pos[--i] = (char)('0' + v % 10);
            v /= 10;
        } while (v > 0);
        put_field(o, 'P', pos + i);
    }
    pq_put_byte(o, '\0');
    pq_end(o);
}
