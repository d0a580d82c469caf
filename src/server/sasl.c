/*
 * sasl.c: SCRAM-SHA-256's exchange on the server's side (sasl.h).
 *
 * The messages' grammar (RFC 5802, section 7), as far as keel reads it:
 *
 *   client-first-message = gs2-header client-first-bare
 *   gs2-header           = ("n" / "y" / "p=" name) "," [ "a=" authzid ] ","
 *   client-first-bare    = [ "m=" ext "," ] "n=" user "," "r=" nonce
 *                          [ "," extensions ]
 *   client-final-message = "c=" base64(gs2-header) "," "r=" nonce
 *                          [ "," extensions ] "," "p=" base64(proof)
 *
 * As PostgreSQL, keel ignores the user name inside the exchange (the
 * startup packet's counts; libpq sends an empty one), refuses channel
 * binding ("p=": there is no TLS to bind to) and authorization
 * identities, and accepts "y" (the client could bind but believes the
 * server cannot, which is true).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "server/sasl.h"

static sasl_result sasl_fail(sasl_exchange *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static sasl_result sasl_fail(sasl_exchange *x, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(x->why, sizeof(x->why), fmt, ap);
    va_end(ap);
    x->step = 2;
    return SASL_FAILED;
}

bool sasl_begin(sasl_exchange *x, const char *user, const char *verifier,
                const uint8_t mock_key[SCRAM_KEY_LEN])
{
    const char *why = NULL;
    uint8_t salt[SCRAM_KEY_LEN];

    memset(x, 0, sizeof(*x));
    if (verifier == NULL)
        snprintf(x->doomed_why, sizeof(x->doomed_why),
                 "Role \"%s\" does not exist.", user);
    else if (verifier[0] == '\0')
        snprintf(x->doomed_why, sizeof(x->doomed_why),
                 "User \"%s\" has no password assigned.", user);
    else if (!scram_secret_parse(verifier, &x->secret, &why))
        snprintf(x->doomed_why, sizeof(x->doomed_why),
                 "User \"%s\" does not have a valid SCRAM secret (%s).", user,
                 why);
    else
        return true;
    /* A mock secret: the same role name always shows the same salt, as a
     * real role's does, and the keys are random (no proof matches). */
    x->doomed = true;
    x->secret.iterations = SCRAM_ITERATIONS;
    x->secret.salt_len = SCRAM_SALT_LEN;
    if (!scram_hmac(mock_key, SCRAM_KEY_LEN, user, strlen(user), salt) ||
        !scram_random(x->secret.stored_key, SCRAM_KEY_LEN) ||
        !scram_random(x->secret.server_key, SCRAM_KEY_LEN))
        return false;
    memcpy(x->secret.salt, salt, SCRAM_SALT_LEN);
    return true;
}

/* A SCRAM attribute value's characters: printable ASCII but ','. */
static bool printable(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x21 || p[i] > 0x7e || p[i] == ',')
            return false;
    return true;
}

/* The next attribute of msg at *pos: "<a>=" then a value up to the next
 * ',' or the end.  Returns the attribute letter (0 if there is none at
 * *pos), *val and *vlen its value; *pos moves past a following ','. */
static char next_attr(const char *msg, size_t len, size_t *pos,
                      const char **val, size_t *vlen)
{
    size_t p = *pos, end;
    char a;

    if (p + 2 > len || msg[p + 1] != '=')
        return 0;
    a = msg[p];
    if (!((a >= 'a' && a <= 'z') || (a >= 'A' && a <= 'Z')))
        return 0;
    p += 2;
    end = p;
    while (end < len && msg[end] != ',')
        end++;
    *val = msg + p;
    *vlen = end - p;
    *pos = end < len ? end + 1 : end;
    return a;
}

