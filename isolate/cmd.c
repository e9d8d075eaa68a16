/* lscat-isolate: cut every __global__ kernel out of the fetched repositories (or one --path
 * tree) and write its harness. Thin: options, store, isolate_run(), exit code. Also its two
 * internal modes (table `modes`): `--worker`, which parses one file in a child process, and
 * `resolve --serve`, the service execute's repair loop asks. */
#include "common/cli.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "store/stage.h"
#include "isolate/isolate.h"
#include "isolate/resolve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] = "lscat isolate [--path DIR] [--timeout S] [--mem-mb N] "
                            "[--max-file-bytes N] [--cuda-home DIR]\n"
                            "       lscat isolate resolve --serve [--cuda-home DIR]";

enum { OPT_PATH = 1, OPT_TIMEOUT, OPT_MEM, OPT_MAXFILE, OPT_CUDA };
static const struct cli_opt opts[] = {
    { "path", 0, "DIR", "isolate this local tree instead of every fetched repository", OPT_PATH },
    { "timeout", 0, "S", "seconds one file's parse may take (default 120)", OPT_TIMEOUT },
    { "mem-mb", 0, "N", "address-space limit of one parse worker in MiB (default 8192)", OPT_MEM },
    { "max-file-bytes", 0, "N", "skip larger files, with a reason (default 4000000)", OPT_MAXFILE },
    { "cuda-home", 0, "DIR", "CUDA toolkit whose headers parsing uses ($CUDA_HOME, else "
                             "/usr/local/cuda)", OPT_CUDA },
    CLI_OPT_END,
};

static int on_opt(void *ctx, int id, const char *arg)
{
    struct isolate_options *o = ctx;
    long n;
    switch (id) {
    case OPT_PATH: o->path = arg; return 0;
    case OPT_CUDA: o->cuda_home = arg; return 0;
    case OPT_TIMEOUT: return cli_parse_double(&o->timeout_s, "--timeout", arg, 0.1, 86400);
    case OPT_MEM:
        if (cli_parse_int(&n, "--mem-mb", arg, 0, 1 << 22) < 0)
            return LSCAT_EINVALID;
        o->mem_bytes = (size_t)n << 20;
        return 0;
    case OPT_MAXFILE:
        if (cli_parse_int(&n, "--max-file-bytes", arg, 1, 1L << 40) < 0)
            return LSCAT_EINVALID;
        o->max_file_bytes = (size_t)n;
        return 0;
    }
    return 0;
}

static void help(void)
{
    printf("usage: %s\n\n"
           "Parse every CUDA source of every fetched repository (<work>/trees/<owner>/<name>) --\n"
           "or of one local tree with --path -- with libclang as CUDA, find every __global__\n"
           "kernel, cut it out with its closure (device functions, types, globals, constants,\n"
           "macros, system includes) and write one folder per kernel under <work>/kernels/:\n"
           "kernel.cu, params.json, harness.cu, meta.json. Each file is parsed in a child\n"
           "process with a time and memory limit, -j at a time. Files already parsed with the\n"
           "same content are not parsed again. Failures (parse_failed, parse_timeout,\n"
           "file_skipped, include_refused, missing_header, kernel_missing_header,\n"
           "kernel_inactive_branch, kernel_unparsed, kernel_without_body, unsupported_template,\n"
           "non_utf8) are recorded in the failures table; a missing header costs only the\n"
           "kernels using what it declares. Kernel templates take class types and values\n"
           "from the tree's own call sites. docs/isolate.md has the closure rules, the\n"
           "parameter model and the harness rules.\n\n"
           "'lscat isolate resolve --serve' (internal, started by lscat execute's repair loop)\n"
           "answers requests on stdin: the repository's definition of a name a kernel lacks,\n"
           "with its own closure, and the file an #include meant ('resolve --help').\n\nOptions:\n",
           usage);
    cli_print_options(stdout, opts);
    cli_print_common_help(stdout);
}

static char *self_exe(const char *argv0)
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = '\0';
        return xstrdup(buf);
    }
    return xstrdup(argv0);
}

static const char resolve_usage[] = "lscat isolate resolve --serve [--cuda-home DIR]";

static int resolve_opt(void *ctx, int id, const char *arg)
{
    const char **a = ctx;
    a[id - 1] = arg ? arg : "1";
    return 0;
}

