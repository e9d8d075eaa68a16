/* The sandbox for untrusted code (nvcc on repository sources, harness binaries):
 *   - bubblewrap when it works: no network (--unshare-net), new pid/ipc namespaces, the system
 *     read-only (--ro-bind / /), a private /tmp, one writable scratch folder, /dev minimal plus
 *     the GPU's /dev/nvidia* files, --die-with-parent;
 *   - otherwise what a process can do alone: a new network namespace (when root), Landlock
 *     (writes only under the scratch folder and /dev, when the kernel has it);
 *   - always: rlimits (CPU, file size, processes, no core dumps), a wall-clock timeout that kills
 *     the process group (common/proc.h), capped output. When lscat runs as root the child
 *     switches to an unprivileged per-slot uid first, because RLIMIT_NPROC never applies to
 *     root: that is what stops a fork bomb.
 * sandbox_describe() says what is in force and what is missing; execute logs it once. */
#ifndef LSCAT_EXECUTE_SANDBOX_H
#define LSCAT_EXECUTE_SANDBOX_H

#include "common/buf.h"
#include "common/proc.h"

#include <stddef.h>

struct sandbox_caps {
    int bwrap;      /* bubblewrap ran a test command */
    int root;       /* we run as uid 0 */
    int drop_uid;   /* root, and a per-slot uid can reach the work folder: children drop to it */
    int netns;      /* without bwrap: unshare(CLONE_NEWNET) works in a child */
    int landlock;   /* without bwrap: Landlock ABI version (0 = none) */
    int mntns;      /* without bwrap, as root: a mount namespace with private /tmp, /var/tmp,
                     * /dev/shm, /run/lock (what a dropped uid could otherwise write to) */
    const char *work_blocker; /* as root: the folder on the work folder's way that others
                               * cannot enter (no o+x): the per-slot uids need rebind_work */
    int rebind_work; /* without bwrap, with mntns: each child's mount namespace shows the work
                      * folder past work_blocker (an empty tmpfs there, the work folder bound
                      * back at its path), so the per-slot uids reach it */
};

/* The per-slot unprivileged users: uid = SANDBOX_UID_BASE + block * 64 + slot % 64, where each
 * lscat process holds its own block (a lock file, /tmp/lscat-sandbox-uids-<block>.lock), so two
 * concurrent runs never share a uid (after each run every process of the uid is killed). */
#define SANDBOX_UID_BASE 61000
#define SANDBOX_UID_BLOCKS 64
#define SANDBOX_UID_SLOTS 64   /* uids per block: workers with slots >= this share a uid */
/* The uid worker `slot` runs as (when caps->drop_uid). */
int sandbox_slot_uid(int slot);

/* Detect once per process what the sandbox can use; `work_dir` is checked to be reachable by an
 * unprivileged uid (every folder on its path must be o+x). Thread-safe after the first call;
 * call it before starting workers. LSCAT_SANDBOX=none|fallback forces a weaker mode (tests). */
const struct sandbox_caps *sandbox_detect(const char *work_dir);
/* One line for people: "bubblewrap (no network, read-only system, ...)" or the fallback with
 * the list of what is missing. Returns 1 when something is missing (log it loudly). */
int sandbox_describe(struct buf *out, const struct sandbox_caps *caps);

/* The first folder on the way to `path` that the slot uids cannot enter (no search permission
 * for others), e.g. a checkout's 0700 parent; NULL when none blocks or no per-slot uid is used.
 * free() it. */
char *sandbox_blocker(const char *path);
/* Files lscat itself hands to untrusted runs (the timing core's headers, lscat-runner), as the
 * slot uids can read them: *out = src_dir when they can already (or no per-slot uid is used),
 * returns 0; else a copy of src_dir/rel[i] (NULL-terminated relative paths) in
 * stage_root/sandbox-<16 hex of names and contents>, made once and reused (folders 0755, files
 * 0644, 0755 when their owner may run them; nothing else is copied), returns 1. stage_root must
 * be reachable (the work folder's builds/). LSCAT_ERR when a file cannot be read or copied. */
