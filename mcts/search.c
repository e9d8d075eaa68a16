/* Monte-Carlo tree search (mcts/search.h). The tree is one array of nodes addressed by index
 * (children contiguous), grown as nodes are expanded; the sequence of the node being visited
 * is built step by step on the way down, so nothing is recomputed from the root. */
#include "mcts/search.h"

#include "common/error.h"
#include "common/xalloc.h"
#include "mcts/keyset.h"
#include "mcts/sync.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct node {
    int parent, first, nkids;
    struct mcts_step step;
    uint32_t n;        /* rollouts through this node */
    double tmin, tmax; /* p10 times seen below it */
    uint8_t expanded, full;
};

struct mcts_search {
    const struct mcts_dag *dag;
    struct mcts_search_options o;
    struct node *nodes;
    size_t nnodes, cap;
    uint64_t rng;
    struct mcts_seq seq; /* the sequence of the node being visited / proposed */
    int leaf;            /* node of the last proposal, -1 when none is pending */
    struct mcts_keyset *seen; /* proposed implementations -> index in times */
    struct mcts_times *times;
    size_t ntimes, times_cap;
    struct mcts_step scratch[MCTS_MAX_CHILDREN];
    uint8_t key[MCTS_MAX_STEPS * MCTS_KEY_STEP_BYTES];
};

static const char *const strategy_names[] = { "coverage", "fastest", "random" };

const char *mcts_strategy_name(int strategy)
{
    return strategy >= 0 && strategy <= MCTS_RANDOM ? strategy_names[strategy] : "?";
}

int mcts_strategy_parse(int *out, const char *name)
{
    for (int i = 0; i <= MCTS_RANDOM; i++)
        if (!strcmp(name, strategy_names[i])) {
            *out = i;
            return 0;
        }
    return lscat_error_setc(LSCAT_EINVALID, "unknown strategy '%s' (coverage, fastest or "
                            "random)", name);
}

/* xorshift64*, seeded through splitmix64 so small seeds give unrelated streams. */
static uint64_t rng_next(struct mcts_search *s)
{
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 2685821657736338717ull;
}

static int rng_below(struct mcts_search *s, int n)
{
    return (int)((rng_next(s) >> 11) % (uint64_t)n);
}

static uint64_t seed_state(uint64_t seed)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z ? z : 1;
}

int mcts_search_new(struct mcts_search **out, const struct mcts_dag *dag,
                    const struct mcts_search_options *opts)
{
    if (opts->streams < 1 || opts->streams > MCTS_MAX_STREAMS)
        return lscat_error_setc(LSCAT_EINVALID, "streams must be 1..%d", MCTS_MAX_STREAMS);
    struct mcts_search *s = xcalloc(1, sizeof(*s));
    s->dag = dag;
    s->o = *opts;
    s->rng = seed_state(opts->seed);
    s->leaf = -1;
    s->seen = mcts_keyset_new();
    s->cap = 1024;
    s->nodes = xcalloc(s->cap, sizeof(*s->nodes));
    s->nnodes = 1;
    s->nodes[0] = (struct node){ .parent = -1, .tmin = INFINITY, .tmax = -INFINITY };
    mcts_seq_init(&s->seq, dag);
    s->nodes[0].step = s->seq.s[0];
    *out = s;
    return 0;
}

void mcts_search_free(struct mcts_search *s)
{
    if (!s)
        return;
    mcts_keyset_free(s->seen);
    free(s->times);
    free(s->nodes);
    free(s);
}

/* Create the children of node `i`, whose sequence is s->seq. */
static int ensure_children(struct mcts_search *s, int i)
{
    if (s->nodes[i].expanded)
        return 0;
    int n = mcts_sync_children(s->scratch, MCTS_MAX_CHILDREN, &s->seq, s->o.streams, 1);
    if (n < 0)
        return n;
    XGROW(s->nodes, s->nnodes + (size_t)n, s->cap);
    struct node *p = &s->nodes[i];
    p->first = (int)s->nnodes;
    p->nkids = n;
    p->expanded = 1;
    for (int k = 0; k < n; k++)
        s->nodes[s->nnodes++] = (struct node){ .parent = i, .step = s->scratch[k],
                                               .tmin = INFINITY, .tmax = -INFINITY };
    return 0;
}

