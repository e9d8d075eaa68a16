/* Harness builds: nvcc set-up once per run (version, flags, the timing core and the harness core
 * compiled once per architecture list and cached under builds/core-<hash>/), the cache key of a
 * kernel folder,
 * and the build loop of one kernel: compile in the sandbox, classify, repair, again. */
#include "execute/build.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/sha256.h"
#include "common/toolkit.h"
#include "common/xalloc.h"
#include "execute/sandbox.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LSCAT_SOURCE_DIR
#define LSCAT_SOURCE_DIR "."
#endif
/* The timing core's files, "a","b", from tune/module.mk's TIMING_CORE_SRCS (the one list). */
#ifndef LSCAT_TIMING_CORE_FILES
#error "LSCAT_TIMING_CORE_FILES is set by execute/module.mk: build with make"
#endif
/* The harness core's files (isolate/module.mk's HARNESS_CORE_SRCS). */
#ifndef LSCAT_HARNESS_CORE_FILES
#error "LSCAT_HARNESS_CORE_FILES is set by execute/module.mk: build with make"
#endif
/* A harness.cu that includes this is linked with the harness core (harness_core.o); an older
 * one, whose body is all in the file, is built alone as before. */
#define HARNESS_CORE_INCLUDE "isolate/harness_core.h"

#define LOG_CAP_BYTES (1u << 20)
#define HARNESS_HOST_OPT "-O1"
#define FIRST_ERROR_CAP 500

char *build_find_share_dir(void)
{
    return toolkit_find_share("tune/timing.cu", LSCAT_SOURCE_DIR);
}

static int run_plain(struct proc_result *r, const char *const *argv, const char *cwd, double t)
{
    struct proc_options o = PROC_OPTIONS_INIT;
    char **env = proc_env_untrusted(NULL, NULL); /* nvcc sees what it sees in the sandbox */
    o.argv = argv;
    o.env = (const char *const *)env;
    o.cwd = cwd;
    o.timeout_s = t;
    o.out_cap_bytes = LOG_CAP_BYTES;
    int rc = proc_run(r, &o);
    proc_env_free(env);
    return rc;
}

static int nvcc_version(char **out, const char *nvcc)
{
    struct proc_result r;
    const char *argv[] = { nvcc, "--version", NULL };
    int rc = run_plain(&r, argv, NULL, 60);
    const char *v = rc == 0 ? strstr(r.out.data, ", V") : NULL;
    if (!v) {
        rc = lscat_error_set("cannot read the version of '%s' (is it a working nvcc?)", nvcc);
    } else {
        size_t n = strcspn(v + 3, " \n");
        *out = xstrndup(v + 3, n);
    }
    proc_result_release(&r);
    return rc;
}

/* "sm_80,sm_90" -> -gencode flags; PTX embedded for the newest. */
static int arch_flags(struct build_env *env)
{
    char *copy = xstrdup(env->arch);
    size_t n = 0, cap = 0;
    char **v = NULL;
    /* nvcc's -O is the host compiler's level only: the device code (PTX and cubin) is the same
     * byte for byte at -O1 and -O3, and ptxas optimises at -O3 either way (said explicitly, so
     * the recorded flags cannot mislead). The harness's host code is argument set-up, input
     * fills (as fast at -O1: each is bound by its random-number chain) and calls into the
     * timing core, which is compiled at -O3 (compile_core); -O1 saves gcc a fifth to a third
     * of a harness build (docs/execute.md "Build flags"). */
    const char *common[] = { HARNESS_HOST_OPT, "-Xptxas=-O3", "-lineinfo", "-Xptxas=-v", NULL };
    for (int i = 0; common[i]; i++) {
        XGROW(v, n + 2, cap);
        v[n++] = xstrdup(common[i]);
    }
    char *save = NULL, *last = NULL;
    int rc = 0;
    for (char *a = strtok_r(copy, ",", &save); a && rc == 0; a = strtok_r(NULL, ",", &save)) {
        if (strncmp(a, "sm_", 3) != 0 || !isdigit((unsigned char)a[3]) || strlen(a) > 8) {
            rc = lscat_error_setc(LSCAT_EINVALID, "bad architecture '%s' (use e.g. sm_90,sm_80)", a);
            break;
        }
        XGROW(v, n + 2, cap);
        v[n++] = xasprintf("-gencode=arch=compute_%s,code=sm_%s", a + 3, a + 3);
        last = a;
    }
    if (rc == 0 && !last)
        rc = lscat_error_setc(LSCAT_EINVALID, "no architecture given");
    if (rc == 0) { /* the newest also as PTX, for GPUs newer than any listed */
        free(v[n - 1]);
        v[n - 1] = xasprintf("-gencode=arch=compute_%s,code=[sm_%s,compute_%s]", last + 3,
                             last + 3, last + 3);
        env->newest_arch = xstrdup(last);
    }
    v[n] = NULL;
    env->flags = v;
    struct buf t = BUF_INIT;
    for (size_t i = 0; i < n; i++)
        buf_addf(&t, "%s%s", i ? " " : "", v[i]);
    env->flags_text = buf_detach(&t, NULL);
    free(copy);
    return rc;
}

static void hash_file(struct sha256 *c, const char *label, const char *path)
{
    struct buf b = BUF_INIT;
    int rc = buf_read_file(&b, path);
    sha256_update(c, label, strlen(label) + 1);
    uint64_t len = rc == 0 ? b.len : UINT64_MAX;
    sha256_update(c, &len, sizeof(len));
    sha256_update(c, b.data, b.len);
    buf_release(&b);
}