int sandbox_share(char **out, const char *src_dir, const char *const *rel,
                  const char *stage_root);

struct sandbox_options {
    const char *const *argv;  /* the program; argv[0] looked up in PATH */
    const char *scratch_dir;  /* the one writable folder (absolute); made writable for the slot */
    const char *ro_dir;       /* a folder kept readable (the work folder), may be NULL */
    const char *ro_dir2;      /* another (the timing core's sources), may be NULL */
    const char *cwd;          /* NULL = scratch_dir */
    int slot;                 /* worker index: selects the unprivileged uid when root */
    int gpu;                  /* give access to /dev/nvidia* */
    const void *stdin_data;
    size_t stdin_len;
    double timeout_s;         /* wall clock (0 = none) */
    double cpu_s;             /* RLIMIT_CPU (0 = none) */
    size_t file_bytes;        /* RLIMIT_FSIZE (0 = 1 GiB) */
    long nproc;               /* RLIMIT_NPROC (0 = 256 when dropping to a slot uid, else 4096) */
    size_t out_cap_bytes;     /* per stream (0 = 1 MiB) */
    const char *const *extra_env; /* "K=V" added to the environment, NULL-terminated, may be NULL */
    int die_with_parent;      /* killed when the starting thread ends (sandbox_spawn) */
    int nice;                 /* added to the niceness of the program and what it starts
                               * (0 = unchanged; execute's builds beside probes) */
};
#define SANDBOX_OPTIONS_INIT { .argv = NULL, .scratch_dir = NULL, .ro_dir = NULL, \
    .ro_dir2 = NULL, .cwd = NULL, .slot = 0, .gpu = 0, .stdin_data = NULL, .stdin_len = 0, \
    .timeout_s = 0, .cpu_s = 0, .file_bytes = 0, .nproc = 0, .out_cap_bytes = 0, \
    .extra_env = NULL, .die_with_parent = 0, .nice = 0 }

/* Run argv in the sandbox. Same contract as proc_run(): 0 when started and waited for (see
 * out->timed_out, signal, exit_code), LSCAT_ERR when it could not start. *out is always
 * initialised; release it with proc_result_release(). */
int sandbox_run(struct proc_result *out, const struct sandbox_options *o);

/* Start argv in the sandbox as a long-lived child (execute's probe runner): the same set-up
 * as sandbox_run (uid, namespaces, rlimits, allow-listed environment), stdin a pipe,
 * stdout+stderr one pipe, and with extra_fd >= 3 a third pipe at that descriptor
 * (common/proc.h proc_spawn). timeout_s, stdin_data and out_cap_bytes are the caller's to
 * enforce. 0, or LSCAT_ERR (*out then holds no child). */
int sandbox_spawn(struct proc_child *out, const struct sandbox_options *o, int extra_fd);
/* Kill every process of slot's uid (as sandbox_run does after each run); no-op without
 * per-slot uids. */
void sandbox_reap_slot(int slot);
/* Kill every process of slot's uid except `keep` (a long-lived child between two pieces of
 * work: what the last one left behind, e.g. a daemon it double-forked). Returns how many were
 * killed; 0 without per-slot uids, and under bubblewrap (its pid namespace holds them: they
 * die with the child). */
int sandbox_sweep_slot(int slot, pid_t keep);
/* The same, keeping `keep`'s descendants too: a memcheck runner's lscat-runner is
 * compute-sanitizer's child (docs/execute.md "The memcheck runner"). */
int sandbox_sweep_slot_tree(int slot, pid_t keep);
/* At the end of a run: kill every process of this process's slot uids (again) and wait, at
 * most max_s seconds, until none is left but zombies; a process killed with a CUDA context
 * takes a while to go (the driver tears the context down), and one that outlives lscat keeps
 * the GPU from the next stage. Returns how many were left then (0: none, or no per-slot uids,
 * or under bubblewrap). */
int sandbox_wait_slots(double max_s);

#endif
