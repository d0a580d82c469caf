/*
 * fuzz_protocol.c: libFuzzer target for the server's message parsing
 * (src/server/protocol.c).  Each input is read three ways: as a
 * startup-phase packet, as a stream of frontend messages (each body
 * parsed as a Query, Parse, Bind, Describe or Close, and Execute), and
 * as the text of backend messages built from it, whose
 * framing is then checked by reading them back; and as a SCRAM exchange
 * (src/server/sasl.c): the bytes before the first NUL as a
 * client-first-message, those after it as the client-final-message, for
 * a role with a verifier and for one without.  Built in the
 * AddressSanitizer build with clang only, and run for a bounded time by
 * ctest (CMakeLists.txt); the corpus in tests/fuzz/corpus seeds it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/protocol.h"
#include "server/sasl.h"

static void check(int ok)
{
    if (!ok)
        abort();
}

static void fuzz_startup(const char *p, size_t n)
{
    size_t total;
    pq_startup st;

    if (pq_frame_startup(p, n, &total) != PQ_OK)
        return;
    check(total >= 8 && total <= n && total <= PQ_STARTUP_MAX);
    if (pq_parse_startup(p, total, &st) != PQ_OK) {
        check(st.error != NULL);
        return;
    }
    for (uint16_t i = 0; i < st.nparams; i++) {
        /* Every string lies inside the packet, its NUL included. */
        check(st.names[i] >= p && st.names[i] < p + total);
        check(st.values[i] > st.names[i] && st.values[i] < p + total);
        check(st.values[i] + strlen(st.values[i]) < p + total);
        check(st.names[i][0] != '\0');
    }
}

/* Every extended-protocol parser over one body, whatever its type. */
static void fuzz_extended(const char *body, uint32_t len)
{
    pq_parse_msg pm;
    pq_bind_msg bm;
    const char *name, *data;
    uint32_t max_rows, data_len;
    char kind;

    if (pq_parse_parse(body, len, &pm) == PQ_OK) {
        uint32_t *types = malloc((size_t)pm.nparams * 4 + 1);

        check(pm.query > pm.name && pm.query < body + len);
        pq_decode_int32s(pm.types, pm.nparams, types);
        free(types);
    }
    if (pq_parse_bind(body, len, &bm) == PQ_OK) {
        const char **vals = malloc((size_t)bm.nvalues * sizeof(char *) + 1);
        uint32_t *lens = malloc((size_t)bm.nvalues * 4 + 1);
        int16_t *f = malloc(((size_t)bm.nformats + bm.nrformats) * 2 + 1);

        pq_bind_values(&bm, vals, lens);
        for (uint16_t i = 0; i < bm.nvalues; i++)
            check(vals[i] == NULL ||
                  (vals[i] >= body && vals[i] + lens[i] <= body + len));
        pq_decode_int16s(bm.formats, bm.nformats, f);
        pq_decode_int16s(bm.rformats, bm.nrformats, f + bm.nformats);
        free(vals);
        free(lens);
        free(f);
    }
    if (pq_parse_target(body, len, &kind, &name) == PQ_OK)
        check((kind == 'S' || kind == 'P') && strlen(name) + 2 == len);
    if (pq_parse_execute(body, len, &name, &max_rows) == PQ_OK)
        check(strlen(name) + 5 == len);
    if (pq_parse_sasl_initial(body, len, &name, &data, &data_len) == PQ_OK)
        check(strlen(name) + 5 + data_len == len &&
              (data_len == 0 || data == name + strlen(name) + 5));
}

static void fuzz_messages(const char *p, size_t n)
{
    size_t off = 0;

    for (;;) {
        pq_message m;
        pq_result r = pq_frame_message(p + off, n - off, &m);
        const char *text;

        if (r != PQ_OK)
            break;
        check(m.total == (size_t)m.body_len + 5 && m.total <= n - off);
        check(m.body_len + 4 <= pq_message_limit(m.type));
        if (pq_parse_query(m.body, m.body_len, &text) == PQ_OK)
            check(strlen(text) + 1 == m.body_len);
        fuzz_extended(m.body, m.body_len);
        off += m.total;
    }
}

/* Builds messages from the input and reads their framing back. */
static void fuzz_output(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    pq_out o;
    pq_error_fields f;
    size_t off = 0;
    int count = 0;

    if (s == NULL || !pq_out_init(&o, 16)) {
        free(s);
        return;
    }
    memcpy(s, p, n);
    s[n] = '\0';
    f = (pq_error_fields){.severity = "ERROR",
                          .sqlstate = "42601",
                          .message = s,
                          .detail = s + n / 2,
                          .hint = "",
                          .position = (uint32_t)n};
    pq_put_error(&o, 'E', &f);
    pq_put_parameter_status(&o, s, s + n / 3);
    pq_begin(&o, 'D');
    pq_put_int16(&o, 1);
    pq_put_int32(&o, (uint32_t)n);
    pq_put_bytes(&o, p, n);
    pq_end(&o);
    pq_put_ready(&o, 'I');
    check(!o.failed);
    while (off < o.len) {
        uint32_t len = ((uint32_t)(unsigned char)o.buf[off + 1] << 24) |
                       ((uint32_t)(unsigned char)o.buf[off + 2] << 16) |
                       ((uint32_t)(unsigned char)o.buf[off + 3] << 8) |
                       (uint32_t)(unsigned char)o.buf[off + 4];

        check(len >= 4 && off + 1 + len <= o.len);
        off += 1 + len;
        count++;
    }
    check(off == o.len && count == 4);
    pq_out_reset(&o, 16);
    check(o.len == 0 && o.cap <= 16);
    pq_out_free(&o);
    free(s);
}

/* Runs the exchange over the input for a role with verifier (NULL: an
 * unknown role). */
static void fuzz_scram_one(const char *p, size_t n, const char *verifier)
{
    static const uint8_t mock_key[SCRAM_KEY_LEN] = {1, 2, 3};
    const char *nul = memchr(p, '\0', n);
    size_t first = nul != NULL ? (size_t)(nul - p) : n;
    sasl_exchange *x = malloc(sizeof(*x));
    sasl_result r;

    if (x == NULL || !sasl_begin(x, "fuzz", verifier, mock_key)) {
        free(x);
        return;
    }
    check(x->doomed == (verifier == NULL));
    r = sasl_client_first(x, p, first);
    if (r == SASL_CONTINUE) {
        check(x->out_len > 2 && memcmp(x->out, "r=", 2) == 0 &&
              x->out_len < sizeof(x->out));
        r = sasl_client_final(x, nul != NULL ? nul + 1 : "",
                              nul != NULL ? n - first - 1 : 0);
        /* No proof guessed from fuzzed bytes can match. */
        check(r == SASL_FAILED);
    }
    check(r != SASL_FAILED || x->why[0] != '\0');
    free(x);
}

static void fuzz_scram(const char *p, size_t n)
{
    static char verifier[SCRAM_VERIFIER_MAX];

    if (verifier[0] == '\0')
        check(scram_verifier_build("pencil", verifier));
    fuzz_scram_one(p, n, verifier);
    fuzz_scram_one(p, n, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;

    fuzz_startup(p, size);
    fuzz_messages(p, size);
    fuzz_output(p, size);
    fuzz_scram(p, size);
    return 0;
}