static int compile_core(struct build_env *env)
{
    char *tmp = xasprintf("%s.tmp.%d", env->core_dir, (int)getpid());
    /* step 0 the timing core, 1 its statistics (host C), 2 the harness core: device code for
     * the architectures (the output check's kernels), host code at -O3 (compiled once) */
    char *src[3] = { fs_join(env->share_dir, "tune/timing.cu"),
                     fs_join(env->share_dir, "tune/stats.c"),
                     fs_join(env->share_dir, "isolate/harness_core.cu") };
    static const char *const obj[3] = { "timing.o", "stats.o", "harness_core.o" };
    static const char *const what[3] = { "the timing core", "the timing core",
                                         "the harness core" };
    char *inc = xasprintf("-I%s", env->share_dir);
    int rc = fs_mkdirs(tmp, 0755);
    for (int step = 0; step < 3 && rc == 0; step++) {
        const char *argv[40];
        int k = 0;
        argv[k++] = env->nvcc;
        for (int i = 0; step != 1 && env->flags[i] && k < 24; i++)
            if (strcmp(env->flags[i], "-Xptxas=-v") != 0 && strcmp(env->flags[i], HARNESS_HOST_OPT))
                argv[k++] = env->flags[i];
        argv[k++] = "-O3"; /* the timing loop's host side: never below what it was measured with */
        if (step == 0)
            argv[k++] = "-DLSCAT_CORE=1";
        argv[k++] = "-Xcompiler"; /* linked into harness.so too */
        argv[k++] = "-fPIC";
        argv[k++] = inc;
        argv[k++] = "-c";
        argv[k++] = src[step];
        argv[k++] = "-o";
        argv[k++] = obj[step];
        argv[k] = NULL;
        struct proc_result r;
        rc = run_plain(&r, argv, tmp, 600);
        if (rc == 0 && (r.timed_out || r.signal || r.exit_code))
            rc = lscat_error_set("cannot compile %s (%s): %.400s", what[step], argv[k - 3],
                                 r.err.data);
        proc_result_release(&r);
    }
    if (rc == 0 && rename(tmp, env->core_dir) != 0 && !fs_is_dir(env->core_dir))
        rc = lscat_error_set("cannot rename '%s': %s", tmp, strerror(errno));
    fs_remove_tree(tmp);
    free(tmp);
    for (int i = 0; i < 3; i++)
        free(src[i]);
    free(inc);
    return rc;
}

/* What the sandbox's uids read: nvcc where it is (nothing lscat can move: refused with what to
 * do when they cannot reach it), the timing core's headers copied where they can reach them
 * when they cannot reach the share folder (a checkout inside a 0700 folder). */
static int sandbox_inputs(struct build_env *env)
{
    char *blocker = sandbox_blocker(env->nvcc);
    if (blocker) {
        int rc = lscat_error_set("nvcc '%s' is out of the sandbox's reach: its unprivileged uids "
                                 "cannot enter '%s' (no search permission for others); run "
                                 "'chmod o+x %s', or use a CUDA toolkit others can read "
                                 "(--nvcc, CUDA_HOME)", env->nvcc, blocker, blocker);
        free(blocker);
        return rc;
    }
    const char *parts[] = { LSCAT_TIMING_CORE_FILES LSCAT_HARNESS_CORE_FILES NULL };
    char *stage = fs_join(env->work_dir, "builds");
    int rc = sandbox_share(&env->sandbox_share_dir, env->share_dir, parts, stage);
    if (rc == 1) {
        blocker = sandbox_blocker(env->share_dir);
        log_info("sandbox: the timing core's headers are read from '%s': the sandbox's uids "
                 "cannot read them in '%s'%s%s%s", env->sandbox_share_dir, env->share_dir,
                 blocker ? " ('" : "", blocker ? blocker : "",
                 blocker ? "' is not searchable by others)" : "");
        free(blocker);
        rc = 0;
    }
    free(stage);
    return rc;
}

int build_env_init(struct build_env *env, const struct build_config *cfg)
{
    memset(env, 0, sizeof(*env));
    env->work_dir = xstrdup(cfg->work_dir);
    env->arch = xstrdup(cfg->arch);
    env->timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 300;
    env->max_attempts = cfg->max_attempts > 0 ? cfg->max_attempts : 5;
    if (env->max_attempts > 16)
        env->max_attempts = 16;
    env->resolver = cfg->resolver;
    env->nvcc = toolkit_find_nvcc(cfg->nvcc);
    if (!env->nvcc)
        return lscat_error_set("nvcc not found (install the CUDA toolkit, or set CUDA_HOME or "
                               "PATH)");
    env->share_dir = build_find_share_dir();
    if (!env->share_dir)
        return lscat_error_set("the timing core's sources (tune/timing.cu) were not found "
                               "(set LSCAT_SHARE_DIR to the lscat source tree or "
                               "<prefix>/share/lscat)");
    env->compat_dir = fs_join(env->share_dir, "isolate/compat");
    if (!fs_is_dir(env->compat_dir)) {
        free(env->compat_dir);
        env->compat_dir = NULL;
    }
    int rc = sandbox_inputs(env);
    if (rc == 0)
        rc = nvcc_version(&env->nvcc_version, env->nvcc);
    if (rc == 0)
        rc = arch_flags(env);
    if (rc < 0)
        return rc;
    struct sha256 c;
    unsigned char d[32];
    sha256_init(&c);
    const char *parts[] = { LSCAT_TIMING_CORE_FILES LSCAT_HARNESS_CORE_FILES NULL }; /* a missing
                                                                    one hashes as missing */
    for (int i = 0; parts[i]; i++) {
        char *p = fs_join(env->share_dir, parts[i]);
        hash_file(&c, parts[i], p);
        free(p);
    }
    /* The harness core alone, for the probe key: what the probe runs, unlike the timing core. */
    const char *hparts[] = { LSCAT_HARNESS_CORE_FILES NULL };
    struct sha256 hc;
    sha256_init(&hc);
    for (int i = 0; hparts[i]; i++) {
        char *p = fs_join(env->share_dir, hparts[i]);
        hash_file(&hc, hparts[i], p);
        free(p);
    }
    sha256_final(&hc, d);
    sha256_to_hex(env->harness_core_hash, d);
    sha256_update(&c, env->nvcc_version, strlen(env->nvcc_version) + 1);
    sha256_update(&c, env->flags_text, strlen(env->flags_text) + 1);
    sha256_update(&c, "pic", 4); /* position-independent since harness.so */
    sha256_final(&c, d);
    sha256_to_hex(env->core_hash, d);
    env->core_dir = xasprintf("%s/builds/core-%.16s", env->work_dir, env->core_hash);
    return 0;
}

int build_env_ensure_core(struct build_env *env)
{
    if (env->core_ready)
        return 0;
    char *probe = fs_join(env->core_dir, "harness_core.o"); /* the last one made */
    int rc = fs_exists(probe) ? 0 : compile_core(env);
    free(probe);
    env->core_ready = rc == 0;
    return rc;
}

void build_env_release(struct build_env *env)
{
    for (size_t i = 0; env->flags && env->flags[i]; i++)
        free(env->flags[i]);
    free(env->flags);
    free(env->work_dir);
    free(env->nvcc);
    free(env->nvcc_version);
    free(env->arch);
    free(env->newest_arch);
    free(env->flags_text);
    free(env->share_dir);
    free(env->sandbox_share_dir);
    free(env->compat_dir);
    free(env->core_dir);
    memset(env, 0, sizeof(*env));
}

