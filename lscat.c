/* lscat: the git-style dispatcher. `lscat <stage> [args]` runs the program `lscat-<stage>`
 * found beside this one (or on PATH); global options given before the stage name travel to it
 * through the environment (see common/cli.h).
 *
 * How to add a stage:
 *   1. Write its library in <stage>/<module>.c and its thin command in <stage>/cmd.c: parse
 *      options with cli_parse() (subcommands and internal worker modes in one
 *      `struct cli_subcommand` table: cli_run_mode() before parsing, cli_subcommand() after),
 *      open the work folder, the store and its stage_runs row with stage_begin()
 *      (store/stage.h), call the library, stage_end() with the exit code and a JSON object of
 *      counts, and return an LSCAT_EXIT_* code (cli_usage_error(), cli_fatal()).
 *   2. Add <stage>/module.mk declaring the program (see harvest/module.mk or dataset/module.mk):
 *      what users run goes in PROGRAMS (installed), test-only helpers in TEST_PROGRAMS.
 *   3. Add one line to `commands` below.
 *   4. Add its tables to schema/ as a new numbered migration (or to 001 before v1 is released).
 *   5. Add tests under tests/<stage>/ and, if it joins `make run`, a step in scripts/run-sample.sh.
 *   6. Document it in README.md, in its --help, in docs/<stage>.md and in docs/architecture.md
 *      (layout, programs, dependencies); it includes only common/ and store/ headers.
 */
#include "common/cli.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "schema/schema.h"
#include "version.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


struct command {
    const char *name;
    const char *program;
    const char *help;
};

