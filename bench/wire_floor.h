/*
 * wire_floor.h: the round-trip floor of the machine a benchmark runs on:
 * what a client and a server that do no work at all reach over a Unix
 * socket, as pgbench and a server do with no statement to run.
 *
 * A measurement makes N AF_UNIX SOCK_STREAM socket pairs and forks an
 * answering process for each, as PostgreSQL gives each connection a
 * backend, that only blocks in recv() for a query of a fixed size and
 * answers with send() of a reply of a fixed size: processes, not threads,
 * so that a benchmark with threads of its own may fork them (a process
 * forked from one with several threads may start none of its own).  A
 * server that gives each connection a thread, as keel serve does, wakes
 * the same way.  This process drives the pairs
 * the way `pgbench -c N -j T` drives its connections: T client threads
 * (T at most N), each owning every T-th pair, send a query on each of
 * their pairs, then wait in poll() for any reply and send the next
 * query on its pair at once, until the run's time is up; then each
 * thread collects the replies still owed and stops.  Nothing is pinned
 * to a CPU.
 *
 * Round trips are counted by the clients; each answering process counts
 * the bytes it read and wrote, and its CPU time (utime + stime from
 * getrusage(), taken once it is ready and once it has seen its client
 * close), and sends them back over a pipe.
 */
#ifndef KEEL_BENCH_WIRE_FLOOR_H
#define KEEL_BENCH_WIRE_FLOOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define WIRE_FLOOR_MAX_PAIRS 256
#define WIRE_FLOOR_MAX_BYTES 65536
#define WIRE_FLOOR_MAX_RUNS  16
/* pgbench -S's simple-protocol query (a 'Q' message of about 60 bytes)
 * and the server's answer (row description, data row, command complete,
 * ready for query: about 120). */
#define WIRE_FLOOR_QUERY_BYTES 60
#define WIRE_FLOOR_REPLY_BYTES 120

/* One measurement's setting. */
typedef struct wire_floor_setting {
    uint32_t pairs;   /* socket pairs: the clients, 1..WIRE_FLOOR_MAX_PAIRS */
    uint32_t threads; /* client threads, 1..pairs */
    uint32_t query_bytes, reply_bytes; /* 1..WIRE_FLOOR_MAX_BYTES */
    double seconds;                    /* sending queries, > 0 */
} wire_floor_setting;

/* One run's figures. */
typedef struct wire_floor_run {
    uint64_t round_trips; /* replies the clients read whole */
    double seconds;       /* from the first query to the last reply */
    double answer_cpu_s;  /* the answering processes' CPU time meanwhile */
    double client_cpu_s;  /* the client threads' CPU time */
    /* Counted by the answering side: bytes read and written, replies
     * sent. */
    uint64_t answer_bytes_in, answer_bytes_out, answers;
} wire_floor_run;

/*
 * Runs one measurement of setting s into *out.  0, or -1 with the reason
 * in err (len bytes): a setting out of range, a socket, pipe, process or
 * thread that could not be made, an answering side that stopped
 * answering (no reply for 10 s) or reported counts that disagree with
 * the clients'.  Leaves no process or descriptor behind either way.
 */
int wire_floor_measure(const wire_floor_setting *s, wire_floor_run *out,
                       char *err, size_t len);

/* A client count's runs, summarized. */
typedef struct wire_floor_point {
    wire_floor_setting s;
    int nruns;
    wire_floor_run run[WIRE_FLOOR_MAX_RUNS];
    /* Round trips a second: median, lowest and highest of the runs. */
    double rt_per_s, rt_min, rt_max;
    /* CPU time per round trip (us), medians of the runs': the answering
     * side's and the clients'. */
    double answer_cpu_us, client_cpu_us;
} wire_floor_point;

/*
 * Measures each of p[0..n) (each p[i].s set) `runs` times (1..
 * WIRE_FLOOR_MAX_RUNS), interleaved: every setting once in order, then
 * every one in reverse order, and so on, so that what the host does
 * meanwhile falls on all of them; then summarizes each.  0, or -1 with
 * the reason in err.
 */
int wire_floor_series(wire_floor_point *p, size_t n, int runs, char *err,
                      size_t len);

/* Prints p[0..n) as a table on f, headed by a line of its setting. */
void wire_floor_print(FILE *f, const wire_floor_point *p, size_t n);

/*
 * Writes p[0..n) as a JSON object (no newline after it): the sizes, the
 * seconds per run, how the pairs are driven, and per setting its
 * summary and each run's figures.
 */
void wire_floor_json(FILE *f, const wire_floor_point *p, size_t n);

#endif /* KEEL_BENCH_WIRE_FLOOR_H */
