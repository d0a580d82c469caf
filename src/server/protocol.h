/*
 * protocol.h: PostgreSQL's frontend/backend protocol 3.0 as bytes: the
 * framing of messages in an input buffer, the startup packet, the bodies
 * of the frontend messages keel reads, and an output buffer that backend
 * messages are built in.
 *
 * Nothing here touches a socket, a thread or the SQL layer, so that a
 * fuzzer can drive every parser with arbitrary bytes (tests/fuzz/).  The
 * parsers never read past the length they are given and never write to
 * their input; what they return points into it.
 */
#ifndef KEEL_SERVER_PROTOCOL_H
#define KEEL_SERVER_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Protocol codes of the startup packet (its second int32). */
#define PQ_PROTOCOL(major, minor) (((uint32_t)(major) << 16) | (minor))
#define PQ_PROTOCOL_3_0           PQ_PROTOCOL(3, 0)
#define PQ_CANCEL_REQUEST_CODE    PQ_PROTOCOL(1234, 5678)
#define PQ_SSL_REQUEST_CODE       PQ_PROTOCOL(1234, 5679)
#define PQ_GSSENC_REQUEST_CODE    PQ_PROTOCOL(1234, 5680)

/* Limits.  A startup packet is at most PostgreSQL's 10000 bytes; a Query
 * (or another message that carries statement text or values) at most
 * PQ_LARGE_MESSAGE_MAX; every other message at most PQ_SMALL_MESSAGE_MAX.
 * Each counts its length word, not its type byte. */
#define PQ_STARTUP_MAX       10000
#define PQ_LARGE_MESSAGE_MAX (64u << 20)
#define PQ_SMALL_MESSAGE_MAX 10000
/* Startup parameters kept, at most (PostgreSQL sends about ten). */
#define PQ_STARTUP_PARAMS_MAX 64

/* What a framing or parsing call found. */
typedef enum pq_result {
    PQ_OK = 0,
    PQ_NEED_MORE,  /* the buffer holds only the start of a message */
    PQ_BAD_LENGTH, /* a length word below its minimum */
    PQ_TOO_LONG,   /* a length word above the limit for its type */
    PQ_BAD_FORMAT, /* the body does not have its message's layout */
} pq_result;

/* One frontend message found in a buffer. */
typedef struct pq_message {
    char type;         /* 'Q', 'X', 'P', ... */
    const char *body;  /* after the length word */
    uint32_t body_len; /* bytes of body */
    size_t total;      /* bytes the message takes in the buffer */
} pq_message;

/* The largest length word a message of this type may carry. */
uint32_t pq_message_limit(char type);

/*
 * Frames the message at the start of buf[0..len): a type byte and a
 * big-endian int32 length that counts itself.  PQ_OK fills m;
 * PQ_NEED_MORE when fewer than m's total bytes are there (m->total then
 * says how many the whole message needs once its length word is in, else
 * 0); PQ_BAD_LENGTH for a length under 4; PQ_TOO_LONG above
 * pq_message_limit(type).
 */
pq_result pq_frame_message(const char *buf, size_t len, pq_message *m);

/*
 * Frames a startup-phase packet (no type byte): its int32 length, which
 * counts itself, must be 8..PQ_STARTUP_MAX.  PQ_OK sets *total to the
 * packet's bytes; PQ_NEED_MORE (with *total known, or 0 if the length word
 * is not in yet); PQ_BAD_LENGTH or PQ_TOO_LONG.
 */
pq_result pq_frame_startup(const char *buf, size_t len, size_t *total);

/* A startup-phase packet, parsed. */
typedef struct pq_startup {
    uint32_t code; /* PQ_PROTOCOL_3_0, PQ_SSL_REQUEST_CODE, ... */
    /* A CancelRequest's backend id and secret key. */
    uint32_t cancel_pid;
    uint32_t cancel_key;
    /* A StartupMessage's parameters, in the order sent, pointing into the
     * packet (each NUL-terminated there). */
    uint16_t nparams;
    const char *names[PQ_STARTUP_PARAMS_MAX];
    const char *values[PQ_STARTUP_PARAMS_MAX];
    const char *error; /* what PQ_BAD_FORMAT found, as PostgreSQL says it */
} pq_startup;

/*
 * Parses a whole startup-phase packet, pkt[0..len) as pq_frame_startup()
 * framed it.  PQ_OK fills st: for SSLRequest and GSSENCRequest only code;
 * for a CancelRequest code and the pair (a packet of exactly 16 bytes);
 * for any other code (a StartupMessage of whatever version, which the
 * caller judges) the parameters, name/value pairs of NUL-terminated
 * strings ended by one more NUL.  PQ_BAD_FORMAT with st->error set for a
 * packet without that layout or with more than PQ_STARTUP_PARAMS_MAX
 * parameters.
 */
pq_result pq_parse_startup(const char *pkt, size_t len, pq_startup *st);

/* A Query body: one NUL-terminated string that fills it.  Sets *text;
 * PQ_BAD_FORMAT if the body has no NUL at its end or one before it. */
pq_result pq_parse_query(const char *body, uint32_t len, const char **text);

