/* lscat-mcts: `enumerate` (every implementation of a DAG), `search` (Monte-Carlo tree search
 * with the replay back end; `--backend spmv` hands over to lscat-mcts-spmv, the one program
 * that links MPI and CUDA) and `rules` (design rules from a results file). Thin: parse, call
 * the library, map the result to an exit code. */
#include "common/cli.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#ifdef MCTS_HAVE_LEARN
#include "mcts/cmd_rules.h"
#endif
#include "mcts/enumerate.h"
#include "mcts/run.h"
#include "store/stage.h"
#include "store/store.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "lscat mcts enumerate DAG --streams S [--count]\n"
    "       lscat mcts search --dag DAG --streams S --backend replay|spmv [--replay FILE]\n"
    "                         [--strategy coverage|fastest|random] [--iterations N] [--seed N]\n"
    "                         --out RESULTS.csv\n"
    "       lscat mcts rules RESULTS.csv --out DIR [--first N] [--evaluate ALL.csv]";

enum {
    OPT_STREAMS = 1, OPT_COUNT, OPT_DAG, OPT_BACKEND, OPT_REPLAY, OPT_STRATEGY, OPT_ITERATIONS,
    OPT_SEED, OPT_OUT, OPT_FIRST, OPT_EVALUATE, OPT_CRITERION,
};

static const struct cli_opt enumerate_opts[] = {
    { "streams", 0, "S", "streams GPU operations may use (1-16)", OPT_STREAMS },
    { "count", 0, NULL, "print only the count, not the implementations", OPT_COUNT },
    CLI_OPT_END,
};

static const struct cli_opt search_opts[] = {
    { "dag", 0, "DAG", "the program as a DAG file (docs/mcts.md; mcts/dags/spmv.dag)", OPT_DAG },
    { "streams", 0, "S", "streams GPU operations may use (1-16)", OPT_STREAMS },
    { "backend", 0, "NAME", "replay (times from --replay FILE) or spmv (run it: CUDA + MPI)",
      OPT_BACKEND },
    { "replay", 0, "FILE", "measurements in the authors' format, for --backend replay",
      OPT_REPLAY },
    { "strategy", 0, "NAME", "coverage (default, the paper's), fastest or random",
      OPT_STRATEGY },
    { "iterations", 0, "N", "stop after N implementations in all (default: every one)",
      OPT_ITERATIONS },
    { "seed", 0, "N", "random generator seed (default 1)", OPT_SEED },
    { "out", 'o', "FILE", "results CSV in the authors' format", OPT_OUT },
    CLI_OPT_END,
};

static const struct cli_opt rules_opts[] = {
    { "out", 'o', "DIR", "folder for rules.txt, tree.dot, tree.png, classes.csv", OPT_OUT },
    { "first", 0, "N", "learn from the first N rows only (default all)", OPT_FIRST },
    { "evaluate", 0, "FILE", "classify every row of FILE with the rules and report the share "
      "whose time falls in the predicted class's range", OPT_EVALUATE },
    { "criterion", 0, "NAME", "entropy (default, the authors') or gini", OPT_CRITERION },
    CLI_OPT_END,
};

enum { SUB_ENUMERATE = 1, SUB_SEARCH, SUB_RULES };
static const struct cli_subcommand subcommands[] = {
    { .name = "enumerate", .id = SUB_ENUMERATE, .opts = enumerate_opts },
    { .name = "search", .id = SUB_SEARCH, .opts = search_opts },
    { .name = "rules", .id = SUB_RULES, .opts = rules_opts },
    CLI_SUBCOMMAND_END,
};

struct opts {
    long streams, iterations, first;
    unsigned long long seed;
    int count, strategy, bad;
    const char *dag, *backend, *replay, *out, *evaluate, *criterion;
};

static int on_opt(void *ctx, int id, const char *arg)
{
    struct opts *o = ctx;
    long v;
    switch (id) {
    case OPT_STREAMS: return cli_parse_int(&o->streams, "--streams", arg, 1, MCTS_MAX_STREAMS);
    case OPT_COUNT: o->count = 1; return 0;
    case OPT_DAG: o->dag = arg; return 0;
    case OPT_BACKEND: o->backend = arg; return 0;
    case OPT_REPLAY: o->replay = arg; return 0;
    case OPT_STRATEGY: return mcts_strategy_parse(&o->strategy, arg);
    case OPT_ITERATIONS: return cli_parse_int(&o->iterations, "--iterations", arg, 1, INT_MAX);
    case OPT_SEED:
        if (cli_parse_int(&v, "--seed", arg, 0, LONG_MAX) < 0)
            return LSCAT_EINVALID;
        o->seed = (unsigned long long)v;
        return 0;
    case OPT_OUT: o->out = arg; return 0;
    case OPT_FIRST: return cli_parse_int(&o->first, "--first", arg, 2, INT_MAX);
    case OPT_EVALUATE: o->evaluate = arg; return 0;
    case OPT_CRITERION: o->criterion = arg; return 0;
    }
    return 0;
}

