/* Builds of `lscat sweep`: the timing core and the host program (tune/sweep_host.cu) compiled
 * once per architecture list, then one nvcc run per compile-time tuple (the user's kernel and
 * driver with the tuple's -D flags, linked with them), o->jobs at a time, each cached under
 * <work>/sweep-builds/<hash>/ keyed by everything that goes into it. */
#include "tune/usersweep.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/toolkit.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/sha256.h"
#include "common/xalloc.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LSCAT_SOURCE_DIR
#define LSCAT_SOURCE_DIR "."
#endif

#define LOG_CAP_BYTES (1u << 20)

struct toolchain {
    char *nvcc, *share, *version;
    char **arch;                /* -gencode flags, NULL-terminated */
    char *core_dir;             /* timing.o stats.o sweep_host.o */
    char key[65];               /* of nvcc, flags and lscat's sources */
};


static int run(struct proc_result *r, const char *const *argv, const char *cwd, double t)
{
    struct proc_options o = PROC_OPTIONS_INIT;
    o.argv = argv;
    o.cwd = cwd;
    o.timeout_s = t;
    o.out_cap_bytes = LOG_CAP_BYTES;
    return proc_run(r, &o);
}

/* "sm_80,sm_90" -> -gencode per architecture, PTX of the last embedded too. */
static int arch_flags(struct toolchain *t, const char *arch)
{
    char *copy = xstrdup(arch), *save = NULL;
    size_t n = 0;
    t->arch = xcalloc(strlen(arch) / 2 + 2, sizeof(char *));
    for (char *a = strtok_r(copy, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
        if (strncmp(a, "sm_", 3) != 0 || strspn(a + 3, "0123456789") == 0 ||
            strlen(a) > 8) {
            free(copy);
            return lscat_error_setc(LSCAT_EINVALID, "bad architecture '%s' in --arch (use e.g. "
                                    "sm_90 or sm_80,sm_90)", a);
        }
        int more = save && *save; /* the last one also as PTX */
        t->arch[n++] = more ? xasprintf("-gencode=arch=compute_%s,code=sm_%s", a + 3, a + 3)
                            : xasprintf("-gencode=arch=compute_%s,code=[sm_%s,compute_%s]",
                                        a + 3, a + 3, a + 3);
    }
    free(copy);
    return n ? 0 : lscat_error_setc(LSCAT_EINVALID, "--arch is empty");
}

static void hash_file(struct sha256 *c, const char *path)
{
    struct buf b = BUF_INIT;
    if (buf_read_file(&b, path) < 0)
        buf_adds(&b, "\x01missing");
    uint64_t len = b.len;
    sha256_update(c, path, strlen(path) + 1);
    sha256_update(c, &len, sizeof(len));
    sha256_update(c, b.data, b.len);
    buf_release(&b);
}

static int toolchain_init(struct toolchain *t, const struct usersweep_options *o)
{
    memset(t, 0, sizeof(*t));
    if (!(t->nvcc = toolkit_find_nvcc(NULL)))
        return lscat_error_set("nvcc not found (install the CUDA toolkit, or set CUDA_HOME or "
                               "PATH)");
    if (!(t->share = toolkit_find_share("tune/sweep_host.cu", LSCAT_SOURCE_DIR)))
        return lscat_error_set("lscat's sources for sweeps (tune/sweep_host.cu, tune/timing.cu) "
                               "were not found (set LSCAT_SHARE_DIR to the lscat source tree or "
                               "<prefix>/share/lscat)");
    struct proc_result r;
    const char *argv[] = { t->nvcc, "--version", NULL };
    int rc = run(&r, argv, NULL, 60);
    const char *v = rc == 0 ? strstr(r.out.data, ", V") : NULL;
    if (v)
        t->version = xstrndup(v + 3, strcspn(v + 3, " \n"));
    proc_result_release(&r);
    if (!v)
        return lscat_error_set("cannot read the version of '%s' (is it a working nvcc?)",
                               t->nvcc);
    if ((rc = arch_flags(t, o->arch)) < 0)
        return rc;
    struct sha256 c;
    unsigned char d[32];
    sha256_init(&c);
    sha256_update(&c, t->version, strlen(t->version) + 1);
    for (int i = 0; t->arch[i]; i++)
        sha256_update(&c, t->arch[i], strlen(t->arch[i]) + 1);
    const char *parts[] = { "tune/timing.h", "tune/timing.cu", "tune/stats.c", "tune/nvml_dl.h",
                            "tune/sweep_host.cu", "tune/sweep_driver.h", NULL };
    for (int i = 0; parts[i]; i++) {
        char *p = fs_join(t->share, parts[i]);
        hash_file(&c, p);
        free(p);
    }
    sha256_final(&c, d);
    sha256_to_hex(t->key, d);
    t->core_dir = xasprintf("%s/sweep-builds/core-%.16s", o->work_dir, t->key);
    return 0;
}

static void toolchain_release(struct toolchain *t)
{
    for (int i = 0; t->arch && t->arch[i]; i++)
        free(t->arch[i]);
    free(t->arch);
    free(t->nvcc);
    free(t->share);
    free(t->version);
    free(t->core_dir);
}

/* nvcc <arch> -O3 -I<share> <extra> -c <src> -o <obj>, in `cwd`. */
static int compile_core_part(const struct toolchain *t, const char *cwd, const char *src,
                             const char *obj)
{
    const char *argv[32];
    int k = 0;
    char *inc = xasprintf("-I%s", t->share), *path = fs_join(t->share, src);
    argv[k++] = t->nvcc;
    for (int i = 0; t->arch[i] && k < 20; i++)
        argv[k++] = t->arch[i];
    argv[k++] = "-O3";
    argv[k++] = inc;
    if (strstr(src, ".c") && !strstr(src, ".cu"))
        argv[k++] = "-x", argv[k++] = "c";
    argv[k++] = "-c", argv[k++] = path, argv[k++] = "-o", argv[k++] = obj;
    argv[k] = NULL;
    struct proc_result r;
    int rc = run(&r, argv, cwd, 600);
    if (rc == 0 && (r.timed_out || r.signal || r.exit_code))
        rc = lscat_error_set("cannot compile lscat's %s for sweeps: %.400s", src, r.err.data);
    proc_result_release(&r);
    free(inc);
    free(path);
    return rc;
}

static int ensure_core(const struct toolchain *t)
{
    char *probe = fs_join(t->core_dir, "sweep_host.o");
    int have = fs_exists(probe);
    free(probe);
    if (have)
        return 0;
    char *tmp = xasprintf("%s.tmp.%d", t->core_dir, (int)getpid());
    int rc = fs_mkdirs(tmp, 0755);
    if (rc == 0)
        rc = compile_core_part(t, tmp, "tune/timing.cu", "timing.o");
    if (rc == 0)
        rc = compile_core_part(t, tmp, "tune/stats.c", "stats.o");
    if (rc == 0)
        rc = compile_core_part(t, tmp, "tune/sweep_host.cu", "sweep_host.o");
    if (rc == 0 && rename(tmp, t->core_dir) != 0 && !fs_is_dir(t->core_dir))
        rc = lscat_error_set("cannot rename '%s': %s", tmp, strerror(errno));
    fs_remove_tree(tmp);
    free(tmp);
    return rc;
}

struct build_job {
    const struct toolchain *t;
    const struct usersweep_options *o;
    const struct bonsai_space *s;
    const int *want;
    struct usersweep_build *out;
    pthread_mutex_t lock;
    int next;
};

static void group_key(char out[65], const struct build_job *j, char **flags)
{
    struct sha256 c;
    unsigned char d[32];
    sha256_init(&c);
    sha256_update(&c, j->t->key, 65);
    hash_file(&c, j->o->kernel_path);
    hash_file(&c, j->o->driver_path);
    for (int i = 0; flags[i]; i++)
        sha256_update(&c, flags[i], strlen(flags[i]) + 1);
    const char *extra = j->o->nvcc_flags ? j->o->nvcc_flags : "";
    sha256_update(&c, extra, strlen(extra) + 1);
    sha256_final(&c, d);
    sha256_to_hex(out, d);
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
}

/* The nvcc command of one group: kernel + driver + core objects -> `sweep`. */
static char **group_argv(const struct build_job *j, char **flags, char **extra)
{
    const struct toolchain *t = j->t;
    size_t n = 0, cap = 64;
    char **v = xcalloc(cap, sizeof(char *));
    char *kdir = dir_of(j->o->kernel_path), *ddir = dir_of(j->o->driver_path);
    v[n++] = xstrdup(t->nvcc);
    for (int i = 0; t->arch[i] && n < 16; i++)
        v[n++] = xstrdup(t->arch[i]);
    v[n++] = xstrdup("-O3");
    v[n++] = xasprintf("-I%s", t->share);
    v[n++] = xasprintf("-I%s", kdir);
    v[n++] = xasprintf("-I%s", ddir);
    for (int i = 0; flags[i]; i++) {
        XGROW(v, n + 12, cap);
        v[n++] = xstrdup(flags[i]);
    }
    for (int i = 0; extra && extra[i]; i++) {
        XGROW(v, n + 12, cap);
        v[n++] = xstrdup(extra[i]);
    }
    v[n++] = xstrdup(j->o->kernel_path);
    v[n++] = xstrdup(j->o->driver_path);
    v[n++] = fs_join(t->core_dir, "sweep_host.o");
    v[n++] = fs_join(t->core_dir, "timing.o");
    v[n++] = fs_join(t->core_dir, "stats.o");
    v[n++] = xstrdup("-o");
    v[n++] = xstrdup("sweep");
    v[n] = NULL;
    free(kdir);
    free(ddir);
    return v;
}

static void free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static char **split_words(const char *s)
{
    char **v = xcalloc(strlen(s ? s : "") / 2 + 2, sizeof(char *));
    char *copy = xstrdup(s ? s : ""), *save = NULL;
    size_t n = 0;
    for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
        v[n++] = xstrdup(w);
    free(copy);
    return v;
}

/* The first line of nvcc's output that says "error", for messages. */
static char *first_error(const struct proc_result *r, const struct proc_options *po)
{
    const char *text = strstr(r->err.data, "error") ? r->err.data : r->out.data;
    const char *e = strstr(text, "error");
    if (!e) {
        struct buf b = BUF_INIT;
        proc_describe(&b, r, po);
        return buf_detach(&b, NULL);
    }
    const char *start = e;
    while (start > text && start[-1] != '\n')
        start--;
    return xstrndup(start, strcspn(start, "\n") > 300 ? 300 : strcspn(start, "\n"));
}

static void write_log(const char *path, const struct proc_result *r)
{
    struct buf b = BUF_INIT;
    buf_add(&b, r->out.data, r->out.len);
    buf_add(&b, r->err.data, r->err.len);
    fs_write_atomic(path, b.data, b.len);
    buf_release(&b);
}

static void build_group(struct build_job *j, int g)
{
    struct usersweep_build *b = &j->out[g];
    char key[65];
    char **flags = bonsai_group_flags(j->s, g), **extra = split_words(j->o->nvcc_flags);
    group_key(key, j, flags);
    char *dir = xasprintf("%s/sweep-builds/%.16s", j->o->work_dir, key);
    char *tmp = xasprintf("%s.tmp.%d.%d", dir, (int)getpid(), g);
    char *bin = fs_join(dir, "sweep");
    b->log_path = fs_join(dir, "build.log");
    if (fs_exists(bin)) {
        b->binary = bin, b->cached = 1, bin = NULL;
        goto done;
    }
    char **argv = group_argv(j, flags, extra);
    struct proc_options po = PROC_OPTIONS_INIT;
    struct proc_result r;
    po.argv = (const char *const *)argv;
    po.cwd = tmp;
    po.timeout_s = j->o->compile_timeout_s;
    po.out_cap_bytes = LOG_CAP_BYTES;
    fs_remove_tree(dir); /* a failed build's log */
    if (fs_mkdirs(tmp, 0755) < 0) {
        b->error = xasprintf("cannot build: %s", lscat_error_last());
        free_strv(argv);
        goto done;
    }
    int rc = proc_run(&r, &po);
    if (rc == 0) {
        char *log = fs_join(tmp, "build.log");
        write_log(log, &r);
        free(log);
    }
    int built = rc == 0 && !r.timed_out && !r.signal && !r.exit_code;
    int moved = built && rename(tmp, dir) == 0, move_errno = errno;
    if (moved) {
        b->binary = bin, bin = NULL;
    } else if (built && fs_exists(bin)) { /* another sweep (lscat-mpi's next chunk) was first */
        b->binary = bin, b->cached = 1, bin = NULL;
    } else if (built) {
        b->error = xasprintf("cannot move the build '%s' to '%s': %s", tmp, dir,
                             strerror(move_errno));
    } else if (rc == 0) {
        b->error = r.timed_out ? xasprintf("nvcc ran past --compile-timeout (%.0f s)",
                                           po.timeout_s) : first_error(&r, &po);
        rename(tmp, dir); /* keep the log where the message says */
    } else {
        b->error = xasprintf("cannot run nvcc: %s", lscat_error_last());
    }
    proc_result_release(&r);
    free_strv(argv);
    fs_remove_tree(tmp);
done:
    free(bin);
    free(dir);
    free(tmp);
    bonsai_flags_free(flags);
    free_strv(extra);
}

static void *build_worker(void *arg)
{
    struct build_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        while (j->next < j->s->ngroups && !j->want[j->next])
            j->next++;
        int g = j->next < j->s->ngroups ? j->next++ : -1;
        pthread_mutex_unlock(&j->lock);
        if (g < 0)
            return NULL;
        build_group(j, g);
        log_debug("sweep group %d: %s", g, j->out[g].binary ? "built" : j->out[g].error);
    }
}

