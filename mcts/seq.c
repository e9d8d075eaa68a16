/* Sequences of steps (mcts/seq.h): building with undo, names, the authors' JSON form (read with
 * jansson, written by hand in their key order) and the renaming-invariant key that identifies
 * an implementation in a measurement file and in the store. */
#include "mcts/seq.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void mcts_seq_init(struct mcts_seq *seq, const struct mcts_dag *dag)
{
    seq->dag = dag;
    seq->n = 0;
    seq->events = 0;
    seq->streams_used = 0;
    memset(seq->binding, -1, sizeof(seq->binding));
    for (int i = 0; i < MCTS_MAX_VERTICES; i++)
        seq->pos[i] = -1;
    struct mcts_step start = { MCTS_OP, -1, 0, 0, -1, -1, -1 };
    mcts_seq_push(seq, &start);
}

int mcts_seq_push(struct mcts_seq *seq, const struct mcts_step *step)
{
    if (seq->n >= MCTS_MAX_STEPS)
        return lscat_error_setc(LSCAT_EINVALID, "a sequence has more than %d steps",
                                MCTS_MAX_STEPS);
    struct mcts_undo *u = &seq->undo[seq->n];
    u->vertex = -1;
    u->streams_used = (int8_t)seq->streams_used;
    u->events = (int16_t)seq->events;
    seq->s[seq->n] = *step;
    if (step->kind == MCTS_OP) {
        u->vertex = step->vertex;
        u->binding = seq->binding[step->vertex];
        seq->binding[step->vertex] = -1;
        seq->pos[step->vertex] = (int16_t)seq->n;
    } else if (step->bind_vertex >= 0) {
        u->vertex = step->bind_vertex;
        u->binding = seq->binding[step->bind_vertex];
        seq->binding[step->bind_vertex] = step->bind_stream;
    }
    int hi = step->stream > step->bind_stream ? step->stream : step->bind_stream;
    if (hi + 1 > seq->streams_used)
        seq->streams_used = hi + 1;
    if (step->event + 1 > seq->events)
        seq->events = step->event + 1;
    seq->n++;
    return 0;
}

void mcts_seq_pop(struct mcts_seq *seq)
{
    seq->n--;
    const struct mcts_step *step = &seq->s[seq->n];
    const struct mcts_undo *u = &seq->undo[seq->n];
    if (step->kind == MCTS_OP)
        seq->pos[step->vertex] = -1;
    if (u->vertex >= 0)
        seq->binding[u->vertex] = u->binding;
    seq->streams_used = u->streams_used;
    seq->events = u->events;
}

int mcts_seq_complete(const struct mcts_seq *seq)
{
    return seq->pos[seq->dag->n - 1] >= 0;
}

static const char *const sync_prefix[] = { "", "CER", "CES", "CSWE" };
static const char *const sync_kind[] = { "", "CudaEventRecord", "CudaEventSync",
                                         "CudaStreamWaitEvent" };

void mcts_step_name(struct buf *out, const struct mcts_dag *dag, const struct mcts_step *step)
{
    const char *v = dag->v[step->vertex].name;
    if (step->kind == MCTS_OP)
        buf_adds(out, v);
    else
        buf_addf(out, "%s-%s-%s", sync_prefix[step->kind], step->after ? "after" : "b4", v);
}

void mcts_step_json(struct buf *out, const struct mcts_dag *dag, const struct mcts_step *step)
{
    struct buf name = BUF_INIT;
    mcts_step_name(&name, dag, step);
    buf_addch(out, '{');
    if (step->kind != MCTS_OP)
        buf_addf(out, "\"event\":%d,\"kind\":\"%s\",", step->event, sync_kind[step->kind]);
    buf_adds(out, "\"name\":");
    buf_add_json_str(out, name.data, name.len);
    if (step->stream >= 0)
        buf_addf(out, ",\"stream\":%d", step->stream);
    buf_addch(out, '}');
    buf_release(&name);
}

void mcts_seq_json(struct buf *out, const struct mcts_seq *seq)
{
    for (int i = 0; i < seq->n; i++) {
        if (i)
            buf_addch(out, '|');
        mcts_step_json(out, seq->dag, &seq->s[i]);
    }
}

/* "CER-after-Scatter" -> kind, after, vertex. */
static int parse_sync_name(struct mcts_step *out, const struct mcts_dag *dag, const char *name)
{
    const char *dash = strchr(name, '-');
    if (!dash)
        return -1;
    const char *rest = dash + 1;
    if (!strncmp(rest, "after-", 6)) {
        out->after = 1;
        rest += 6;
    } else if (!strncmp(rest, "b4-", 3)) {
        out->after = 0;
        rest += 3;
    } else {
        return -1;
    }
    int v = mcts_dag_find(dag, rest);
    if (v < 0)
        return -1;
    out->vertex = (int8_t)v;
    return 0;
}

