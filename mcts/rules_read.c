/* Reading a results file for the rules (mcts/rules.h): the DAG is made from the operation
 * names found in the file (the rules need names and streams, not edges), so rules run on any
 * file in the authors' format, theirs included, without the DAG it came from. */
#include "mcts/rules.h"

#include "common/error.h"
#include "common/xalloc.h"
#include "mcts/backend.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lines {
    char **line;
    int n;
    size_t cap;
};

static int read_lines(struct lines *out, const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    memset(out, 0, sizeof(*out));
    if (!f)
        return lscat_error_setc(LSCAT_ENOTFOUND, "cannot open results '%s': %s", path,
                                strerror(errno));
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        XGROW(out->line, (size_t)out->n + 1, out->cap);
        out->line[out->n++] = xstrdup(line);
    }
    free(line);
    fclose(f);
    return out->n > 0 ? 0 : lscat_error_setc(LSCAT_EINVALID, "results '%s' are empty", path);
}

static void lines_release(struct lines *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->line[i]);
    free(l->line);
}

static void add_vertex(struct mcts_dag *d, size_t *cap, const char *name, int kind)
{
    XGROW(d->v, (size_t)d->n + 1, *cap);
    struct mcts_vertex *v = &d->v[d->n++];
    memset(v, 0, sizeof(*v));
    v->name = xstrdup(name);
    v->op = xstrdup(name);
    v->kind = kind;
}

/* start, every operation named in the file (objects without "kind"), end. */
static int dag_from_names(struct mcts_dag **out, const struct lines *l, const char *path)
{
    struct mcts_dag *d = xcalloc(1, sizeof(*d));
    size_t cap = 0;
    add_vertex(d, &cap, "start", MCTS_CPU);
    for (int i = 0; i < l->n; i++) {
        struct mcts_times t;
        int off = mcts_times_parse(&t, l->line[i]);
        if (off < 0) {
            mcts_dag_free(d);
            return lscat_error_setc(LSCAT_EINVALID, "%s:%d: expected 'i|p01|p10|p50|p90|p99|"
                                    "stddev|' then the steps", path, i + 1);
        }
        char *copy = xstrdup(l->line[i] + off), *save = NULL;
        for (char *tok = strtok_r(copy, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
            json_t *o = json_loads(tok, 0, NULL);
            const char *name = json_string_value(json_object_get(o, "name"));
            if (name && !json_object_get(o, "kind") && strcmp(name, "end") &&
                mcts_dag_find(d, name) < 0 && d->n < MCTS_MAX_VERTICES - 1)
                add_vertex(d, &cap, name, json_object_get(o, "stream") ? MCTS_GPU : MCTS_CPU);
            json_decref(o);
        }
        free(copy);
    }
    add_vertex(d, &cap, "end", MCTS_CPU);
    *out = d;
    return 0;
}

static int parse_rows(struct mcts_results_file *f, const struct lines *l, const char *path)
{
    f->seqs = xcalloc((size_t)l->n, sizeof(*f->seqs));
    f->p10 = xmalloc(sizeof(double) * (size_t)l->n);
    for (int i = 0; i < l->n; i++) {
        struct mcts_times t;
        int off = mcts_times_parse(&t, l->line[i]);
        f->seqs[i] = xmalloc(sizeof(struct mcts_seq));
        f->n = i + 1;
        if (off < 0 || mcts_seq_parse(f->seqs[i], f->dag, l->line[i] + off) < 0)
            return off < 0 ? lscat_error_setc(LSCAT_EINVALID, "%s:%d: not a results row", path,
                                              i + 1)
                           : lscat_error_wrap("%s:%d", path, i + 1);
        f->p10[i] = t.p10;
    }
    return 0;
}

int mcts_results_file_read(struct mcts_results_file *out, const char *path)
{
    struct lines l;
    int rc;
    memset(out, 0, sizeof(*out));
    if ((rc = read_lines(&l, path)) == 0 && (rc = dag_from_names(&out->dag, &l, path)) == 0)
        rc = parse_rows(out, &l, path);
    lines_release(&l);
    if (rc < 0)
        mcts_results_file_release(out);
    return rc;
}

static struct mcts_dag *dag_copy(const struct mcts_dag *src)
{
    struct mcts_dag *d = xcalloc(1, sizeof(*d));
    size_t cap = 0;
    for (int i = 0; i < src->n; i++)
        add_vertex(d, &cap, src->v[i].name, src->v[i].kind);
    return d;
}

int mcts_results_file_read_like(struct mcts_results_file *out, const char *path,
                                const struct mcts_results_file *like)
{
    struct lines l;
    int rc;
    memset(out, 0, sizeof(*out));
    if ((rc = read_lines(&l, path)) == 0) {
        out->dag = dag_copy(like->dag);
        rc = parse_rows(out, &l, path);
    }
    lines_release(&l);
    if (rc < 0)
        mcts_results_file_release(out);
    return rc;
}

void mcts_results_file_release(struct mcts_results_file *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->seqs[i]);
    free(f->seqs);
    free(f->p10);
    mcts_dag_free(f->dag);
    memset(f, 0, sizeof(*f));
}