/* Every file under dir, sorted, into the hash (relative names and contents). */
static void hash_tree(struct sha256 *c, const char *dir, const char *rel, int depth)
{
    struct dirent **names = NULL;
    int n = depth > 16 ? -1 : scandir(dir, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *nm = names[i]->d_name;
        if (strcmp(nm, ".") != 0 && strcmp(nm, "..") != 0) {
            char *path = fs_join(dir, nm), *r = fs_join(rel, nm);
            if (fs_is_dir(path))
                hash_tree(c, path, r, depth + 1);
            else
                hash_file(c, r, path);
            free(path);
            free(r);
        }
        free(names[i]);
    }
    free(names);
}

/* Whether harness.cu is the kernel's part of a harness (it includes the harness core's header)
 * rather than a whole harness of older lscat. */
static int harness_uses_core(const char *harness_path)
{
    struct buf b = BUF_INIT;
    int yes = buf_read_file(&b, harness_path) == 0 && b.data &&
              strstr(b.data, "#include \"" HARNESS_CORE_INCLUDE "\"") != NULL;
    buf_release(&b);
    return yes;
}

int build_cache_key(char out[65], char probe_out[65], const struct build_env *env,
                    const char *kernel_id, const char *kernel_dir)
{
    struct sha256 c;
    unsigned char d[32];
    char *k = fs_join(kernel_dir, "kernel.cu"), *h = fs_join(kernel_dir, "harness.cu");
    char *inc = fs_join(kernel_dir, "include");
    int rc = 0;
    if (!fs_exists(k) || !fs_exists(h))
        rc = lscat_error_setc(LSCAT_ENOTFOUND, "'%s' lacks kernel.cu or harness.cu (run lscat "
                              "isolate again)", kernel_dir);
    if (rc == 0) {
        char ver[64];
        snprintf(ver, sizeof(ver), "lscat-execute build v2 (harness.so) repair v%d attempts %d",
                 REPAIR_VERSION, env->max_attempts);
        sha256_init(&c);
        sha256_update(&c, ver, strlen(ver) + 1);
        sha256_update(&c, kernel_id, strlen(kernel_id) + 1);
        hash_file(&c, "kernel.cu", k);
        hash_file(&c, "harness.cu", h);
        if (fs_is_dir(inc))
            hash_tree(&c, inc, "include", 0);
        sha256_update(&c, env->nvcc_version, strlen(env->nvcc_version) + 1);
        sha256_update(&c, env->flags_text, strlen(env->flags_text) + 1);
        if (harness_uses_core(h)) /* what the probe runs: in both keys */
            sha256_update(&c, env->harness_core_hash, 64);
        if (probe_out) { /* everything so far, under its own name: never equal to a build key */
            struct sha256 p = c;
            unsigned char pd[32];
            sha256_final(&p, pd);
            sha256_init(&p);
            sha256_update(&p, PROBE_KEY_VERSION, sizeof(PROBE_KEY_VERSION));
            sha256_update(&p, pd, sizeof(pd));
            sha256_final(&p, pd);
            sha256_to_hex(probe_out, pd);
        }
        sha256_update(&c, env->core_hash, 64);
        sha256_final(&c, d);
        sha256_to_hex(out, d);
    }
    free(k);
    free(h);
    free(inc);
    return rc;
}

/* ---------------------------------------------------------------- one kernel */

struct attempt_ctx {
    const struct build_env *env;
    const char *dir;        /* builds/<key> (absolute) */
    const char *rel_dir;    /* builds/<key> */
    const char *kernel_dir;
    int slot;
    int rdc;                /* relocatable device code: kernels that launch kernels */
    int block_max;          /* > 0: -DLSCAT_BLOCK_MAX (static shared memory overflowed) */
    const char *harness;    /* harness.cu's text (its swept block sizes) */
};

/* One nvcc run in the sandbox, appended to the log (command line, output, outcome). */
static int run_step(struct buf *log, int *ok, int *timed_out, const struct attempt_ctx *a,
                    const char *const *argv)
{
    const struct build_env *env = a->env;
    buf_adds(log, "$");
    for (int i = 0; argv[i]; i++)
        buf_addf(log, " %s", argv[i]);
    buf_addch(log, '\n');
    struct sandbox_options o = SANDBOX_OPTIONS_INIT;
    struct proc_result r;
    o.argv = argv;
    o.scratch_dir = a->dir;
    o.ro_dir = env->work_dir;
    o.ro_dir2 = env->sandbox_share_dir;
    o.slot = a->slot;
    o.timeout_s = env->timeout_s;
    o.cpu_s = env->timeout_s * 2;
    o.out_cap_bytes = LOG_CAP_BYTES;
    o.nice = env->nice;
    int rc = sandbox_run(&r, &o);
    if (rc == 0) {
        buf_add(log, r.err.data, r.err.len);
        buf_add(log, r.out.data, r.out.len);
        buf_adds(log, "\n[");
        proc_describe(log, &r, NULL);
        buf_addf(log, ", %.2f s", r.elapsed_s);
        if (env->nice)
            buf_addf(log, ", nice +%d", env->nice);
        buf_adds(log, "]\n");
        *timed_out = r.timed_out;
        *ok = !r.timed_out && !r.signal && r.exit_code == 0;
    }
    proc_result_release(&r);
    return rc;
}

/* Compile harness.cu once (position-independent) to harness.o, then link it twice: the
 * `harness` executable (probes, runs by hand) and `harness.so` (lscat-runner loads it; a
 * failure there only costs tune the runner for this kernel). The log of all three goes to
 * build-<n>.log. */