static void help(void)
{
    printf("usage: %s\n\n"
           "Design rules for CUDA+MPI programs by Monte-Carlo tree search (Pearson, Javeed and\n"
           "Devine's Tenzing). A program is a DAG of CPU and GPU operations; an implementation\n"
           "is an order of its operations with a stream for each GPU operation and the event\n"
           "records, syncs and stream waits that order needs. Implementations equal up to a\n"
           "renaming of streams are one.\n\n"
           "  enumerate  list every implementation (JSON steps joined by '|', one per line);\n"
           "             the last line is the count\n"
           "  search     measure implementations in the order a search proposes them; results\n"
           "             go to the store (a search run again resumes) and to --out\n"
           "  rules      %s\n\n"
           "enumerate options:\n", usage,
#ifdef MCTS_HAVE_LEARN
           "classes by peak finding on the sorted times, a decision tree on\n"
           "             'u before v' / 'same stream' features, its leaves as rules"
#else
           "(not in this build: it needs learn/)"
#endif
    );
    cli_print_options(stdout, enumerate_opts);
    printf("\nsearch options:\n");
    cli_print_options(stdout, search_opts);
    printf("\nrules options:\n");
    cli_print_options(stdout, rules_opts);
    printf("\nDocumentation: docs/mcts.md (DAG format, how operations bind to code, results).\n");
    cli_print_common_help(stdout);
}

struct printer {
    struct buf line;
};

static int print_seq(void *ctx, const struct mcts_seq *seq)
{
    struct printer *p = ctx;
    buf_reset(&p->line);
    mcts_seq_json(&p->line, seq);
    buf_addch(&p->line, '\n');
    return fwrite(p->line.data, 1, p->line.len, stdout) == p->line.len ? 0 : LSCAT_ERR;
}

static int run_enumerate(struct cli *cli, struct opts *o)
{
    struct mcts_dag *dag = NULL;
    struct printer p = { BUF_INIT };
    if (mcts_dag_load(&dag, cli->args[1]) < 0) {
        fprintf(stderr, "lscat-mcts: %s\n", lscat_error_last());
        return lscat_error_code() == LSCAT_EINVALID ? LSCAT_EXIT_USAGE : LSCAT_EXIT_FATAL;
    }
    int64_t n = mcts_enumerate(dag, (int)o->streams, 1, o->count ? NULL : print_seq, &p, NULL);
    int code = LSCAT_EXIT_OK;
    if (n < 0) {
        fprintf(stderr, "lscat-mcts: %s\n", lscat_error_last());
        code = LSCAT_EXIT_FATAL;
    } else {
        printf("%lld\n", (long long)n);
    }
    buf_release(&p.line);
    mcts_dag_free(dag);
    return code;
}

/* --backend spmv: the program beside this one that links MPI and CUDA takes over (under
 * mpirun, exec keeps the rank's environment). */
static int exec_spmv(char **argv)
{
    char self[PATH_MAX], prog[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        snprintf(prog, sizeof(prog), "%s/lscat-mcts-spmv", self);
        execv(prog, argv);
    }
    fprintf(stderr, "lscat-mcts: the SpMV back end (lscat-mcts-spmv) is not built here: it "
            "needs nvcc, cuSPARSE and Open MPI (mk/deps.sh); use --backend replay, or run it "
            "on a GPU machine with 'mpirun -np 4 lscat mcts search --backend spmv ...'\n");
    return LSCAT_EXIT_FATAL;
}

static int search_with(struct store *s, int64_t run_id, struct opts *o, struct buf *counts)
{
    struct mcts_dag *dag = NULL;
    struct mcts_backend *be = NULL;
    struct mcts_run_summary sum;
    struct mcts_run_options ro = {
        .dag_path = o->dag, .search = MCTS_SEARCH_OPTIONS_INIT,
        .iterations = o->iterations > 0 ? (int)o->iterations : -1,
        .commit_every = 256, .out_path = o->out,
    };
    char sha[65];
    int rc;
    ro.search.streams = (int)o->streams;
    ro.search.strategy = o->strategy;
    ro.search.seed = o->seed;
    if ((rc = mcts_dag_load(&dag, o->dag)) < 0 || (rc = mcts_replay_new(&be, dag, o->replay)) < 0)
        goto done;
    struct buf file = BUF_INIT;
    if ((rc = buf_read_file(&file, o->replay)) < 0)
        goto done;
    sha256_hex(sha, file.data, file.len);
    buf_release(&file);
    ro.backend_input = sha;
    if ((rc = mcts_run_search(&sum, s, run_id, dag, be, &ro)) < 0)
        goto done;
    log_msg(LOG_INFO, "%d implementations (%d resumed)%s; p10 fastest %.4g s, slowest %.4g s "
            "(%.3fx); %.0f iterations/s", sum.iterations, sum.resumed,
            sum.exhausted ? ", every one" : "", sum.fastest_s, sum.slowest_s,
            sum.slowest_s / sum.fastest_s,
            sum.search_s > 0 ? (sum.iterations - sum.resumed) / sum.search_s : 0.0);
    buf_addf(counts, "{\"command\":\"search\",\"iterations\":%d,\"resumed\":%d}",
             sum.iterations, sum.resumed);
done:
    if (be)
        be->free(be);
    mcts_dag_free(dag);
    return rc;
}

