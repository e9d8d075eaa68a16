/* Command-line handling shared by every lscat program: the global options (--db, --work, -j,
 * -q, -v, --log-format), the stage's own options from a table, help text and exit codes.
 * The dispatcher passes global options given before the stage name through the environment
 * (LSCAT_DB, LSCAT_WORK, LSCAT_JOBS, LSCAT_VERBOSITY, LSCAT_LOG_FORMAT), the way git passes
 * --git-dir as GIT_DIR; options on the stage's own command line win. */
#ifndef LSCAT_CLI_H
#define LSCAT_CLI_H

#include <stdio.h>

/* Exit codes of every lscat program. */
enum {
    LSCAT_EXIT_OK = 0,       /* success */
    LSCAT_EXIT_FAILURES = 1, /* the stage finished, with failures it recorded */
    LSCAT_EXIT_USAGE = 2,    /* bad command line */
    LSCAT_EXIT_FATAL = 3,    /* could not do the work (store unusable, I/O error, ...) */
};

#define LSCAT_VERSION "0.1.0"

struct cli_opt {
    const char *long_name; /* without "--" */
    int short_name;        /* 0 = none */
    const char *arg_name;  /* NULL: a flag without argument */
    const char *help;
    int id;                /* passed to the callback */
};
#define CLI_OPT_END { .long_name = NULL, .short_name = 0, .arg_name = NULL, .help = NULL, .id = 0 }

struct cli {
    const char *prog;     /* e.g. "lscat-harvest" */
    char *db_path;        /* --db, $LSCAT_DB, else <work>/lscat.db */
    char *work_dir;       /* --work, $LSCAT_WORK, else ./lscat-work */
    int jobs;             /* -j, $LSCAT_JOBS, else the number of online CPUs */
    int verbosity;        /* -1 per -q, +1 per -v; $LSCAT_VERBOSITY */
    int log_json;         /* --log-format json */
    int nargs;            /* non-option arguments, in order */
    char **args;          /* borrowed from argv (array owned by cli) */
};

enum { CLI_HELP = 1 };

/* Parse argv[1..]. Options may come anywhere; "--" ends them. Global options fill `cli`;
 * those in `opts` (may be NULL) are handed to on_opt(ctx, id, arg), which returns 0 or a
 * negative code with lscat_error_set() describing the bad value. Sets up logging.
 * Returns 0, CLI_HELP when --help/-h was given, or LSCAT_EINVALID with the message set. */
int cli_parse(struct cli *cli, const char *prog, int argc, char **argv,
              const struct cli_opt *opts, int (*on_opt)(void *ctx, int id, const char *arg),
              void *ctx);
void cli_release(struct cli *cli);

/* Print the option table, one per line, aligned. */
void cli_print_options(FILE *f, const struct cli_opt *opts);
/* The global options and exit codes, for the end of every --help. */
void cli_print_common_help(FILE *f);
/* Report a usage error: "prog: message" + "usage: ..." line + hint; returns LSCAT_EXIT_USAGE. */
int cli_usage_error(const struct cli *cli, const char *usage_line);

/* Parse helpers for option callbacks: strict, with a message naming the option. */
int cli_parse_int(long *out, const char *opt_name, const char *arg, long min, long max);
int cli_parse_double(double *out, const char *opt_name, const char *arg, double min, double max);

/* 0 when the command line has no arguments beyond its options, else LSCAT_EINVALID with the
 * usage message "unexpected argument 'x'" (for stages that take none). */
int cli_no_args(const struct cli *cli);

/* Report a fatal error: "prog: <lscat_error_last()>" on stderr; returns LSCAT_EXIT_FATAL. */
int cli_fatal(const struct cli *cli);

/* Check one global option's value the way cli_parse() does (`name` as written: "-j", "--jobs",
 * "--log-format", ...; options without a checked value pass). Returns 0 or LSCAT_EINVALID with
 * the message set. The dispatcher checks the options it passes on with it. */
int cli_check_global(const char *name, const char *value);

/* The index of the first argument that is not an option or the value of an option (a global
 * one, or one of `opts`, which may be NULL), for stage programs with subcommands; or -1. */
int cli_find_subcommand(const struct cli_opt *opts, int argc, char **argv);

/* A stage's subcommands (`lscat harvest scan|import|search|fetch`) and its internal modes, the
 * ones lscat starts itself (`lscat-isolate --worker`, `lscat-harvest --git-clone-worker`,
 * `lscat isolate resolve --serve`), in one table ended by CLI_SUBCOMMAND_END. */
struct cli_subcommand {
    const char *name; /* the word; an internal mode written "--flag" counts only as argv[1] */
    int id;           /* the stage's own number for it */
    const struct cli_opt *opts; /* its options, where subcommands differ (NULL: the stage's) */
    /* An internal mode: runs instead of the stage, before option parsing, on the command line
     * without the word (argv[0] stays the program) and returns the exit code. NULL: a
     * subcommand, run by the stage after cli_parse(). */
    int (*mode)(int argc, char **argv);
};
#define CLI_SUBCOMMAND_END { .name = NULL, .id = 0, .opts = NULL, .mode = NULL }

/* When the command line names an internal mode of `table`, run it, put its exit code in
 * *code_out and return 1; else return 0. `opts` as for cli_find_subcommand. */
int cli_run_mode(int *code_out, const struct cli_subcommand *table, const struct cli_opt *opts,
                 int argc, char **argv);

/* The subcommand (not internal mode) named `word`, or NULL. Before cli_parse(), with the word
 * cli_find_subcommand() finds, it tells which options to parse (cli_subcommand.opts). */
const struct cli_subcommand *cli_subcommand_find(const struct cli_subcommand *table,
                                                 const char *word);

/* The subcommand cli->args[0] names (after cli_parse()), or NULL with the usage message set
 * ("missing subcommand (scan, import, search or fetch)", "unknown subcommand 'x' (...)").
 * Internal modes are not subcommands. */
const struct cli_subcommand *cli_subcommand(const struct cli *cli,
                                            const struct cli_subcommand *table);

#endif
