/* Running child processes: nvcc, harness binaries, parsers, anything untrusted. One recipe
 * (git's run-command.h):
 *
 *     struct proc_options o = PROC_OPTIONS_INIT;
 *     const char *argv[] = { "nvcc", "-c", "k.cu", NULL };
 *     o.argv = argv;
 *     o.cwd = dir;                    // NULL: inherit
 *     o.timeout_s = 60;               // wall clock; 0 = none
 *     o.out_cap_bytes = 1 << 20;      // stdout/stderr kept up to this many bytes each
 *     struct proc_result r;
 *     if (proc_run(&r, &o) < 0) ...   // could not start it: lscat_error_last() says why
 *     if (r.timed_out || r.signal || r.exit_code) ...
 *     proc_result_release(&r);
 *
 * The child runs in its own process group. On timeout the whole group is killed with SIGKILL
 * (grandchildren too); when the child exits, any process it left behind in its group is
 * killed as well, so nothing outlives the call and holds the pipes open. Output beyond the cap
 * is read and thrown away (the child never blocks on a full pipe); `*_truncated` says so. */
#ifndef LSCAT_PROC_H
#define LSCAT_PROC_H

#include "common/buf.h"

#include <stddef.h>
#include <sys/types.h>

struct proc_limits {
    double cpu_s;            /* RLIMIT_CPU, 0 = unchanged */
    size_t as_bytes;         /* RLIMIT_AS (address space), 0 = unchanged */
    size_t file_bytes;       /* RLIMIT_FSIZE, 0 = unchanged */
    long nproc;              /* RLIMIT_NPROC, 0 = unchanged (counts per user!) */
    long nofile;             /* RLIMIT_NOFILE, 0 = unchanged */
    int core_dumps;          /* 0 = RLIMIT_CORE set to 0 */
};

struct proc_options {
    const char *const *argv; /* argv[0] is looked up in PATH when it has no '/' */
    const char *const *env;  /* full environment, NULL = inherit ours */
    const char *cwd;         /* NULL = inherit */
    const void *stdin_data;  /* bytes written to the child's stdin, then closed; NULL = /dev/null */
    size_t stdin_len;
    size_t out_cap_bytes;    /* per stream; 0 = 1 MiB */
    double timeout_s;        /* wall clock, 0 = none */
    struct proc_limits limits;
    const char *stdout_path; /* if set, stdout goes to this file (created/truncated) */
    /* Called in the child after fork, before exec (e.g. to enter a sandbox). Return nonzero to
     * abort the exec; the child then exits with 127. Must be async-signal-safe. */
    int (*child_setup)(void *arg);
    void *child_setup_arg;
    /* proc_spawn only (proc_run ignores them; 0 keeps the defaults): */
    int extra_fd;            /* N >= 3: a third pipe, its write end the child's fd N (a
                                harness's `--results /dev/fd/3`), its read end in
                                proc_child.extra_fd; 0 = none */
    int stderr_to_out;       /* 1: stderr goes to the stdout pipe too; 0: to /dev/null */
    int inherit_output;      /* 1: stdout and stderr are ours (out_fd is -1): a trusted
                                program of ours that logs as we do */
};

#define PROC_OPTIONS_INIT { .argv = NULL, .env = NULL, .cwd = NULL, .stdin_data = NULL, \
    .stdin_len = 0, .out_cap_bytes = 0, .timeout_s = 0, .limits = { 0 }, .stdout_path = NULL, \
    .child_setup = NULL, .child_setup_arg = NULL, .extra_fd = 0, .stderr_to_out = 0, \
    .inherit_output = 0 }

struct proc_result {
    int exit_code;           /* valid when signal == 0; 127 when exec failed */
    int signal;              /* the signal that ended it, 0 if it exited */
    int timed_out;           /* killed by us after timeout_s */
    struct buf out, err;     /* captured stdout and stderr, NUL-terminated */
    int out_truncated, err_truncated;
    double elapsed_s;
    long max_rss_kb;         /* of the child (and its waited-for children) */
    double cpu_s;            /* user + system */
};

