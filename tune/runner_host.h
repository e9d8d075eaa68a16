/* Internal to tune/: how runner_run (tune/runner.c) hands a kernel to the GPU's lscat-runner
 * (tune/runner_host.c). The rest of the runner host's API is public, in tune/runner.h. */
#ifndef LSCAT_TUNE_RUNNER_HOST_H
#define LSCAT_TUNE_RUNNER_HOST_H

#include "tune/runner.h"

/* Run cfgs[*i..n-1] of one kernel in o->host, (re)starting it when needed. Returns RUNNER_*
 * (tune/runner_proc.h) as a harness process's run does, or RUNNER_FALLBACK: run the rest as
 * harness processes. */
int runner_run_in_host(struct runner_summary *out, const struct runner_options *o,
                       const struct tune_config *cfgs, int n, int *i,
                       const struct runner_callbacks *cb, int occupancy);

#endif
