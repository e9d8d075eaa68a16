/* Option parsing for every lscat program: global options plus a per-stage table, GNU-style
 * ("--opt=value", "--opt value", "-j4", "-j 4", "-vv"), strict number parsing, uniform help and
 * usage errors (exit 2). */
#include "common/cli.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { G_DB = -100, G_WORK, G_JOBS, G_QUIET, G_VERBOSE, G_LOGFMT, G_HELP };

static const struct cli_opt global_opts[] = {
    { "db", 0, "PATH", "the store (default: <work>/lscat.db)", G_DB },
    { "work", 0, "DIR", "work folder for downloads, kernels, builds (default: ./lscat-work)", G_WORK },
    { "jobs", 'j', "N", "parallel jobs (default: number of CPUs)", G_JOBS },
    { "quiet", 'q', NULL, "less output (-qq: errors only)", G_QUIET },
    { "verbose", 'v', NULL, "more output (debug logs)", G_VERBOSE },
    { "log-format", 0, "FMT", "text (default) or json: one JSON object per log line", G_LOGFMT },
    { "help", 'h', NULL, "show this help", G_HELP },
    CLI_OPT_END,
};

int cli_parse_int(long *out, const char *opt_name, const char *arg, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (!*arg || *end || errno)
        return lscat_error_setc(LSCAT_EINVALID, "%s: '%s' is not a whole number", opt_name, arg);
    if (v < min || v > max)
        return lscat_error_setc(LSCAT_EINVALID, "%s: %ld is out of range (%ld..%ld)", opt_name,
                                v, min, max);
    *out = v;
    return 0;
}

int cli_parse_double(double *out, const char *opt_name, const char *arg, double min, double max)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (!*arg || *end || errno || isnan(v))
        return lscat_error_setc(LSCAT_EINVALID, "%s: '%s' is not a number", opt_name, arg);
    if (v < min || v > max)
        return lscat_error_setc(LSCAT_EINVALID, "%s: %g is out of range (%g..%g)", opt_name, v,
                                min, max);
    *out = v;
    return 0;
}

static const struct cli_opt *find_long(const struct cli_opt *t, const char *name, size_t len)
{
    for (; t && t->long_name; t++)
        if (strlen(t->long_name) == len && !strncmp(t->long_name, name, len))
            return t;
    return NULL;
}

static const struct cli_opt *find_short(const struct cli_opt *t, int c)
{
    for (; t && t->long_name; t++)
        if (t->short_name == c)
            return t;
    return NULL;
}

static int is_global(const struct cli_opt *o)
{
    return o >= global_opts && o < global_opts + sizeof(global_opts) / sizeof(global_opts[0]);
}

/* The value of global option `id` checked (`name` as the user wrote it); the number of -j. */
static int check_global(long *jobs, int id, const char *name, const char *arg)
{
    if (id == G_JOBS)
        return cli_parse_int(jobs, name, arg, 1, 4096) < 0 ? LSCAT_EINVALID : 0;
    if (id == G_LOGFMT && strcmp(arg, "text") && strcmp(arg, "json"))
        return lscat_error_setc(LSCAT_EINVALID, "%s: '%s' is not text or json", name, arg);
    return 0;
}

static int set_global(struct cli *cli, int id, const char *arg)
{
    long n = 0;
    if (arg && check_global(&n, id, id == G_JOBS ? "-j" : "--log-format", arg) < 0)
        return LSCAT_EINVALID;
    switch (id) {
    case G_DB:
        free(cli->db_path);
        cli->db_path = xstrdup(arg);
        return 0;
    case G_WORK:
        free(cli->work_dir);
        cli->work_dir = xstrdup(arg);
        return 0;
    case G_JOBS:
        cli->jobs = (int)n;
        return 0;
    case G_QUIET:
        cli->verbosity--;
        return 0;
    case G_VERBOSE:
        cli->verbosity++;
        return 0;
    case G_LOGFMT:
        cli->log_json = !strcmp(arg, "json");
        return 0;
    case G_HELP:
        return CLI_HELP;
    }
    return 0;
}

int cli_check_global(const char *name, const char *value)
{
    const struct cli_opt *o = NULL;
    long n;
    if (name[0] == '-' && name[1] == '-')
        o = find_long(global_opts, name + 2, strlen(name + 2));
    else if (name[0] == '-' && name[1] && !name[2])
        o = find_short(global_opts, name[1]);
    return o && value ? check_global(&n, o->id, name, value) : 0;
}

/* Defaults from the environment, where the dispatcher puts the global options given before the
 * stage name. A bad value leaves a mark (jobs 0, log_json -1) that env_check() reports unless
 * the option itself is given after the stage name. */
