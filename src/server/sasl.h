/*
 * sasl.h: the server's side of SCRAM-SHA-256 authentication (RFC 5802,
 * RFC 7677) as PostgreSQL 15 runs it inside SASLInitialResponse and
 * SASLResponse messages: the client-first-message is answered with the
 * server-first-message (the combined nonce, the salt, the iteration
 * count), the client-final-message's proof is checked against the role's
 * verifier, and the server-final-message carries the server's signature.
 *
 * Bytes in, bytes out: no sockets, threads or SQL, so that the fuzzer
 * drives it (tests/fuzz/).  A client whose role does not exist or has no
 * usable verifier goes through the same exchange with a mock secret
 * (a salt derived from the role's name, as PostgreSQL does), and fails
 * only at its proof, so that what it sees does not tell whether the
 * role exists.
 */
#ifndef KEEL_SERVER_SASL_H
#define KEEL_SERVER_SASL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sql/scram.h"

#define SASL_MECHANISM "SCRAM-SHA-256"
/* The longest SCRAM message keel reads; a longer one fails the exchange.
 * (psql's are about 100 bytes.) */
#define SASL_MESSAGE_MAX 1024
/* Raw bytes of the server's part of the nonce, as PostgreSQL's. */
#define SASL_NONCE_LEN 18

/* The combined nonce (the client's, then the server's in base64) and the
 * server-first-message it goes into (with the salt and the count). */
#define SASL_NONCE_MAX (SASL_MESSAGE_MAX + SCRAM_B64_LEN(SASL_NONCE_LEN) + 1)
#define SASL_SERVER_FIRST_MAX                                                  \
    (SASL_NONCE_MAX + SCRAM_B64_LEN(SCRAM_SALT_MAX) + 32)

typedef enum sasl_result {
    SASL_CONTINUE, /* send out, wait for the client's next message */
    SASL_DONE,     /* the proof matched: send out (server-final) */
    SASL_FAILED,   /* authentication failed: why says why, for the log */
} sasl_result;

typedef struct sasl_exchange {
    int step; /* 0: client-first next, 1: client-final next, 2: ended */
    /* The role has no usable verifier: the exchange runs on a mock one
     * and fails at the proof, logging doomed_why. */
    bool doomed;
    char doomed_why[160];
    scram_secret secret;
    char gs2_header[8]; /* "n,," or "y,,", as the client sent it */
    char nonce[SASL_NONCE_MAX];
    char client_first_bare[SASL_MESSAGE_MAX + 1];
    char server_first[SASL_SERVER_FIRST_MAX];
    /* The reply to send (server-first or server-final), out_len bytes. */
    char out[SASL_SERVER_FIRST_MAX];
    size_t out_len;
    char why[200]; /* SASL_FAILED: what was wrong */
} sasl_exchange;

/*
 * Starts an exchange for role user, whose stored password is verifier:
 * NULL when the role does not exist, "" when it has none.  mock_key
 * (random, the server's own) derives a role-dependent salt for the mock
 * secret of a role without a usable verifier.  false only if libcrypto
 * fails.
 */
bool sasl_begin(sasl_exchange *x, const char *user, const char *verifier,
                const uint8_t mock_key[SCRAM_KEY_LEN]);

/* The client-first-message (SASLInitialResponse's data): SASL_CONTINUE
 * with the server-first-message in out, or SASL_FAILED (malformed,
 * channel binding asked for, an authorization identity, ...). */
sasl_result sasl_client_first(sasl_exchange *x, const char *msg, size_t len);

/* The client-final-message (SASLResponse's body): SASL_DONE with the
 * server-final-message in out, or SASL_FAILED (malformed, another nonce,
 * another channel binding, a wrong proof, a doomed exchange). */
sasl_result sasl_client_final(sasl_exchange *x, const char *msg, size_t len);

#endif /* KEEL_SERVER_SASL_H */