static int compile_once(struct buf *log, int *ok, int *timed_out, const struct attempt_ctx *a,
                        int n)
{
    const struct build_env *env = a->env;
    /* Headers the repairs brought (the repository's, lscat's compat set) are searched after
     * the toolkit's: nvcc puts its own include folder as -I after the user's -I folders and
     * before -isystem ones, so with -isystem cuda.h and cuda_runtime.h stay the toolkit's,
     * whatever a repository ships; a header found nowhere else is still found there. */
    char *incs[6] = { xasprintf("-I%s", env->sandbox_share_dir), xasprintf("-I%s", a->kernel_dir),
                      xstrdup("-isystem"), xasprintf("%s/include", a->kernel_dir),
                      xstrdup("-isystem"), xasprintf("%s/include", a->dir) };
    char *objs[3] = { fs_join(env->core_dir, "timing.o"), fs_join(env->core_dir, "stats.o"),
                      fs_join(env->core_dir, "harness_core.o") };
    char *hpath = fs_join(a->dir, "harness.cu");
    int with_core = harness_uses_core(hpath);
    free(hpath);
    const char *argv[48];
    char bmax[48];
    int rc = 0, k = 0, nflags = 0;
    snprintf(bmax, sizeof bmax, "-DLSCAT_BLOCK_MAX=%d", a->block_max);
    argv[k++] = env->nvcc;
    for (int i = 0; env->flags[i] && k < 32; i++)
        argv[k++] = env->flags[i];
    if (a->rdc)
        argv[k++] = "-rdc=true";
    nflags = k;
    for (int step = 0; step < 3 && rc == 0 && (step == 0 || *ok); step++) {
        int j = nflags;
        if (step == 0) {
            if (a->block_max > 0)
                argv[j++] = bmax;
            for (int i = 0; i < 6; i++)
                argv[j++] = incs[i];
            const char *tail[] = { "-Xcompiler", "-fPIC", "-c", "-o", "harness.o", "harness.cu",
                                   NULL };
            for (int i = 0; tail[i]; i++)
                argv[j++] = tail[i];
        } else {
            if (step == 2) {
                argv[j++] = "-shared";
                argv[j++] = "-Xlinker";
                argv[j++] = "-Bsymbolic"; /* its own timing core, whatever else is loaded */
            }
            const char *tail[] = { "-o", step == 1 ? "harness" : "harness.so", "harness.o",
                                   objs[0], objs[1], with_core ? objs[2] : NULL, NULL };
            for (int i = 0; tail[i]; i++)
                argv[j++] = tail[i];
            if (a->rdc)
                argv[j++] = "-lcudadevrt";
        }
        argv[j] = NULL;
        int step_ok = 0, step_to = 0;
        rc = run_step(log, &step_ok, &step_to, a, argv);
        if (step < 2) {
            *ok = step_ok;
            *timed_out = step_to;
        } else if (!step_ok) {
            buf_adds(log, "[harness.so not built: tune runs this kernel as a process]\n");
        }
    }
    char *obj = fs_join(a->dir, "harness.o"); /* linked twice; not kept */
    unlink(obj);
    free(obj);
    if (rc == 0) {
        char *logp = xasprintf("%s/build-%d.log", a->dir, n);
        rc = fs_write_atomic(logp, log->data, log->len);
        free(logp);
    }
    for (int i = 0; i < 6; i++)
        free(incs[i]);
    for (int i = 0; i < 3; i++)
        free(objs[i]);
    return rc;
}

/* Dynamic parallelism needs relocatable device code: a build flag, not a source edit. */
static int wants_rdc(const struct diag_list *d)
{
    for (size_t i = 0; i < d->count; i++)
        if (strstr(d->items[i].message, "requires separate compilation mode"))
            return 1;
    return 0;
}

static int any_removed(const struct diag_list *d)
{
    for (size_t i = 0; i < d->count; i++)
        if (d->items[i].cls == CLASS_REMOVED_CUDA_API)
            return 1;
    return 0;
}

static void finish_ok(struct build_result *out, const struct attempt_ctx *a, const char *log)
{
    struct buf px = BUF_INIT;
    out->ok = 1;
    out->binary_path = xasprintf("%s/harness", a->rel_dir);
    ptxas_parse(&out->ptxas, log);
    out->has_summary = ptxas_summary(&out->summary, &out->ptxas, a->env->newest_arch) == 0;
    ptxas_extract(&px, log);
    char *p = xasprintf("%s/ptxas.txt", a->dir);
    fs_write_atomic(p, px.data, px.len);
    free(p);
    buf_release(&px);
}

/* One attempt: compile, classify, and unless it is the last, repair. Returns 1 to go on. */
static int attempt(struct build_result *out, struct buf *src, struct attempt_ctx *a,
                   const char *repo_root, int n, int *rc)
{
    struct build_attempt *at = &out->att[n - 1];
    struct buf log = BUF_INIT, fixes = BUF_INIT;
    struct diag_list diags = DIAG_LIST_INIT;
    int ok = 0, timed_out = 0, go_on = 0;
    char *kpath = xasprintf("%s/kernel.cu", a->dir);
    double t0 = fs_mono_s();
    *rc = fs_write_atomic(kpath, src->data, src->len);
    if (*rc == 0)
        *rc = compile_once(&log, &ok, &timed_out, a, n);
    at->wall_s = fs_mono_s() - t0;
    at->log_path = xasprintf("%s/build-%d.log", a->rel_dir, n);
    out->attempts = n;
    if (*rc < 0)
        goto done;
    classify_parse(&diags, log.data);
    classify_refine_textures(&diags, src->data);
    at->ok = ok;
    if (!ok || any_removed(&diags))
        at->cls = classify_failure(&at->first_error, &diags, log.data, timed_out,
                                   FIRST_ERROR_CAP);
    if (ok && at->cls != CLASS_REMOVED_CUDA_API)
        at->cls = CLASS_NONE;
    out->final_class = at->cls;
    if (n < a->env->max_attempts && at->cls != CLASS_NONE && at->cls != CLASS_TIMEOUT) {
        char *inc = xasprintf("%s/include", a->dir);
        struct repair_input in = { &diags, "kernel.cu", repo_root, a->env->resolver, inc,
                                   a->env->compat_dir };
        int applied = repair_apply(src, &fixes, &in);
        if (!a->rdc && wants_rdc(&diags)) {
            a->rdc = 1;
            buf_adds(&fixes, fixes.len ? ",\"add_flag:-rdc=true\"" : "\"add_flag:-rdc=true\"");
            applied++;
        }
        int bmax = repair_block_max(&diags, a->harness, a->block_max);
        if (bmax > 0) {
            a->block_max = bmax;
            buf_addf(&fixes, "%s\"add_flag:-DLSCAT_BLOCK_MAX=%d\"", fixes.len ? "," : "", bmax);
            applied++;
        }
        if (applied > 0) {
            at->fix = xasprintf("[%s]", fixes.data);
            buf_addf(&out->fixes, "%s%s", out->fixes.len > 1 ? "," : "", fixes.data);
            go_on = 1;
        }
        free(inc);
    }
    if (ok && !go_on)
        finish_ok(out, a, log.data);
done:
    free(kpath);
    buf_release(&log);
    buf_release(&fixes);
    diag_list_release(&diags);
    return go_on;
}