static void defaults_from_env(struct cli *cli)
{
    const char *e;
    long n;
    cli->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (cli->jobs < 1)
        cli->jobs = 1;
    if ((e = getenv("LSCAT_WORK")) && *e)
        cli->work_dir = xstrdup(e);
    if ((e = getenv("LSCAT_DB")) && *e)
        cli->db_path = xstrdup(e);
    if ((e = getenv("LSCAT_JOBS")) && *e)
        cli->jobs = check_global(&n, G_JOBS, "LSCAT_JOBS", e) < 0 ? 0 : (int)n;
    if ((e = getenv("LSCAT_VERBOSITY")) && *e)
        cli->verbosity = atoi(e);
    if ((e = getenv("LSCAT_LOG_FORMAT")) && *e)
        cli->log_json = check_global(&n, G_LOGFMT, "LSCAT_LOG_FORMAT", e) < 0 ? -1
                        : !strcmp(e, "json");
}

/* A bad environment value that no option replaced: a usage error, said again (the message slot
 * may have been reused since). */
static int env_check(const struct cli *cli)
{
    long n;
    if (cli->jobs == 0)
        return check_global(&n, G_JOBS, "-j before the stage name (LSCAT_JOBS)",
                            getenv("LSCAT_JOBS"));
    if (cli->log_json < 0)
        return check_global(&n, G_LOGFMT, "--log-format before the stage name "
                            "(LSCAT_LOG_FORMAT)", getenv("LSCAT_LOG_FORMAT"));
    return 0;
}

/* One option occurrence: find it, fetch its argument, dispatch. Advances *i. */
static int one_option(struct cli *cli, int argc, char **argv, int *i, const struct cli_opt *opts,
                      int (*on_opt)(void *, int, const char *), void *ctx)
{
    const char *a = argv[*i];
    const struct cli_opt *o;
    const char *val = NULL;
    char shortbuf[3] = "-?";
    if (a[1] == '-') {
        const char *eq = strchr(a + 2, '=');
        size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        o = find_long(global_opts, a + 2, len);
        if (!o)
            o = find_long(opts, a + 2, len);
        if (!o)
            return lscat_error_setc(LSCAT_EINVALID, "unknown option '%.*s'", (int)len + 2, a);
        if (eq && !o->arg_name)
            return lscat_error_setc(LSCAT_EINVALID, "option '--%s' takes no value", o->long_name);
        val = eq ? eq + 1 : NULL;
    } else {
        o = find_short(global_opts, a[1]);
        if (!o)
            o = find_short(opts, a[1]);
        if (!o)
            return lscat_error_setc(LSCAT_EINVALID, "unknown option '-%c'", a[1]);
        if (a[2] && o->arg_name)
            val = a + 2;
        else if (a[2]) { /* bundled flags: -vv, -qv */
            for (const char *p = a + 1; *p; p++) {
                shortbuf[1] = *p;
                const struct cli_opt *f = find_short(global_opts, *p);
                if (!f)
                    f = find_short(opts, *p);
                if (!f || f->arg_name)
                    return lscat_error_setc(LSCAT_EINVALID, "unknown option '%s' in '%s'",
                                            shortbuf, a);
                int rc = is_global(f) ? set_global(cli, f->id, NULL)
                                      : on_opt ? on_opt(ctx, f->id, NULL) : 0;
                if (rc)
                    return rc;
            }
            return 0;
        }
    }
    if (o->arg_name && !val) {
        if (*i + 1 >= argc)
            return lscat_error_setc(LSCAT_EINVALID, "option '--%s' needs a value (%s)",
                                    o->long_name, o->arg_name);
        val = argv[++*i];
    }
    if (is_global(o))
        return set_global(cli, o->id, val);
    return on_opt ? on_opt(ctx, o->id, val) : 0;
}

int cli_parse(struct cli *cli, const char *prog, int argc, char **argv,
              const struct cli_opt *opts, int (*on_opt)(void *ctx, int id, const char *arg),
              void *ctx)
{
    memset(cli, 0, sizeof(*cli));
    cli->prog = prog;
    cli->args = xcalloc((size_t)argc + 1, sizeof(char *));
    defaults_from_env(cli);
    int rc = 0, only_args = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        if (only_args || a[0] != '-' || a[1] == '\0') {
            cli->args[cli->nargs++] = argv[i];
        } else if (!strcmp(a, "--")) {
            only_args = 1;
        } else {
            rc = one_option(cli, argc, argv, &i, opts, on_opt, ctx);
        }
    }
    if (rc == 0)
        rc = env_check(cli);
    if (cli->jobs < 1) /* the marks of a refused environment value */
        cli->jobs = 1;
    if (cli->log_json < 0)
        cli->log_json = 0;
    if (!cli->work_dir)
        cli->work_dir = xstrdup("lscat-work");
    if (!cli->db_path)
        cli->db_path = fs_join(cli->work_dir, "lscat.db");
    int level = LOG_INFO + cli->verbosity;
    log_init(prog, level < LOG_ERROR ? LOG_ERROR : level > LOG_DEBUG ? LOG_DEBUG : level,
             cli->log_json ? LOG_JSON : LOG_TEXT);
    if (rc < 0 && rc != LSCAT_EINVALID)
        rc = LSCAT_EINVALID; /* a callback's bad value is a usage error */
    return rc;
}