/* `resolve --serve`: the service execute's repair loop talks to (isolate/resolve.h). */
static int resolve_main(int argc, char **argv)
{
    static const struct cli_opt ropts[] = {
        { "serve", 0, NULL, "serve requests on stdin until EOF (the only mode)", 1 },
        { "cuda-home", 0, "DIR", "CUDA toolkit whose headers parsing uses ($CUDA_HOME, else "
                                 "/usr/local/cuda)", 2 },
        CLI_OPT_END,
    };
    const char *a[2] = { NULL, NULL };
    struct cli cli;
    int code = LSCAT_EXIT_OK, rc = cli_parse(&cli, "lscat-isolate resolve", argc, argv, ropts,
                                             resolve_opt, a);
    if (rc == CLI_HELP) {
        printf("usage: %s\n\n"
               "Internal: lscat execute starts this service once per run when its repair loop\n"
               "needs a declaration or a header from a kernel's repository. One request per line\n"
               "on stdin, one framed record per reply on stdout (common/record.h):\n"
               "  ping                            -> pong {version}\n"
               "  decl ROOT IDENT [KERNEL_BYTES]  -> decl {text, origin, pieces, parses}: the\n"
               "      repository's definition of IDENT (macro, type, typedef, enum, function,\n"
               "      variable) with its closure, as isolate cuts a kernel's; KERNEL_BYTES bytes\n"
               "      of the kernel's source follow the line, and pieces it holds are left out\n"
               "  header ROOT NAME                -> header {path}: the file #include \"NAME\" meant\n"
               "  otherwise                       -> notfound {message} or error {message}\n"
               "docs/isolate.md describes it.\n\nOptions:\n", resolve_usage);
        cli_print_options(stdout, ropts);
        cli_print_common_help(stdout);
    } else if (rc < 0 || cli.nargs > 0 || !a[0]) {
        if (rc >= 0)
            lscat_error_set(cli.nargs ? "unexpected argument '%s'" : "resolve needs --serve%s",
                            cli.nargs ? cli.args[0] : "");
        code = cli_usage_error(&cli, resolve_usage);
    } else {
        const char *cuda = a[1] ? a[1] : getenv("CUDA_HOME") && *getenv("CUDA_HOME")
                                               ? getenv("CUDA_HOME") : "/usr/local/cuda";
        if (resolve_serve(stdin, stdout, cuda) < 0) {
            fprintf(stderr, "lscat-isolate resolve: %s\n", lscat_error_last());
            code = LSCAT_EXIT_FATAL;
        }
    }
    cli_release(&cli);
    return code;
}

/* `--worker ROOT FILE CUDA_HOME [INCDIR...]` (internal): parse one file in a child process. */
static int worker_mode(int argc, char **argv)
{
    return isolate_worker_main(argc - 1, argv + 1);
}

static const struct cli_subcommand modes[] = {
    { .name = "--worker", .mode = worker_mode },
    { .name = "resolve", .mode = resolve_main },
    CLI_SUBCOMMAND_END,
};

static void counts_json(char *out, size_t size, const struct isolate_counts *c)
{
    snprintf(out, size,
             "{\"sources\":%ld,\"files\":%ld,\"parsed\":%ld,\"unchanged\":%ld,\"skipped\":%ld,"
             "\"failed\":%ld,\"kernels\":%ld,\"kernels_new\":%ld,\"occurrences_new\":%ld,"
             "\"failures_recorded\":%ld}",
             c->sources, c->files, c->parsed, c->unchanged, c->skipped, c->failed, c->kernels,
             c->kernels_new, c->occurrences, c->notes);
}

int main(int argc, char **argv)
{
    int code = LSCAT_EXIT_OK;
    if (cli_run_mode(&code, modes, opts, argc, argv))
        return code;
    struct cli cli;
    struct isolate_options o = ISOLATE_OPTIONS_INIT;
    struct stage st = STAGE_INIT;
    struct isolate_counts c;
    char *exe = self_exe(argv[0]), counts[512] = "";
    int rc = cli_parse(&cli, "lscat-isolate", argc, argv, opts, on_opt, &o);
    if (rc == CLI_HELP) {
        help();
        goto done;
    }
    if (rc < 0 || cli_no_args(&cli) < 0) {
        code = cli_usage_error(&cli, usage);
        goto done;
    }
    if (stage_begin(&st, &cli, "isolate", STAGE_CREATE, argc, argv) < 0) {
        code = cli_fatal(&cli);
        goto done;
    }
    o.work_dir = cli.work_dir;
    o.worker_exe = exe;
    if (!o.cuda_home)
        o.cuda_home = getenv("CUDA_HOME") && *getenv("CUDA_HOME") ? getenv("CUDA_HOME")
                                                                  : "/usr/local/cuda";
    o.jobs = cli.jobs;
    o.run_id = st.run_id;
#if defined(__SANITIZE_ADDRESS__)
    o.mem_bytes = 0; /* ASan reserves terabytes of address space: RLIMIT_AS would kill it */
#endif
    /* kernels/xx/<id>.tmp.<pid>/ and kernels/xx/<id>/<file>.tmp.<pid> of killed runs */
    char *kernels = fs_join(st.work_dir, "kernels");
    if (fs_remove_stale_temps(kernels, 2) < 0)
        log_warn("%s", lscat_error_last());
    free(kernels);
    rc = isolate_run(&c, st.store, &o);
    if (rc < 0)
        code = cli_fatal(&cli);
    else if (c.failed > 0)
        code = LSCAT_EXIT_FAILURES;
    counts_json(counts, sizeof counts, &c);
    if (cli.verbosity >= 0)
        fprintf(stderr, "lscat-isolate: %s\n", counts);
done:
    stage_end(&st, code, counts[0] ? counts : NULL);
    free(exe);
    cli_release(&cli);
    return code;
}
