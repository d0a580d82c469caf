/*
 * test_scram.c: SCRAM-SHA-256 without a server: the secrets of
 * src/sql/scram.c against RFC 7677's example exchange, base64 and the
 * verifier's text, and the server's side of the exchange
 * (src/server/sasl.c) run in process against a client computed here:
 * the right proof is accepted and answered with the right server
 * signature; a wrong password, another channel binding, a changed nonce,
 * a proof of the wrong length and an unknown role are refused.
 */
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "server/sasl.h"
#include "sql/scram.h"
#include "testutil.h"

/* RFC 7677, section 3. */
#define RFC_PASSWORD         "pencil"
#define RFC_SALT             "W22ZaJ0SNY7soEsUEjb6gQ=="
#define RFC_CNONCE           "rOprNGfwEbeRWgbNEkqO"
#define RFC_NONCE            RFC_CNONCE "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
#define RFC_PROOF            "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
#define RFC_SERVER_SIGNATURE "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="

static const uint8_t mock_key[SCRAM_KEY_LEN] = {7};

static void rfc_secret(scram_secret *s)
{
    uint8_t salt[SCRAM_SALT_MAX];
    long n = scram_b64_decode(RFC_SALT, strlen(RFC_SALT), salt, sizeof(salt));

    assert_int_equal(n, 16);
    assert_true(scram_secret_derive(RFC_PASSWORD, salt, (size_t)n, 4096, s));
}

/* The RFC's proof is the one the secret accepts, and its server
 * signature the one the secret makes. */
static void test_rfc7677(void **state)
{
    static const char auth[] =
        "n=user,r=" RFC_CNONCE ",r=" RFC_NONCE ",s=" RFC_SALT ",i=4096,"
        "c=biws,r=" RFC_NONCE;
    scram_secret s;
    uint8_t proof[SCRAM_KEY_LEN], sig[SCRAM_KEY_LEN], key[SCRAM_KEY_LEN];
    char b64[64];

    rfc_secret(&s);
    assert_int_equal(
        scram_b64_decode(RFC_PROOF, strlen(RFC_PROOF), proof, sizeof(proof)),
        SCRAM_KEY_LEN);
    assert_true(
        scram_hmac(s.stored_key, SCRAM_KEY_LEN, auth, strlen(auth), sig));
    for (int i = 0; i < SCRAM_KEY_LEN; i++)
        key[i] = proof[i] ^ sig[i];
    assert_true(scram_sha256(key, SCRAM_KEY_LEN, sig));
    assert_memory_equal(sig, s.stored_key, SCRAM_KEY_LEN);
    assert_true(
        scram_hmac(s.server_key, SCRAM_KEY_LEN, auth, strlen(auth), sig));
    scram_b64_encode(sig, SCRAM_KEY_LEN, b64, sizeof(b64));
    assert_string_equal(b64, RFC_SERVER_SIGNATURE);
}

static void test_base64(void **state)
{
    uint8_t out[16];
    char text[32];

    assert_int_equal(scram_b64_decode("QQ==", 4, out, sizeof(out)), 1);
    assert_int_equal(out[0], 'A');
    assert_int_equal(scram_b64_decode("QUI=", 4, out, sizeof(out)), 2);
    assert_int_equal(scram_b64_decode("QUJD", 4, out, sizeof(out)), 3);
    assert_memory_equal(out, "ABC", 3);
    assert_int_equal(scram_b64_decode("", 0, out, sizeof(out)), 0);
    /* Not base64: a length not a multiple of 4, padding in the middle or
     * too much of it, other characters, no room. */
    assert_int_equal(scram_b64_decode("QUJ", 3, out, sizeof(out)), -1);
    assert_int_equal(scram_b64_decode("QQ==QUJD", 8, out, sizeof(out)), -1);
    assert_int_equal(scram_b64_decode("Q===", 4, out, sizeof(out)), -1);
    assert_int_equal(scram_b64_decode("QU-D", 4, out, sizeof(out)), -1);
    assert_int_equal(scram_b64_decode("QUJD", 4, out, 2), -1);
    assert_int_equal(
        scram_b64_encode((const uint8_t *)"ABCD", 4, text, sizeof(text)), 8);
    assert_string_equal(text, "QUJDRA==");
    assert_int_equal(scram_b64_encode((const uint8_t *)"ABCD", 4, text, 8), 0);
}

