/*
 * args.h: the command-line scanner the `keel bench` subcommands share.
 *
 * A subcommand's arguments are options with a value (--name VALUE), the
 * flag --quick, and, where the subcommand takes one, a single operand
 * (DIR).  bench_args_parse() sorts them and hands each option to the
 * subcommand; the value parsers accept only a whole number (or decimal)
 * inside the option's range.  Every refusal prints one line on stderr
 * that names the option and returns -1 (the subcommand then exits with
 * status 2).
 */
#ifndef KEEL_BENCH_ARGS_H
#define KEEL_BENCH_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* The option being handled. */
typedef struct bench_args {
    const char *who;   /* "keel bench lookup": the messages' prefix */
    const char *name;  /* "--rounds" */
    const char *value; /* its value */
} bench_args;

/* Handles one option for bench_args_parse(): 0, or -1 after a message. */
typedef int (*bench_option_fn)(const bench_args *a, void *ctx);

/*
 * Scans argv[0..argc) of subcommand who: --quick sets *quick (an unknown
 * option if quick is NULL), the operand goes to *dir (refused if dir is
 * NULL, and a second one always), and each option to on_option(a, ctx).
 * 0, or -1 after a message.
 */
int bench_args_parse(const char *who, int argc, char **argv, bool *quick,
                     const char **dir, bench_option_fn on_option, void *ctx);

/* Reports the option as unknown; -1. */
int bench_args_unknown(const bench_args *a);

/*
 * The option's value as a number in lo..hi (a decimal fraction too for
 * bench_args_double): 0 and the number in *out, or -1 after a message
 * naming the option, its range and the value given.
 */
int bench_args_u32(const bench_args *a, uint32_t lo, uint32_t hi,
                   uint32_t *out);
int bench_args_u64(const bench_args *a, uint64_t lo, uint64_t hi,
                   uint64_t *out);
int bench_args_double(const bench_args *a, double lo, double hi, double *out);

/*
 * The option's value as up to `max` numbers in lo..hi, comma-separated
 * ("1,2,8"): their count, at least 1, with the numbers in out[], or -1
 * after a message naming the option, its range and the value given.
 */
int bench_args_u32_list(const bench_args *a, uint32_t lo, uint32_t hi,
                        uint32_t *out, int max);

/*
 * The option's value as a file to write results to, at the end of a run:
 * checked now, so that a run is not spent for nothing (the file is created
 * and removed again if it did not exist; one that does is left as it is).
 * 0 and the name in *out, or -1 after a message naming the file and the
 * reason; a value that looks like an option ("--quick") is refused.
 */
int bench_args_out_file(const bench_args *a, const char **out);

#endif /* KEEL_BENCH_ARGS_H */
