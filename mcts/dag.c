/* The DAG text format of `lscat mcts` (mcts/dag.h): two passes over the lines (declarations,
 * then edges, so edges may name vertices declared later), then the checks that make a search
 * meaningful: no cycle, every vertex reaches end. Messages name the file, line and problem. */
#include "mcts/dag.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/sha256.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 72

struct edge {
    int from, to, line;
};

struct parser {
    const char *path;
    struct mcts_dag *dag;
    size_t cap;
    struct edge *edges;
    int nedges;
    size_t edges_cap;
    uint64_t reach[MCTS_MAX_VERTICES]; /* reach[u] bit v: v reachable from u */
};

static int tokenize(char *line, char **tok)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    int n = 0;
    for (char *p = strtok(line, " \t\r"); p && n < MAX_TOKENS; p = strtok(NULL, " \t\r"))
        tok[n++] = p;
    return n;
}

static int valid_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.')
            return 0;
    return 1;
}

static int add_vertex(struct parser *p, const char *name, int kind, int line)
{
    struct mcts_dag *d = p->dag;
    if (d->n >= MCTS_MAX_VERTICES)
        return lscat_error_setc(LSCAT_EINVALID, "%s:%d: too many vertices (at most %d)",
                                p->path, line, MCTS_MAX_VERTICES - 2);
    XGROW(d->v, d->n + 1, p->cap);
    struct mcts_vertex *v = &d->v[d->n++];
    memset(v, 0, sizeof(*v));
    v->name = xstrdup(name);
    v->op = xstrdup(name);
    v->kind = kind;
    v->line = line;
    return 0;
}

static int declare(struct parser *p, char **tok, int ntok, int line)
{
    int kind = !strcmp(tok[0], "gpu") ? MCTS_GPU : !strcmp(tok[0], "cpu") ? MCTS_CPU : -1;
    if (kind < 0)
        return lscat_error_setc(LSCAT_EINVALID,
                                "%s:%d: bad kind '%s' (a line is 'cpu NAME', 'gpu NAME' or an "
                                "edge 'A -> B')", p->path, line, tok[0]);
    if (ntok < 2 || !valid_name(tok[1]))
        return lscat_error_setc(LSCAT_EINVALID, "%s:%d: '%s' needs a vertex name (letters, "
                                "digits, '_' or '.')", p->path, line, tok[0]);
    if (!strcmp(tok[1], "start") || !strcmp(tok[1], "end"))
        return lscat_error_setc(LSCAT_EINVALID, "%s:%d: '%s' is implicit; do not declare it",
                                p->path, line, tok[1]);
    int prev = mcts_dag_find(p->dag, tok[1]);
    if (prev >= 0)
        return lscat_error_setc(LSCAT_EINVALID, "%s:%d: duplicate vertex '%s' (first declared "
                                "on line %d)", p->path, line, tok[1], p->dag->v[prev].line);
    if (add_vertex(p, tok[1], kind, line) < 0)
        return LSCAT_EINVALID;
    struct mcts_vertex *v = &p->dag->v[p->dag->n - 1];
    for (int i = 2; i < ntok; i++) {
        if (!strncmp(tok[i], "op=", 3) && tok[i][3]) {
            free(v->op);
            v->op = xstrdup(tok[i] + 3);
        } else if (!strncmp(tok[i], "aka=", 4) && valid_name(tok[i] + 4)) {
            free(v->aka);
            v->aka = xstrdup(tok[i] + 4);
        } else {
            return lscat_error_setc(LSCAT_EINVALID, "%s:%d: unknown attribute '%s' (expected "
                                    "op=OPERATION or aka=NAME)", p->path, line, tok[i]);
        }
    }
    return 0;
}

static int lookup(struct parser *p, const char *name, int line, int *out)
{
    for (int i = 0; i < p->dag->n; i++)
        if (!strcmp(p->dag->v[i].name, name)) {
            *out = i;
            return 0;
        }
    return lscat_error_setc(LSCAT_EINVALID, "%s:%d: unknown vertex '%s' (declare it with "
                            "'cpu %s' or 'gpu %s')", p->path, line, name, name, name);
}