static int int_field(json_t *obj, const char *key, int def, int max)
{
    json_t *f = json_object_get(obj, key);
    if (!f)
        return def;
    if (!json_is_integer(f) || json_integer_value(f) < 0 || json_integer_value(f) >= max)
        return -2;
    return (int)json_integer_value(f);
}

int mcts_step_parse_json(struct mcts_step *out, const struct mcts_dag *dag, const char *json)
{
    json_error_t jerr;
    json_t *obj = json_loads(json, 0, &jerr);
    int rc = LSCAT_EINVALID;
    const char *name = obj ? json_string_value(json_object_get(obj, "name")) : NULL;
    const char *kind = obj ? json_string_value(json_object_get(obj, "kind")) : NULL;
    *out = (struct mcts_step){ MCTS_OP, -1, -1, 0, -1, -1, -1 };
    if (!name) {
        lscat_error_setc(LSCAT_EINVALID, "step '%.80s' is not a JSON object with a \"name\"",
                         json);
        goto done;
    }
    int stream = int_field(obj, "stream", -1, MCTS_MAX_STREAMS);
    int event = int_field(obj, "event", -1, MCTS_MAX_STEPS);
    if (stream == -2 || event == -2) {
        lscat_error_setc(LSCAT_EINVALID, "step '%.80s': bad stream or event", json);
        goto done;
    }
    out->stream = (int8_t)stream;
    out->event = (int16_t)event;
    if (!kind) {
        int v = mcts_dag_find(dag, name);
        if (v < 0) {
            lscat_error_setc(LSCAT_EINVALID, "operation '%s' is not in the DAG", name);
            goto done;
        }
        out->vertex = (int8_t)v;
        rc = 0;
        goto done;
    }
    for (int k = MCTS_CER; k <= MCTS_CSWE; k++)
        if (!strcmp(kind, sync_kind[k]))
            out->kind = (int8_t)k;
    if (out->kind == MCTS_OP || event < 0 || parse_sync_name(out, dag, name) < 0) {
        lscat_error_setc(LSCAT_EINVALID, "synchronisation step '%.80s' is not understood "
                         "(kind, event and a name like CER-after-<operation> are needed)", json);
        goto done;
    }
    rc = 0;
done:
    json_decref(obj);
    return rc;
}

int mcts_seq_parse(struct mcts_seq *seq, const struct mcts_dag *dag, const char *text)
{
    struct mcts_step step;
    char *copy = xstrdup(text), *save = NULL;
    int rc = 0, first = 1;
    mcts_seq_init(seq, dag);
    for (char *tok = strtok_r(copy, "|", &save); tok && rc == 0;
         tok = strtok_r(NULL, "|", &save)) {
        if ((rc = mcts_step_parse_json(&step, dag, tok)) < 0)
            break;
        if (first && step.kind == MCTS_OP && step.vertex == 0) {
            first = 0;
            continue; /* start is already there */
        }
        first = 0;
        rc = mcts_seq_push(seq, &step);
    }
    free(copy);
    return rc;
}

size_t mcts_seq_key(uint8_t *out, const struct mcts_seq *seq)
{
    int8_t smap[MCTS_MAX_STREAMS];
    int16_t emap[MCTS_MAX_STEPS];
    int ns = 0, ne = 0;
    memset(smap, -1, sizeof(smap));
    for (int i = 0; i < MCTS_MAX_STEPS; i++)
        emap[i] = -1;
    for (int i = 0; i < seq->n; i++) {
        const struct mcts_step *s = &seq->s[i];
        if (s->stream >= 0 && smap[s->stream] < 0)
            smap[s->stream] = (int8_t)ns++;
        if (s->event >= 0 && emap[s->event] < 0)
            emap[s->event] = (int16_t)ne++;
        int ev = s->event >= 0 ? emap[s->event] + 1 : 0;
        uint8_t *o = out + MCTS_KEY_STEP_BYTES * i;
        o[0] = (uint8_t)(s->kind | s->after << 2);
        o[1] = (uint8_t)s->vertex;
        o[2] = (uint8_t)(s->stream >= 0 ? smap[s->stream] + 1 : 0);
        o[3] = (uint8_t)(ev & 0xff);
        o[4] = (uint8_t)(ev >> 8);
    }
    return MCTS_KEY_STEP_BYTES * (size_t)seq->n;
}
