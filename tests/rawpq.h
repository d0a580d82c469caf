/*
 * rawpq.h: PostgreSQL's protocol as bytes on a socket, for the tests
 * that speak to keel serve without libpq (test_server, test_server_auth):
 * malformed, truncated or hand-built messages, and replies read one by
 * one.
 */
#ifndef KEEL_TESTS_RAWPQ_H
#define KEEL_TESTS_RAWPQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sends n bytes; returns quietly if the server has closed (the reads
 * will say). */
void raw_send(int fd, const void *p, size_t n);

/* A 32-bit integer in network order, put and read. */
void raw_put32(char *p, uint32_t v);
uint32_t raw_get32(const char *p);

/* Reads n bytes within 10 s; false at EOF, an error or the timeout. */
bool raw_read(int fd, char *buf, size_t n);

/* Reads one backend message: its body into body (up to size bytes kept,
 * NUL-terminated when it fits), its length in *len; returns its type, or
 * 0 at EOF. */
char raw_message(int fd, char *body, size_t size, uint32_t *len);

/* Field code of an ErrorResponse or NoticeResponse body ("" if absent). */
const char *raw_error_field(const char *body, uint32_t len, char code);

#endif /* KEEL_TESTS_RAWPQ_H */