static void add_edge(struct parser *p, int from, int to, int line)
{
    XGROW(p->edges, p->nedges + 1, p->edges_cap);
    p->edges[p->nedges++] = (struct edge){ from, to, line };
}

static int edge_line(struct parser *p, char **tok, int ntok, int line)
{
    int arrow = -1;
    for (int i = 0; i < ntok; i++)
        if (!strcmp(tok[i], "->"))
            arrow = arrow < 0 ? i : -2;
    if (arrow <= 0 || arrow == ntok - 1)
        return lscat_error_setc(LSCAT_EINVALID, "%s:%d: an edge line reads 'A [B...] -> C "
                                "[D...]' with one '->'", p->path, line);
    int end = p->dag->n - 1;
    for (int i = 0; i < arrow; i++) {
        for (int j = arrow + 1; j < ntok; j++) {
            int a, b;
            if (lookup(p, tok[i], line, &a) < 0 || lookup(p, tok[j], line, &b) < 0)
                return LSCAT_EINVALID;
            if (a == end || b == 0)
                return lscat_error_setc(LSCAT_EINVALID, "%s:%d: nothing comes before start or "
                                        "after end", p->path, line);
            if (a == b)
                return lscat_error_setc(LSCAT_EINVALID, "%s:%d: edge '%s -> %s' is a cycle",
                                        p->path, line, tok[i], tok[j]);
            add_edge(p, a, b, line);
        }
    }
    return 0;
}

/* Depth-first search for a back edge; on one, the message names its line and the cycle. */
static int find_cycle(struct parser *p, int u, int *color, int *stack, int depth)
{
    color[u] = 1;
    stack[depth] = u;
    for (int e = 0; e < p->nedges; e++) {
        if (p->edges[e].from != u)
            continue;
        int v = p->edges[e].to;
        if (color[v] == 1) {
            struct buf cyc = BUF_INIT;
            int i = depth;
            while (stack[i] != v)
                i--;
            for (; i <= depth; i++)
                buf_addf(&cyc, "%s -> ", p->dag->v[stack[i]].name);
            buf_adds(&cyc, p->dag->v[v].name);
            lscat_error_setc(LSCAT_EINVALID, "%s:%d: edge '%s -> %s' closes a cycle (%s); a "
                             "program's operations must be acyclic", p->path, p->edges[e].line,
                             p->dag->v[u].name, p->dag->v[v].name, cyc.data);
            buf_release(&cyc);
            return LSCAT_EINVALID;
        }
        if (color[v] == 0 && find_cycle(p, v, color, stack, depth + 1) < 0)
            return LSCAT_EINVALID;
    }
    color[u] = 2;
    return 0;
}

static const struct mcts_dag *sort_dag;
static int cmp_by_name(const void *a, const void *b)
{
    return strcmp(sort_dag->v[*(const int *)a].name, sort_dag->v[*(const int *)b].name);
}

static void build_preds(struct parser *p)
{
    struct mcts_dag *d = p->dag;
    for (int e = 0; e < p->nedges; e++) {
        struct mcts_vertex *v = &d->v[p->edges[e].to];
        int dup = 0;
        for (int i = 0; i < v->npreds; i++)
            dup |= v->preds[i] == p->edges[e].from;
        if (!dup)
            v->preds[v->npreds++] = p->edges[e].from;
    }
    for (int i = 1; i < d->n; i++)
        if (d->v[i].npreds == 0) {
            d->v[i].preds[d->v[i].npreds++] = 0;
            add_edge(p, 0, i, d->v[i].line);
        }
    sort_dag = d;
    for (int i = 0; i < d->n; i++)
        qsort(d->v[i].preds, (size_t)d->v[i].npreds, sizeof(int), cmp_by_name);
}

/* Transitive closure (the DAG is acyclic here) and the every-vertex-reaches-end check. */
static int close_and_check(struct parser *p)
{
    struct mcts_dag *d = p->dag;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int e = 0; e < p->nedges; e++) {
            uint64_t add = p->reach[p->edges[e].to] | (1ull << p->edges[e].to);
            uint64_t *r = &p->reach[p->edges[e].from];
            if ((*r | add) != *r) {
                *r |= add;
                changed = 1;
            }
        }
    }
    int end = d->n - 1;
    for (int i = 0; i < end; i++)
        if (!(p->reach[i] >> end & 1))
            return lscat_error_setc(LSCAT_EINVALID, "%s:%d: vertex '%s' has no path to end "
                                    "(add an edge '%s -> end', or to a vertex that reaches end)",
                                    p->path, d->v[i].line, d->v[i].name, d->v[i].name);
    return 0;
}

