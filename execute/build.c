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