static void test_verifier_text(void **state)
{
    scram_secret s, back;
    char v[SCRAM_VERIFIER_MAX], v2[SCRAM_VERIFIER_MAX];
    const char *why;

    rfc_secret(&s);
    scram_secret_format(&s, v);
    assert_true(strncmp(v, "SCRAM-SHA-256$4096:" RFC_SALT "$", 44) == 0);
    assert_true(scram_secret_parse(v, &back, &why));
    assert_int_equal(back.iterations, 4096);
    assert_int_equal(back.salt_len, 16);
    assert_memory_equal(back.stored_key, s.stored_key, SCRAM_KEY_LEN);
    assert_memory_equal(back.server_key, s.server_key, SCRAM_KEY_LEN);
    /* Two verifiers of one password differ by their random salts. */
    assert_true(scram_verifier_build(RFC_PASSWORD, v));
    assert_true(scram_verifier_build(RFC_PASSWORD, v2));
    assert_string_not_equal(v, v2);
    assert_true(scram_secret_parse(v, &back, &why));
    assert_int_equal(back.salt_len, SCRAM_SALT_LEN);
    /* Not verifiers. */
    assert_false(scram_secret_parse("md5abc", &back, &why));
    assert_false(scram_secret_parse("SCRAM-SHA-256$4096:abc", &back, &why));
    assert_false(
        scram_secret_parse("SCRAM-SHA-256$0:QQ==$QQ==:QQ==", &back, &why));
    assert_false(scram_secret_parse("SCRAM-SHA-256$4096:QQ==$QQ==:QQ==", &back,
                                    &why)); /* short keys */
    v[strlen(v) - 2] = '!';
    assert_false(scram_secret_parse(v, &back, &why));
}

/* ---- the exchange ----------------------------------------------------- */

/* The client's side: the proof for password over the exchange so far and
 * the client-final-message without its proof, into out as a whole
 * client-final-message. */
static void client_final(const sasl_exchange *x, const char *password,
                         const char *without_proof, char *out, size_t size)
{
    uint8_t salted[SCRAM_KEY_LEN], ckey[SCRAM_KEY_LEN], stored[SCRAM_KEY_LEN],
        sig[SCRAM_KEY_LEN], proof[SCRAM_KEY_LEN];
    char auth[4096], b64[64];
    unsigned int len = 0;

    assert_int_equal(PKCS5_PBKDF2_HMAC(password, (int)strlen(password),
                                       x->secret.salt, (int)x->secret.salt_len,
                                       (int)x->secret.iterations, EVP_sha256(),
                                       SCRAM_KEY_LEN, salted),
                     1);
    assert_non_null(HMAC(EVP_sha256(), salted, SCRAM_KEY_LEN,
                         (const uint8_t *)"Client Key", 10, ckey, &len));
    assert_true(scram_sha256(ckey, SCRAM_KEY_LEN, stored));
    snprintf(auth, sizeof(auth), "%s,%s,%s", x->client_first_bare,
             x->server_first, without_proof);
    assert_true(scram_hmac(stored, SCRAM_KEY_LEN, auth, strlen(auth), sig));
    for (int i = 0; i < SCRAM_KEY_LEN; i++)
        proof[i] = ckey[i] ^ sig[i];
    scram_b64_encode(proof, SCRAM_KEY_LEN, b64, sizeof(b64));
    snprintf(out, size, "%s,p=%s", without_proof, b64);
}

/* Begins an exchange for a role whose password is RFC_PASSWORD and sends
 * client-first; x->nonce then holds the combined nonce. */
static void exchange_begin(sasl_exchange *x, const char *first)
{
    scram_secret s;
    char v[SCRAM_VERIFIER_MAX];

    rfc_secret(&s);
    scram_secret_format(&s, v);
    assert_true(sasl_begin(x, "user", v, mock_key));
    assert_false(x->doomed);
    assert_int_equal(sasl_client_first(x, first, strlen(first)), SASL_CONTINUE);
}

static void test_exchange(void **state)
{
    sasl_exchange x;
    char wp[1200], msg[1200], expect[64];
    uint8_t sig[SCRAM_KEY_LEN];
    char auth[4096];

    exchange_begin(&x, "n,,n=user,r=" RFC_CNONCE);
    x.out[x.out_len] = '\0';
    assert_true(strncmp(x.out, "r=" RFC_CNONCE, 2 + strlen(RFC_CNONCE)) == 0);
    assert_non_null(strstr(x.out, ",s=" RFC_SALT ",i=4096"));
    assert_int_equal(strlen(x.nonce), strlen(RFC_CNONCE) + 24);
    snprintf(wp, sizeof(wp), "c=biws,r=%s", x.nonce);
    client_final(&x, RFC_PASSWORD, wp, msg, sizeof(msg));
    assert_int_equal(sasl_client_final(&x, msg, strlen(msg)), SASL_DONE);
    /* The server's signature, as the client checks it. */
    {
        scram_secret s;

        rfc_secret(&s);
        snprintf(auth, sizeof(auth), "%s,%s,%s", x.client_first_bare,
                 x.server_first, wp);
        assert_true(
            scram_hmac(s.server_key, SCRAM_KEY_LEN, auth, strlen(auth), sig));
        memcpy(expect, "v=", 2);
        scram_b64_encode(sig, SCRAM_KEY_LEN, expect + 2, sizeof(expect) - 2);
        x.out[x.out_len] = '\0';
        assert_string_equal(x.out, expect);
    }
    /* "y": the client could bind but thinks the server cannot; its
     * channel binding is then "y,,", and an extension is ignored. */
    exchange_begin(&x, "y,,n=,r=abc,x=ext");
    snprintf(wp, sizeof(wp), "c=eSws,r=%s", x.nonce);
    client_final(&x, RFC_PASSWORD, wp, msg, sizeof(msg));
    assert_int_equal(sasl_client_final(&x, msg, strlen(msg)), SASL_DONE);
}

