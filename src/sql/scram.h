/*
 * scram.h: SCRAM-SHA-256 secrets as PostgreSQL stores them (RFC 5802,
 * RFC 7677): the verifier "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:
 * <ServerKey>" (each part base64), built from a password or read back,
 * and the hashing both the SQL layer (CREATE ROLE ... PASSWORD) and the
 * server's exchange (src/server/sasl.c) need.  The hashing is OpenSSL's
 * libcrypto; nothing here keeps state.
 */
#ifndef KEEL_SQL_SCRAM_H
#define KEEL_SQL_SCRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCRAM_KEY_LEN    32   /* SHA-256's output */
#define SCRAM_SALT_LEN   16   /* a new verifier's salt, as PostgreSQL's */
#define SCRAM_SALT_MAX   64   /* the longest salt a verifier may carry */
#define SCRAM_ITERATIONS 4096 /* a new verifier's, as PostgreSQL's */
/* Room for any verifier scram_secret_parse() accepts, its NUL included. */
#define SCRAM_VERIFIER_MAX 256

/* Bytes of base64 text for n bytes, without the NUL. */
#define SCRAM_B64_LEN(n) ((((n) + 2) / 3) * 4)

/* A verifier, decoded. */
typedef struct scram_secret {
    uint32_t iterations;
    uint8_t salt[SCRAM_SALT_MAX];
    size_t salt_len;
    uint8_t stored_key[SCRAM_KEY_LEN];
    uint8_t server_key[SCRAM_KEY_LEN];
} scram_secret;

/* HMAC-SHA-256 of msg under key into out.  false only if libcrypto
 * fails (no memory). */
bool scram_hmac(const uint8_t *key, size_t keylen, const void *msg, size_t len,
                uint8_t out[SCRAM_KEY_LEN]);

/* SHA-256 of p into out.  false only if libcrypto fails. */
bool scram_sha256(const void *p, size_t n, uint8_t out[SCRAM_KEY_LEN]);

/* n bytes from the operating system's random source (RAND_bytes). */
bool scram_random(void *buf, size_t n);

/* Standard base64 with padding; out gets SCRAM_B64_LEN(n) characters and
 * a NUL.  Returns the characters written, or 0 if outcap is too small. */
size_t scram_b64_encode(const uint8_t *in, size_t n, char *out, size_t outcap);

/* Decodes n characters of standard base64 (padding required, nothing
 * else allowed) into out.  Returns the bytes decoded, or -1 for text
 * that is not base64 or does not fit outcap. */
long scram_b64_decode(const char *in, size_t n, uint8_t *out, size_t outcap);

/*
 * Derives the secret of password with salt and iterations (PBKDF2 for
 * the salted password, then its Client and Server keys) into *out.  The
 * password is used as its bytes (PostgreSQL first applies SASLprep, which
 * leaves ASCII unchanged).  false only if libcrypto fails.
 */
bool scram_secret_derive(const char *password, const uint8_t *salt,
                         size_t salt_len, uint32_t iterations,
                         scram_secret *out);

/* Writes s as a verifier into out (SCRAM_VERIFIER_MAX bytes). */
void scram_secret_format(const scram_secret *s, char out[SCRAM_VERIFIER_MAX]);

/* A new verifier for password with a random salt of SCRAM_SALT_LEN
 * bytes and SCRAM_ITERATIONS.  false if libcrypto fails. */
bool scram_verifier_build(const char *password, char out[SCRAM_VERIFIER_MAX]);

/*
 * Reads a verifier into *out.  false, with *why saying what is wrong,
 * for text that is not one: another prefix, an iteration count outside
 * 1..INT32_MAX, a salt that is not base64 or longer than SCRAM_SALT_MAX,
 * keys that are not base64 of SCRAM_KEY_LEN bytes, anything after them.
 */
bool scram_secret_parse(const char *text, scram_secret *out, const char **why);

/* Whether text starts as a verifier does ("SCRAM-SHA-256$"): what a
 * client that computed one itself (psql's \password) sends. */
bool scram_looks_like_verifier(const char *text);

#endif /* KEEL_SQL_SCRAM_H */
