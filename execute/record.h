/* What the execute stage writes to the store: one build's result (builds, build_attempts,
 * failures, kernels.status), one probe's (probes, kernels.status/binding, failures), the probed
 * GPU. Each write is one transaction, so a killed run loses at most the items in flight. Not
 * thread-safe: execute.c calls these under its stage lock, on its one store connection. */
#ifndef LSCAT_EXECUTE_RECORD_H
#define LSCAT_EXECUTE_RECORD_H

#include "store/store.h"
#include "execute/build.h"
#include "execute/probe.h"

#include <stdint.h>

struct record_ctx {
    struct store *s;
    const struct build_env *env; /* arch, nvcc version, flags of the builds */
    int64_t run_id;
    int64_t gpu_id;              /* gpus.id of the probed GPU (record_gpu) */
};

/* The kernel's previous build (same arch), as loaded before the run; NULLs when none. */
struct record_prev {
    const char *key, *status;
};

/* Record kernel `id`'s build `r` under cache key `key`, whose probe key (build_cache_key) is
 * `probe_key`. A rebuild with the previous build's key (its binary was gone) or, after an ok
 * build, with a probe of the same probe key (only the timing core changed) keeps the kernel's
 * probes of that probe key and its verdict; otherwise its probes go and it is 'built' again.
 * RECORD_PROBES_KEPT when probes stood under a new build key, RECORD_PROBES_SAME when they
 * stood under the same one, RECORD_PROBES_GONE when they went (or there were none), or a
 * negative code (lscat_error_last()). */
enum { RECORD_PROBES_GONE = 0, RECORD_PROBES_KEPT = 1, RECORD_PROBES_SAME = 2 };
int record_build(const struct record_ctx *c, const char *id, const struct record_prev *prev,
                 const char *key, const char *probe_key, const struct build_result *r);

/* Probes stored by lscat before probe keys hold the build's cache key. When the kernel's build
 * key is unchanged (all its inputs, core included, are the same) those probes are probes of
 * `probe_key`: rewrite their cache_key (all GPUs). One statement, its own transaction. */
int record_rekey_probes(const struct record_ctx *c, const char *id, const char *key,
                        const char *probe_key);

/* Record the probe `p` of kernel `id`'s harness, whose probe key is `probe_key`, on
 * c->gpu_id. */
int record_probe(const struct record_ctx *c, const char *id, const char *probe_key,
                 const struct probe_result *p);

/* Insert the GPU (or the stand-in row "none" when gpu is NULL: --probe-anyway without a
 * device) unless known; *out its gpus.id. */
int record_gpu(int64_t *out, struct store *s, const struct gpu_info *gpu);

#endif