/* Run to completion. Returns 0 when the child was started and waited for (whatever its exit
 * status), LSCAT_ERR when it could not be started (fork/pipe failure, missing cwd). The
 * result is always initialised: call proc_result_release() in both cases. */
int proc_run(struct proc_result *out, const struct proc_options *opts);
void proc_result_release(struct proc_result *r);

/* A long-lived child with pipes, for a service spoken to in requests and replies (execute's
 * resolver client, tune's harnesses and lscat-runner): stdin and stdout are pipes (close-on-exec
 * in the parent), stderr goes to /dev/null (or with stderr_to_out to the stdout pipe; with
 * inherit_output stdout and stderr are ours, and out_fd is -1); argv,
 * env, cwd, limits and child_setup as for proc_run (timeout_s, out_cap_bytes and stdout_path are
 * ignored: the caller reads with its own deadline). With stdin_data the child's stdin reads
 * those bytes from a memory file instead of a pipe (it never blocks on them, whatever their
 * size; in_fd is -1). With extra_fd the child also writes to a pipe at that descriptor:
 *
 *     o.argv = argv;                  // { harness, "--results", "/dev/fd/3", NULL }
 *     o.extra_fd = 3;                 // results come back on child.extra_fd
 *     o.stderr_to_out = 1;            // its stdout and stderr on child.out_fd
 *     if (proc_spawn(&child, &o) < 0) ...
 *
 * The child runs in its own process group. */
struct proc_child {
    pid_t pid;               /* -1 when not running */
    int in_fd;               /* write requests here; -1 with stdin_data */
    int out_fd;              /* read replies here */
    int extra_fd;            /* read the extra pipe here; -1 without extra_fd */
};

/* Start it. Returns 0, or LSCAT_ERR when it could not be started (*out then holds no child).
 * An exec failure shows as the child exiting with 127 (its stdout reaches EOF). */
int proc_spawn(struct proc_child *out, const struct proc_options *opts);
/* proc_spawn, forked from a thread of ours that lives as long as the process: a child whose
 * child_setup sets PR_SET_PDEATHSIG (killed when its parent goes) is killed when this process
 * ends, not when the calling thread does (Linux's parent is the thread that forked). For
 * children that outlive the thread that starts them: lscat-tune --serve's runners, kept from
 * one chunk's sweep (and its worker threads) to the next, and the server a worker rank's
 * chunk thread starts. */
int proc_spawn_lasting(struct proc_child *out, const struct proc_options *opts);
/* Close its pipes, SIGKILL the child's process group and reap it. Safe to call twice. */
void proc_child_kill(struct proc_child *c);

/* The environment of a child that runs or reads untrusted code (nvcc on repository sources,
 * probes, compute-sanitizer, tune's harnesses and lscat-runner, isolate's parse workers): our
 * environment filtered through one allow-list, so that secrets such as GITHUB_TOKEN never
 * reach it (and cannot come back through its output into the store or a published export).
 * Kept: PATH, LANG, LANGUAGE, TZ, LD_LIBRARY_PATH, CPATH, C_INCLUDE_PATH, CPLUS_INCLUDE_PATH,
 * LIBRARY_PATH, ASAN_OPTIONS, LSAN_OPTIONS, UBSAN_OPTIONS, and every LC_*, CUDA_*, NVCC_* and LSCAT_* variable (lscat's own settings and
 * test hooks: never put a secret in one). With `home` set, HOME=<home> and TMPDIR=<home>/tmp
 * replace ours; with home NULL, HOME and TMPDIR pass as they are. `extra` ("K=V",
 * NULL-terminated, may be NULL) is appended and wins over a kept variable of the same name.
 * Returns a NULL-terminated array; free it with proc_env_free(). */
char **proc_env_untrusted(const char *home, const char *const *extra);
/* Is "NAME=value" (or NAME) on the allow-list above? */
int proc_env_allowed(const char *entry);
void proc_env_free(char **env);

/* "exit 3", "signal 11 (Segmentation fault)", "timeout after 5.0 s": for messages. */
void proc_describe(struct buf *out, const struct proc_result *r, const struct proc_options *o);

#endif
