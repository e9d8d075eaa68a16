/* The execute stage's writes to the store (see record.h): builds with their attempts and
 * failures, probes with the kernel's verdict, the probed GPU. One transaction per item. */
#include "execute/record.h"

#include "common/buf.h"
#include "common/fs.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

static int insert_build(int64_t *out, const struct record_ctx *c, const char *id,
                        const char *key, const struct build_result *r)
{
    struct buf px = BUF_INIT;
    ptxas_to_json(&px, &r->ptxas);
    const struct ptxas_entry *e = &r->summary;
    const char *cls = r->ok ? NULL : classify_name(r->final_class);
    char now[32];
    fs_utc_now(now);
    int rc = store_run(c->s, "DELETE FROM builds WHERE kernel_id = ? AND arch = ?", "tt", id,
                       c->env->arch);
    if (rc >= 0)
        rc = store_run(c->s, "INSERT INTO builds(kernel_id, arch, cache_key, status, attempts,"
                       " fixes, binary_path, nvcc_version, flags, registers, shared_bytes,"
                       " stack_bytes, spill_store_bytes, spill_load_bytes, const_bytes, barriers,"
                       " ptxas, error_class, build_s, built_at, run_id) VALUES (?,?,?,?,?,?,?,?,"
                       "?,?,?,?,?,?,?,?,?,?,?,?,?)",
                       "ttttIttttiiiiiiittdti", id, c->env->arch, key, r->ok ? "ok" : "failed",
                       r->attempts, r->fixes.data, r->binary_path, c->env->nvcc_version,
                       c->env->flags_text, (int64_t)e->registers, (int64_t)e->shared_bytes,
                       (int64_t)e->stack_bytes, (int64_t)e->spill_store_bytes,
                       (int64_t)e->spill_load_bytes, (int64_t)e->const_bytes,
                       (int64_t)e->barriers, px.data, cls, r->build_s, now, c->run_id);
    *out = store_last_insert_id(c->s);
    buf_release(&px);
    return rc;
}

static int insert_attempts(const struct record_ctx *c, int64_t bid, const struct build_result *r)
{
    int rc = store_run(c->s, "DELETE FROM build_attempts WHERE build_id = ?", "i", bid);
    if (rc >= 0 && !r->has_summary) /* no ptxas report (failed build): unknown, not zero */
        rc = store_run(c->s, "UPDATE builds SET registers = NULL, shared_bytes = NULL, "
                       "stack_bytes = NULL, spill_store_bytes = NULL, spill_load_bytes = NULL, "
                       "const_bytes = NULL, barriers = NULL WHERE id = ?", "i", bid);
    for (int i = 0; rc >= 0 && i < r->attempts; i++) {
        const struct build_attempt *a = &r->att[i];
        rc = store_run(c->s, "INSERT INTO build_attempts(build_id, attempt, status, error_class, "
                       "first_error, fix, log_path, wall_s) VALUES (?,?,?,?,?,?,?,?)",
                       "iItttttd", bid, i + 1, a->ok ? "ok" : "failed",
                       a->cls == CLASS_NONE ? NULL : classify_name(a->cls), a->first_error,
                       a->fix, a->log_path, a->wall_s);
    }
    return rc;
}

static int insert_failure(const struct record_ctx *c, const char *id, const char *cls,
                          const char *message)
{
    char now[32];
    fs_utc_now(now);
    char *subject = xasprintf("kernel:%s", id);
    int rc = store_run(c->s, "INSERT INTO failures(stage, subject, kernel_id, class, message, "
                       "created_at, run_id) VALUES ('execute', ?, ?, ?, ?, ?, ?)", "ttttti",
                       subject, id, cls, message, now, c->run_id);
    free(subject);
    return rc;
}