int build_kernel(struct build_result *out, const struct build_env *env, const char *key,
                 const char *kernel_dir, const char *repo_root, int slot)
{
    memset(out, 0, sizeof(*out));
    buf_init(&out->fixes, 0);
    buf_addch(&out->fixes, '[');
    char *rel = xasprintf("builds/%s", key);
    char *dir = fs_join(env->work_dir, rel);
    char *ksrc = fs_join(kernel_dir, "kernel.cu"), *hsrc = fs_join(kernel_dir, "harness.cu");
    char *hdst = fs_join(dir, "harness.cu");
    struct buf src = BUF_INIT, harness = BUF_INIT;
    struct attempt_ctx a = { env, dir, rel, kernel_dir, slot, 0, 0, NULL };
    double t0 = fs_mono_s();
    int rc = 0;
    if (fs_is_dir(dir))
        rc = fs_remove_tree(dir);
    if (rc == 0)
        rc = fs_mkdirs(dir, 0755);
    if (rc == 0)
        rc = buf_read_file(&src, ksrc);
    if (rc == 0)
        rc = fs_copy_atomic(hsrc, hdst);
    if (rc == 0)
        rc = buf_read_file(&harness, hsrc);
    a.harness = harness.data;
    for (int n = 1; rc == 0 && n <= env->max_attempts; n++)
        if (!attempt(out, &src, &a, repo_root, n, &rc))
            break;
    buf_addch(&out->fixes, ']');
    out->build_s = fs_mono_s() - t0;
    free(rel);
    free(dir);
    free(ksrc);
    free(hsrc);
    free(hdst);
    buf_release(&src);
    buf_release(&harness);
    return rc;
}

void build_result_release(struct build_result *r)
{
    for (int i = 0; i < r->attempts; i++) {
        free(r->att[i].first_error);
        free(r->att[i].fix);
        free(r->att[i].log_path);
    }
    buf_release(&r->fixes);
    free(r->binary_path);
    ptxas_info_release(&r->ptxas);
    memset(r, 0, sizeof(*r));
}

/* ---------------------------------------------------------------- batched first attempts */

#define BATCH_MACROS_MAX 256
/* The global data a batch's module may hold (device printf's strings and the like: every
 * member's process loads the whole module); more, and each member is built alone. */
#define BATCH_GMEM_MAX (64L * 1024)

/* The names kernel.cu or harness.cu #define (for the clash guard and the #undef after it). */
struct macro_names {
    char *v[BATCH_MACROS_MAX];
    int n;
};

static void macro_names_release(struct macro_names *m)
{
    for (int i = 0; i < m->n; i++)
        free(m->v[i]);
    m->n = 0;
}

/* Scan one file's preprocessor lines. Eligible: #include <...> at the top level only and none
 * after a #define (a hoisted include sees no macro of the kernel, as alone); no quoted include
 * but the harness's own; no #undef; no #pragma but unroll; no __constant__ (cmem[3] is the
 * module's, all the batch's); no extern "C" (one name for every namespace); no ## or # at
 * the line's start that this does not know. */
/* Whether text declares a __device__ variable (module data: in a batch every member's process
 * would load all of them): a __device__ whose declaration reaches ';', '=' or '[' before '('. */
static int has_device_variable(const char *text)
{
    for (const char *p = strstr(text, "__device__"); p; p = strstr(p + 1, "__device__")) {
        size_t k = strcspn(p + 10, "(;=[{");
        char c = p[10 + k];
        if (c == ';' || c == '=' || c == '[')
            return 1;
    }
    return 0;
}

static int scan_batchable(const char *text, int is_harness, struct buf *incs,
                          struct macro_names *m)
{
    int depth = 0, defined = 0;
    if (!is_harness && (strstr(text, "__constant__") || strstr(text, "extern \"C\"") ||
                        strstr(text, "__managed__") || strstr(text, "texture<") ||
                        strstr(text, "surface<") || strstr(text, "curand_kernel") ||
                        has_device_variable(text)))
        return 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *q = p;
        while (q < p + n && (*q == ' ' || *q == '\t'))
            q++;
        if (q < p + n && *q == '#') {
            q++;
            while (q < p + n && (*q == ' ' || *q == '\t'))
                q++;
            size_t rest = (size_t)(p + n - q);
#define DIRECTIVE(w) (rest >= sizeof(w) - 1 && strncmp(q, w, sizeof(w) - 1) == 0)
            if (DIRECTIVE("include")) {
                const char *a = q + 7;
                while (a < p + n && (*a == ' ' || *a == '\t'))
                    a++;
                if (a < p + n && *a == '<') {
                    if (depth > 0 || (defined && !is_harness)) /* the harness's are LSCAT_ */
                        return 0;
                    buf_add(incs, "#include ", 9);
                    buf_add(incs, a, (size_t)(p + n - a));
                    buf_addch(incs, '\n');
                } else if (!is_harness) {
                    return 0;
                }
            } else if (DIRECTIVE("define")) {
                const char *a = q + 6;
                while (a < p + n && (*a == ' ' || *a == '\t'))
                    a++;
                size_t k = 0;
                while (a + k < p + n && (isalnum((unsigned char)a[k]) || a[k] == '_'))
                    k++;
                if (k == 0 || m->n >= BATCH_MACROS_MAX)
                    return 0;
                m->v[m->n++] = xstrndup(a, k);
                defined = 1;
            } else if (DIRECTIVE("if")) { /* #if, #ifdef, #ifndef */
                depth++;
            } else if (DIRECTIVE("endif")) {
                depth--;
            } else if (DIRECTIVE("pragma")) {
                if (!strstr(q, "unroll"))
                    return 0;
            } else if (!(DIRECTIVE("else") || DIRECTIVE("elif") || DIRECTIVE("error") ||
                         DIRECTIVE("warning") || rest == 0)) {
                return 0; /* #undef, #line, anything else */
            }
#undef DIRECTIVE
        }
        p += n + (nl != NULL);
    }
    return depth == 0;
}

static const char *const harness_structs[] = { "struct lscat_member {", "struct lscat_texparam {",
                                               NULL };

/* The line of `text` starting with `start`, or NULL. */
static const char *line_starting(const char *text, const char *start)
{
    size_t n = strlen(start);
    for (const char *p = text; p; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (strncmp(p, start, n) == 0)
            return p;
    }
    return NULL;
}

/* Whether `text` declares an extern __shared__ array: 1 (`extern`, blanks, `__shared__`), 0
 * (no `__shared__`, or no word `extern`), -1 when it cannot tell (the word `extern` and
 * `__shared__` both there, not in that sequence: a comment, another order). */
