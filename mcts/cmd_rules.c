/* `lscat mcts rules` (mcts/cmd_rules.h): read, learn, write the three files, print the rules;
 * with --evaluate, the share of another file's rows the rules put in the right time range. */
#include "mcts/cmd_rules.h"

#include "common/cli.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>

static int write_file(const char *dir, const char *name, const struct buf *b)
{
    char *path = xasprintf("%s/%s", dir, name);
    int rc = fs_write_atomic(path, b->data, b->len);
    if (rc < 0)
        lscat_error_wrap("cannot write '%s'", path);
    free(path);
    return rc;
}

/* tree.png through Graphviz's dot, when it is installed. */
static void render_png(const char *dir)
{
    char *dot = xasprintf("%s/tree.dot", dir), *png = xasprintf("%s/tree.png", dir);
    const char *argv[] = { "dot", "-Tpng", dot, "-o", png, NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    o.argv = argv;
    o.timeout_s = 120;
    if (proc_run(&r, &o) < 0 || r.exit_code == 127)
        log_msg(LOG_INFO, "tree.png skipped: Graphviz 'dot' is not installed");
    else if (r.exit_code || r.signal)
        log_msg(LOG_WARN, "dot could not draw %s: %s", dot, r.err.data);
    proc_result_release(&r);
    free(dot);
    free(png);
}

static int evaluate_with(const struct mcts_rules *rules, const struct mcts_results_file *train,
                         const char *path)
{
    struct mcts_results_file all;
    if (mcts_results_file_read_like(&all, path, train) < 0)
        return LSCAT_ERR;
    printf("evaluate: rules from %d rows classify %.4f of the %d rows of %s into their time "
           "range\n", train->n, mcts_rules_evaluate(rules, &all), all.n, path);
    mcts_results_file_release(&all);
    return 0;
}

int mcts_cmd_rules(const char *results, const char *out_dir, const struct mcts_rules_options *o,
                   const char *evaluate)
{
    struct mcts_results_file f;
    struct mcts_rules *rules = NULL;
    struct buf text = BUF_INIT, dot = BUF_INIT;
    int code = LSCAT_EXIT_OK;
    if (mcts_results_file_read(&f, results) < 0) {
        fprintf(stderr, "lscat-mcts: %s\n", lscat_error_last());
        return LSCAT_EXIT_FATAL;
    }
    if (mcts_rules_learn(&rules, &f, o) < 0 || fs_mkdirs(out_dir, 0755) < 0 ||
        mcts_rules_dot(&dot, rules) < 0 || (mcts_rules_text(&text, rules), 0) ||
        write_file(out_dir, "rules.txt", &text) < 0 || write_file(out_dir, "tree.dot", &dot) < 0 ||
        (evaluate && evaluate_with(rules, &f, evaluate) < 0)) {
        fprintf(stderr, "lscat-mcts: %s\n", lscat_error_last());
        code = LSCAT_EXIT_FATAL;
    } else {
        render_png(out_dir);
        fwrite(text.data, 1, text.len, stdout);
    }
    buf_release(&text);
    buf_release(&dot);
    mcts_rules_free(rules);
    mcts_results_file_release(&f);
    return code;
}
