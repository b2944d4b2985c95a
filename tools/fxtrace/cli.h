/* tools/fxtrace/cli.h - the fxtrace command: one file per subcommand, dispatched by main.c.
 *
 * Conventions of every subcommand: `--help` prints its usage on stdout and exits 0; a usage
 * error prints "fxtrace CMD: reason" and the usage on stderr and exits 2; a bad input file
 * prints "fxtrace CMD: FILE: offset N: reason" (or "FILE: reason" without an offset) on stderr
 * and exits 1. Summaries and progress go to stderr: stdout carries only what the command was
 * asked to print (a report, a listing, or with `-o -` the output file). Every FILE read may be
 * "-" (standard input) or a pipe (formats/fileio.h). A file that ends inside a record (a torn tail: a write cut short by a full disk
 * or a crash) is read up to that record, with a warning naming its offset on stderr; with
 * `--strict` it is an error instead (exit 1).
 */
#ifndef FXTRACE_TOOLS_CLI_H
#define FXTRACE_TOOLS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "formats/fxtfile.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

int cmd_report(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_hist(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_recover(int argc, char **argv);

/* Prints "fxtrace CMD: FILE: msg" on stderr (both through cli_printable). */
void cli_file_error(const char *cmd, const char *file, const char *msg);
/* A usage error: "fxtrace CMD: msg" and the usage on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *usage, const char *msg);
/* For subcommands taking exactly one FILE: parses [--help] FILE. Returns -1 when *file is
 * set, else the exit code to return (help printed, or usage error). */
int cli_one_file(const char *cmd, const char *usage, int argc, char **argv, const char **file);
/* The same, also taking `--strict` (*strict). */
int cli_one_file_strict(const char *cmd, const char *usage, int argc, char **argv,
                        const char **file, bool *strict);
/* A subcommand `CMD [--help] [--strict] FILE` (check, report, stats): the arguments parsed
 * (cli_one_file_strict), run(FILE, strict), then stdout flushed. Returns the usage's or help's
 * exit code, or run's; CLI_EXIT_FAIL when the flush fails (a full disk, /dev/full). */
int cli_file_cmd(const char *cmd, const char *usage, int argc, char **argv,
                 int (*run)(const char *file, bool strict));
/* fxtf_open with the error printed; NULL on failure. A torn tail is warned about (cli_torn),
 * or with strict an error (NULL). */
struct fxtf_file *cli_open(const char *cmd, const char *path, bool strict);
/* Says that FILE ends inside the record at offset `torn` (len bytes in all): a warning, or
 * with strict an error. Returns false when strict (the caller fails). */
bool cli_torn(const char *cmd, const char *path, uint64_t torn, uint64_t len, bool strict);
/* Text of a file (a name, a message) for an error line: printable ASCII and well-formed
 * UTF-8 characters as they are, any other byte (controls: a terminal's escape sequences) as
 * \xNN, so a file's bytes never reach the terminal raw. Writes a NUL-terminated string of at
 * most size - 1 bytes into buf and returns buf. */
const char *cli_printable(const char *s, size_t n, char *buf, size_t size);
/* Writes n bytes to stdout; false on a write error (reported). */
bool cli_write(const char *cmd, const void *data, size_t n);
/* For a command about to write a binary trace to stdout (`-o -`): when stdout is a terminal,
 * says so ("fxtrace CMD: binary trace data not written to a terminal", as gzip refuses) and
 * returns true: the caller refuses (CLI_EXIT_USAGE). */
bool cli_refuse_tty(const char *cmd);
/* The whole file path written to stdout (cli_write); false after saying what failed. */
bool cli_copy_to_stdout(const char *cmd, const char *path);
/* The harvests of dead sessions (src/base/sdir.h) the command makes, with the recovery and the
 * trace.dat writer it links (the formats library), never the tracer's modules: cli_harvest is
 * fxt_harvest's (src/host/harvest.h) for dir, whose lock the caller holds, into its own output
 * (no stats, no adoption: the children's markers go); cli_harvest_dead is
 * fxt_sdir_harvest_dead's. */
int cli_harvest(const char *dir, char *msg, size_t msg_size);
int cli_harvest_dead(const char *base, const char *who);

#endif /* FXTRACE_TOOLS_CLI_H */