static int extern_shared(const char *text)
{
    if (!strstr(text, "__shared__"))
        return 0;
    int word = 0;
    for (const char *p = strstr(text, "extern"); p; p = strstr(p + 6, "extern")) {
        if ((p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
            isalnum((unsigned char)p[6]) || p[6] == '_')
            continue; /* external, extern_buf, ... */
        word = 1;
        const char *q = p + 6;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
            q++;
        if (strncmp(q, "__shared__", 10) == 0)
            return 1;
    }
    return word ? -1 : 0;
}

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *build_batch_signature(const char *kernel_dir)
{
    DIR *d = opendir(kernel_dir);
    if (!d)
        return NULL;
    int ok = 1;
    struct dirent *e;
    while (ok && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "kernel.cu") &&
            strcmp(e->d_name, "harness.cu") && strcmp(e->d_name, "meta.json") &&
            strcmp(e->d_name, "params.json"))
            ok = 0; /* anything the kernel may include from its folder: built alone */
    closedir(d);
    struct buf k = BUF_INIT, h = BUF_INIT, incs = BUF_INIT;
    struct macro_names m = { { 0 }, 0 };
    char *kp = fs_join(kernel_dir, "kernel.cu"), *hp = fs_join(kernel_dir, "harness.cu");
    char *sig = NULL;
    if (ok)
        ok = buf_read_file(&k, kp) == 0 && buf_read_file(&h, hp) == 0 && k.data && h.data;
    if (ok)
        ok = strstr(h.data, "#include \"" HARNESS_CORE_INCLUDE "\"") &&
             line_starting(h.data, "#include \"kernel.cu\"") &&
             strstr(h.data, "extern const lscat_kernel_desc lscat_kernel = {") &&
             !strstr(k.data, "using namespace"); /* the harness's std headers come first */
    for (int i = 0; ok && harness_structs[i]; i++)
        ok = line_starting(h.data, harness_structs[i]) != NULL;
    if (ok)
        ok = scan_batchable(k.data, 0, &incs, &m) && scan_batchable(h.data, 1, &incs, &m);
    /* an extern __shared__ array anywhere in a module pads every kernel's static shared memory
     * to 16 bytes (ptxas: 2180 -> 2192): such kernels batch only with each other, and one that
     * cannot be told apart is built alone */
    int xs = ok ? extern_shared(k.data) : 0;
    if (xs < 0)
        ok = 0;
    if (ok) { /* the system headers, sorted, once each: the batch's members share them */
        size_t n = 0, cap = 0;
        char **v = NULL;
        for (char *p = incs.data; p && *p;) {
            char *nl = strchr(p, '\n');
            XGROW(v, n + 1, cap);
            v[n++] = xstrndup(p, (size_t)(nl - p));
            p = nl + 1;
        }
        if (n)
            qsort(v, n, sizeof(*v), cmp_lines);
        struct buf out = BUF_INIT;
        buf_adds(&out, "");
        for (size_t i = 0; i < n; i++)
            if (i == 0 || strcmp(v[i], v[i - 1]) != 0)
                buf_addf(&out, "%s\n", v[i]);
        for (size_t i = 0; i < n; i++)
            free(v[i]);
        free(v);
        if (xs)
            buf_adds(&out, "extern __shared__\n");
        sig = xstrdup(out.data ? out.data : "");
        buf_release(&out);
    }
    macro_names_release(&m);
    buf_release(&k);
    buf_release(&h);
    buf_release(&incs);
    free(kp);
    free(hp);
    return sig;
}

int build_batch_eligible(const char *kernel_dir)
{
    char *sig = build_batch_signature(kernel_dir);
    free(sig);
    return sig != NULL;
}

/* One kernel of a batch. */
struct batch_member {
    const char *key, *kernel_dir;
    char *dir, *rel;          /* builds/<key>, absolute and relative */
    char ns[16];              /* lk<i> */
    struct buf src, harness;  /* kernel.cu and harness.cu as read */
    struct macro_names macros;
    int in;                   /* still in the batch */
};

/* The translation unit: every hoisted system include once, the harness core, the structs the
 * harnesses share, then each harness (its kernel.cu included from its build folder) inside its
 * own namespace, with a guard that stops the compile if one of its macros is already defined
 * and an #undef of each after it. */
static int write_batch_tu(const char *bdir, struct batch_member *mb, int n)
{
    struct buf tu = BUF_INIT, incs = BUF_INIT, sorted = BUF_INIT;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (!mb[i].in)
            continue;
        macro_names_release(&mb[i].macros);
        scan_batchable(mb[i].src.data, 0, &incs, &mb[i].macros);
        scan_batchable(mb[i].harness.data, 1, &incs, &mb[i].macros);
    }
    /* unique include lines, first seen first */
    for (const char *p = incs.data; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = (size_t)(nl - p) + 1;
        int seen = 0;
        for (const char *s = sorted.data; s && *s && !seen;) {
            const char *snl = strchr(s, '\n');
            seen = (size_t)(snl - s) + 1 == len && memcmp(s, p, len) == 0;
            s = snl + 1;
        }
        if (!seen)
            buf_add(&sorted, p, len);
        p = nl + 1;
    }
    buf_adds(&tu, "// lscat: harnesses built together (docs/execute.md \"Batched builds\")\n");
    if (sorted.len)
        buf_add(&tu, sorted.data, sorted.len);
    buf_adds(&tu, "#include \"tune/timing.h\"\n#include \"" HARNESS_CORE_INCLUDE "\"\n");
    int first = 1;
    for (int i = 0; i < n && rc == 0; i++) {
        if (!mb[i].in)
            continue;
        if (first) { /* the structs every harness defines the same way */
            for (int s = 0; harness_structs[s]; s++) {
                const char *l = line_starting(mb[i].harness.data, harness_structs[s]);
                const char *e = strstr(l, "};");
                buf_add(&tu, l, (size_t)(e + 2 - l));
                buf_addch(&tu, '\n');
            }
            first = 0;
        }
        /* the harness as included in the batch: its structs gone, kernel.cu its build copy */
        struct buf h = BUF_INIT;
        for (const char *p = mb[i].harness.data; *p;) {
            const char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
            int skip = 0;
            for (int s = 0; harness_structs[s]; s++)
                if (strncmp(p, harness_structs[s], strlen(harness_structs[s])) == 0) {
                    const char *e = strstr(p, "};");
                    const char *enl = e ? strchr(e, '\n') : NULL;
                    len = enl ? (size_t)(enl - p) + 1 : strlen(p);
                    skip = 1;
                }
            if (!skip && strncmp(p, "#include \"kernel.cu\"", 20) == 0)
                buf_addf(&h, "#include \"%s/kernel.cu\"\n", mb[i].dir);
            else if (!skip)
                buf_add(&h, p, len);
            p += len;
        }
        char *hp = xasprintf("%s/h%d.cu", bdir, i);
        rc = fs_write_atomic(hp, h.data, h.len);
        for (int k = 0; k < mb[i].macros.n; k++)
            buf_addf(&tu, "#ifdef %s\n#error \"lscat batch: %s is defined before %s\"\n#endif\n",
                     mb[i].macros.v[k], mb[i].macros.v[k], mb[i].ns);
        buf_addf(&tu, "namespace %s {\n#include \"%s\"\n}\n", mb[i].ns, hp);
        for (int k = 0; k < mb[i].macros.n; k++)
            buf_addf(&tu, "#undef %s\n", mb[i].macros.v[k]);
        free(hp);
        buf_release(&h);
    }
    if (rc == 0) {
        char *tp = fs_join(bdir, "batch.cu");
        rc = fs_write_atomic(tp, tu.data, tu.len);
        free(tp);
    }
    buf_release(&tu);
    buf_release(&incs);
    buf_release(&sorted);
    return rc;
}

