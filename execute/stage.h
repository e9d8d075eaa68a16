/* Internal to the execute stage: the state one `lscat execute` run shares between its setup
 * (execute.c) and its two worker pools (pool.c): builders take kernels in id order, a kernel
 * that is built (or cached) and needs a probe goes on a FIFO that the probe workers take from,
 * while the builders go on. Everything shared is guarded by `lock`; the store is only used
 * under it (one connection, one writer). */
#ifndef LSCAT_EXECUTE_STAGE_H
#define LSCAT_EXECUTE_STAGE_H

#include "common/progress.h"
#include "execute/build.h"
#include "execute/execute.h"
#include "execute/isoresolve.h"
#include "execute/record.h"

#include <pthread.h>
#include <stddef.h>

struct item {
    char *id, *dir, *repo_root, *old_key, *old_status, *old_binary, *old_class;
    char *params;       /* kernels.params (the probe: which bindings matter, is2d) */
    char *probed_key;   /* probes.cache_key of this GPU's probe of the kernel (NULL: none) */
    int plan_changed;   /* that probe predates the 2D plan and its verdict could change */
    int legacy;         /* a probe (any GPU) holds the kernel's build key: older lscat's */
    int reprobe;        /* probed before with this probe key, but the probe plan changed since */
    char *probe_key;    /* set by the builder when it queues the item for a probe: its probe */
    char *probe_build;  /* key (recorded), build key (the scratch folder under builds/) and */
    char *probe_binary; /* absolute harness path */
    char *bsig;         /* --build-batch: its batch signature (build_batch_signature) */
    int bsig_state;     /* 0: not read yet, 1: bsig set, -1: not for a batch */
};

struct stage {
    struct store *s;
    const char *work_dir;
    const struct execute_options *o;
    const char *arch;          /* the architecture list builds are for */
    struct record_ctx rec;     /* the store writes (record.h): run, GPU, build env */
    struct build_env env;
    struct isoresolve *resolver; /* the repairs' lookup service: freed when the builds end */
    pthread_mutex_t core_lock; /* the timing core's one-time build */
    struct item *items;
    size_t count, alloc, next; /* next: the first item no builder took yet */
    pthread_mutex_t lock;      /* guards what follows, the store, counts and bars */
    pthread_cond_t moved;      /* the queue or the number of builders changed */
    int probing;               /* probes run beside the builds */
    size_t *queue;             /* item indices waiting for a probe, FIFO (capacity count) */
    size_t q_head, q_tail;
    size_t ahead;              /* builders wait while this many wait for a probe; 0: no bound */
    int builders, probers;     /* workers still running */
    size_t probes_done, probes_running;
    double build_wait_s, probe_wait_s;
    double builds_end_s;       /* fs_mono_s() when the last builder finished */
    struct execute_counts *c;
    struct progress *bar;      /* "build" while builders run, then "probe" */
    int bar_is_probe;
    int device;
    char gpu_uuid[96];         /* the probed GPU's lock name (common/gpulock.h), "" when none */
    char *sanitizer;
    char *memcheck;            /* compute-sanitizer for the memcheck runners, NULL: none */
    char *runner_program;      /* lscat-runner for probes (docs/execute.md "Probe runner"),
                                  NULL: a process per probe run */
    struct probe_runner_pool *runner_pool; /* the workers' runners share their spares
                                  (--shared-spares; else NULL) */
    char *probe_env[2];        /* added to every probe run's environment (NULL-terminated):
                                  CUDA_DEVICE_MAX_CONNECTIONS=--probe-connections, or none */
    int store_failed;
    char *store_error;         /* the first store error of a worker (errors are per thread) */
    char *device_lost;         /* why a probe found the device unusable (probe_device_error):
                                  no probe starts after it, NULL while none did */
};

/* Run the builders (`builders` threads, sandbox slots 0..) and, when g->probing, the probe
 * workers (`probers` threads, the slots after) over g->items until both are drained, a stop
 * or a store failure. Returns when every worker is done. */
void pool_run(struct stage *g, int builders, int probers);

#endif
