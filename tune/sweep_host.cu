/* The host program of `lscat sweep`: linked with the user's kernel file, their driver and the
 * timing core into one binary per compile-time tuple. It reads records on stdin, runs the
 * driver's callbacks for each and times its launch through the timing core, and writes one
 * result line per record on fd 3 (the user's own output goes to stdout/stderr, kept apart).
 * lscat-sweep (tune/usersweep.c) restarts it after a crash, a hang or a sticky CUDA error.
 *
 * Protocol (tab-separated lines):
 *   stdin:  "@names<TAB>N1<TAB>N2..."       once, the space's parameter names in column order
 *           "<index><TAB><best_ns><TAB>v1<TAB>v2..."   one record (best_ns: best time so far
 *                                                       in the sweep, 0 = none yet)
 *   fd 3:   "@ready" | "@nodevice<TAB>why"  after start
 *           "@result<TAB>index<TAB>Error<TAB>median_ns<TAB>min_ns<TAB>abandoned<TAB>lost<TAB>
 *            out1=v,out2=v<TAB>message"      one per record (Error: None, Launch, Test;
 *                                            lost = 1: a sticky CUDA error, exiting with 4)
 *   argv:   --describe (print "outputs<TAB>list" on stdout, touch no GPU), --abandon K,
 *           --warmup N, --samples N, --min-sample-ms X, --no-graph.
 * Exit: 0 at end of input, 3 no device, 4 after a sticky CUDA error (the context is lost).
 * LSCAT_SWEEP_NO_CUDA=1 (tests without a GPU): no CUDA calls; launch is timed with the host
 * clock, stream NULL; a step returning 700 or 719 (an illegal address, a launch failure) ends the
 * context, as those are sticky. With it, LSCAT_SWEEP_NO_CUDA_GONE=PATH: the stand-in device is
 * gone once PATH exists (a start says @nodevice); LSCAT_SWEEP_NO_CUDA_READY_MS=N: @ready N ms
 * after the start, as a context being made would. */
#include "tune/sweep_driver.h"
#include "tune/timing.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_FIELDS 256
#define MAX_OUTPUTS 32
#define LINE_BYTES (1 << 16)

struct lscat_sweep_record {
    int index;
    int nvalues;
    char **names;      /* borrowed from the host's name list */
    char *values[MAX_FIELDS];
    double time_s;
    double outputs[MAX_OUTPUTS];
};

static struct {
    char *names[MAX_FIELDS];
    int nnames;
    char *outputs[MAX_OUTPUTS];
    int noutputs;
    int no_cuda;
    double abandon_k;
    struct timing_options topts;
    FILE *res;
} host;

static int find_name(const struct lscat_sweep_record *r, const char *name)
{
    for (int i = 0; i < r->nvalues; i++)
        if (!strcmp(r->names[i], name))
            return i;
    fprintf(stderr, "lscat sweep driver: the space has no parameter '%s' (record %d)\n", name,
            r->index);
    abort();
}

extern "C" long long lscat_sweep_int(const struct lscat_sweep_record *r, const char *name)
{
    return strtoll(r->values[find_name(r, name)], NULL, 10);
}

extern "C" double lscat_sweep_real(const struct lscat_sweep_record *r, const char *name)
{
    return strtod(r->values[find_name(r, name)], NULL);
}

extern "C" const char *lscat_sweep_string(const struct lscat_sweep_record *r, const char *name)
{
    return r->values[find_name(r, name)];
}

extern "C" int lscat_sweep_index(const struct lscat_sweep_record *r) { return r->index; }

extern "C" double lscat_sweep_time_s(const struct lscat_sweep_record *r) { return r->time_s; }

extern "C" void lscat_sweep_set_output(struct lscat_sweep_record *r, const char *column,
                                       double value)
{
    for (int i = 0; i < host.noutputs; i++)
        if (!strcmp(host.outputs[i], column)) {
            r->outputs[i] = value;
            return;
        }
    fprintf(stderr, "lscat sweep driver: output column '%s' is not in lscat_sweep_driver."
                    "outputs; ignored\n", column);
}

static int split_tabs(char *line, char **out, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < max;) {
        out[n++] = p;
        char *t = strchr(p, '\t');
        if (!t)
            break;
        *t = '\0';
        p = t + 1;
    }
    return n;
}

static void parse_outputs(void)
{
    const char *list = lscat_sweep_driver.outputs ? lscat_sweep_driver.outputs : "";
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ", ", &save); t && host.noutputs < MAX_OUTPUTS;
         t = strtok_r(NULL, ", ", &save))
        host.outputs[host.noutputs++] = strdup(t);
    free(copy);
}

struct launch_ctx {
    struct lscat_sweep_record *rec;
    void *data;
};

