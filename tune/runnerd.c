/* lscat-runner: one long-lived process per GPU that runs many harnesses in turn, each a shared
 * object (harness.so) loaded with dlopen, so process start, CUDA context creation and NVML
 * initialisation are paid once per GPU instead of once per kernel (docs/tune.md "Runner").
 * It holds the device's primary context (cuDevicePrimaryCtxRetain through a dlopen'ed libcuda)
 * for its whole life, so a harness's own static cudart never tears the context down.
 *
 * Protocol (stdin = control, fd 3 = results and markers, stdout/stderr = kernel output):
 *   runner -> fd 3   "@ready <pid>"                  once, when the context is held
 *   tune -> stdin    "@run\t<path.so>\t<arg>\t<arg>..." then configuration lines, then "@end"
 *   harness -> fd 3  its header and result lines (it opens --results /dev/fd/3 as always)
 *   runner -> fd 3   "@done <rc>[ <message>]"       after each kernel: the harness's return
 *                    code; 126 = could not load it (message says why: run it as a process)
 *   tune -> stdin    "@quit" (or EOF): exit 0
 * After rc 4 (sticky CUDA error: the context is unusable) the runner exits with status 4.
 * Each harness.so is unloaded (dlclose) after its kernel unless `--keep-loaded`
 * (LSCAT_RUNNER_KEEP_LOADED=1). Built without CUDA: host-only C, libdl; `--no-cuda`
 * (LSCAT_RUNNER_NO_CUDA=1) skips the context, for tests that run host-only stand-in harnesses
 * on machines without a GPU (LSCAT_RUNNER_NO_CUDA_READY_MS=N: says @ready N ms after its start,
 * as a context being made would). */
#include "tune/nvml_dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CONTROL_FD_MIN 10
#define MAX_ARGS 128

typedef int (*harness_main_fn)(int argc, char **argv);

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* LSCAT_RUNNER_TRACE=FILE: one line per kernel, "load_ms main_ms unload_ms path" (bench). */
static void trace(double t0, double t1, double t2, double t3, const char *path)
{
    const char *f = getenv("LSCAT_RUNNER_TRACE");
    FILE *o = f && *f ? fopen(f, "a") : NULL;
    if (!o)
        return;
    fprintf(o, "%.3f %.3f %.3f %s\n", t1 - t0, t2 - t1, t3 - t2, path);
    fclose(o);
}

struct control {
    int fd;
    char buf[65536];
    size_t len, pos;
    int eof;
};

/* One line from the control stream without its newline, in `out` (NUL-terminated, cut at
 * `size`). Returns 0, or -1 at EOF. */
static int control_line(struct control *c, char *out, size_t size)
{
    size_t k = 0;
    while (1) {
        if (c->pos == c->len) {
            if (c->eof)
                return k ? 0 : -1;
            ssize_t r = read(c->fd, c->buf, sizeof(c->buf));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                c->eof = 1;
                continue;
            }
            c->len = (size_t)r;
            c->pos = 0;
        }
        char ch = c->buf[c->pos++];
        if (ch == '\n') {
            out[k] = 0;
            return 0;
        }
        if (k + 1 < size)
            out[k++] = ch;
        out[k] = 0;
    }
}

static void marker(const char *fmt, int rc, const char *msg)
{
    char line[1024];
    int n = snprintf(line, sizeof(line) - 1, fmt, rc, msg ? msg : "");
    if (n < 0)
        return;
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    for (int i = 0; i < n; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    line[n++] = '\n';
    if (write(3, line, (size_t)n) < 0)
        _exit(3); /* tune is gone */
}

/* Hold the primary context of device `dev` for the runner's life. */
static int retain_context(int dev)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    int (*init)(unsigned), (*get)(int *, int), (*retain)(void **, int);
    void *ctx = NULL;
    int d = 0, rc;
    if (!lib) {
        fprintf(stderr, "lscat-runner: cannot load libcuda.so.1: %s\n", dlerror());
        return -1;
    }
    *(void **)&init = dlsym(lib, "cuInit");
    *(void **)&get = dlsym(lib, "cuDeviceGet");
    *(void **)&retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
    if (!init || !get || !retain) {
        fprintf(stderr, "lscat-runner: libcuda.so.1 lacks the driver API\n");
        return -1;
    }
    if ((rc = init(0)) != 0 || (rc = get(&d, dev)) != 0 || (rc = retain(&ctx, d)) != 0) {
        fprintf(stderr, "lscat-runner: device %d: CUDA driver error %d\n", dev, rc);
        return -1;
    }
    return 0;
}

