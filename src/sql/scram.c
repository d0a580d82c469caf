/*
 * scram.c: SCRAM-SHA-256 secrets: PBKDF2, HMAC and SHA-256 from OpenSSL's
 * libcrypto, base64, and the verifier text PostgreSQL keeps in pg_authid
 * and keel in keel_auth.keel_authid (scram.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "sql/scram.h"

#define SCRAM_PREFIX "SCRAM-SHA-256$"

bool scram_hmac(const uint8_t *key, size_t keylen, const void *msg, size_t len,
                uint8_t out[SCRAM_KEY_LEN])
{
    unsigned int outlen = 0;

    if (keylen > INT_MAX)
        return false;
    return HMAC(EVP_sha256(), key, (int)keylen, msg, len, out, &outlen) !=
               NULL &&
           outlen == SCRAM_KEY_LEN;
}

bool scram_sha256(const void *p, size_t n, uint8_t out[SCRAM_KEY_LEN])
{
    unsigned int outlen = 0;

    return EVP_Digest(p, n, out, &outlen, EVP_sha256(), NULL) == 1 &&
           outlen == SCRAM_KEY_LEN;
}

bool scram_random(void *buf, size_t n)
{
    return n <= INT_MAX && RAND_bytes(buf, (int)n) == 1;
}

static const char b64_chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t scram_b64_encode(const uint8_t *in, size_t n, char *out, size_t outcap)
{
    size_t len = SCRAM_B64_LEN(n), o = 0;

    if (outcap < len + 1)
        return 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;

        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = b64_chars[(v >> 18) & 63];
        out[o++] = b64_chars[(v >> 12) & 63];
        out[o++] = i + 1 < n ? b64_chars[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? b64_chars[v & 63] : '=';
    }
    out[o] = '\0';
    return o;
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

long scram_b64_decode(const char *in, size_t n, uint8_t *out, size_t outcap)
{
    size_t o = 0;

    if (n % 4 != 0)
        return -1;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        int pad = 0;
        uint32_t w;

        for (int k = 0; k < 4; k++) {
            if (in[i + k] == '=' && i + 4 == n && k >= 2) {
                v[k] = 0;
                pad++;
                continue;
            }
            if (pad > 0) /* "=" only at the very end */
                return -1;
            v[k] = b64_value(in[i + k]);
            if (v[k] < 0)
                return -1;
        }
        w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
            (uint32_t)v[3];
        if (o + 3 - (size_t)pad > outcap)
            return -1;
        out[o++] = (uint8_t)(w >> 16);
        if (pad < 2)
            out[o++] = (uint8_t)(w >> 8);
        if (pad < 1)
            out[o++] = (uint8_t)w;
    }
    return (long)o;
}

bool scram_secret_derive(const char *password, const uint8_t *salt,
                         size_t salt_len, uint32_t iterations,
                         scram_secret *out)
{
    uint8_t salted[SCRAM_KEY_LEN], client_key[SCRAM_KEY_LEN];
    size_t plen = strlen(password);
    bool ok;

    if (salt_len > SCRAM_SALT_MAX || iterations == 0 || iterations > INT_MAX ||
        plen > INT_MAX)
        return false;
    out->iterations = iterations;
    memcpy(out->salt, salt, salt_len);
    out->salt_len = salt_len;
    ok = PKCS5_PBKDF2_HMAC(password, (int)plen, salt, (int)salt_len,
                           (int)iterations, EVP_sha256(), SCRAM_KEY_LEN,
                           salted) == 1 &&
         scram_hmac(salted, SCRAM_KEY_LEN, "Client Key", 10, client_key) &&
         scram_sha256(client_key, SCRAM_KEY_LEN, out->stored_key) &&
         scram_hmac(salted, SCRAM_KEY_LEN, "Server Key", 10, out->server_key);
    OPENSSL_cleanse(salted, sizeof(salted));
    OPENSSL_cleanse(client_key, sizeof(client_key));
    return ok;
}

void scram_secret_format(const scram_secret *s, char out[SCRAM_VERIFIER_MAX])
{
    char salt[SCRAM_B64_LEN(SCRAM_SALT_MAX) + 1];
    char stored[SCRAM_B64_LEN(SCRAM_KEY_LEN) + 1];
    char server[SCRAM_B64_LEN(SCRAM_KEY_LEN) + 1];

    scram_b64_encode(s->salt, s->salt_len, salt, sizeof(salt));
    scram_b64_encode(s->stored_key, SCRAM_KEY_LEN, stored, sizeof(stored));
    scram_b64_encode(s->server_key, SCRAM_KEY_LEN, server, sizeof(server));
    snprintf(out, SCRAM_VERIFIER_MAX, SCRAM_PREFIX "%u:%s$%s:%s", s->iterations,
             salt, stored, server);
}

bool scram_verifier_build(const char *password, char out[SCRAM_VERIFIER_MAX])
{
    uint8_t salt[SCRAM_SALT_LEN];
    scram_secret s;

    if (!scram_random(salt, sizeof(salt)) ||
        !scram_secret_derive(password, salt, sizeof(salt), SCRAM_ITERATIONS,
                             &s))
        return false;
    scram_secret_format(&s, out);
    return true;
}

bool scram_looks_like_verifier(const char *text)
{
    return strncmp(text, SCRAM_PREFIX, strlen(SCRAM_PREFIX)) == 0;
}

/* Decodes the base64 part [p, end) into exactly `want` bytes (want 0:
 * up to cap, the length in *got). */
static bool decode_part(const char *p, const char *end, uint8_t *out,
                        size_t cap, size_t want, size_t *got)
{
    long n = scram_b64_decode(p, (size_t)(end - p), out, cap);

    if (n <= 0 || (want > 0 && (size_t)n != want))
        return false;
    if (got != NULL)
        *got = (size_t)n;
    return true;
}

bool scram_secret_parse(const char *text, scram_secret *out, const char **why)
{
    const char *p, *colon, *dollar, *colon2, *end;
    unsigned long iter;
    char *iend;

    if (!scram_looks_like_verifier(text)) {
        *why = "it does not start with \"SCRAM-SHA-256$\"";
        return false;
    }
    p = text + strlen(SCRAM_PREFIX);
    end = p + strlen(p);
    colon = strchr(p, ':');
    dollar = colon != NULL ? strchr(colon + 1, '$') : NULL;
    colon2 = dollar != NULL ? strchr(dollar + 1, ':') : NULL;
    if (colon2 == NULL) {
        *why = "it lacks the form ITERATIONS:SALT$STOREDKEY:SERVERKEY";
        return false;
    }
    if (*p < '1' || *p > '9') {
        *why = "its iteration count is not a positive number";
        return false;
    }
    iter = strtoul(p, &iend, 10);
    if (iend != colon || iter > INT_MAX) {
        *why = "its iteration count is not a positive number";
        return false;
    }
    out->iterations = (uint32_t)iter;
    if (!decode_part(colon + 1, dollar, out->salt, sizeof(out->salt), 0,
                     &out->salt_len)) {
        *why = "its salt is not base64 of 1 to 64 bytes";
        return false;
    }
    if (!decode_part(dollar + 1, colon2, out->stored_key, SCRAM_KEY_LEN,
                     SCRAM_KEY_LEN, NULL) ||
        !decode_part(colon2 + 1, end, out->server_key, SCRAM_KEY_LEN,
                     SCRAM_KEY_LEN, NULL)) {
        *why = "its keys are not base64 of 32 bytes each";
        return false;
    }
    return true;
}
