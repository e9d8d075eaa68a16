/* How a probe run is judged: the harness's result lines and exit (probe_classify), a
 * compute-sanitizer process's report (--sanitize), and a try run in the memcheck runner, from
 * its lines and what memcheck's log gained during it, as the API returns success for a fault
 * memcheck caught (docs/execute.md "Probe outcomes", "The memcheck runner"). */
#include "execute/probe.h"

#include "common/cudadev.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum probe_outcome error_kind(const char *err)
{
    if (strstr(err, "illegal memory access") || strstr(err, "illegal address") ||
        strstr(err, "misaligned address") || strstr(err, "out of bounds") ||
        strstr(err, "ILLEGAL_ADDRESS") || strstr(err, "global/shared address space"))
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
    out->device_lost = 0;
    for (const char *p = results; p && *p;) {
        const char *nl = strchr(p, '\n');
        char *line = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
        char *st = probe_json_str(line, "status");
        if (st && strcmp(st, "ok") == 0)
            ok_lines++;
        else if (st && strcmp(st, "cuda_error") == 0 && !first_err) {
            first_err = probe_json_str(line, "error");
            const char *blk = strstr(line, "\"block\":[");
            long bx = 0, by = 0, bz = 0;
            long w = probe_json_int(line, "w"), h = probe_json_int(line, "h");
            if (first_err && w > 0 && blk && /* where: the size says a lot */
                sscanf(blk, "\"block\":[%ld,%ld,%ld]", &bx, &by, &bz) == 3) {
                char *at = xasprintf("%s (at %ldx%ld, block %ldx%ldx%ld)", first_err,
                                     w, h, bx, by, bz);
                free(first_err);
                first_err = at;
            }
        }
        else if (st && strcmp(st, "invalid_config") == 0 && !first_invalid)
            first_invalid = probe_json_str(line, "error");
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
        out->device_lost = cuda_device_error(first_err);
    } else if (ok_lines > 0 && r->exit_code == 0) {
        out->outcome = PROBE_OK;
    } else {
        out->outcome = r->exit_code == 127 || r->exit_code > 128 ? PROBE_CRASH : PROBE_CUDA_ERROR;
        char *tail = last_line(r->err.data);
        buf_addf(&d, "exit %d, %d configurations ran%s%s%s%s", r->exit_code, ok_lines,
                 first_invalid ? ": " : "", first_invalid ? first_invalid : "",
                 *tail ? ": " : "", tail);
        out->device_lost = ok_lines == 0 && r->exit_code == 3 && cuda_device_open_failed(tail);
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


#define MC_MARK "========= "

/* compute-sanitizer's own notes, not reports: "Warning: Error buffer overflow has been
 * detected. Some records have been dropped" and "758 errors were skipped (error buffer
 * overflow)." follow a run whose threads made more reports than its buffer holds (session 22:
 * gpu_shared_memory, 1024 threads, each writing past a 10-value shared array). */
static int tool_note(const char *p)
{
    if (!strncmp(p, "Warning:", 8))
        return 1;
    const char *q = p;
    while (*q >= '0' && *q <= '9')
        q++;
    return q > p && !strncmp(q, " errors were skipped", 20);
}

/* A report's header: a "========= " line that is not the banner, the summary, a note of the
 * tool's own or indented. */
static int header(const char *p)
{
    size_t n = sizeof(MC_MARK) - 1;
    return !strncmp(p, MC_MARK, n) && p[n] != ' ' && p[n] != '\n' && p[n] != '\0' &&
           strncmp(p + n, "COMPUTE-SANITIZER", 17) && strncmp(p + n, "ERROR SUMMARY", 13) &&
           !tool_note(p + n);
}

static const char *next_line(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl + 1 : NULL;
}

char *probe_memcheck_first(const char *text)
{
    for (const char *p = text; p && *p; p = next_line(p))
        if (header(p)) {
            p += sizeof(MC_MARK) - 1;
            const char *e = strchr(p, '\n');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            return xstrndup(p, n < 300 ? n : 300);
        }
    return NULL;
}

/* A report's whole header line: not a last line cut short (the runner reads the first
 * PROBE_MEMCHECK_READ bytes of a run's reports, and a block of threads overrunning makes one
 * report each). */
static int whole_report(const char *p)
{
    return header(p) && strchr(p, '\n') != NULL;
}

int probe_memcheck_near(const char *text)
{
    int reports = 0, global = 0;
    for (const char *p = text; p && *p; p = next_line(p)) {
        if (!whole_report(p))
            continue;
        reports++;
        const char *what = p + sizeof(MC_MARK) - 1;
        if (!strncmp(what, "Invalid __global__", 18))
            global = 1;
        else if (strncmp(what, "Invalid __shared__", 18) && strncmp(what, "Invalid __local__", 17))
            return 0; /* an exception, a trap: the hardware sees those as well */
    }
    /* A shared or local overrun inside the window the hardware gives the block or the thread
     * runs plain without an error (session 21: gpu_shared_memory runs plain with 32x1 blocks,
     * where memcheck reports `Invalid __shared__ write`; session 12:
     * take_hash_function_statistics_kernel, `Invalid __local__ write`). A misaligned access
     * faults plain too. */
    if (reports == 0 || strstr(text, "misaligned"))
        return 0;
    return !global || strstr(text, "nearest allocation") != NULL;
}

int probe_memcheck_count(const char *text)
{
    int n = 0;
    for (const char *p = text; p && *p; p = next_line(p))
        n += whole_report(p);
    return n;
}

int probe_memcheck_cut(const char *text)
{
    return strlen(text) >= PROBE_MEMCHECK_READ || strstr(text, "buffer overflow") != NULL;
}

static const char *const mc_names[] = { NULL, "clean", "report", "fault", "inconclusive" };

const char *probe_memcheck_name(int mc)
{
    return mc > 0 && mc <= PROBE_MC_INCONCLUSIVE ? mc_names[mc] : NULL;
}

void probe_memcheck_judge(struct probe_result *p, const char *report, int faulted)
{
    char *first = probe_memcheck_first(report);
    if (first) {
        p->memcheck = PROBE_MC_REPORT;
        p->outcome = PROBE_ILLEGAL_ADDRESS;
        free(p->detail);
        p->detail = xasprintf("memcheck: %s", first);
        p->small_ok = 0;
        p->mc_near = probe_memcheck_near(report);
        p->mc_count = probe_memcheck_count(report);
        p->mc_cut = probe_memcheck_cut(report);
    } else if (p->outcome == PROBE_OK && p->small_ok) {
        p->memcheck = PROBE_MC_CLEAN;
    } else {
        p->memcheck = faulted ? PROBE_MC_FAULT : PROBE_MC_INCONCLUSIVE;
    }
    free(first);
}
