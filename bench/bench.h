/*
 * bench.h: entry points of the `keel bench` subcommands.
 *
 * Each takes the arguments after its name, prints a readable table on
 * stdout (progress on stderr), writes JSON when given --json FILE, and
 * returns the process exit status.
 */
#ifndef KEEL_BENCH_BENCH_H
#define KEEL_BENCH_BENCH_H

/* The most runs `keel bench select --runs` takes (and the report reads). */
#define BENCH_SELECT_MAX_RUNS 16

int bench_catcache_main(int argc, char **argv);
int bench_compare_main(int argc, char **argv);
int bench_floor_main(int argc, char **argv);
int bench_lookup_main(int argc, char **argv);
int bench_pin_main(int argc, char **argv);
int bench_report_main(int argc, char **argv);
int bench_select_main(int argc, char **argv);
int bench_bloat_main(int argc, char **argv);
int bench_tpcb_main(int argc, char **argv);

#endif /* KEEL_BENCH_BENCH_H */