int record_build(const struct record_ctx *c, const char *id, const struct record_prev *prev,
                 const char *key, const char *probe_key, const struct build_result *r)
{
    const struct build_attempt *last = &r->att[r->attempts ? r->attempts - 1 : 0];
    int64_t bid = 0, kept = 0;
    int rc = store_begin(c->s);
    if (rc == 0)
        rc = insert_build(&bid, c, id, key, r); /* rows left by a tool that deleted builds */
    if (rc >= 0)                                /* without foreign keys on go too */
        rc = insert_attempts(c, bid, r);
    /* The same cache key rebuilt (its binary was gone, e.g. a fresh GPU node with the store
     * carried over) is the same harness, and another build key with the same probe key (a new
     * timing core) is the same harness as far as a probe goes: its probes and their verdict
     * stand. With a new build key, probes under any other key describe other sources (or
     * could): they go. */
    int ok_before = r->ok && prev->status && strcmp(prev->status, "ok") == 0;
    int same = ok_before && prev->key && strcmp(prev->key, key) == 0;
    if (rc >= 0 && ok_before && !same)
        rc = store_query_int(&kept, c->s, "SELECT EXISTS (SELECT 1 FROM probes WHERE kernel_id "
                             "= ? AND cache_key = ?)", "tt", id, probe_key);
    int keep = same || kept;
    if (rc >= 0 && kept && !same) /* as a new build key always did with the others */
        rc = store_run(c->s, "DELETE FROM probes WHERE kernel_id = ? AND cache_key IS NOT ?",
                       "tt", id, probe_key);
    if (rc >= 0 && keep)
        rc = store_run(c->s, "UPDATE kernels SET status = CASE WHEN EXISTS (SELECT 1 FROM probes "
                       "WHERE kernel_id = ?1 AND cache_key = ?2) THEN status ELSE 'built' END "
                       "WHERE id = ?1", "tt", id, probe_key);
    if (rc >= 0 && !keep)
        rc = store_run(c->s, "UPDATE kernels SET status = ? WHERE id = ?", "tt",
                       r->ok ? "built" : "build_failed", id);
    if (rc >= 0 && !keep)
        rc = store_run(c->s, "DELETE FROM probes WHERE kernel_id = ?", "t", id);
    if (rc >= 0 && !keep)
        rc = store_run(c->s, "DELETE FROM failures WHERE stage = 'execute' AND kernel_id = ?",
                       "t", id);
    if (rc >= 0 && !r->ok)
        rc = insert_failure(c, id, classify_name(r->final_class), last->first_error);
    if (rc >= 0)
        rc = store_commit(c->s);
    else
        store_rollback(c->s);
    return rc < 0 ? rc : same ? RECORD_PROBES_SAME : kept ? RECORD_PROBES_KEPT : RECORD_PROBES_GONE;
}

int record_rekey_probes(const struct record_ctx *c, const char *id, const char *key,
                        const char *probe_key)
{
    int rc = store_run(c->s, "UPDATE probes SET cache_key = ? WHERE kernel_id = ? AND "
                       "cache_key = ?", "ttt", probe_key, id, key);
    return rc < 0 ? rc : 0;
}

int record_probe(const struct record_ctx *c, const char *id, const char *probe_key,
                 const struct probe_result *p)
{
    char now[32];
    fs_utc_now(now);
    const char *outcome = probe_outcome_name(p->outcome);
    int ok = p->outcome == PROBE_OK;
    int rc = store_begin(c->s);
    if (rc == 0)
        rc = store_run(c->s, "INSERT OR REPLACE INTO probes(kernel_id, gpu_id, outcome, detail, "
                       "sanitizer, sanitizer_detail, cache_key, probe_s, probed_at, run_id, "
                       "binding, bindings) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", "titttttdtitt",
                       id, c->gpu_id, outcome, p->detail, p->sanitizer, p->sanitizer_detail,
                       probe_key, p->probe_s, now, c->run_id, p->binding, p->bindings);
    if (rc >= 0) /* the binding tune launches it with: the one that ran clean */
        rc = store_run(c->s, "UPDATE kernels SET status = ?, binding = ? WHERE id = ?", "ttt",
                       ok ? "runnable" : "probe_failed", ok ? p->binding : NULL, id);
    if (rc >= 0)
        rc = store_run(c->s, "DELETE FROM failures WHERE stage = 'execute' AND kernel_id = ? AND "
                       "class IN ('launch_failure','illegal_address','cuda_error','crash',"
                       "'timeout_probe')", "t", id);
    if (rc >= 0 && !ok)
        rc = insert_failure(c, id, p->outcome == PROBE_TIMEOUT ? "timeout_probe" : outcome,
                            p->detail);
    if (rc >= 0)
        rc = store_commit(c->s);
    else
        store_rollback(c->s);
    return rc < 0 ? rc : 0;
}

int record_gpu(int64_t *out, struct store *s, const struct gpu_info *gpu)
{
    char now[32];
    fs_utc_now(now);
    const char *uuid = gpu ? gpu->uuid : "none";
    int rc = store_run(s, "INSERT OR IGNORE INTO gpus(uuid, name, compute_cap, memory_bytes, "
                       "driver_version, first_seen) VALUES (?,?,?,?,?,?)", "tttitt", uuid,
                       gpu ? gpu->name : "none (probe forced without a CUDA device)",
                       gpu ? gpu->cc : NULL, (int64_t)(gpu ? gpu->memory_bytes : 0),
                       gpu ? gpu->driver : NULL, now);
    if (rc >= 0)
        rc = store_query_int(out, s, "SELECT id FROM gpus WHERE uuid = ?", "t", uuid);
    return rc < 0 ? rc : 0;
}
