/* Internal to tune/sweep.c and tune/plan.c: the state one sweep shares between its worker
 * threads, and the planning over it (what is missing per kernel and GPU model, queued per
 * model; --follow's re-planning). Not for other modules: use tune/sweep.h. */
#ifndef LSCAT_TUNE_PLAN_H
#define LSCAT_TUNE_PLAN_H

#include "tune/runner.h"
#include "tune/sweep.h"

#include <pthread.h>

struct store;

/* A runnable kernel and its ok builds. */
struct plan_kernel {
    char *id, *name;
    int two_d;            /* indexes y (kernels.indexing 2d/3d; before it, params' is2d) */
    char *binding;        /* kernels.binding: execute's choice; NULL = the default */
    struct tune_space own; /* n > 0: its space plus the source's block the probe kept; binding
                             fixed: its own size with that block, one configuration */
    char check_ref[40];   /* "BXxBYxBZ": the block retry's shape the probe kept, the output
                           * check's reference (--check-ref); "" = the harness's own */
    char **bins, **archs; /* one per ok build */
    int nbuilds;
    size_t cap;
};

/* One kernel's missing configurations on one GPU model. */
struct plan_item {
    int kernel;             /* index into sweep_shared.kernels */
    unsigned char *missing; /* one flag per configuration of the space */
    int nmissing;
};

/* One GPU model's queue: its workers take items[next++]. */
struct plan_model {
    char name[256];
    struct plan_item *items;
    int n, next;
    size_t cap;
};

struct sweep_worker;

/* What a sweep's workers share; fields below mu are read and written under it. */
struct sweep_shared {
    pthread_mutex_t mu;
    const struct tune_options *o;
    struct store *plan_store; /* the caller's connection: planning, re-planning (under mu) */
    struct plan_kernel **kernels; /* pointers: re-planning grows the array under running
                                   * workers */
    int nkernels;
    size_t kernels_cap;
    int follow_seen;          /* --follow: an execute run was seen in progress */
    double t_start;           /* when the sweep began (fs_mono_s) */
    struct plan_model *models;
    int nmodels;
    struct tune_counts *counts;
    struct progress *prog;
    struct sweep_worker *workers;
    int nworkers;
    int measuring; /* workers still in their loop: the last one out hands lscat-mpi's chunk
                    * turn on (gpulock_baton_release) before tearing its runner down */
    int failed; /* a worker hit a store error: everyone stops */
    char error[512];
};

/* One worker thread per GPU. */
struct sweep_worker {
    struct sweep_shared *sh;
    const struct tune_gpu *gpu;
    int model;
    pthread_t thread;
    struct store *s;
    char **env;
    struct runner_host *host; /* this GPU's lscat-runner, or NULL */
    int kernels_done, kernels_total;
    int lost;             /* its GPU became unusable: it takes no further kernel */
    /* the kernel in flight */
    const struct plan_kernel *k;
    char binding[16];     /* what its harness says it runs with (header), else what was asked */
    int occupancy_block, occupancy_grid, have_occupancy;
};

/* The space kernel k is swept over: with --space fit (o->space_2d set), its indexing's
 * (docs/tune.md "Sweep space"); else o->space. */
const struct tune_space *plan_space_of(const struct tune_options *o, const struct plan_kernel *k);

/* Plan the sweep on gpus[0..n-1]: load the runnable kernels, one model per GPU name (each
 * worker's model set), and queue what is missing. Returns 0 or a negative code (store). */
int plan_start(struct sweep_shared *sh, struct store *s, const struct tune_gpu *gpus, int n);
/* The next kernel for w's GPU model into *out: 1 when taken; 0 when there is none (with
 * --follow and may_wait: none now and no execute run in progress that could make more
 * runnable; without may_wait: none now); or a negative code (store failure while re-planning).
 * Takes sh->mu itself. */
int plan_take(struct plan_item *out, struct sweep_shared *sh, struct sweep_worker *w,
              int may_wait);
/* Free the kernels and the models' queues (items taken by value are the caller's). */
void plan_release(struct sweep_shared *sh);

#endif