static const struct command commands[] = {
    { "init", "lscat-init", "create the work folder and the store, or migrate the store" },
    { "harvest", "lscat-harvest", "download GH Archive hours and CUDA repositories" },
    { "isolate", "lscat-isolate", "cut every __global__ kernel out with libclang, write harnesses" },
    { "execute", "lscat-execute", "build harnesses with nvcc, repair, probe-run in a sandbox" },
    { "tune", "lscat-tune", "sweep matrix sizes x block shapes on every GPU" },
    { "sweep", "lscat-sweep", "sweep your own kernel over a BONSAI search space (CSV)" },
    { "dataset", "lscat-dataset", "export Parquet/CSV, merge shard stores, write the report" },
    { "mcts", "lscat-mcts", "design rules for CUDA+MPI programs by Monte-Carlo tree search" },
    { "seer", "lscat-seer", "time SpMV kernels, train and evaluate Seer kernel selectors" },
    { "status", "lscat-status", "summarise the store: counts per stage and status" },
    { "nightly", "lscat-nightly", "the whole pipeline incrementally, then a dated release" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* `lscat execute|tune|sweep --mpi ...` under mpirun: lscat-mpi (the one stage program that
 * links libmpi) runs the stage's program on chunks; see tune/mpi_cmd.c. */
static const struct command mpi_command = { "mpi", "lscat-mpi", "a stage across MPI ranks" };

static int wants_mpi(const char *stage, int argc, char **argv)
{
    if (strcmp(stage, "execute") && strcmp(stage, "tune") && strcmp(stage, "sweep"))
        return 0;
    for (int i = 0; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--mpi"))
            return 1;
    return 0;
}

static const char usage[] = "lscat [--db PATH] [--work DIR] [-j N] [-q] [-v] "
                            "[--log-format text|json] <stage> [args]";

static char *self_dir(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    return xstrdup(buf);
}

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

static void help(void)
{
    printf("usage: %s\n\n"
           "lscat builds a CUDA launch-configuration dataset: it harvests CUDA repositories from\n"
           "GH Archive, isolates every kernel, builds and probe-runs them, sweeps matrix sizes x\n"
           "thread-block shapes on every GPU, and exports Parquet/CSV with a data card.\n\n"
           "Stages:\n",
           usage);
    for (size_t i = 0; i < NCOMMANDS; i++)
        printf("  %-10s %s\n", commands[i].name, commands[i].help);
    printf("\n'lscat <stage> --help' describes a stage. 'lscat --version' prints versions.\n"
           "Under mpirun, 'lscat execute|tune|sweep --mpi ...' spreads a stage over the ranks\n"
           "(rank 0 serves chunks, the others work; 'lscat tune --mpi --help', docs/mpi.md).\n");
    cli_print_common_help(stdout);
}

/* Export a global option to the stage through the environment. */
static void pass_env(const char *name, const char *value)
{
    setenv(name, value, 1);
}

static int exec_stage(const struct command *c, char **argv)
{
    char *dir = self_dir();
    if (dir) {
        char *path = xasprintf("%s/%s", dir, c->program);
        argv[0] = path;
        if (access(path, X_OK) == 0)
            execv(path, argv);
        free(path);
        free(dir);
    }
    argv[0] = (char *)c->program;
    execvp(c->program, argv);
    if (errno == ENOENT)
        fprintf(stderr,
                "lscat: '%s' is not installed: %s was not built (see the build's 'skipped' "
                "lines: it may need a package or nvcc) or is not on PATH\n",
                c->name, c->program);
    else
        fprintf(stderr, "lscat: cannot run %s: %s\n", c->program, strerror(errno));
    return LSCAT_EXIT_FATAL;
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "lscat: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nusage: %s\nTry 'lscat --help' for more information.\n", usage);
    return LSCAT_EXIT_USAGE;
}

/* Check global option `opt` as the stage would (common/cli), then pass it on in `envname`: a
 * bad value stops here, once, with exit 2. Returns 0 or the usage error's exit code. */
static int pass_global(const char *envname, const char *opt, const char *value)
{
    if (cli_check_global(opt, value) < 0)
        return usage_error("%s", lscat_error_last());
    pass_env(envname, value);
    return 0;
}

/* Global options before the stage name; returns the index of the stage name, or exits. */
static int parse_globals(int argc, char **argv, int *code)
{
    char vbuf[16];
    int verbosity = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            if (verbosity) {
                snprintf(vbuf, sizeof(vbuf), "%d", verbosity);
                pass_env("LSCAT_VERBOSITY", vbuf);
            }
            return i;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            *code = 0;
            return -1;
        }
        if (!strcmp(a, "--version")) {
            printf("lscat %s (git %s, schema %d)\n", LSCAT_VERSION, LSCAT_GIT_DESCRIBE,
                   schema_version_latest);
            *code = 0;
            return -1;
        }
        const char *envname = !strcmp(a, "--db") ? "LSCAT_DB"
                              : !strcmp(a, "--work") ? "LSCAT_WORK"
                              : (!strcmp(a, "-j") || !strcmp(a, "--jobs")) ? "LSCAT_JOBS"
                              : !strcmp(a, "--log-format") ? "LSCAT_LOG_FORMAT" : NULL;
        if (envname) {
            if (!v) {
                *code = usage_error("option '%s' needs a value", a);
                return -1;
            }
            if ((*code = pass_global(envname, a, v)) != 0)
                return -1;
            i++;
        } else if (!strncmp(a, "-j", 2) && a[2]) {
            if ((*code = pass_global("LSCAT_JOBS", "-j", a + 2)) != 0)
                return -1;
        } else if (a[1] != '-' && strspn(a + 1, "qv") == strlen(a + 1) && a[1]) {
            for (const char *p = a + 1; *p; p++)
                verbosity += *p == 'v' ? 1 : -1;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "--verbose")) {
            verbosity += a[2] == 'v' ? 1 : -1;
        } else {
            *code = usage_error("unknown option '%s'", a);
            return -1;
        }
    }
    *code = usage_error("%s", "no stage given");
    return -1;
}

int main(int argc, char **argv)
{
    int code = 0;
    int i = parse_globals(argc, argv, &code);
    if (i < 0)
        return code;
    const char *name = argv[i];
    if (!strcmp(name, "help")) {
        if (i + 1 >= argc) {
            help();
            return 0;
        }
        name = argv[i + 1];
        const struct command *c = find_command(name);
        if (!c)
            return usage_error("'%s' is not an lscat stage", name);
        char *args[] = { NULL, "--help", NULL };
        return exec_stage(c, args);
    }
    const struct command *c = find_command(name);
    if (!c)
        return usage_error("'%s' is not an lscat stage (see 'lscat --help')", name);
    if (wants_mpi(name, argc - i, argv + i)) /* argv[i - 1] becomes lscat-mpi's argv[0] */
        return exec_stage(&mpi_command, argv + i - 1);
    return exec_stage(c, argv + i);
}