static int launch_cb(void *ctx, timing_stream_t stream)
{
    struct launch_ctx *c = (struct launch_ctx *)ctx;
    return lscat_sweep_driver.launch(c->rec, c->data, (cudaStream_t)stream);
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Host-clock timing of `samples` launches (LSCAT_SWEEP_NO_CUDA tests). */
static int measure_host_clock(struct timing_stats *st, struct launch_ctx *c, int samples)
{
    double v[256];
    int n = samples < 256 ? samples : 256;
    for (int i = 0; i < n; i++) {
        double t0 = now_ns();
        int rc = launch_cb(c, NULL);
        if (rc)
            return rc;
        v[i] = now_ns() - t0;
    }
    timing_compute_stats(st, v, n);
    return 0;
}

static int measure(struct timing_stats *st, struct launch_ctx *c, int quick, cudaStream_t s)
{
    struct timing_options o = host.topts;
    if (quick) {
        o.warmup = 1;
        o.samples = 3;
        o.target_rel_mad = 0;
    }
    if (host.no_cuda)
        return measure_host_clock(st, c, o.samples);
    return timing_measure_launch(st, &o, launch_cb, c, (timing_stream_t)s);
}

static const char *error_text(int rc)
{
    static char other[64];
    if (host.no_cuda) {
        snprintf(other, sizeof(other), "error %d", rc);
        return other;
    }
    return cudaGetErrorString((cudaError_t)rc);
}

struct outcome {
    const char *error; /* None, Launch, Test */
    double median_ns, min_ns;
    int abandoned;
    int rc; /* the failed step's return */
    char message[512];
};

static void fail(struct outcome *o, const char *cls, const char *step, int rc)
{
    o->error = cls;
    o->rc = rc;
    snprintf(o->message, sizeof(o->message), "%s returned %d (%s)", step, rc, error_text(rc));
}

/* init, copy in, [quick look], measure, copy out, test; cleanup is the caller's. */
static void run_steps(struct outcome *o, struct launch_ctx *c, double best_ns, cudaStream_t s)
{
    const struct lscat_sweep_driver *d = &lscat_sweep_driver;
    struct timing_stats st;
    int rc;
    if (d->copy_in && (rc = d->copy_in(c->rec, c->data, s)) != 0)
        return fail(o, "Launch", "copy_in", rc);
    if (host.abandon_k > 0 && best_ns > 0) {
        if ((rc = measure(&st, c, 1, s)) != 0)
            return fail(o, "Launch", "launch", rc);
        if (st.median_ns >= host.abandon_k * best_ns) {
            o->abandoned = 1;
            o->median_ns = st.median_ns, o->min_ns = st.min_ns;
            timing_stats_release(&st);
            return;
        }
        timing_stats_release(&st);
    }
    if ((rc = measure(&st, c, 0, s)) != 0)
        return fail(o, "Launch", "launch", rc);
    o->median_ns = st.median_ns, o->min_ns = st.min_ns;
    timing_stats_release(&st);
    if (!host.no_cuda && (rc = cudaStreamSynchronize(s)) != 0)
        return fail(o, "Launch", "the stream", rc);
    if (d->copy_out && (rc = d->copy_out(c->rec, c->data, s)) != 0)
        return fail(o, "Launch", "copy_out", rc);
    if (!host.no_cuda && (rc = cudaStreamSynchronize(s)) != 0)
        return fail(o, "Launch", "copy_out's stream", rc);
    if (d->test && (rc = d->test(c->rec, c->data)) != 0) {
        o->error = "Test";
        snprintf(o->message, sizeof(o->message), "test returned %d", rc);
    }
}

static void write_result(const struct lscat_sweep_record *r, const struct outcome *o, int lost)
{
    fprintf(host.res, "@result\t%d\t%s\t%.17g\t%.17g\t%d\t%d\t", r->index, o->error,
            o->median_ns, o->min_ns, o->abandoned, lost);
    for (int i = 0, n = 0; i < host.noutputs; i++)
        if (!isnan(r->outputs[i]))
            fprintf(host.res, "%s%s=%.17g", n++ ? "," : "", host.outputs[i], r->outputs[i]);
    char msg[512];
    snprintf(msg, sizeof(msg), "%s", o->message);
    for (char *p = msg; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(host.res, "\t%s\n", msg);
    fflush(host.res);
}

/* The stand-in device (LSCAT_SWEEP_NO_CUDA) is gone: LSCAT_SWEEP_NO_CUDA_GONE names a file that
 * exists (a start then says @nodevice). */
static int stand_in_gone(void)
{
    struct stat sb;
    const char *gone = getenv("LSCAT_SWEEP_NO_CUDA_GONE");
    return gone && *gone && stat(gone, &sb) == 0;
}

/* Is the context lost? A sticky error survives cudaGetLastError(). On the stand-in device
 * (LSCAT_SWEEP_NO_CUDA) the step's error says it: an illegal address or a launch failure. */
static int context_lost(const struct outcome *o)
{
    if (host.no_cuda)
        return o->rc == 700 || o->rc == 719;
    (void)cudaGetLastError();
    return cudaDeviceSynchronize() != cudaSuccess;
}

static int run_record(char **f, int n, cudaStream_t s)
{
    struct lscat_sweep_record rec;
    memset(&rec, 0, sizeof(rec));
    rec.index = atoi(f[0]);
    rec.nvalues = n - 2 < host.nnames ? n - 2 : host.nnames;
    rec.names = host.names;
    for (int i = 0; i < rec.nvalues; i++)
        rec.values[i] = f[2 + i];
    for (int i = 0; i < MAX_OUTPUTS; i++)
        rec.outputs[i] = NAN;
    struct outcome o;
    memset(&o, 0, sizeof(o));
    o.error = "None";
    struct launch_ctx c = { &rec, NULL };
    int rc = lscat_sweep_driver.init ? lscat_sweep_driver.init(&rec, &c.data) : 0;
    if (rc)
        fail(&o, "Launch", "init", rc);
    else
        run_steps(&o, &c, strtod(f[1], NULL), s);
    if (!strcmp(o.error, "None"))
        rec.time_s = o.median_ns * 1e-9;
    if (!rc && lscat_sweep_driver.cleanup)
        lscat_sweep_driver.cleanup(&rec, c.data);
    int lost = strcmp(o.error, "Launch") == 0 && context_lost(&o);
    write_result(&rec, &o, lost);
    return lost ? 4 : 0;
}

static int parse_args(int argc, char **argv)
{
    struct timing_options d = TIMING_OPTIONS_INIT;
    host.topts = d;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--describe")) {
            printf("outputs\t%s\n", lscat_sweep_driver.outputs ? lscat_sweep_driver.outputs : "");
            return 1;
        } else if (!strcmp(a, "--no-graph")) {
            host.topts.no_graph = 1;
            continue;
        } else if (!strcmp(a, "--abandon")) {
            host.abandon_k = atof(v);
        } else if (!strcmp(a, "--warmup")) {
            host.topts.warmup = atoi(v);
        } else if (!strcmp(a, "--samples")) {
            host.topts.samples = atoi(v);
        } else if (!strcmp(a, "--min-sample-ms")) {
            host.topts.min_sample_ms = atof(v);
        } else {
            fprintf(stderr, "lscat sweep host: unknown argument '%s'\n", a);
            return 2;
        }
        i++;
    }
    return 0;
}

