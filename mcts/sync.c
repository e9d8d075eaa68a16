/* Synchronisation insertion (mcts/sync.h): what a ready operation still needs, given the
 * records, syncs and waits already in the sequence, and the list of next steps built from it
 * that enumeration and search both walk. */
#include "mcts/sync.h"

#include "common/error.h"

#include <string.h>

/* The first CER on `stream` after position `from`, or -1; *covered = 1 when some CER on that
 * stream after `from` is already followed by a matching CES (waiter < 0) or a CSWE on
 * stream `waiter`. */
static int first_record(const struct mcts_seq *seq, int from, int stream, int waiter,
                        int *covered)
{
    int first = -1;
    *covered = 0;
    for (int i = from + 1; i < seq->n; i++) {
        const struct mcts_step *r = &seq->s[i];
        if (r->kind != MCTS_CER || r->stream != stream)
            continue;
        if (first < 0)
            first = i;
        for (int j = i + 1; j < seq->n; j++) {
            const struct mcts_step *w = &seq->s[j];
            if (w->event != r->event)
                continue;
            if ((waiter < 0 && w->kind == MCTS_CES) ||
                (waiter >= 0 && w->kind == MCTS_CSWE && w->stream == waiter))
                *covered = 1;
        }
    }
    return first;
}

/* The synchronisation v (on stream vs, -1 for a CPU vertex) needs after GPU predecessor a;
 * returns 0 when none is needed. */
static int sync_for_pred(struct mcts_step *out, const struct mcts_seq *seq, int a, int v,
                         int vs)
{
    const struct mcts_step *op = &seq->s[seq->pos[a]];
    int covered, rec;
    if (vs >= 0 && op->stream == vs)
        return 0;
    rec = first_record(seq, seq->pos[a], op->stream, vs, &covered);
    if (covered)
        return 0;
    *out = (struct mcts_step){ .event = -1, .bind_vertex = -1, .bind_stream = -1 };
    if (rec >= 0) {
        out->kind = vs < 0 ? MCTS_CES : MCTS_CSWE;
        out->stream = (int8_t)vs;
        out->event = seq->s[rec].event;
        out->vertex = (int8_t)(vs < 0 ? v : a);
        out->after = vs >= 0;
    } else {
        out->kind = MCTS_CER;
        out->stream = op->stream;
        out->event = (int16_t)seq->events;
        out->vertex = (int8_t)(vs < 0 ? a : v);
        out->after = vs < 0;
    }
    return 1;
}

static int same_step(const struct mcts_step *x, const struct mcts_step *y)
{
    return x->kind == y->kind && x->stream == y->stream && x->event == y->event;
}

/* The missing synchronisations of v on stream vs, into out; returns how many. */
static int syncs_for(struct mcts_step *out, const struct mcts_seq *seq, int v, int vs)
{
    const struct mcts_vertex *vx = &seq->dag->v[v];
    int n = 0;
    for (int i = 0; i < vx->npreds; i++) {
        int a = vx->preds[i];
        struct mcts_step s;
        if (seq->dag->v[a].kind != MCTS_GPU || !sync_for_pred(&s, seq, a, v, vs))
            continue;
        for (int k = 0; k < n; k++)
            if (same_step(&out[k], &s)) { /* keep the later one's name */
                memmove(&out[k], &out[k + 1], (size_t)(n - k - 1) * sizeof(*out));
                n--;
                break;
            }
        s.bind_vertex = (int8_t)(vs >= 0 ? v : -1);
        s.bind_stream = (int8_t)vs;
        out[n++] = s;
    }
    return n;
}

static int ready(const struct mcts_seq *seq, int v)
{
    if (seq->pos[v] >= 0)
        return 0;
    for (int i = 0; i < seq->dag->v[v].npreds; i++)
        if (seq->pos[seq->dag->v[v].preds[i]] < 0)
            return 0;
    return 1;
}

static int add_child(struct mcts_step *out, int *n, int cap, const struct mcts_step *s)
{
    for (int i = 0; i < *n; i++)
        if (!memcmp(&out[i], s, sizeof(*s)))
            return 0;
    if (*n >= cap)
        return lscat_error_setc(LSCAT_EINVALID, "more than %d possible next steps", cap);
    out[(*n)++] = *s;
    return 0;
}

int mcts_sync_children(struct mcts_step *out, int cap, const struct mcts_seq *seq, int nstreams,
                       int canonical)
{
    struct mcts_step syncs[MCTS_MAX_VERTICES];
    int n = 0;
    for (int v = 1; v < seq->dag->n; v++) {
        if (!ready(seq, v))
            continue;
        int gpu = seq->dag->v[v].kind == MCTS_GPU, lo = -1, hi = -1;
        if (gpu && seq->binding[v] >= 0) {
            lo = hi = seq->binding[v];
        } else if (gpu) {
            lo = 0;
            hi = canonical && seq->streams_used < nstreams ? seq->streams_used : nstreams - 1;
        }
        for (int vs = lo; vs <= hi; vs++) {
            int ns = syncs_for(syncs, seq, v, vs);
            struct mcts_step op = { MCTS_OP, (int8_t)vs, (int8_t)v, 0, -1, -1, -1 };
            if (ns == 0 && add_child(out, &n, cap, &op) < 0)
                return LSCAT_EINVALID;
            for (int k = 0; k < ns; k++)
                if (add_child(out, &n, cap, &syncs[k]) < 0)
                    return LSCAT_EINVALID;
        }
    }
    return n;
}