/* The extended protocol's messages.  Each parser checks the whole body's
 * layout (every string NUL-terminated inside it, every count matched by
 * its items, nothing left over) and returns PQ_BAD_FORMAT otherwise;
 * arrays are left in the body's big-endian form, for the pq_decode_
 * functions to copy out. */

/* Parse: statement name, query text, nparams type oids (raw int32s). */
typedef struct pq_parse_msg {
    const char *name;
    const char *query;
    uint16_t nparams;
    const char *types;
} pq_parse_msg;

pq_result pq_parse_parse(const char *body, uint32_t len, pq_parse_msg *m);

/* Bind: portal and statement names; parameter format codes (raw int16s);
 * parameter values (each an int32 length, -1 for NULL, and its bytes);
 * result format codes (raw int16s). */
typedef struct pq_bind_msg {
    const char *portal;
    const char *stmt;
    uint16_t nformats;
    const char *formats;
    uint16_t nvalues;
    const char *values;
    uint16_t nrformats;
    const char *rformats;
} pq_bind_msg;

pq_result pq_parse_bind(const char *body, uint32_t len, pq_bind_msg *m);

/* The values of a Bind that pq_parse_bind() accepted: vals[i] NULL for
 * NULL, else pointing at lens[i] bytes in the body. */
void pq_bind_values(const pq_bind_msg *m, const char **vals, uint32_t *lens);

/* Describe and Close: a kind ('S' statement, 'P' portal) and a name. */
pq_result pq_parse_target(const char *body, uint32_t len, char *kind,
                          const char **name);

/* Execute: a portal name and the most rows to return (0: all). */
pq_result pq_parse_execute(const char *body, uint32_t len, const char **portal,
                           uint32_t *max_rows);

/* SASLInitialResponse (a 'p' message in answer to AuthenticationSASL):
 * the mechanism's name, then an int32 length (-1: none) and that many
 * bytes of the mechanism's first message, *data_len 0 when there are
 * none. */
pq_result pq_parse_sasl_initial(const char *body, uint32_t len,
                                const char **mechanism, const char **data,
                                uint32_t *data_len);

/* Copies n big-endian int16s or int32s out of raw. */
void pq_decode_int16s(const char *raw, uint16_t n, int16_t *out);
void pq_decode_int32s(const char *raw, uint16_t n, uint32_t *out);

/* ---- output ------------------------------------------------------------
 *
 * A pq_out is a growable buffer of whole backend messages.  pq_begin()
 * starts a message and the put functions append to it; pq_end() writes
 * its length word.  An allocation failure sets failed, after which every
 * call does nothing: the owner checks it before sending and gives the
 * connection up. */
typedef struct pq_out {
    char *buf;
    size_t len;   /* bytes of whole messages, plus the one being built */
    size_t cap;   /* bytes allocated */
    size_t start; /* offset of the message being built */
    bool failed;
} pq_out;

/* An empty buffer of cap bytes (false if it cannot be allocated). */
bool pq_out_init(pq_out *o, size_t cap);
void pq_out_free(pq_out *o);
/* Empties the buffer (after it was sent); if it grew past keep bytes for
 * a large message, gives the memory back down to keep. */
void pq_out_reset(pq_out *o, size_t keep);

void pq_begin(pq_out *o, char type);
void pq_put_byte(pq_out *o, char c);
void pq_put_int16(pq_out *o, uint16_t v);
void pq_put_int32(pq_out *o, uint32_t v);
void pq_put_bytes(pq_out *o, const void *p, size_t n);
/* s and its NUL. */
void pq_put_str(pq_out *o, const char *s);
void pq_end(pq_out *o);
/* Moves the last whole message to offset mark (a message boundary), the
 * messages from mark on following it. */
void pq_out_move_last(pq_out *o, size_t mark);

/* Whole messages (each begin ... end). */
void pq_put_auth_ok(pq_out *o);
/* AuthenticationSASL offering one mechanism; then SASLContinue (final
 * false) or SASLFinal (true) carrying a mechanism's message. */
void pq_put_auth_sasl(pq_out *o, const char *mechanism);
void pq_put_auth_sasl_data(pq_out *o, bool final, const char *data, size_t len);
void pq_put_parameter_status(pq_out *o, const char *name, const char *value);
void pq_put_backend_key(pq_out *o, uint32_t pid, uint32_t key);
void pq_put_ready(pq_out *o, char txn_status);
/* A NegotiateProtocolVersion: the newest minor version of 3 keel speaks
 * and the protocol options ("_pq_.*") it does not know. */
void pq_put_negotiate(pq_out *o, uint32_t minor, const char *const *options,
                      uint16_t noptions);

/* One field of an ErrorResponse or NoticeResponse. */
typedef struct pq_error_fields {
    const char *severity; /* "ERROR", "FATAL", "NOTICE", ... */
    const char *sqlstate;
    const char *message;
    const char *detail;  /* NULL or "" if none */
    const char *hint;    /* NULL or "" if none */
    const char *context; /* where (CONTEXT): NULL or "" if none */
    uint32_t position;   /* 1-based, 0 if none */
} pq_error_fields;

/* An ErrorResponse ('E') or NoticeResponse ('N'). */
void pq_put_error(pq_out *o, char type, const pq_error_fields *f);

#endif /* KEEL_SERVER_PROTOCOL_H */