void cli_release(struct cli *cli)
{
    free(cli->db_path);
    free(cli->work_dir);
    free(cli->args);
    memset(cli, 0, sizeof(*cli));
}

static void print_table(FILE *f, const struct cli_opt *o)
{
    for (; o && o->long_name; o++) {
        char left[64];
        if (o->short_name)
            snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->long_name,
                     o->arg_name ? " " : "", o->arg_name ? o->arg_name : "");
        else
            snprintf(left, sizeof(left), "    --%s%s%s", o->long_name, o->arg_name ? " " : "",
                     o->arg_name ? o->arg_name : "");
        fprintf(f, "  %-28s %s\n", left, o->help);
    }
}

void cli_print_options(FILE *f, const struct cli_opt *opts)
{
    print_table(f, opts);
}

void cli_print_common_help(FILE *f)
{
    fprintf(f, "\nGlobal options (also accepted before the stage name by `lscat`):\n");
    print_table(f, global_opts);
    fprintf(f, "\nExit status:\n"
               "  0  success\n"
               "  1  finished, with failures it recorded in the store\n"
               "  2  usage error (bad option or argument)\n"
               "  3  fatal: the work could not be done (store unusable, I/O error, ...)\n");
}

int cli_usage_error(const struct cli *cli, const char *usage_line)
{
    fprintf(stderr, "%s: %s\nusage: %s\nTry '%s --help' for more information.\n", cli->prog,
            lscat_error_last(), usage_line, cli->prog);
    return LSCAT_EXIT_USAGE;
}

int cli_no_args(const struct cli *cli)
{
    if (cli->nargs == 0)
        return 0;
    return lscat_error_setc(LSCAT_EINVALID, "unexpected argument '%s'", cli->args[0]);
}

int cli_fatal(const struct cli *cli)
{
    fprintf(stderr, "%s: %s\n", cli->prog, lscat_error_last());
    return LSCAT_EXIT_FATAL;
}

/* Does option word `a` take the next word as its value (global options and `opts`)? */
static int takes_next(const struct cli_opt *opts, const char *a)
{
    const struct cli_opt *o;
    if (a[1] == '-') {
        if (strchr(a, '='))
            return 0;
        o = find_long(global_opts, a + 2, strlen(a + 2));
        if (!o)
            o = find_long(opts, a + 2, strlen(a + 2));
    } else {
        if (a[2]) /* -j4, -vv */
            return 0;
        o = find_short(global_opts, a[1]);
        if (!o)
            o = find_short(opts, a[1]);
    }
    return o && o->arg_name;
}

int cli_find_subcommand(const struct cli_opt *opts, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || !a[1])
            return i;
        if (!strcmp(a, "--"))
            return i + 1 < argc ? i + 1 : -1;
        if (takes_next(opts, a))
            i++;
    }
    return -1;
}

int cli_run_mode(int *code_out, const struct cli_subcommand *table, const struct cli_opt *opts,
                 int argc, char **argv)
{
    int at = cli_find_subcommand(opts, argc, argv);
    for (const struct cli_subcommand *t = table; t->name; t++) {
        if (!t->mode)
            continue;
        int i = t->name[0] == '-' ? 1 : at;
        if (i < 1 || i >= argc || strcmp(argv[i], t->name) != 0)
            continue;
        for (; i > 0; i--) /* the word out; the program and what came before it stay */
            argv[i] = argv[i - 1];
        *code_out = t->mode(argc - 1, argv + 1);
        return 1;
    }
    return 0;
}

/* "scan, import, search or fetch": the table's subcommands, for messages. */
static void subcommand_names(char *out, size_t size, const struct cli_subcommand *table)
{
    size_t n = 0, k = 0, len = 0;
    for (const struct cli_subcommand *t = table; t->name; t++)
        n += !t->mode;
    out[0] = '\0';
    for (const struct cli_subcommand *t = table; t->name && len < size; t++) {
        if (t->mode)
            continue;
        k++;
        len += (size_t)snprintf(out + len, size - len, "%s%s",
                                k == 1 ? "" : k == n ? " or " : ", ", t->name);
    }
}

const struct cli_subcommand *cli_subcommand_find(const struct cli_subcommand *table,
                                                 const char *word)
{
    for (const struct cli_subcommand *t = table; word && t->name; t++)
        if (!t->mode && !strcmp(t->name, word))
            return t;
    return NULL;
}

const struct cli_subcommand *cli_subcommand(const struct cli *cli,
                                            const struct cli_subcommand *table)
{
    char names[256];
    const struct cli_subcommand *t = cli->nargs ? cli_subcommand_find(table, cli->args[0]) : NULL;
    if (t)
        return t;
    subcommand_names(names, sizeof names, table);
    if (cli->nargs == 0)
        lscat_error_setc(LSCAT_EINVALID, "missing subcommand (%s)", names);
    else
        lscat_error_setc(LSCAT_EINVALID, "unknown subcommand '%s' (%s)", cli->args[0], names);
    return NULL;
}