static int run_search(struct cli *cli, struct opts *o, int argc, char **argv)
{
    struct stage st = STAGE_INIT;
    struct buf counts = BUF_INIT;
    int code = LSCAT_EXIT_OK;
    if (!strcmp(o->backend, "spmv"))
        return exec_spmv(argv);
    struct mcts_dag *dag = NULL;
    if (mcts_dag_load(&dag, o->dag) < 0) { /* a malformed DAG is the user's to fix: 2 */
        fprintf(stderr, "lscat-mcts: %s\n", lscat_error_last());
        return lscat_error_code() == LSCAT_EINVALID ? LSCAT_EXIT_USAGE : LSCAT_EXIT_FATAL;
    }
    mcts_dag_free(dag);
    if (stage_begin(&st, cli, "mcts", STAGE_CREATE, argc, argv) < 0 ||
        search_with(st.store, st.run_id, o, &counts) < 0)
        code = cli_fatal(cli);
    stage_end(&st, code, counts.len ? counts.data : NULL);
    buf_release(&counts);
    return code;
}

static int run_rules(struct cli *cli, struct opts *o)
{
#ifndef MCTS_HAVE_LEARN
    (void)o;
    lscat_error_setc(LSCAT_EINVALID, "this lscat-mcts was built without learn/: no rules");
    return cli_usage_error(cli, usage);
#else
    struct mcts_rules_options ro = MCTS_RULES_OPTIONS_INIT;
    ro.first = (int)o->first;
    if (o->criterion && strcmp(o->criterion, "entropy") && strcmp(o->criterion, "gini")) {
        lscat_error_setc(LSCAT_EINVALID, "unknown criterion '%s' (entropy or gini)",
                         o->criterion);
        return cli_usage_error(cli, usage);
    }
    ro.criterion = !o->criterion || !strcmp(o->criterion, "entropy");
    return mcts_cmd_rules(cli->args[1], o->out, &ro, o->evaluate);
#endif
}

/* What the subcommand needs beyond its options; 0 or the usage message set. */
static int check_args(const struct cli_subcommand *sub, const struct cli *cli, struct opts *o)
{
    int want = sub->id == SUB_SEARCH ? 1 : 2;
    if (cli->nargs > want)
        return lscat_error_setc(LSCAT_EINVALID, "unexpected argument '%s'", cli->args[want]);
    if (cli->nargs < want)
        return lscat_error_setc(LSCAT_EINVALID, "%s needs a file argument", sub->name);
    if (sub->id != SUB_RULES && o->streams == 0)
        return lscat_error_setc(LSCAT_EINVALID, "%s needs --streams S", sub->name);
    if (sub->id == SUB_SEARCH) {
        if (!o->dag || !o->backend || !o->out)
            return lscat_error_setc(LSCAT_EINVALID, "search needs --dag, --backend and --out");
        if (strcmp(o->backend, "replay") && strcmp(o->backend, "spmv"))
            return lscat_error_setc(LSCAT_EINVALID, "unknown back end '%s' (replay or spmv)",
                                    o->backend);
        if (!strcmp(o->backend, "replay") && !o->replay)
            return lscat_error_setc(LSCAT_EINVALID, "--backend replay needs --replay FILE");
    }
    if (sub->id == SUB_RULES && !o->out)
        return lscat_error_setc(LSCAT_EINVALID, "rules needs --out DIR");
    return 0;
}

int main(int argc, char **argv)
{
    struct cli cli;
    struct opts o = { .seed = 1 };
    int at = cli_find_subcommand(search_opts, argc, argv), code = LSCAT_EXIT_OK;
    const struct cli_subcommand *sub = cli_subcommand_find(subcommands, at > 0 ? argv[at] : NULL);
    int rc = cli_parse(&cli, "lscat-mcts", argc, argv, sub ? sub->opts : NULL, on_opt, &o);
    if (rc == CLI_HELP) {
        help();
        goto done;
    }
    if (rc >= 0 && (!(sub = cli_subcommand(&cli, subcommands)) || check_args(sub, &cli, &o) < 0))
        rc = LSCAT_EINVALID;
    if (rc < 0) {
        code = cli_usage_error(&cli, usage);
        goto done;
    }
    switch (sub->id) {
    case SUB_ENUMERATE: code = run_enumerate(&cli, &o); break;
    case SUB_SEARCH: code = run_search(&cli, &o, argc, argv); break;
    case SUB_RULES: code = run_rules(&cli, &o); break;
    }
done:
    cli_release(&cli);
    return code;
}
