/* The node's CUDA devices, found without linking the CUDA runtime into lscat-tune: the small
 * nvcc-built helper `lscat-gpuinfo` prints one JSON line per device. Without a driver, a GPU or
 * the helper, discovery finds nothing and says why. Also: selecting GPUs (--gpus), recording
 * them in the store's gpus table, and locking their clocks (only where the user owns them). */
#ifndef LSCAT_TUNE_GPUS_H
#define LSCAT_TUNE_GPUS_H

#include <stdint.h>

struct store;

struct tune_gpu {
    int index;             /* CUDA ordinal as lscat-gpuinfo saw it */
    char name[256];
    char uuid[64];
    char cc[16];
    char driver[80];
    long long memory_bytes;
    int sm_count, cuda_driver, cuda_runtime, max_sm_mhz;
    int64_t id;            /* gpus.id once registered */
};

/* Run the helper ($LSCAT_GPUINFO, else lscat-gpuinfo beside this program). Returns the number
 * of devices (>= 0) with *out owned by the caller (free()); 0 devices fills `why`. Negative
 * only when the helper's output is malformed. */
int tune_gpus_discover(struct tune_gpu **out, char *why, int why_size);
/* Parse one lscat-gpuinfo line (for tests). Returns 0 or LSCAT_EINVALID. */
int tune_gpus_parse_line(struct tune_gpu *out, const char *line);
/* Keep the GPUs named by `spec`: "all", or a comma list of indices. Compacts gpus[] in place
 * and returns the new count, or LSCAT_EINVALID when an index is malformed or absent. */
int tune_gpus_select(struct tune_gpu *gpus, int n, const char *spec);
/* Insert or refresh the rows of the gpus table and fill each id. */
int tune_gpus_register(struct store *s, struct tune_gpu *gpus, int n);

/* Lock the SM clock of every GPU at `mhz` through NVML (nvmlDeviceSetGpuLockedClocks).
 * Callers must have the user's explicit consent (see `lscat tune --help`). On failure nothing
 * stays locked and the message says why (permission, unsupported, no driver). */
int tune_clocks_lock(const struct tune_gpu *gpus, int n, int mhz);
/* Undo tune_clocks_lock (nvmlDeviceResetGpuLockedClocks). */
int tune_clocks_reset(const struct tune_gpu *gpus, int n);
/* The user's words for one NVML return code (exposed for tests of the refusal paths). */
const char *tune_clocks_describe(int nvml_rc);

#endif