/* Configuration lines up to "@end" into a memfd that becomes fd 0 (and stdin, purged). */
static int take_configs(struct control *c, char *line, size_t size)
{
    int fd = memfd_create("lscat-runner-stdin", 0);
    if (fd < 0)
        return -1;
    while (control_line(c, line, size) == 0 && strcmp(line, "@end") != 0) {
        size_t n = strlen(line);
        line[n] = '\n';
        if (write(fd, line, n + 1) != (ssize_t)(n + 1)) {
            close(fd);
            return -1;
        }
    }
    lseek(fd, 0, SEEK_SET);
    int rc = dup2(fd, 0) < 0 ? -1 : 0;
    close(fd);
    __fpurge(stdin);
    clearerr(stdin);
    return rc;
}

/* Load, run and (unless keep_loaded) unload one harness. Returns its return code. */
static int run_one(char *spec, struct control *c, char *line, size_t size, int keep_loaded)
{
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    for (char *save = NULL, *t = strtok_r(spec, "\t", &save); t && argc < MAX_ARGS;
         t = strtok_r(NULL, "\t", &save))
        argv[argc++] = t;
    argv[argc] = NULL;
    char *path = argc ? strdup(argv[0]) : NULL;
    int rc = take_configs(c, line, size);
    if (rc < 0 || !path) {
        marker("@done %d %s", 126, "cannot set up the harness's stdin");
        free(path);
        return 126;
    }
    double t0 = mono_ms();
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    harness_main_fn fn = NULL;
    if (so)
        *(void **)&fn = dlsym(so, "lscat_harness_main");
    if (!fn) {
        marker("@done %d %s", 126, so ? "no lscat_harness_main in the harness" : dlerror());
        if (so)
            dlclose(so);
        free(path);
        return 126;
    }
    double t1 = mono_ms();
    rc = fn(argc, argv);
    double t2 = mono_ms();
    fflush(stdout);
    fflush(stderr);
    if (rc == 4) { /* the context is gone: nothing of ours may touch it again */
        marker("@done %d%s", rc, "");
        _exit(4);
    }
    if (!keep_loaded) /* before "@done": a crash while unloading is this kernel's, not the next's */
        dlclose(so);
    trace(t0, t1, t2, mono_ms(), path);
    marker("@done %d%s", rc, "");
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) {
        dup2(null_fd, 0);
        close(null_fd);
    }
    free(path);
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: lscat-runner [--device N] [--keep-loaded] [--no-cuda]\n"
                    "  an internal helper of lscat tune (docs/tune.md \"Runner\"): control lines\n"
                    "  on stdin, results and markers on fd 3\n");
    return 2;
}

int main(int argc, char **argv)
{
    int dev = 0, keep_loaded;
    const char *nc = getenv("LSCAT_RUNNER_NO_CUDA"), *kl = getenv("LSCAT_RUNNER_KEEP_LOADED");
    int no_cuda = nc && !strcmp(nc, "1");
    keep_loaded = kl && !strcmp(kl, "1");
    static struct control c;
    static char line[65536];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc)
            dev = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--keep-loaded"))
            keep_loaded = 1;
        else if (!strcmp(argv[i], "--no-cuda"))
            no_cuda = 1;
        else
            return usage();
    }
    if (fcntl(3, F_GETFD) < 0) {
        fprintf(stderr, "lscat-runner: fd 3 (results) is not open\n");
        return usage();
    }
    /* The control stream moves off fd 0: each harness gets its own stdin there. */
    c.fd = fcntl(0, F_DUPFD_CLOEXEC, CONTROL_FD_MIN);
    int null_fd = open("/dev/null", O_RDONLY);
    if (c.fd < 0 || null_fd < 0 || dup2(null_fd, 0) < 0)
        return 3;
    close(null_fd);
    if (!no_cuda && retain_context(dev) < 0)
        return 3;
    const char *rm = getenv("LSCAT_RUNNER_NO_CUDA_READY_MS"); /* tests: a stand-in context */
    if (no_cuda && rm && atoi(rm) > 0)
        usleep((useconds_t)atoi(rm) * 1000);
    struct nvml_dl nvml; /* kept initialised: each harness's nvmlInit is then a refcount */
    if (!no_cuda)
        nvml_dl_load(&nvml, NULL);
    marker("@ready %d%s", (int)getpid(), "");
    while (control_line(&c, line, sizeof(line)) == 0) {
        if (!strncmp(line, "@run\t", 5)) {
            char *spec = strdup(line + 5);
            run_one(spec, &c, line, sizeof(line), keep_loaded);
            free(spec);
        } else if (!strcmp(line, "@quit")) {
            break;
        } else if (line[0]) {
            fprintf(stderr, "lscat-runner: unexpected control line '%.100s'\n", line);
            marker("@done %d %s", 2, "unexpected control line");
        }
    }
    fflush(stdout);
    fflush(stderr);
    _exit(0); /* the driver reclaims the context; kept harnesses' destructors need not run */
}
