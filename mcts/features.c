/* Features of implementations (mcts/features.h): name table from the training rows, candidate
 * columns in the authors' order (same-stream pairs first, then order pairs), then the constant
 * and duplicate columns removed, keeping the earlier of two equal ones. */
#include "mcts/features.h"

#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct positions {
    int16_t first[MCTS_MAX_STEPS], last[MCTS_MAX_STEPS]; /* per name id; -1 absent */
    int8_t stream[MCTS_MAX_STEPS];
};

static int name_id(const struct mcts_features *f, const char *name)
{
    for (int i = 0; i < f->nnames; i++)
        if (!strcmp(f->names[i], name))
            return i;
    return -1;
}

static void locate(struct positions *p, const struct mcts_features *f, const struct mcts_seq *seq)
{
    struct buf name = BUF_INIT;
    for (int i = 0; i < f->nnames; i++)
        p->first[i] = p->last[i] = p->stream[i] = -1;
    for (int k = 0; k < seq->n; k++) {
        buf_reset(&name);
        mcts_step_name(&name, seq->dag, &seq->s[k]);
        int id = name_id(f, name.data);
        if (id < 0)
            continue;
        if (p->first[id] < 0)
            p->first[id] = (int16_t)k;
        p->last[id] = (int16_t)k;
        if (seq->s[k].kind == MCTS_OP)
            p->stream[id] = seq->s[k].stream;
    }
    buf_release(&name);
}

static int value(const struct positions *p, int kind, int u, int v)
{
    if (kind == MCTS_SAME_STREAM)
        return p->stream[u] >= 0 && p->stream[u] == p->stream[v];
    return p->first[u] >= 0 && p->last[v] >= 0 && p->first[u] < p->last[v];
}

static void collect_names(struct mcts_features *f, const struct mcts_seq *const *seqs, int n)
{
    struct buf name = BUF_INIT;
    size_t cap = 0;
    for (int r = 0; r < n; r++)
        for (int k = 0; k < seqs[r]->n; k++) {
            const struct mcts_step *s = &seqs[r]->s[k];
            buf_reset(&name);
            mcts_step_name(&name, seqs[r]->dag, s);
            if (name_id(f, name.data) >= 0 || f->nnames >= MCTS_MAX_STEPS)
                continue;
            XGROW(f->names, (size_t)f->nnames + 1, cap);
            f->names[f->nnames++] = xstrdup(name.data);
        }
    buf_release(&name);
}

/* All candidate columns, then keep those neither constant nor equal to an earlier kept one. */
static void choose_columns(struct mcts_features *f, const struct mcts_seq *const *seqs, int n,
                           const uint8_t *is_gpu_op)
{
    int m = f->nnames, ncand = 0, kept = 0;
    int *ck = xmalloc(sizeof(int) * (size_t)(2 * m * m + 1));
    int *cu = xmalloc(sizeof(int) * (size_t)(2 * m * m + 1));
    int *cv = xmalloc(sizeof(int) * (size_t)(2 * m * m + 1));
    for (int u = 0; u < m; u++)
        for (int v = u + 1; v < m; v++)
            if (is_gpu_op[u] && is_gpu_op[v])
                ck[ncand] = MCTS_SAME_STREAM, cu[ncand] = u, cv[ncand++] = v;
    for (int u = 0; u < m; u++)
        for (int v = 0; v < m; v++)
            if (u != v)
                ck[ncand] = MCTS_BEFORE, cu[ncand] = u, cv[ncand++] = v;
    uint8_t *cand = xmalloc((size_t)ncand * (size_t)(n ? n : 1));
    struct positions *p = xmalloc(sizeof(*p));
    for (int r = 0; r < n; r++) {
        locate(p, f, seqs[r]);
        for (int c = 0; c < ncand; c++)
            cand[(size_t)c * n + r] = (uint8_t)value(p, ck[c], cu[c], cv[c]);
    }
    f->kind = xmalloc(sizeof(int) * (size_t)(ncand + 1));
    f->u = xmalloc(sizeof(int) * (size_t)(ncand + 1));
    f->v = xmalloc(sizeof(int) * (size_t)(ncand + 1));
    int *keep = xmalloc(sizeof(int) * (size_t)(ncand + 1));
    for (int c = 0; c < ncand; c++) {
        const uint8_t *col = cand + (size_t)c * n;
        int constant = 1, dup = 0;
        for (int r = 1; r < n && constant; r++)
            constant = col[r] == col[0];
        for (int k = 0; k < kept && !dup && !constant; k++)
            dup = !memcmp(col, cand + (size_t)keep[k] * n, (size_t)n);
        if (constant || dup)
            continue;
        keep[kept] = c;
        f->kind[kept] = ck[c], f->u[kept] = cu[c], f->v[kept] = cv[c];
        kept++;
    }
    f->cols = kept;
    f->x = xmalloc((size_t)n * (size_t)(kept ? kept : 1));
    for (int r = 0; r < n; r++)
        for (int k = 0; k < kept; k++)
            f->x[(size_t)r * kept + k] = cand[(size_t)keep[k] * n + r];
    free(keep);
    free(p);
    free(cand);
    free(ck);
    free(cu);
    free(cv);
}

void mcts_features_build(struct mcts_features *out, const struct mcts_seq *const *seqs, int n)
{
    memset(out, 0, sizeof(*out));
    out->rows = n;
    collect_names(out, seqs, n);
    uint8_t *is_gpu_op = xcalloc((size_t)out->nnames + 1, 1);
    for (int r = 0; r < n; r++)
        for (int k = 0; k < seqs[r]->n; k++) {
            const struct mcts_step *s = &seqs[r]->s[k];
            if (s->kind != MCTS_OP || s->stream < 0)
                continue;
            int id = name_id(out, seqs[r]->dag->v[s->vertex].name);
            if (id >= 0)
                is_gpu_op[id] = 1;
        }
    choose_columns(out, seqs, n, is_gpu_op);
    free(is_gpu_op);
}

void mcts_features_row(uint8_t *out, const struct mcts_features *f, const struct mcts_seq *seq)
{
    struct positions *p = xmalloc(sizeof(*p));
    locate(p, f, seq);
    for (int c = 0; c < f->cols; c++)
        out[c] = (uint8_t)value(p, f->kind[c], f->u[c], f->v[c]);
    free(p);
}

void mcts_features_sentence(struct buf *out, const struct mcts_features *f, int col, int value)
{
    const char *u = f->names[f->u[col]], *v = f->names[f->v[col]];
    if (f->kind[col] == MCTS_SAME_STREAM)
        buf_addf(out, "%s %s %s", u, value ? "same stream as" : "different stream than", v);
    else
        buf_addf(out, "%s %s %s", u, value ? "before" : "not before", v);
}

void mcts_features_release(struct mcts_features *f)
{
    for (int i = 0; i < f->nnames; i++)
        free(f->names[i]);
    free(f->names);
    free(f->x);
    free(f->kind);
    free(f->u);
    free(f->v);
    memset(f, 0, sizeof(*f));
}
