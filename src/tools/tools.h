/*
 * tools.h: entry points of the `keel` subcommands that work on a database
 * directory (init, stat, check, wal, serve).
 *
 * Each takes the arguments after its name, prints its results on stdout
 * (progress on stderr), one line per error on stderr, and returns the
 * process exit status: 0 on success, 1 on failure, 2 for bad usage.
 */
#ifndef KEEL_TOOLS_TOOLS_H
#define KEEL_TOOLS_TOOLS_H

int tool_init_main(int argc, char **argv);
int tool_stat_main(int argc, char **argv);
int tool_check_main(int argc, char **argv);
int tool_wal_main(int argc, char **argv);
int tool_serve_main(int argc, char **argv);

#endif /* KEEL_TOOLS_TOOLS_H */
