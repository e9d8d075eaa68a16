/* Building one kernel's harness: the toolchain set-up shared by a run (nvcc, its version, the
 * architecture flags, the timing core compiled once per architecture list into the cache), the
 * cache key, and the attempt/repair loop for one kernel inside the sandbox. */
#ifndef LSCAT_EXECUTE_BUILD_H
#define LSCAT_EXECUTE_BUILD_H

#include "common/buf.h"
#include "execute/classify.h"
#include "execute/ptxas.h"
#include "execute/repair.h"

struct build_config {
    const char *work_dir;      /* absolute */
    const char *arch;          /* "sm_90" or "sm_80,sm_90" */
    const char *nvcc;          /* NULL: $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, PATH */
    double timeout_s;          /* per nvcc run (default 300) */
    int max_attempts;          /* default 5 */
    const struct repair_resolver *resolver; /* NULL: no repository strategies */
};

struct build_env {
    char *work_dir;
    char *nvcc;
    char *nvcc_version;        /* "13.0.88" */
    char *arch;                /* as configured */
    char *newest_arch;         /* the last of the list: the ptxas summary's architecture */
    char **flags;              /* nvcc flags (NULL-terminated), paths excluded */
    char *flags_text;          /* the same, space-separated (recorded in builds.flags) */
    char *share_dir;           /* holds tune/timing.h, tune/timing.cu, tune/stats.c */
    char *sandbox_share_dir;   /* the same files as the sandbox reads them: share_dir, or a
                                * copy in builds/sandbox-<hash> when its uids cannot reach it */
    char *compat_dir;          /* <share>/isolate/compat (helper_*.h stand-ins), NULL if absent */
    char *core_dir;            /* builds/core-<hash>: timing.o, stats.o, harness_core.o */
    char core_hash[65];
    char harness_core_hash[65]; /* isolate/harness_core.{h,cu} alone (in the probe key) */
    int core_ready;
    double timeout_s;
    int max_attempts;
    const struct repair_resolver *resolver;
    int nice;                  /* niceness added to every nvcc run (execute's --build-nice) */
};

/* Find nvcc and the timing core's sources, read nvcc's version, work out the flags and the
 * timing core's hash. LSCAT_ERR with a message saying what to install or set when nvcc or the
 * sources are missing. */
int build_env_init(struct build_env *env, const struct build_config *cfg);
/* Compile the timing core for the architectures unless the cache has it (first build only;
 * not thread-safe: call it under the caller's lock). */
int build_env_ensure_core(struct build_env *env);
void build_env_release(struct build_env *env);

/* The folder holding tune/timing.cu: $LSCAT_SHARE_DIR, <exe>/../share/lscat, the source tree
 * this lscat was built from. Caller frees; NULL when none has it. */
char *build_find_share_dir(void);

/* The cache key of a kernel folder: sha256 over the kernel's id, kernel.cu, harness.cu,
 * include/ (paths and contents), nvcc version, flags, timing core and repair versions. The id
 * keeps two kernels with identical files (possible with hand-made folders) in two folders.
 * `probe_out` (may be NULL) receives the probe key: the same inputs except the timing core's
 * hash (a harness's --probe path launches and synchronises without the core's measurement;
 * docs/execute.md "Probe key"), hashed again under PROBE_KEY_VERSION so that it never equals a
 * build key. probes.cache_key holds it. */
int build_cache_key(char out[65], char probe_out[65], const struct build_env *env,
                    const char *kernel_id, const char *kernel_dir);

/* The name the probe key is hashed under; a new one re-probes every kernel once. */
#define PROBE_KEY_VERSION "lscat-execute probe key v1"

struct build_attempt {
    int ok;
    enum build_class cls;      /* CLASS_NONE when it built cleanly */
    char *first_error;
    char *fix;                 /* JSON array text of the fixes applied after it, or NULL */
    char *log_path;            /* relative to the work folder */
    double wall_s;
};

struct build_result {
    int ok;
    int attempts;
    struct build_attempt att[16];
    struct buf fixes;          /* JSON array of every fix applied, in order */
    char *binary_path;         /* relative to the work folder, when ok */
    struct ptxas_info ptxas;
    struct ptxas_entry summary;
    int has_summary;
    double build_s;
    enum build_class final_class; /* of the last attempt when failed */
};

/* Build the harness of the kernel in `kernel_dir` (absolute) into builds/<key>/ in the sandbox
 * as worker `slot`, repairing up to env->max_attempts times. `repo_root` (may be NULL) is the
 * kernel's repository tree for repository strategies. Returns 0 whatever the build's outcome
 * (see out->ok), LSCAT_ERR when it could not try (I/O error). Release with build_result_release. */
int build_kernel(struct build_result *out, const struct build_env *env, const char *key,
                 const char *kernel_dir, const char *repo_root, int slot);
void build_result_release(struct build_result *r);

/* Whether the kernel folder's first attempt may be compiled in a batch: the harness uses the
 * harness core, the folder holds nothing the kernel could include, and kernel.cu's
 * preprocessor lines are ones a shared translation unit keeps apart (docs/execute.md
 * "Batched builds"). */
int build_batch_eligible(const char *kernel_dir);
/* The same, as what a batch's members must share: NULL when not eligible, else (caller frees)
 * the system headers kernel.cu and harness.cu include, sorted, one per line. Members with the
 * same headers see, in a batch, the declarations each sees alone (docs/execute.md). */
char *build_batch_signature(const char *kernel_dir);
/* Compile the first attempt of n eligible kernels (build keys `keys`, isolate folders
 * `kernel_dirs`) in one nvcc run under builds/batch-<keys[0]>, each harness in namespace
 * lk<i>, and link each one's harness and harness.so in builds/<key> as build_kernel would.
 * done[i] = 1 where out[i] holds a finished build (built ok at its first attempt, ptxas
 * entries named as alone); the others are to be built alone with build_kernel (out[i] holds
 * nothing). Returns 0, or < 0 on a system error. */
int build_batch(struct build_result *out, int *done, const struct build_env *env,
                const char *const *keys, const char *const *kernel_dirs, int n, int slot);

#endif
