/*
 * rawpq.c: PostgreSQL's protocol as bytes on a socket (rawpq.h).
 */
#include "rawpq.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

void raw_send(int fd, const void *p, size_t n)
{
    const char *b = p;

    while (n > 0) {
        ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* the server may have closed: the reads will say */
        b += w;
        n -= (size_t)w;
    }
}

void raw_put32(char *p, uint32_t v)
{
    p[0] = (char)(v >> 24);
    p[1] = (char)(v >> 16);
    p[2] = (char)(v >> 8);
    p[3] = (char)v;
}

uint32_t raw_get32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;

    return ((uint32_t)u[0] << 24) | ((uint32_t)u[1] << 16) |
           ((uint32_t)u[2] << 8) | u[3];
}

bool raw_read(int fd, char *buf, size_t n)
{
    while (n > 0) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t r;

        if (poll(&p, 1, 10000) <= 0)
            return false;
        r = recv(fd, buf, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        buf += r;
        n -= (size_t)r;
    }
    return true;
}

char raw_message(int fd, char *body, size_t size, uint32_t *len)
{
    char hdr[5];
    uint32_t n;
    char skip[256];

    if (!raw_read(fd, hdr, 5))
        return 0;
    n = raw_get32(hdr + 1) - 4;
    *len = n;
    for (uint32_t got = 0; got < n;) {
        uint32_t want = n - got;
        char *dst;

        if (got < size) {
            dst = body + got;
            if (want > size - got)
                want = (uint32_t)(size - got);
        } else {
            dst = skip;
            if (want > sizeof(skip))
                want = sizeof(skip);
        }
        if (!raw_read(fd, dst, want))
            return 0;
        got += want;
    }
    if (n < size)
        body[n] = '\0';
    return hdr[0];
}

const char *raw_error_field(const char *body, uint32_t len, char code)
{
    uint32_t i = 0;

    while (i < len && body[i] != '\0') {
        char f = body[i++];
        const char *v = body + i;

        i += (uint32_t)strnlen(v, len - i) + 1;
        if (f == code)
            return v;
    }
    return "";
}
