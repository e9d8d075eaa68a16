/* Probe runs and their classification. The harness contract (CONTRACTS.md): one JSON line per
 * configuration with "status"; a sticky CUDA error ends it with exit 4. The outcome is the first
 * CUDA error's kind, else ok when some configuration ran, else what the exit status says. */
#include "execute/probe.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const outcome_names[] = { "ok", "launch_failure", "illegal_address",
                                             "cuda_error", "crash", "timeout" };

const char *probe_outcome_name(enum probe_outcome o)
{
    return outcome_names[o];
}

/* The value of "key":"..." in a JSON line (no unescaping beyond \" — error texts are plain). */
static char *json_str(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":\"", key);
    const char *p = strstr(line, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    const char *e = p;
    while (*e && !(*e == '"' && e[-1] != '\\'))
        e++;
    return xstrndup(p, (size_t)(e - p));
}

static enum probe_outcome error_kind(const char *err)
{
    if (strstr(err, "illegal memory access") || strstr(err, "illegal address") ||
        strstr(err, "misaligned address") || strstr(err, "out of bounds") ||
        strstr(err, "ILLEGAL_ADDRESS"))
        return PROBE_ILLEGAL_ADDRESS;
    if (strstr(err, "launch failure") || strstr(err, "launch timed out") ||
        strstr(err, "LAUNCH_FAILED") || strstr(err, "unspecified launch"))
        return PROBE_LAUNCH_FAILURE;
    return PROBE_CUDA_ERROR;
}

static char *last_line(const char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
        n--;
    size_t b = n;
    while (b && s[b - 1] != '\n')
        b--;
    return xstrndup(s + b, n - b < 300 ? n - b : 300);
}

void probe_classify(struct probe_result *out, const struct proc_result *r, const char *results)
{
    int ok_lines = 0;
    char *first_err = NULL, *first_invalid = NULL;
    for (const char *p = results; p && *p;) {
        const char *nl = strchr(p, '\n');
        char *line = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
        char *st = json_str(line, "status");
        if (st && strcmp(st, "ok") == 0)
            ok_lines++;
        else if (st && strcmp(st, "cuda_error") == 0 && !first_err)
            first_err = json_str(line, "error");
        else if (st && strcmp(st, "invalid_config") == 0 && !first_invalid)
            first_invalid = json_str(line, "error");
        if (st && !first_err && strcmp(st, "cuda_error") == 0)
            first_err = xstrdup("cuda_error");
        free(st);
        free(line);
        p = nl ? nl + 1 : NULL;
    }
    struct buf d = BUF_INIT;
    if (r->timed_out) {
        out->outcome = PROBE_TIMEOUT;
        proc_describe(&d, r, NULL);
    } else if (r->signal) {
        out->outcome = PROBE_CRASH;
        proc_describe(&d, r, NULL);
    } else if (first_err) {
        out->outcome = error_kind(first_err);
        buf_adds(&d, first_err);
    } else if (ok_lines > 0 && r->exit_code == 0) {
        out->outcome = PROBE_OK;
    } else {
        out->outcome = r->exit_code == 127 || r->exit_code > 128 ? PROBE_CRASH : PROBE_CUDA_ERROR;
        char *tail = last_line(r->err.data);
        buf_addf(&d, "exit %d, %d configurations ran%s%s%s%s", r->exit_code, ok_lines,
                 first_invalid ? ": " : "", first_invalid ? first_invalid : "",
                 *tail ? ": " : "", tail);
        free(tail);
    }
    out->detail = d.len ? buf_detach(&d, NULL) : NULL;
    buf_release(&d);
    free(first_err);
    free(first_invalid);
}

void probe_classify_sanitizer(struct probe_result *out, const struct proc_result *r)
{
    const char *log = strstr(r->out.data, "=========") ? r->out.data : r->err.data;
    const char *oob = NULL;
    static const char *const marks[] = { "Invalid __global__", "Invalid __shared__",
                                         "Invalid __local__", "out of bounds",
                                         "Out-of-range", NULL };
    for (int i = 0; marks[i] && !oob; i++)
        oob = strstr(log, marks[i]);
    const char *summary = strstr(log, "ERROR SUMMARY:");
    if (oob) {
        out->sanitizer = xstrdup("out_of_bounds");
        const char *e = strchr(oob, '\n');
        out->sanitizer_detail = xstrndup(oob, e ? (size_t)(e - oob) : strlen(oob));
    } else if (summary && strncmp(summary, "ERROR SUMMARY: 0 errors", 23) == 0) {
        out->sanitizer = xstrdup("clean");
    } else if (summary) {
        out->sanitizer = xstrdup("errors");
        const char *e = strchr(summary, '\n');
        out->sanitizer_detail = xstrndup(summary, e ? (size_t)(e - summary) : strlen(summary));
    } else {
        out->sanitizer = xstrdup(r->timed_out ? "timeout" : "unavailable");
    }
}