sasl_result sasl_client_first(sasl_exchange *x, const char *msg, size_t len)
{
    size_t pos = 0, vlen, bare, nlen, n;
    const char *val;
    uint8_t raw[SASL_NONCE_LEN];
    char snonce[SCRAM_B64_LEN(SASL_NONCE_LEN) + 1];
    char salt[SCRAM_B64_LEN(SCRAM_SALT_MAX) + 1];
    char a;
    int w;

    if (x->step != 0)
        return sasl_fail(x, "unexpected SCRAM message");
    x->step = 1;
    if (len == 0)
        return sasl_fail(x, "malformed SCRAM message: it is empty");
    if (len > SASL_MESSAGE_MAX)
        return sasl_fail(x,
                         "malformed SCRAM message: %zu bytes, over the "
                         "%d allowed",
                         len, SASL_MESSAGE_MAX);
    if (memchr(msg, '\0', len) != NULL)
        return sasl_fail(x, "malformed SCRAM message: a NUL byte in it");
    /* gs2-header */
    if (msg[0] == 'p')
        return sasl_fail(x, "the client requires channel binding "
                            "(SCRAM-SHA-256-PLUS), which needs TLS, which "
                            "keel does not have");
    if ((msg[0] != 'n' && msg[0] != 'y') || len < 2 || msg[1] != ',')
        return sasl_fail(x,
                         "malformed SCRAM message: unexpected channel "
                         "binding flag '%c'",
                         msg[0]);
    if (len > 2 && msg[2] == 'a')
        return sasl_fail(x, "the client uses an authorization identity, "
                            "which is not supported");
    if (len < 3 || msg[2] != ',')
        return sasl_fail(x, "malformed SCRAM message: the GS2 header does "
                            "not end with ','");
    memcpy(x->gs2_header, msg, 3);
    x->gs2_header[3] = '\0';
    pos = bare = 3;
    /* client-first-bare */
    a = next_attr(msg, len, &pos, &val, &vlen);
    if (a == 'm')
        return sasl_fail(x, "the client requires a SCRAM extension keel "
                            "does not support");
    if (a != 'n')
        return sasl_fail(x, "malformed SCRAM message: expected the "
                            "attribute \"n\" (user name)");
    a = next_attr(msg, len, &pos, &val, &vlen);
    if (a != 'r')
        return sasl_fail(x, "malformed SCRAM message: expected the "
                            "attribute \"r\" (nonce)");
    if (vlen == 0 || !printable(val, vlen))
        return sasl_fail(x, "malformed SCRAM message: the client's nonce "
                            "is empty or not printable");
    nlen = vlen;
    memcpy(x->nonce, val, nlen);
    /* Extensions after the nonce are allowed and ignored; each must
     * still be an attribute. */
    while (pos < len) {
        const char *ev;
        size_t elen;

        if (next_attr(msg, len, &pos, &ev, &elen) == 0)
            return sasl_fail(x, "malformed SCRAM message: garbage after "
                                "the nonce");
    }
    if (msg[len - 1] == ',')
        return sasl_fail(x, "malformed SCRAM message: it ends with ','");
    memcpy(x->client_first_bare, msg + bare, len - bare);
    x->client_first_bare[len - bare] = '\0';

    if (!scram_random(raw, sizeof(raw)))
        return sasl_fail(x, "could not generate a nonce");
    scram_b64_encode(raw, sizeof(raw), snonce, sizeof(snonce));
    n = strlen(snonce);
    memcpy(x->nonce + nlen, snonce, n + 1);
    scram_b64_encode(x->secret.salt, x->secret.salt_len, salt, sizeof(salt));
    w = snprintf(x->server_first, sizeof(x->server_first), "r=%s,s=%s,i=%u",
                 x->nonce, salt, x->secret.iterations);
    if (w < 0 || (size_t)w >= sizeof(x->server_first))
        return sasl_fail(x, "server-first-message too long");
    memcpy(x->out, x->server_first, (size_t)w);
    x->out_len = (size_t)w;
    return SASL_CONTINUE;
}