static void test_exchange_refused(void **state)
{
    sasl_exchange x;
    char wp[1200], msg[1200];

    /* A wrong password. */
    exchange_begin(&x, "n,,n=,r=abc");
    snprintf(wp, sizeof(wp), "c=biws,r=%s", x.nonce);
    client_final(&x, "pencil2", wp, msg, sizeof(msg));
    assert_int_equal(sasl_client_final(&x, msg, strlen(msg)), SASL_FAILED);
    assert_non_null(strstr(x.why, "Password does not match"));
    /* The right password, with another channel binding. */
    exchange_begin(&x, "n,,n=,r=abc");
    snprintf(wp, sizeof(wp), "c=eSws,r=%s", x.nonce);
    client_final(&x, RFC_PASSWORD, wp, msg, sizeof(msg));
    assert_int_equal(sasl_client_final(&x, msg, strlen(msg)), SASL_FAILED);
    assert_non_null(strstr(x.why, "channel binding"));
    /* ... with the nonce changed. */
    exchange_begin(&x, "n,,n=,r=abc");
    snprintf(wp, sizeof(wp), "c=biws,r=%sA", x.nonce);
    client_final(&x, RFC_PASSWORD, wp, msg, sizeof(msg));
    assert_int_equal(sasl_client_final(&x, msg, strlen(msg)), SASL_FAILED);
    assert_non_null(strstr(x.why, "nonce mismatch"));
    /* A proof of 31 bytes; garbage after the proof. */
    exchange_begin(&x, "n,,n=,r=abc");
    snprintf(msg, sizeof(msg), "c=biws,r=%s,p=%s", x.nonce,
             "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    assert_int_equal(sasl_client_final(&x, msg, strlen(msg)), SASL_FAILED);
    assert_non_null(strstr(x.why, "proof"));
    exchange_begin(&x, "n,,n=,r=abc");
    snprintf(wp, sizeof(wp), "c=biws,r=%s", x.nonce);
    client_final(&x, RFC_PASSWORD, wp, msg, sizeof(msg));
    strcat(msg, ",x=1");
    assert_int_equal(sasl_client_final(&x, msg, strlen(msg)), SASL_FAILED);
    /* Malformed client-first-messages. */
    {
        static const char *const bad[] = {
            "",
            "n",
            "n,",
            "x,,n=,r=a",
            "p=tls,,n=,r=a",
            "n,a=u,n=,r=a",
            "n,,m=x,n=,r=a",
            "n,,r=a",
            "n,,n=,r=",
            "n,,n=,r=a,",
            "n,,n=,r=a b",
            "n,,n=,r=a,zz",
        };
        scram_secret s;
        char v[SCRAM_VERIFIER_MAX];

        rfc_secret(&s);
        scram_secret_format(&s, v);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            assert_true(sasl_begin(&x, "user", v, mock_key));
            if (sasl_client_first(&x, bad[i], strlen(bad[i])) != SASL_FAILED)
                fail_msg("client-first \"%s\" was accepted", bad[i]);
            assert_true(x.why[0] != '\0');
        }
    }
    /* A role that does not exist, and one without a password: the
     * exchange goes on, with the same salt for the same name, and fails
     * even with a proof computed for that salt. */
    {
        sasl_exchange y;

        assert_true(sasl_begin(&x, "ghost", NULL, mock_key));
        assert_true(sasl_begin(&y, "ghost", "", mock_key));
        assert_true(x.doomed && y.doomed);
        assert_memory_equal(x.secret.salt, y.secret.salt, SCRAM_SALT_LEN);
        assert_int_equal(sasl_client_first(&x, "n,,n=,r=abc", 11),
                         SASL_CONTINUE);
        snprintf(wp, sizeof(wp), "c=biws,r=%s", x.nonce);
        client_final(&x, "anything", wp, msg, sizeof(msg));
        assert_int_equal(sasl_client_final(&x, msg, strlen(msg)), SASL_FAILED);
        assert_string_equal(x.why, "Role \"ghost\" does not exist.");
        assert_true(sasl_begin(&y, "ghost2", NULL, mock_key));
        assert_memory_not_equal(x.secret.salt, y.secret.salt, SCRAM_SALT_LEN);
    }
    /* Messages out of turn. */
    assert_true(sasl_begin(&x, "ghost", NULL, mock_key));
    assert_int_equal(sasl_client_final(&x, "c=biws", 6), SASL_FAILED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc7677),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_verifier_text),
        cmocka_unit_test(test_exchange),
        cmocka_unit_test(test_exchange_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