static int parse_lines(struct parser *p, const char *text, int pass)
{
    char *copy = xstrdup(text), *save = NULL, *tok[MAX_TOKENS];
    int rc = 0, line = 0;
    for (char *s = copy; s && rc == 0; s = save) {
        save = strchr(s, '\n');
        if (save)
            *save++ = '\0';
        line++;
        int ntok = tokenize(s, tok), is_edge = 0;
        for (int i = 0; i < ntok; i++)
            is_edge |= !strcmp(tok[i], "->");
        if (ntok == 0 || is_edge != (pass == 2))
            continue;
        rc = pass == 1 ? declare(p, tok, ntok, line) : edge_line(p, tok, ntok, line);
    }
    free(copy);
    return rc;
}

int mcts_dag_parse(struct mcts_dag **out, const char *text, const char *path)
{
    struct parser p = { .path = path };
    int color[MCTS_MAX_VERTICES] = { 0 }, stack[MCTS_MAX_VERTICES];
    int rc;
    *out = NULL;
    p.dag = xcalloc(1, sizeof(*p.dag));
    add_vertex(&p, "start", MCTS_CPU, 0);
    if ((rc = parse_lines(&p, text, 1)) < 0 || (rc = add_vertex(&p, "end", MCTS_CPU, 0)) < 0 ||
        (rc = parse_lines(&p, text, 2)) < 0)
        goto done;
    if (p.dag->n == 2) {
        rc = lscat_error_setc(LSCAT_EINVALID, "%s: no vertices (declare 'cpu NAME' or 'gpu "
                              "NAME' lines)", path);
        goto done;
    }
    build_preds(&p);
    if ((rc = find_cycle(&p, 0, color, stack, 0)) < 0)
        goto done;
    for (int i = 1; i < p.dag->n; i++)
        if (color[i] == 0 && (rc = find_cycle(&p, i, color, stack, 0)) < 0)
            goto done;
    if ((rc = close_and_check(&p)) < 0)
        goto done;
    sha256_hex(p.dag->sha256, text, strlen(text));
    *out = p.dag;
    p.dag = NULL;
done:
    mcts_dag_free(p.dag);
    free(p.edges);
    return rc;
}

int mcts_dag_load(struct mcts_dag **out, const char *path)
{
    struct buf text = BUF_INIT;
    int rc;
    *out = NULL;
    text.cap_bytes = 1 << 20;
    if (buf_read_file(&text, path) < 0)
        rc = lscat_error_wrap("cannot read DAG '%s'", path);
    else
        rc = mcts_dag_parse(out, text.data, path);
    buf_release(&text);
    return rc;
}

void mcts_dag_free(struct mcts_dag *dag)
{
    if (!dag)
        return;
    for (int i = 0; i < dag->n; i++) {
        free(dag->v[i].name);
        free(dag->v[i].op);
        free(dag->v[i].aka);
    }
    free(dag->v);
    free(dag);
}

int mcts_dag_find(const struct mcts_dag *dag, const char *name)
{
    for (int i = 0; i < dag->n; i++)
        if (!strcmp(dag->v[i].name, name) || (dag->v[i].aka && !strcmp(dag->v[i].aka, name)))
            return i;
    return -1;
}

int mcts_dag_reaches(const struct mcts_dag *dag, int u, int v)
{
    /* Depth-first over preds of v: small DAGs, called rarely (feature names). */
    for (int i = 0; i < dag->v[v].npreds; i++) {
        int p = dag->v[v].preds[i];
        if (p == u || mcts_dag_reaches(dag, u, p))
            return 1;
    }
    return 0;
}

int mcts_dag_gpu_count(const struct mcts_dag *dag)
{
    int n = 0;
    for (int i = 0; i < dag->n; i++)
        n += dag->v[i].kind == MCTS_GPU;
    return n;
}