sasl_result sasl_client_final(sasl_exchange *x, const char *msg, size_t len)
{
    size_t pos = 0, vlen, without_proof = 0;
    const char *val, *proof_b64 = NULL;
    size_t proof_len = 0;
    char cbind[16];
    uint8_t proof[SCRAM_KEY_LEN + 1], sig[SCRAM_KEY_LEN],
        client_key[SCRAM_KEY_LEN], stored[SCRAM_KEY_LEN];
    char auth[SASL_MESSAGE_MAX * 2 + SASL_SERVER_FIRST_MAX + 4];
    char server_sig[SCRAM_B64_LEN(SCRAM_KEY_LEN) + 1];
    size_t alen;
    long n;
    char a;
    int w;

    if (x->step != 1)
        return sasl_fail(x, "unexpected SCRAM message");
    x->step = 2;
    if (len > SASL_MESSAGE_MAX)
        return sasl_fail(x,
                         "malformed SCRAM message: %zu bytes, over the "
                         "%d allowed",
                         len, SASL_MESSAGE_MAX);
    if (memchr(msg, '\0', len) != NULL)
        return sasl_fail(x, "malformed SCRAM message: a NUL byte in it");
    if (len == 0 || msg[len - 1] == ',')
        return sasl_fail(x, "malformed SCRAM message: empty, or ends with "
                            "','");
    a = next_attr(msg, len, &pos, &val, &vlen);
    if (a != 'c')
        return sasl_fail(x, "malformed SCRAM message: expected the "
                            "attribute \"c\" (channel binding)");
    scram_b64_encode((const uint8_t *)x->gs2_header, strlen(x->gs2_header),
                     cbind, sizeof(cbind));
    if (vlen != strlen(cbind) || memcmp(val, cbind, vlen) != 0)
        return sasl_fail(x, "SCRAM channel binding check failed: \"c\" is "
                            "not the client-first-message's GS2 header");
    a = next_attr(msg, len, &pos, &val, &vlen);
    if (a != 'r')
        return sasl_fail(x, "malformed SCRAM message: expected the "
                            "attribute \"r\" (nonce)");
    if (vlen != strlen(x->nonce) || memcmp(val, x->nonce, vlen) != 0)
        return sasl_fail(x, "SCRAM nonce mismatch: the client-final-message "
                            "does not carry the server-first-message's "
                            "nonce");
    /* Extensions, then the proof, which must come last. */
    for (;;) {
        size_t at = pos;

        a = next_attr(msg, len, &pos, &val, &vlen);
        if (a == 0)
            return sasl_fail(x, "malformed SCRAM message: expected the "
                                "attribute \"p\" (proof)");
        if (a == 'p') {
            if (pos != len || (at > 0 && msg[at - 1] != ','))
                return sasl_fail(x, "malformed SCRAM message: garbage "
                                    "after the proof");
            without_proof = at - 1;
            proof_b64 = val;
            proof_len = vlen;
            break;
        }
    }
    n = scram_b64_decode(proof_b64, proof_len, proof, sizeof(proof));
    if (n != SCRAM_KEY_LEN)
        return sasl_fail(x,
                         "malformed SCRAM message: the proof is not "
                         "base64 of %d bytes",
                         SCRAM_KEY_LEN);

    /* AuthMessage = client-first-bare "," server-first ","
     *               client-final-without-proof */
    w = snprintf(auth, sizeof(auth), "%s,%s,%.*s", x->client_first_bare,
                 x->server_first, (int)without_proof, msg);
    if (w < 0 || (size_t)w >= sizeof(auth))
        return sasl_fail(x, "SCRAM messages too long");
    alen = (size_t)w;
    if (x->doomed)
        return sasl_fail(x, "%s", x->doomed_why);
    /* ClientKey = proof XOR HMAC(StoredKey, AuthMessage); the proof holds
     * if H(ClientKey) is the StoredKey. */
    if (!scram_hmac(x->secret.stored_key, SCRAM_KEY_LEN, auth, alen, sig))
        return sasl_fail(x, "could not compute the client signature");
    for (int i = 0; i < SCRAM_KEY_LEN; i++)
        client_key[i] = proof[i] ^ sig[i];
    if (!scram_sha256(client_key, SCRAM_KEY_LEN, stored))
        return sasl_fail(x, "could not compute the client key's hash");
    if (CRYPTO_memcmp(stored, x->secret.stored_key, SCRAM_KEY_LEN) != 0)
        return sasl_fail(x, "Password does not match for the user.");
    if (!scram_hmac(x->secret.server_key, SCRAM_KEY_LEN, auth, alen, sig))
        return sasl_fail(x, "could not compute the server signature");
    scram_b64_encode(sig, SCRAM_KEY_LEN, server_sig, sizeof(server_sig));
    x->out_len = (size_t)snprintf(x->out, sizeof(x->out), "v=%s", server_sig);
    return SASL_DONE;
}