static int run_in_sandbox(struct proc_result *r, const char *const *argv, const char *scratch,
                          const char *work_dir, int slot, double timeout_s)
{
    struct sandbox_options o = SANDBOX_OPTIONS_INIT;
    o.argv = argv;
    o.scratch_dir = scratch;
    o.ro_dir = work_dir;
    o.slot = slot;
    o.gpu = 1;
    o.stdin_data = PROBE_STDIN;
    o.stdin_len = strlen(PROBE_STDIN);
    o.timeout_s = timeout_s;
    o.cpu_s = timeout_s * 2;
    o.file_bytes = (size_t)64 << 20;
    o.out_cap_bytes = 64 << 10;
    return sandbox_run(r, &o);
}

int probe_run(struct probe_result *out, const char *harness, const char *scratch,
              const char *work_dir, int slot, int device, double timeout_s, const char *sanitizer)
{
    memset(out, 0, sizeof(*out));
    char dev[16];
    snprintf(dev, sizeof(dev), "%d", device);
    char *results = fs_join(scratch, "probe.jsonl");
    struct proc_result r;
    struct buf text = BUF_INIT;
    text.cap_bytes = 1 << 20;
    fs_remove_tree(scratch);
    int rc = fs_mkdirs(scratch, 0755);
    const char *argv[] = { harness, "--probe", "--device", dev, "--results", results, NULL };
    double t0 = fs_mono_s();
    if (rc == 0)
        rc = run_in_sandbox(&r, argv, scratch, work_dir, slot, timeout_s);
    else
        memset(&r, 0, sizeof(r)), buf_init(&r.out, 0), buf_init(&r.err, 0);
    out->probe_s = fs_mono_s() - t0;
    if (rc == 0) {
        buf_read_file(&text, results);
        probe_classify(out, &r, text.data);
    }
    proc_result_release(&r);
    if (rc == 0 && sanitizer && out->outcome != PROBE_TIMEOUT) { /* a hang stays a hang */
        const char *sargv[] = { sanitizer, "--tool", "memcheck", "--print-limit", "10",
                                "--error-exitcode", "86", harness, "--probe", "--device", dev,
                                "--results", results, NULL };
        rc = run_in_sandbox(&r, sargv, scratch, work_dir, slot, timeout_s * 10);
        if (rc == 0)
            probe_classify_sanitizer(out, &r);
        proc_result_release(&r);
    }
    buf_release(&text);
    free(results);
    return rc;
}

void probe_result_release(struct probe_result *r)
{
    free(r->detail);
    free(r->sanitizer);
    free(r->sanitizer_detail);
    memset(r, 0, sizeof(*r));
}

static void field(char *dst, size_t cap, const char *s, size_t n)
{
    while (n && *s == ' ')
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\r'))
        n--;
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

int probe_list_gpus(struct gpu_info **out, int *count)
{
    *out = NULL;
    *count = 0;
    struct proc_options o = PROC_OPTIONS_INIT;
    const char *argv[] = { "nvidia-smi",
                           "--query-gpu=index,uuid,name,compute_cap,memory.total,driver_version",
                           "--format=csv,noheader,nounits", NULL };
    o.argv = argv;
    o.timeout_s = 30;
    struct proc_result r;
    if (proc_run(&r, &o) == 0 && r.exit_code == 0 && !r.signal && !r.timed_out) {
        size_t alloc = 0;
        for (char *save = NULL, *l = strtok_r(r.out.data, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save)) {
            char *f[6];
            int nf = 0;
            for (char *s2 = NULL, *t = strtok_r(l, ",", &s2); t && nf < 6;
                 t = strtok_r(NULL, ",", &s2))
                f[nf++] = t;
            if (nf < 6)
                continue;
            XGROW(*out, (size_t)*count + 1, alloc);
            struct gpu_info *g = &(*out)[(*count)++];
            memset(g, 0, sizeof(*g));
            g->index = atoi(f[0]);
            field(g->uuid, sizeof(g->uuid), f[1], strlen(f[1]));
            field(g->name, sizeof(g->name), f[2], strlen(f[2]));
            field(g->cc, sizeof(g->cc), f[3], strlen(f[3]));
            g->memory_bytes = atoll(f[4]) * 1024LL * 1024LL;
            field(g->driver, sizeof(g->driver), f[5], strlen(f[5]));
        }
    }
    proc_result_release(&r);
    return 0;
}
