/*
 * bench_floor.c: `keel bench floor`: the machine's round-trip floor
 * alone (wire_floor.h), at each client count given: round trips a
 * second and the CPU time each costs, with no server work at all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "bench.h"
#include "wire_floor.h"

#define WHO        "keel bench floor"
#define MAX_COUNTS 8

typedef struct floor_opts {
    bool quick;
    const char *json;
    uint32_t clients[MAX_COUNTS];
    int nclients;
    uint32_t threads, runs, query_bytes, reply_bytes;
    double seconds;
} floor_opts;

static void usage(void)
{
    fprintf(stderr,
            "usage: keel bench floor [--quick] [--clients N,N,...] "
            "[--seconds S] [--runs N]\n"
            "           [--threads N] [--query-bytes N] [--reply-bytes N] "
            "[--json FILE]\n");
}

static int floor_option(const bench_args *a, void *ctx)
{
    floor_opts *o = ctx;

    if (strcmp(a->name, "--json") == 0)
        return bench_args_out_file(a, &o->json);
    if (strcmp(a->name, "--clients") == 0) {
        o->nclients = bench_args_u32_list(a, 1, WIRE_FLOOR_MAX_PAIRS,
                                          o->clients, MAX_COUNTS);
        return o->nclients > 0 ? 0 : -1;
    }
    if (strcmp(a->name, "--seconds") == 0)
        return bench_args_double(a, 0.01, 60, &o->seconds);
    if (strcmp(a->name, "--runs") == 0)
        return bench_args_u32(a, 1, WIRE_FLOOR_MAX_RUNS, &o->runs);
    if (strcmp(a->name, "--threads") == 0)
        return bench_args_u32(a, 1, 64, &o->threads);
    if (strcmp(a->name, "--query-bytes") == 0)
        return bench_args_u32(a, 1, WIRE_FLOOR_MAX_BYTES, &o->query_bytes);
    if (strcmp(a->name, "--reply-bytes") == 0)
        return bench_args_u32(a, 1, WIRE_FLOOR_MAX_BYTES, &o->reply_bytes);
    return bench_args_unknown(a);
}

static int parse_opts(int argc, char **argv, floor_opts *o)
{
    static const uint32_t full[] = {1, 2, 8, 32, 64};
    static const uint32_t quick[] = {1, 2};

    memset(o, 0, sizeof(*o));
    if (bench_args_parse(WHO, argc, argv, &o->quick, NULL, floor_option, o) !=
        0)
        return -1;
    if (o->nclients == 0) {
        o->nclients = o->quick ? 2 : 5;
        memcpy(o->clients, o->quick ? quick : full,
               (size_t)o->nclients * sizeof(uint32_t));
    }
    if (o->seconds == 0)
        o->seconds = o->quick ? 0.1 : 1;
    if (o->runs == 0)
        o->runs = o->quick ? 2 : 3;
    if (o->threads == 0)
        o->threads = 2;
    if (o->query_bytes == 0)
        o->query_bytes = WIRE_FLOOR_QUERY_BYTES;
    if (o->reply_bytes == 0)
        o->reply_bytes = WIRE_FLOOR_REPLY_BYTES;
    return 0;
}

static int write_json(const floor_opts *o, const wire_floor_point *p)
{
    FILE *f = fopen(o->json, "w");

    if (f == NULL)
        return -1;
    fprintf(f, "{\n  \"bench\": \"floor\",\n  \"quick\": %s,\n  \"floor\": ",
            o->quick ? "true" : "false");
    wire_floor_json(f, p, (size_t)o->nclients);
    fputs("\n}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

int bench_floor_main(int argc, char **argv)
{
    wire_floor_point p[MAX_COUNTS];
    floor_opts o;
    char err[512];

    if (parse_opts(argc, argv, &o) != 0) {
        usage();
        return 2;
    }
    memset(p, 0, sizeof(p));
    for (int i = 0; i < o.nclients; i++)
        p[i].s = (wire_floor_setting){
            .pairs = o.clients[i],
            .threads = o.clients[i] < o.threads ? o.clients[i] : o.threads,
            .query_bytes = o.query_bytes,
            .reply_bytes = o.reply_bytes,
            .seconds = o.seconds};
    if (wire_floor_series(p, (size_t)o.nclients, (int)o.runs, err,
                          sizeof(err)) != 0) {
        fprintf(stderr, WHO ": %s\n", err);
        return 1;
    }
    wire_floor_print(stdout, p, (size_t)o.nclients);
    if (o.json != NULL && write_json(&o, p) != 0) {
        fprintf(stderr, WHO ": cannot write %s: %s\n", o.json, strerror(errno));
        return 1;
    }
    return 0;
}