/* Which member a diagnostic's file belongs to (its h<i>.cu or its build folder), or -1. */
static int diag_member(const struct diag *d, const struct batch_member *mb, int n,
                       const char *bdir)
{
    if (!d->file)
        return -1;
    for (int i = 0; i < n; i++) {
        char hp[64];
        snprintf(hp, sizeof(hp), "/h%d.cu", i);
        size_t bl = strlen(bdir), dl = strlen(mb[i].dir);
        if ((strncmp(d->file, bdir, bl) == 0 && strcmp(d->file + bl, hp) == 0) ||
            (strncmp(d->file, mb[i].dir, dl) == 0 && d->file[dl] == '/'))
            return i;
    }
    return -1;
}

/* The ptxas lines of member `ns` in the batch log, its names as a build alone has them.
 * Returns the entries found, or -1 when a name could not be rewritten. */
static int member_ptxas(struct buf *out, const char *log, const char *ns)
{
    char pre[32], name[512], alone[512];
    snprintf(pre, sizeof(pre), "_ZN%zu%s", strlen(ns), ns);
    int mine = 0, entries = 0;
    for (const char *p = log; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
        const char *ce = memmem(p, n, "Compiling entry function '", 26);
        const char *fp = memmem(p, n, "Function properties for ", 24);
        if (strncmp(p, "ptxas", 5) == 0 && (ce || fp)) {
            const char *s = ce ? ce + 26 : fp + 24;
            size_t k = strcspn(s, ce ? "'" : " \n");
            if (k >= sizeof(name))
                return -1;
            memcpy(name, s, k);
            name[k] = '\0';
            mine = strncmp(name, pre, strlen(pre)) == 0;
            if (mine) {
                if (ptxas_unnest(alone, sizeof(alone), name, ns) < 0)
                    return -1;
                buf_add(out, p, (size_t)(s - p));
                buf_adds(out, alone);
                buf_add(out, s + k, n - (size_t)(s - p) - k);
                entries += ce != NULL;
            }
        } else if (mine && (p[0] == ' ' || (strncmp(p, "ptxas info    : Used", 20) == 0) ||
                            strncmp(p, "ptxas info    : Compile time", 28) == 0)) {
            buf_add(out, p, n);
        } else if (strncmp(p, "ptxas", 5) == 0) {
            mine = 0;
        }
        p += n;
    }
    return entries;
}

/* Whether some entry of the log belongs to no member (a library template instantiated with a
 * member's type, say), or the module holds global data (a __device__ variable the scan above
 * missed: every member's process would load it): then every member is built alone. */
static int unowned_entries(const char *log)
{
    for (const char *g = strstr(log, " bytes gmem"); g; g = strstr(g + 1, " bytes gmem")) {
        const char *d = g;
        while (d > log && isdigit((unsigned char)d[-1]))
            d--;
        if (d == g || strtol(d, NULL, 10) > BATCH_GMEM_MAX)
            return 1;
    }
    for (const char *p = strstr(log, "Compiling entry function '"); p;
         p = strstr(p + 1, "Compiling entry function '")) {
        const char *s = p + 26;
        if (strncmp(s, "_ZN", 3) != 0)
            return 1;
        char *end;
        unsigned long l = strtoul(s + 3, &end, 10);
        if (l < 3 || strncmp(end, "lk", 2) != 0 || !isdigit((unsigned char)end[2]))
            return 1;
    }
    return 0;
}

static int batch_compile(struct buf *log, int *ok, int *timed_out, const struct build_env *env,
                         const char *bdir, int slot)
{
    struct attempt_ctx a = { env, bdir, NULL, NULL, slot, 0, 0, NULL };
    char *inc = xasprintf("-I%s", env->sandbox_share_dir);
    const char *argv[48];
    int k = 0;
    argv[k++] = env->nvcc;
    for (int i = 0; env->flags[i] && k < 32; i++)
        argv[k++] = env->flags[i];
    const char *tail[] = { inc, "-Xcompiler", "-fPIC", "-c", "-o", "batch.o", "batch.cu", NULL };
    for (int i = 0; tail[i]; i++)
        argv[k++] = tail[i];
    argv[k] = NULL;
    int rc = run_step(log, ok, timed_out, &a, argv);
    free(inc);
    return rc;
}

/* Link member i's harness and harness.so from the batch object, its descriptor as the one the
 * harness core reads. */
static int batch_link(struct buf *log, int *ok, const struct build_env *env,
                      const struct batch_member *m, const char *bobj, int slot)
{
    struct attempt_ctx a = { env, m->dir, m->rel, m->kernel_dir, slot, 0, 0, NULL };
    char *objs[3] = { fs_join(env->core_dir, "timing.o"), fs_join(env->core_dir, "stats.o"),
                      fs_join(env->core_dir, "harness_core.o") };
    char *sym = xasprintf("--defsym=lscat_kernel=_ZN%zu%s12lscat_kernelE", strlen(m->ns), m->ns);
    int rc = 0, so_ok = 0, to = 0;
    *ok = 0;
    for (int step = 1; step <= 2 && rc == 0 && (step == 1 || *ok); step++) {
        const char *argv[48];
        int k = 0;
        argv[k++] = env->nvcc;
        for (int i = 0; env->flags[i] && k < 32; i++)
            argv[k++] = env->flags[i];
        if (step == 2) {
            argv[k++] = "-shared";
            argv[k++] = "-Xlinker";
            argv[k++] = "-Bsymbolic";
        }
        const char *tail[] = { "-Xlinker", sym, "-o", step == 1 ? "harness" : "harness.so", bobj,
                               objs[0], objs[1], objs[2], NULL };
        for (int i = 0; tail[i]; i++)
            argv[k++] = tail[i];
        argv[k] = NULL;
        rc = run_step(log, step == 1 ? ok : &so_ok, &to, &a, argv);
        if (step == 2 && rc == 0 && !so_ok)
            buf_adds(log, "[harness.so not built: tune runs this kernel as a process]\n");
    }
    for (int i = 0; i < 3; i++)
        free(objs[i]);
    free(sym);
    return rc;
}