static int start_device(cudaStream_t *s)
{
    if (host.no_cuda && stand_in_gone()) {
        fprintf(host.res, "@nodevice\tno CUDA-capable device is detected (the stand-in device "
                          "is gone: LSCAT_SWEEP_NO_CUDA_GONE)\n");
        fflush(host.res);
        return 3;
    }
    if (host.no_cuda) {
        /* LSCAT_SWEEP_NO_CUDA_READY_MS=N (tests): @ready N ms after the start, as a context
         * being made would */
        const char *ms = getenv("LSCAT_SWEEP_NO_CUDA_READY_MS");
        if (ms && atoi(ms) > 0)
            usleep((useconds_t)atoi(ms) * 1000);
        *s = NULL;
        return 0;
    }
    cudaError_t e = cudaFree(0);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(s, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        fprintf(host.res, "@nodevice\t%s\n", cudaGetErrorString(e));
        fflush(host.res);
        return 3;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static char line[LINE_BYTES];
    char *f[MAX_FIELDS + 2];
    int rc = parse_args(argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    host.res = fdopen(3, "w");
    if (!host.res) {
        fprintf(stderr, "lscat sweep host: fd 3 (results) is not open\n");
        return 2;
    }
    host.no_cuda = getenv("LSCAT_SWEEP_NO_CUDA") && !strcmp(getenv("LSCAT_SWEEP_NO_CUDA"), "1");
    parse_outputs();
    cudaStream_t s = NULL;
    if ((rc = start_device(&s)) != 0)
        return rc;
    fprintf(host.res, "@ready\n");
    fflush(host.res);
    while (rc == 0 && fgets(line, sizeof(line), stdin)) {
        int n = split_tabs(line, f, MAX_FIELDS + 2);
        if (!strcmp(f[0], "@names")) {
            host.nnames = 0;
            for (int i = 1; i < n; i++)
                host.names[host.nnames++] = strdup(f[i]);
        } else if (n >= 2) {
            rc = run_record(f, n, s);
        }
    }
    timing_release_process_state();
    return rc;
}