int usersweep_build_all(struct usersweep_build *out, const struct usersweep_options *o,
                        const struct bonsai_space *s, const int *want)
{
    struct toolchain t;
    int rc = toolchain_init(&t, o);
    if (rc == 0)
        rc = ensure_core(&t);
    if (rc < 0) {
        toolchain_release(&t);
        return rc;
    }
    struct build_job j = { .t = &t, .o = o, .s = s, .want = want, .out = out, .next = 0 };
    pthread_mutex_init(&j.lock, NULL);
    int n = o->jobs > 0 ? o->jobs : 1;
    if (n > s->ngroups)
        n = s->ngroups;
    pthread_t *th = xcalloc((size_t)n, sizeof(*th));
    int *started = xcalloc((size_t)n, sizeof(int));
    for (int i = 1; i < n; i++)
        started[i] = pthread_create(&th[i], NULL, build_worker, &j) == 0;
    build_worker(&j);
    for (int i = 1; i < n; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    free(started);
    free(th);
    pthread_mutex_destroy(&j.lock);
    toolchain_release(&t);
    return 0;
}

void usersweep_build_release(struct usersweep_build *b)
{
    free(b->binary);
    free(b->log_path);
    free(b->error);
    memset(b, 0, sizeof(*b));
}

int usersweep_describe(char **out, const char *binary)
{
    const char *argv[] = { binary, "--describe", NULL };
    struct proc_result r;
    *out = NULL;
    int rc = run(&r, argv, NULL, 60);
    if (rc == 0 && !r.exit_code && !r.signal && !strncmp(r.out.data, "outputs\t", 8))
        *out = xstrndup(r.out.data + 8, strcspn(r.out.data + 8, "\n"));
    else if (rc == 0)
        rc = lscat_error_set("'%s --describe' failed: %.300s", binary, r.err.data);
    proc_result_release(&r);
    return rc;
}