int build_batch(struct build_result *out, int *done, const struct build_env *env,
                const char *const *keys, const char *const *kernel_dirs, int n, int slot)
{
    struct batch_member *mb = xcalloc((size_t)n, sizeof(*mb));
    double t0 = fs_mono_s();
    int rc = 0, in = 0;
    char *brel = xasprintf("builds/batch-%s", keys[0]);
    char *bdir = fs_join(env->work_dir, brel);
    for (int i = 0; i < n; i++) {
        done[i] = 0;
        memset(&out[i], 0, sizeof(out[i]));
        mb[i].key = keys[i];
        mb[i].kernel_dir = kernel_dirs[i];
        mb[i].rel = xasprintf("builds/%s", keys[i]);
        mb[i].dir = fs_join(env->work_dir, mb[i].rel);
        snprintf(mb[i].ns, sizeof(mb[i].ns), "lk%d", i);
    }
    if (fs_is_dir(bdir))
        rc = fs_remove_tree(bdir);
    if (rc == 0)
        rc = fs_mkdirs(bdir, 0755);
    /* each member's build folder as build_kernel makes it */
    for (int i = 0; i < n && rc == 0; i++) {
        char *ksrc = fs_join(kernel_dirs[i], "kernel.cu"), *hsrc = fs_join(kernel_dirs[i],
                                                                           "harness.cu");
        char *kdst = fs_join(mb[i].dir, "kernel.cu"), *hdst = fs_join(mb[i].dir, "harness.cu");
        if (fs_is_dir(mb[i].dir))
            rc = fs_remove_tree(mb[i].dir);
        if (rc == 0)
            rc = fs_mkdirs(mb[i].dir, 0755);
        if (rc == 0)
            rc = buf_read_file(&mb[i].src, ksrc);
        if (rc == 0)
            rc = buf_read_file(&mb[i].harness, hsrc);
        if (rc == 0)
            rc = fs_write_atomic(kdst, mb[i].src.data, mb[i].src.len);
        if (rc == 0)
            rc = fs_copy_atomic(hsrc, hdst);
        mb[i].in = rc == 0 && mb[i].src.data && mb[i].harness.data;
        in += mb[i].in;
        free(ksrc);
        free(hsrc);
        free(kdst);
        free(hdst);
    }
    struct buf log = BUF_INIT;
    int ok = 0, timed_out = 0;
    /* compile; once more without the members the errors point at */
    for (int round = 0; rc == 0 && in >= 2 && round < 2; round++) {
        buf_reset(&log);
        rc = write_batch_tu(bdir, mb, n);
        if (rc == 0)
            rc = batch_compile(&log, &ok, &timed_out, env, bdir, slot);
        if (rc < 0 || ok || timed_out)
            break;
        struct diag_list diags = DIAG_LIST_INIT;
        classify_parse(&diags, log.data);
        int dropped = 0;
        for (size_t j = 0; j < diags.count; j++) {
            int m = diag_member(&diags.items[j], mb, n, bdir);
            const char *lk = diags.items[j].message ? strstr(diags.items[j].message,
                                                             "is defined before lk") : NULL;
            if (lk)
                m = atoi(lk + 20);
            if (m >= 0 && m < n && mb[m].in) {
                mb[m].in = 0;
                in--;
                dropped++;
            }
        }
        diag_list_release(&diags);
        if (!dropped)
            break;
    }
    char *blog = fs_join(bdir, "batch.log");
    if (rc == 0 && log.len)
        fs_write_atomic(blog, log.data, log.len);
    free(blog);
    double compile_s = fs_mono_s() - t0;
    if (rc == 0 && ok && in >= 1 && !unowned_entries(log.data)) {
        struct diag_list diags = DIAG_LIST_INIT;
        classify_parse(&diags, log.data);
        char *bobj = fs_join(bdir, "batch.o");
        for (int i = 0; i < n && rc == 0; i++) {
            if (!mb[i].in)
                continue;
            /* a deprecated API only warns: alone, the repair loop would edit it */
            struct diag_list mine = DIAG_LIST_INIT;
            for (size_t j = 0; j < diags.count; j++)
                if (diag_member(&diags.items[j], mb, n, bdir) == i &&
                    diags.items[j].cls == CLASS_REMOVED_CUDA_API)
                    mine.count++;
            if (mine.count)
                continue;
            struct buf klog = BUF_INIT, px = BUF_INIT;
            double l0 = fs_mono_s();
            buf_addf(&klog, "[compiled with %d other harness(es) in one nvcc run: %s/batch.cu, "
                            "namespace %s; names below as built alone; the batch's log: "
                            "%s/batch.log]\n",
                     in - 1, brel, mb[i].ns, brel);
            /* what nvcc said about its files (warnings), as a build alone would show it */
            char hp[64];
            snprintf(hp, sizeof(hp), "%s/h%d.cu", brel, i);
            for (const char *p = log.data; *p;) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
                if ((memmem(p, len, mb[i].dir, strlen(mb[i].dir)) ||
                     memmem(p, len, hp, strlen(hp))) && strncmp(p, "$ ", 2) != 0)
                    buf_add(&klog, p, len);
                p += len;
            }
            int entries = member_ptxas(&px, log.data, mb[i].ns);
            int link_ok = 0;
            if (entries > 0) {
                buf_add(&klog, px.data, px.len);
                rc = batch_link(&klog, &link_ok, env, &mb[i], bobj, slot);
            }
            if (rc == 0 && entries > 0 && link_ok) {
                struct attempt_ctx a = { env, mb[i].dir, mb[i].rel, mb[i].kernel_dir, slot, 0, 0,
                                         NULL };
                char *lp = xasprintf("%s/build-1.log", mb[i].dir);
                rc = fs_write_atomic(lp, klog.data, klog.len);
                free(lp);
                struct build_result *r = &out[i];
                buf_init(&r->fixes, 0);
                buf_adds(&r->fixes, "[]");
                r->attempts = 1;
                r->att[0].ok = 1;
                r->att[0].cls = CLASS_NONE;
                r->att[0].log_path = xasprintf("%s/build-1.log", mb[i].rel);
                /* the shared compile split evenly, and this member's own links */
                r->att[0].wall_s = compile_s / in + (fs_mono_s() - l0);
                r->build_s = r->att[0].wall_s;
                r->final_class = CLASS_NONE;
                finish_ok(r, &a, klog.data);
                done[i] = rc == 0;
            }
            buf_release(&klog);
            buf_release(&px);
        }
        free(bobj);
        diag_list_release(&diags);
    }
    buf_release(&log);
    for (int i = 0; i < n; i++) {
        buf_release(&mb[i].src);
        buf_release(&mb[i].harness);
        macro_names_release(&mb[i].macros);
        free(mb[i].dir);
        free(mb[i].rel);
    }
    free(mb);
    /* the object is linked into every member: not kept */
    char *bo = fs_join(bdir, "batch.o");
    unlink(bo);
    free(bo);
    free(bdir);
    free(brel);
    return rc;
}