static double clamp01(double v)
{
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

static double value(const struct mcts_search *s, const struct node *p, const struct node *c)
{
    const struct node *root = &s->nodes[0];
    switch (s->o.strategy) {
    case MCTS_COVERAGE:
        if (p->n < 2 || c->n < 2 || p->tmax == p->tmin)
            return 1;
        return clamp01((c->tmax - c->tmin) / (p->tmax - p->tmin));
    case MCTS_FASTEST:
        if (root->n < 2 || root->tmax == root->tmin)
            return 1;
        return clamp01((root->tmax - c->tmin) / (root->tmax - root->tmin));
    default:
        return 0;
    }
}

/* The child of p to descend into: argmax of value + exploration, ties broken at random. */
static int select_child(struct mcts_search *s, int pi)
{
    const struct node *p = &s->nodes[pi];
    double best = -INFINITY;
    int ties[MCTS_MAX_CHILDREN], nties = 0;
    for (int k = 0; k < p->nkids; k++) {
        const struct node *c = &s->nodes[p->first + k];
        double explore = s->o.strategy == MCTS_RANDOM ? 0
                         : sqrt(2.0) * sqrt(log((double)p->n) / c->n);
        double v = c->full ? -INFINITY : value(s, p, c) + explore;
        if (v > best) {
            best = v;
            nties = 0;
        }
        if (v == best)
            ties[nties++] = p->first + k;
    }
    return ties[rng_below(s, nties)];
}

static int unplayed_child(struct mcts_search *s, int pi)
{
    const struct node *p = &s->nodes[pi];
    int cand[MCTS_MAX_CHILDREN], n = 0;
    for (int k = 0; k < p->nkids; k++)
        if (s->nodes[p->first + k].n == 0)
            cand[n++] = p->first + k;
    if (n == 0)
        return -1;
    /* the authors expand the first unplayed child; random sampling takes any */
    return s->o.strategy == MCTS_RANDOM ? cand[rng_below(s, n)] : cand[0];
}

static int descend(struct mcts_search *s, int child)
{
    int rc = mcts_seq_push(&s->seq, &s->nodes[child].step);
    return rc < 0 ? rc : child;
}

/* Selection, expansion and rollout; returns the leaf reached. */
static int walk(struct mcts_search *s)
{
    int cur = 0, rc;
    mcts_seq_init(&s->seq, s->dag);
    while (s->nodes[cur].expanded && s->nodes[cur].nkids > 0 && unplayed_child(s, cur) < 0)
        if ((cur = descend(s, select_child(s, cur))) < 0)
            return cur;
    if ((rc = ensure_children(s, cur)) < 0)
        return rc;
    if (s->nodes[cur].nkids > 0 && (cur = descend(s, unplayed_child(s, cur))) < 0)
        return cur;
    for (;;) {
        if ((rc = ensure_children(s, cur)) < 0)
            return rc;
        const struct node *n = &s->nodes[cur];
        if (n->nkids == 0)
            return cur;
        if ((cur = descend(s, n->first + rng_below(s, n->nkids))) < 0)
            return cur;
    }
}

static void backprop(struct mcts_search *s, int leaf, double t)
{
    for (int i = leaf; i >= 0; i = s->nodes[i].parent) {
        struct node *n = &s->nodes[i];
        n->n++;
        if (t < n->tmin)
            n->tmin = t;
        if (t > n->tmax)
            n->tmax = t;
        int full = n->expanded;
        for (int k = 0; k < n->nkids && full; k++)
            full = s->nodes[n->first + k].full;
        n->full = (uint8_t)full;
    }
}

static void add_path(struct buf *path, const struct mcts_search *s, int leaf)
{
    int idx[MCTS_MAX_STEPS], n = 0;
    for (int i = leaf; s->nodes[i].parent >= 0; i = s->nodes[i].parent)
        idx[n++] = i - s->nodes[s->nodes[i].parent].first;
    for (int k = n - 1; k >= 0; k--)
        buf_addf(path, k == n - 1 ? "%d" : ",%d", idx[k]);
}

int mcts_search_next(struct mcts_search *s, const struct mcts_seq **seq_out, struct buf *path)
{
    /* A rollout may reach, by another path, an implementation already measured (where one
     * synchronisation serves two GPU operations): its time is known, so it is backpropagated
     * and the search walks again. */
    while (!s->nodes[0].full) {
        int leaf = walk(s);
        if (leaf < 0)
            return leaf;
        int64_t known = mcts_keyset_get(s->seen, s->key, mcts_seq_key(s->key, &s->seq));
        if (known >= 0) {
            backprop(s, leaf, s->times[known].p10);
            continue;
        }
        s->leaf = leaf;
        *seq_out = &s->seq;
        add_path(path, s, leaf);
        return 1;
    }
    return 0;
}

void mcts_search_report(struct mcts_search *s, const struct mcts_times *t)
{
    if (s->leaf < 0)
        return;
    XGROW(s->times, s->ntimes + 1, s->times_cap);
    s->times[s->ntimes] = *t;
    mcts_keyset_put(s->seen, s->key, mcts_seq_key(s->key, &s->seq), (int64_t)s->ntimes++);
    backprop(s, s->leaf, t->p10);
    s->leaf = -1;
}

int mcts_search_restore(struct mcts_search *s, const char *path, const struct mcts_times *t,
                        uint64_t rng_after)
{
    int cur = 0, rc;
    const char *p = path;
    mcts_seq_init(&s->seq, s->dag);
    while (*p) {
        char *end;
        long k = strtol(p, &end, 10);
        if ((rc = ensure_children(s, cur)) < 0)
            return rc;
        if (end == p || k < 0 || k >= s->nodes[cur].nkids || (*end && *end != ','))
            return lscat_error_setc(LSCAT_EINVALID, "recorded path '%.60s' does not fit this "
                                    "DAG's tree (was the DAG or the stream count changed?)",
                                    path);
        if ((cur = descend(s, s->nodes[cur].first + (int)k)) < 0)
            return cur;
        p = *end ? end + 1 : end;
    }
    if ((rc = ensure_children(s, cur)) < 0)
        return rc;
    if (s->nodes[cur].nkids != 0)
        return lscat_error_setc(LSCAT_EINVALID, "recorded path '%.60s' stops before end", path);
    s->leaf = cur;
    mcts_search_report(s, t);
    s->rng = rng_after;
    return 0;
}

uint64_t mcts_search_rng(const struct mcts_search *s)
{
    return s->rng;
}

size_t mcts_search_tree_size(const struct mcts_search *s)
{
    return s->nnodes;
}
