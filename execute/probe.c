/* Probe runs and their classification. The harness contract (CONTRACTS.md): one JSON line per
 * configuration with "status"; a sticky CUDA error ends it with exit 4. The outcome is the first
 * CUDA error's kind, else ok when some configuration ran, else what the exit status says. The
 * probe tries the harness's role bindings in order and keeps the first that runs clean, then
 * other block shapes, within a budget of faulting runs; execute/probe_budget.c times the lines. */
#include "execute/probe.h"

#include "common/blockeq.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "execute/probe_budget.h"
#include "execute/probe_runner.h"
#include "execute/sandbox.h"

#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const outcome_names[] = { "ok", "launch_failure", "illegal_address",
                                             "cuda_error", "crash", "timeout", "too_slow" };

const char *probe_outcome_name(enum probe_outcome o)
{
    return outcome_names[o];
}

static int run_in_sandbox(struct proc_result *r, const char *const *argv,
                          const struct probe_options *po, const char *stdin_text,
                          double timeout_s)
{
    struct sandbox_options o = SANDBOX_OPTIONS_INIT;
    o.argv = argv;
    o.scratch_dir = po->scratch;
    o.ro_dir = po->work_dir;
    o.slot = po->slot;
    o.gpu = 1;
    o.stdin_data = stdin_text;
    o.stdin_len = strlen(stdin_text);
    o.timeout_s = timeout_s;
    o.cpu_s = timeout_s * 2;
    o.file_bytes = (size_t)64 << 20;
    o.out_cap_bytes = 64 << 10;
    o.extra_env = po->env;
    return sandbox_run(r, &o);
}

/* Whether the small configurations (all but large x large; `want` of them) reported and none
 * hit a CUDA error. */
static int small_clean(const char *results, int large, int want)
{
    int ok = 0, lines = 0, bad = 0;
    for (const char *p = results; p && *p;) {
        const char *nl = strchr(p, '\n');
        char *line = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
        char *st = probe_json_str(line, "status");
        long w = probe_json_int(line, "w"), h = probe_json_int(line, "h");
        if (st && w > 0 && !(w == large && h == large)) {
            lines++;
            ok += strcmp(st, "ok") == 0;
            bad += strcmp(st, "cuda_error") == 0;
        }
        free(st);
        free(line);
        p = nl ? nl + 1 : NULL;
    }
    return ok > 0 && !bad && lines == want;
}

/* The first result line that says the kernel wrote past a buffer (the harness's guard,
 * "wrote_past"), in words; *small: at a small configuration; *large_lines: the lines of the
 * large configurations; *per_config: a JSON array over the `nconfigs` configurations of the
 * parameter whose guard each one's line said was written, null where none (NULL: none was).
 * NULL: no line did. */
static char *first_past(const char *results, int large, int nconfigs, int *small,
                        int *large_lines, char **per_config)
{
    char *words = NULL;
    struct buf j = BUF_INIT;
    int k = 0;
    *small = *large_lines = 0;
    buf_addch(&j, '[');
    for (const char *p = results; p && *p;) {
        const char *nl = strchr(p, '\n');
        char *line = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
        long w = probe_json_int(line, "w"), h = probe_json_int(line, "h");
        const char *past = strstr(line, "\"wrote_past\":{"), *blk = strstr(line, "\"block\":[");
        long bx = 0, by = 0, bz = 0;
        int is_large = w == large && h == large, param = probe_line_wrote_past(line);
        *large_lines += w > 0 && is_large;
        if (w > 0 && param >= 0)
            buf_addf(&j, "%s%d", k++ ? "," : "", param);
        else if (w > 0)
            buf_adds(&j, k++ ? ",null" : "null");
        if (past && !words && blk && sscanf(blk, "\"block\":[%ld,%ld,%ld]", &bx, &by, &bz) == 3) {
            char *name = probe_json_str(past, "name");
            words = xasprintf("wrote past parameter %d (%s)'s buffer at %ldx%ld, block "
                              "%ldx%ldx%ld: %ld bytes after its W x H + pad elements (the "
                              "harness's guard there changed)", param + 1,
                              name ? name : "?", w, h, bx, by, bz, probe_json_int(past, "offset"));
            *small = !is_large;
            free(name);
        }
        free(line);
        p = nl ? nl + 1 : NULL;
    }
    for (; k < nconfigs; k++) /* the configurations not run */
        buf_adds(&j, k ? ",null" : "null");
    buf_addch(&j, ']');
    *per_config = words ? buf_detach(&j, NULL) : NULL;
    buf_release(&j);
    return words;
}

/* A block shape of the block retry (PROBE_RETRY_BLOCKS_1D/_2D); NULL: the probe's own shapes. */
struct shape {
    int bx, by, bz; /* bz 0 reads as 1 */
};

/* The probe's stdin: the small configurations (a 2D kernel's 2D one only), then, when `large`,
 * the same block shapes at o->large x o->large. With a retry shape `s`, every configuration
 * has that block: a 1D shape on 1024x1 and 64x64 (a 1D kernel's tile holds no 16x16 either),
 * a 2D shape on 64x64. */
static void probe_configs(struct buf *out, const struct probe_options *o, int large,
                          const struct shape *s, int b)
{
    int is2d = probe_is2d(o->params), wh[2], src[3], bounds;
    const char *stop = o->guard == 1 ? PROBE_GUARD_STOP : ""; /* 2: a guard rerun */
    if (b == PROBE_BIND_FIXED && probe_fixed_size(wh, o->params) &&
        probe_source_launch(src, &bounds, o->params)) { /* its own size, its source's block */
        buf_addf(out, "%d %d %d %d %d\n", wh[0], wh[1], src[0], src[1], src[2]);
        return;
    }
    int bz = s && s->bz > 1 ? s->bz : 1;
    if (s && (s->by > 1 || bz > 1)) {
        buf_addf(out, "64 64 %d %d %d\n", s->bx, s->by, bz);
        if (large)
            buf_addf(out, "%s%d %d %d %d %d\n", stop, o->large, o->large, s->bx, s->by, bz);
        return;
    }
    if (s) {
        buf_addf(out, "1024 1 %d 1 1\n64 64 %d 1 1\n", s->bx, s->bx);
        if (large)
            buf_addf(out, "%s%d %d %d 1 1\n", stop, o->large, o->large, s->bx);
        return;
    }
    buf_adds(out, is2d ? PROBE_SMALL_2D : PROBE_SMALL_1D PROBE_SMALL_2D);
    if (large)
        buf_addf(out, "%s%d %d 16 16 1\n", stop, o->large, o->large);
    if (large && !is2d)
        buf_addf(out, "%d %d 256 1 1\n", o->large, o->large);
}

/* The configuration lines as a JSON array of "WxH BXxBYxBZ". */
static char *configs_json(const char *lines)
{
    struct buf j = BUF_INIT;
    int w, h, bx, by, bz, n = 0;
    buf_addch(&j, '[');
    for (const char *p = lines; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (sscanf(p, "%d %d %d %d %d", &w, &h, &bx, &by, &bz) == 5)
            buf_addf(&j, "%s\"%dx%d %dx%dx%d\"", n++ ? "," : "", w, h, bx, by, bz);
    buf_addch(&j, ']');
    return buf_detach(&j, NULL);
}

/* A plain run in o->runner (docs/execute.md "Probe runner"): the harness's arguments after
 * argv[0] go to harness.so beside it. 1 when it ran there (*r and *text filled), 0 when it is
 * to run as a process: no runner, no harness.so, a harness.so that cannot be loaded, or a
 * runner that cannot start (then never again in this run). */
static int run_in_runner(struct proc_result *r, struct buf *text, const struct probe_options *o,
                         const char *const *args, const char *configs, struct probe_budget *b)
{
    if (!o->runner || probe_runner_broken(o->runner))
        return 0;
    char *so = xasprintf("%s.so", o->harness);
    int ran = 0;
    if (access(so, R_OK) == 0) {
        struct probe_runner_watch watch = { probe_budget_line, b };
        int rc = probe_runner_run(r, text, o->runner, so, args, configs, o->timeout_s, &watch);
        ran = rc == PROBE_RUNNER_OK;
        if (rc == PROBE_RUNNER_UNAVAILABLE)
            log_warn("probe: %s; %s from now on", lscat_error_last(),
                     o->runner == o->memcheck ? "a kernel's tries after a fault run plain"
                                              : "probing with a process per run");
        if (!ran)
            proc_result_release(r);
    }
    free(so);
    return ran;
}

static int faulted(const struct probe_result *p);

/* How run_binding runs the harness: plain (in the probe runner, else a process), under
 * compute-sanitizer as a process (--sanitize), or in the memcheck runner. */
enum { RUN_PLAIN = 0, RUN_SANITIZER = 1, RUN_MEMCHECK = 2 };
#define RUN_NOT_IN_MEMCHECK 1 /* run_binding: no memcheck run could be made (run it plain) */

/* One run of the harness with binding b and retry shape s (NULL: the probe's own shapes):
 * plain on the small and large configurations, or under compute-sanitizer (a process, or the
 * memcheck runner: RUN_MEMCHECK) on the small ones. Fills out's outcome (and configs) or its
 * sanitizer verdict; a memcheck run also its memcheck verdict (probe_memcheck_judge). */
static int run_binding(struct probe_result *out, const struct probe_options *po, int b,
                       int mode, int large, const struct shape *s)
{
    char dev[16];
    struct buf cfg = BUF_INIT;
    struct probe_options mo = *po; /* a memcheck run: its runner, one short deadline */
    const struct probe_options *o = &mo;
    int sanitize = mode == RUN_SANITIZER;
    if (mode == RUN_MEMCHECK) {
        mo.runner = po->memcheck;
        double cut = po->memcheck_timeout_s;
        if (po->small_timeout_s > 0 && 2 * po->small_timeout_s < cut)
            cut = 2 * po->small_timeout_s;
        if (cut < mo.timeout_s)
            mo.timeout_s = cut;
        mo.small_timeout_s = 0; /* the run's whole deadline is the cut */
        large = 0;
    }
    snprintf(dev, sizeof(dev), "%d", o->device);
    large = large && b != PROBE_BIND_FIXED; /* the fixed binding runs its one size only */
    probe_configs(&cfg, o, !sanitize && large, s, b);
    int nsmall = b == PROBE_BIND_FIXED ? 1 : probe_is2d(o->params) ? 1 : 2;
    struct probe_budget bud;
    memset(&bud, 0, sizeof(bud));
    char *results = fs_join(o->scratch, "probe.jsonl");
    const char *argv[24];
    int n = 0, in_runner = 0;
    if (sanitize) {
        const char *s[] = { o->sanitizer, "--tool", "memcheck", "--print-limit", "10",
                            "--error-exitcode", "86" };
        for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
            argv[n++] = s[i];
    }
    int harness_at = n;
    const char *h[] = { o->harness, "--probe", "--device", dev, "--results", results };
    for (size_t i = 0; i < sizeof(h) / sizeof(h[0]); i++)
        argv[n++] = h[i];
    if (b > 0) { /* the default needs no flag: harnesses generated before bindings lack it */
        argv[n++] = "--bind";
        argv[n++] = probe_bindings[b];
    }
    argv[n] = NULL;
    struct proc_result r;
    struct buf text = BUF_INIT;
    text.cap_bytes = 1 << 20;
    fs_remove_tree(o->scratch);
    int rc = fs_mkdirs(o->scratch, 0755);
    if (rc == 0 && !sanitize) {
        argv[harness_at + 5] = "/dev/fd/3"; /* --results: the runner's result pipe */
        /* without large configurations (or without a budget) the run's timeout is all */
        probe_budget_init(&bud, o, cfg.data, large && o->large > 0 ? nsmall : 9);
        if (b == PROBE_BIND_FIXED) /* its one line makes the source's buffers: the run's timeout */
            bud.small_for = 0;
        in_runner = run_in_runner(&r, &text, o, argv + harness_at + 1, cfg.data, &bud);
        argv[harness_at + 5] = results;
        if (in_runner && text.len) /* kept beside the build as a process's run leaves it */
            fs_write_atomic(results, text.data, text.len);
    }
    if (rc == 0 && !in_runner && mode == RUN_MEMCHECK)
        rc = RUN_NOT_IN_MEMCHECK;
    if (rc == 0 && !in_runner)
        rc = run_in_sandbox(&r, argv, o, cfg.data, sanitize ? o->timeout_s * 10 : o->timeout_s);
    else if (rc != 0)
        memset(&r, 0, sizeof(r)), buf_init(&r.out, 0), buf_init(&r.err, 0);
    if (rc == 0 && sanitize) {
        probe_classify_sanitizer(out, &r);
    } else if (rc == 0) {
        if (!in_runner)
            buf_read_file(&text, results);
        if (in_runner)
            probe_budget_judge(&bud, &r);
        probe_classify(out, &r, text.data);
        if (in_runner && ((bud.cut == PROBE_CUT_SLOW && out->outcome == PROBE_OK) ||
                          (bud.cut == PROBE_CUT_SMALL && out->outcome == PROBE_TIMEOUT))) {
            out->outcome = bud.cut == PROBE_CUT_SLOW ? PROBE_TOO_SLOW : PROBE_TIMEOUT;
            free(out->detail);
            out->detail = probe_budget_detail(&bud);
            /* a memcheck run (about 100x slower) that hung there says nothing of a plain one */
            out->hung_first = bud.cut == PROBE_CUT_SMALL && mode != RUN_MEMCHECK;
        }
        out->small_ok = out->outcome == PROBE_OK || small_clean(text.data, o->large, nsmall);
        out->first_only = !out->small_ok && nsmall == 2 && small_clean(text.data, o->large, 1);
        free(out->configs);
        out->configs = configs_json(cfg.data);
        free(out->config_s);
        out->config_s = in_runner ? probe_budget_times(bud.took, bud.nconfigs, 0) : NULL;
        free(out->kernel_s);
        out->kernel_s = in_runner ? probe_budget_times(bud.kern, bud.nconfigs, 1) : NULL;
        int past_small = 0, large_lines = 0, nconfigs = 0;
        for (const char *c = cfg.data; c && *c; c = strchr(c, '\n') ? strchr(c, '\n') + 1 : NULL)
            nconfigs += *c != '#';
        free(out->past);
        free(out->wrote_past);
        out->past = first_past(text.data, o->large, nconfigs, &past_small, &large_lines,
                               &out->wrote_past);
        if (!o->guard) { /* recorded per configuration, not judged */
            free(out->past);
            out->past = NULL;
        }
        /* the harness stopped at PROBE_GUARD_STOP: no large configuration ran */
        out->past_skipped = out->past && past_small && large && o->large > 0 &&
                            out->outcome == PROBE_OK && large_lines == 0;
        if (out->past_skipped && !out->detail)
            out->detail = xasprintf("%s; the large configurations not run", out->past);
        out->budget_s = in_runner ? bud.budget_s : 0;
        out->predicted_s = in_runner ? bud.predicted_s : 0;
        out->run_s = r.elapsed_s;
        if (mode == RUN_MEMCHECK)
            probe_memcheck_judge(out, probe_runner_report(o->runner), faulted(out));
    }
    proc_result_release(&r);
    buf_release(&text);
    buf_release(&cfg);
    free(results);
    return rc;
}

static int sanitizer_flagged(const struct probe_result *p)
{
    return p->sanitizer && (!strcmp(p->sanitizer, "out_of_bounds") ||
                            !strcmp(p->sanitizer, "errors"));
}

static void add_json_field(struct buf *b, const char *key, const char *v)
{
    buf_addf(b, ",\"%s\":", key);
    if (v)
        buf_add_json_str(b, v, strlen(v));
    else
        buf_adds(b, "null");
}

static void tries_json(struct buf *out, const struct probe_result *t, int n)
{
    buf_addch(out, '[');
    for (int i = 0; i < n; i++) {
        buf_adds(out, i ? ",{\"binding\":" : "{\"binding\":");
        buf_add_json_str(out, t[i].binding, strlen(t[i].binding));
        add_json_field(out, "outcome", probe_outcome_name(t[i].outcome));
        add_json_field(out, "detail", t[i].detail);
        add_json_field(out, "sanitizer", t[i].sanitizer);
        add_json_field(out, "sanitizer_detail", t[i].sanitizer_detail);
        if (t[i].block) /* a retry shape (docs/execute.md "Block retry") */
            add_json_field(out, "block", t[i].block);
        if (t[i].memcheck) /* a run in the memcheck runner (docs/execute.md) */
            add_json_field(out, "memcheck", probe_memcheck_name(t[i].memcheck));
        if (t[i].memcheck == PROBE_MC_REPORT) /* how many (the fallback's order) */
            buf_addf(out, ",\"mc_reports\":%d%s", t[i].mc_count,
                     t[i].mc_cut ? ",\"mc_cut\":true" : "");
        if (t[i].confirm)
            buf_adds(out, ",\"confirm\":true");
        buf_adds(out, ",\"configs\":");
        buf_adds(out, t[i].configs ? t[i].configs : "null");
        if (t[i].config_s) /* measured in a runner: each configuration's seconds */
            buf_addf(out, ",\"config_s\":%s", t[i].config_s);
        if (t[i].kernel_s) /* the harness said each configuration's kernel time */
            buf_addf(out, ",\"kernel_s\":%s", t[i].kernel_s);
        if (t[i].wrote_past) /* guards written past a buffer's end, per configuration */
            buf_addf(out, ",\"wrote_past\":%s", t[i].wrote_past);
        if (t[i].budget_s > 0)
            buf_addf(out, ",\"budget_s\":%.3f,\"predicted_s\":%.6f", t[i].budget_s,
                     t[i].predicted_s);
        if (t[i].memcheck && t[i].run_s > 0) /* a memcheck run's wall time */
            buf_addf(out, ",\"run_s\":%.3f", t[i].run_s);
        buf_addch(out, '}');
    }
    buf_addch(out, ']');
}

/* Clean at the small sizes only: runnable as before bindings existed; tune measures what it can
 * and gives up at the size that fails. The detail says what the large size gave. */
static void mark_small_only(struct probe_result *p, int large)
{
    char *d = p->past_skipped
                  ? xasprintf("small sizes only; not run at %dx%d: it %s", large, large, p->past)
                  : xasprintf("small sizes only; at %dx%d: %s%s%s", large, large,
                              probe_outcome_name(p->outcome), p->detail ? ": " : "",
                              p->detail ? p->detail : "");
    free(p->detail);
    p->detail = d;
    p->outcome = PROBE_OK;
    p->small_only = 1;
}

/* The tries of one probe: every binding (and retry shape) run, and which of them to keep. A
 * memcheck run and the plain run confirming it are two tries. */
#define PROBE_TRIES 40
struct plan {
    struct probe_result t[PROBE_TRIES];
    int nt, pick, fallback, small, too_slow, guard_stops, guard_reruns;
    int faults, stopped; /* runs that faulted at the small sizes; the fault budget stopped it */
    int lost;            /* a try found the device unusable (its index + 1): nothing more runs */
    int mc;              /* a plain run faulted: the next tries go to the memcheck runner first */
    int mc_off;          /* memcheck could not judge a run (it ended the memcheck runner: a trap,
                            an assert; or it ran past its deadline): plain from now on */
    int hung;            /* a plain run hung at its first configuration: nothing more is run */
    int hang_stop;       /* and that, not the fault budget, stopped the search */
    int unmade;          /* a run faulted at the small sizes and the harness cannot make an
                            argument (probe_unmade_arg): nothing more is run */
    int mc_runs, mc_reports, mc_inconclusive, confirms, mc_fallback;
};

/* Whether a run faulted in a configuration at the small sizes (an illegal address, a launch
 * failure, a CUDA error of a configuration line: a device-side assert, a misaligned access):
 * what another block shape can change, and what the fault budget counts. Hangs, crashes, a
 * harness that could not open the device are not. */
static int faulted(const struct probe_result *p)
{
    int config_error = p->outcome == PROBE_CUDA_ERROR && p->detail && strstr(p->detail, " (at ");
    return !p->small_ok && (p->outcome == PROBE_ILLEGAL_ADDRESS ||
                            p->outcome == PROBE_LAUNCH_FAILURE || config_error);
}

/* The fault budget (docs/execute.md "Fault budget"): no further run once it is spent. */
static int budget_spent(struct plan *pl, const struct probe_options *o)
{
    if (o->fault_budget > 0 && pl->faults >= o->fault_budget)
        pl->stopped = 1;
    /* Session 15's whole-corpus store: the 6 kernels whose harness could not make an argument
     * and that faulted at the small sizes made 5-7 faulting runs each, every binding and block
     * shape, and none ran (2 others with such a note ran clean or at the small sizes, and never
     * faulted there). */
    if (pl->faults > 0 && probe_unmade_arg(o->params))
        pl->stopped = pl->unmade = 1;
    /* A plain run that hung at its first small configuration (1,024 elements) ends the search.
     * Session 15's whole-corpus store: 14 kernels hung there, each at its first try; their 12
     * later tries (other bindings) hung again (10) or faulted at once (2), and none ran. Sessions
     * 21-23's 29 passes: the same 3 kernels hung again under side every time; blockWiseStringSort
     * hung at its 5th try and its 8 later ones faulted or hung. Session 19 cut such later tries to
     * 3 s; this saves them whole. Safe since execute holds a verdict whose last run hung until
     * the device answers again: that later try was what found a device that had gone
     * (docs/execute.md "Session 24"). */
    if (pl->hung && !pl->stopped)
        pl->stopped = pl->hang_stop = 1;
    return pl->stopped;
}

/* Whether a try of binding `name` was made already. */
static int tried(const struct plan *pl, const char *name)
{
    for (int i = 0; i < pl->nt; i++)
        if (pl->t[i].binding && strcmp(pl->t[i].binding, name) == 0)
            return 1;
    return 0;
}

/* A fixed-size try says what it ran: `fixed size 4096x4096 (the source's buffers, 192 MiB),
 * block 256x1x1 (the source's launch)`, then the run's own detail. */
static void mark_fixed(struct probe_result *p, const struct probe_options *o)
{
    int wh[2] = { 0, 0 }, src[3], bounds;
    const char *bytes = strstr(o->params, "\"fixed\":{\"size\":[");
    bytes = bytes ? strstr(bytes, "\"bytes\":") : NULL;
    double mib = bytes ? strtod(bytes + 8, NULL) / (1024.0 * 1024.0) : 0;
    probe_fixed_size(wh, o->params);
    probe_source_launch(src, &bounds, o->params);
    char *d = xasprintf("fixed size %dx%d (the source's buffers, %.0f MiB), block %dx%dx%d (the "
                        "source's launch)%s%s", wh[0], wh[1], mib, src[0], src[1], src[2],
                        p->detail ? ": " : "", p->detail ? p->detail : "");
    free(p->detail);
    p->detail = d;
}

static void label(struct probe_result *p, int b, const struct shape *s)
{
    p->binding = xstrdup(probe_bindings[b]);
    if (s && b != PROBE_BIND_FIXED) /* fixed runs its source's block whatever the shape */
        p->block = xasprintf("%dx%dx%d", s->bx, s->by, s->bz > 1 ? s->bz : 1);
}

/* One try of binding b with shape s, in *out. Once a plain run of the kernel faulted (pl->mc)
 * the try runs in the memcheck runner first (docs/execute.md "The memcheck runner"): a report,
 * or a fault its lines say, is the try's verdict; clean is confirmed by a plain run (its
 * verdict is what counts); anything else is run plain. */
static int run_try(struct probe_result **out, struct plan *pl, const struct probe_options *o,
                   int b, int large, const struct shape *s)
{
    struct probe_result *p = &pl->t[pl->nt++];
    int rc = 0, confirm = 0;
    if (pl->mc && !pl->mc_off && o->memcheck && pl->nt < PROBE_TRIES) {
        rc = run_binding(p, o, b, RUN_MEMCHECK, large, s);
        if (rc == RUN_NOT_IN_MEMCHECK) { /* no memcheck runner: the slot is the plain run's */
            probe_result_release(p);
            rc = 0;
        } else {
            label(p, b, s);
            *out = p;
            if (rc != 0)
                return rc;
            pl->mc_runs++;
            pl->mc_reports += p->memcheck == PROBE_MC_REPORT;
            pl->mc_inconclusive += p->memcheck == PROBE_MC_INCONCLUSIVE;
            /* memcheck could not judge it: it ended its runner (a trap, an assert under it), or
             * ran past its deadline (session 21: blockWiseStringSort's retry shapes each hung 4 s
             * under memcheck, then faulted plain). The kernel's later tries run plain. */
            pl->mc_off |= p->memcheck == PROBE_MC_FAULT || p->memcheck == PROBE_MC_INCONCLUSIVE;
            if (p->memcheck == PROBE_MC_REPORT || p->memcheck == PROBE_MC_FAULT)
                return 0;
            confirm = p->memcheck == PROBE_MC_CLEAN;
            p = &pl->t[pl->nt++];
        }
    }
    rc = run_binding(p, o, b, RUN_PLAIN, large, s);
    label(p, b, s);
    p->confirm = confirm;
    pl->confirms += confirm;
    *out = p;
    return rc;
}

/* The pick rules of the probe plan for a try that ran (step 3). */
static void consider(struct plan *pl, const struct probe_result *p)
{
    int i = (int)(p - pl->t);
    /* a kernel that wrote past a buffer ranks as one with a sanitizer report; one whose large
     * configurations the guard skipped, as one clean at the small sizes only */
    if (p->outcome == PROBE_OK && !sanitizer_flagged(p) && !p->past)
        pl->pick = i;
    else if (p->outcome == PROBE_OK && !p->past_skipped && pl->fallback < 0)
        pl->fallback = i;
    else if (p->small_ok && pl->small < 0)
        pl->small = i;
    pl->too_slow += p->outcome == PROBE_TOO_SLOW;
    pl->guard_stops += p->past_skipped;
    pl->faults += faulted(p);
    if (p->device_lost && !pl->lost) {
        pl->lost = i + 1;
        pl->stopped = 1; /* every loop of the plan ends on it */
    }
    /* The plain runner ended on an illegal address: memcheck from now on. Not after a
     * device-side assert or a trap (`cuda_error`, `launch_failure`): those end a runner under
     * memcheck too (session 12: 24 of 49 memcheck runner starts), so the next tries would each
     * start one; nor once memcheck could not judge one of the kernel's runs (run_try). */
    pl->mc |= !p->memcheck && faulted(p) && p->outcome == PROBE_ILLEGAL_ADDRESS;
    pl->hung |= p->hung_first;
}

/* Whether binding b runs with shape s (NULL: the probe's own shapes): tiles only with the
 * source's block, the only one its harness runs (docs/execute.md "The source's grid"). */
static int binding_shape(int b, const struct probe_options *o, const struct shape *s)
{
    int src[3], bounds;
    if (strcmp(probe_bindings[b], "tiles") != 0)
        return 1;
    if (!probe_source_launch(src, &bounds, o->params))
        return 0;
    if (!s) /* the own shapes: 256x1x1 (1D kernels) and 16x16x1 */
        return src[2] == 1 && ((src[0] == 256 && src[1] == 1 && !probe_is2d(o->params)) ||
                               (src[0] == 16 && src[1] == 16));
    return s->bx == src[0] && s->by == src[1] && (s->bz > 1 ? s->bz : 1) == src[2];
}

/* Each binding in order that changes a value of this kernel, with shape s, until one runs clean
 * (docs/execute.md "Probe plan"). */
static int try_bindings(struct plan *pl, const struct probe_options *o, int large,
                        const struct shape *s)
{
    int rc = 0, order[8], n = 0;
    /* The fixed binding (the source's own buffers, grid and block: docs/execute.md "Probe plan")
     * once per kernel: first where the kernel's work does not follow the grid (a grid-stride or
     * persistent loop over its fixed size: W x H would only read past its buffers), else after
     * the others, when none ran clean at W x H. */
    int fixed = probe_binding_matters(PROBE_BIND_FIXED, o->params) && !tried(pl, "fixed");
    int first = fixed && probe_fixed_first(o->params);
    /* With the source's own block in the block retry, tiles (the source's grid too) goes first:
     * the probe's own blocks faulted under every binding, so the kernel depends on its launch
     * geometry, and the source's whole launch is the likeliest to run. Measured on the corpus
     * (session 14): of 91 kernels with a grid expression and a source block of their own, 17
     * ran under tiles with it, 3 under another binding with it, each tiles kernel after 2 more
     * faulting runs (area and side with that block). */
    int tiles_first = s && probe_binding_matters(PROBE_BIND_TILES, o->params) &&
                      binding_shape(PROBE_BIND_TILES, o, s);
    if (first)
        order[n++] = PROBE_BIND_FIXED;
    if (tiles_first)
        order[n++] = PROBE_BIND_TILES;
    for (int b = 0; probe_bindings[b] && n < 7; b++)
        if (b != PROBE_BIND_FIXED && !(tiles_first && b == PROBE_BIND_TILES))
            order[n++] = b;
    if (fixed && !first)
        order[n++] = PROBE_BIND_FIXED;
    for (int i = 0; i < n && pl->nt < PROBE_TRIES && rc == 0 && pl->pick < 0; i++) {
        int b = order[i];
        if (!probe_binding_matters(b, o->params) || !binding_shape(b, o, s))
            continue;
        if (budget_spent(pl, o))
            break;
        struct probe_result *p;
        rc = run_try(&p, pl, o, b, large, s);
        if (b == PROBE_BIND_FIXED)
            mark_fixed(p, o);
        if (rc == 0 && p->outcome == PROBE_OK && o->sanitizer)
            rc = run_binding(p, o, b, RUN_SANITIZER, 0, s);
        if (rc == 0)
            consider(pl, p);
    }
    return rc;
}

#define RUN_AGAIN_UNREAD 2 /* run_again: t's binding or shape could not be read back */

/* Try t made again plain, with its binding and shape and the options o, as the plan's next try
 * (considered). 0 when it ran; RUN_AGAIN_UNREAD, nothing run; else run_binding's error. */
static int run_again(struct plan *pl, const struct probe_options *o, int large,
                     const struct probe_result *t)
{
    struct shape sh = { 0, 0, 0 };
    int b = 0, rc;
    while (probe_bindings[b] && strcmp(probe_bindings[b], t->binding))
        b++;
    if (!probe_bindings[b] ||
        (t->block && sscanf(t->block, "%dx%dx%d", &sh.bx, &sh.by, &sh.bz) != 3))
        return RUN_AGAIN_UNREAD;
    struct probe_result *p = &pl->t[pl->nt++];
    rc = run_binding(p, o, b, RUN_PLAIN, large, t->block ? &sh : NULL);
    label(p, b, t->block ? &sh : NULL);
    if (rc == 0)
        consider(pl, p);
    return rc;
}

/* When memcheck found no clean try: the tries it rejected for overruns a plain run may not see
 * (global accesses near an allocation: memcheck checks the allocation, the MMU the mapping;
 * shared and local accesses: the hardware checks the block's and the thread's window) run plain,
 * at most PROBE_MEMCHECK_FALLBACK of them, until one is kept: those with the fewest reports
 * first; a run whose reports were cut (mc_cut) after every whole one, and among those the
 * smaller block first (fewer threads past the end); the plan's order between equals. Fewer
 * accesses past the end are what may stay inside the window. Session 22's fault-heavy kernels:
 * 4 of 43 such reruns kept, in plan order; gpu_shared_memory and needle_cuda_shared_2 ran plain
 * only with 32x1, the third reject (in the probe every try's reports were cut; the kernel alone
 * makes 22 with one 32x1 block, 1,015 with a 1024x1 one, of which the tool keeps 257);
 * mergeMulti_lower only with 1024x1, the 8th, whose 49 reports were the only whole ones.
 * The first rerun that faults at the small sizes ends the fallback (session 23): in the 9
 * passes made with this order (sessions 22-23), each of the 7 kernels the fallback kept a try
 * of had it kept at the first rerun, and 18 of the other 19 faulted at all 3 reruns (a GPU-wide
 * fault and a new runner context apiece: 18 of a 270-kernel pass's ~95 plain faults). */
static long fallback_rank(const struct probe_result *t)
{
    int bx = 16, by = 16, bz = 1; /* the probe's own blocks: 256 threads */
    if (t->block && sscanf(t->block, "%dx%dx%d", &bx, &by, &bz) != 3)
        bx = by = bz = 1024;
    return t->mc_cut ? (1L << 40) + (long)bx * by * bz : t->mc_count;
}

static int memcheck_fallback(struct plan *pl, const struct probe_options *o, int large)
{
    int rc = 0, n = pl->nt, order[PROBE_TRIES], m = 0;
    for (int i = 0; i < n; i++) {
        const struct probe_result *t = &pl->t[i];
        if (t->memcheck != PROBE_MC_REPORT || !t->mc_near)
            continue;
        int j = m++;
        for (; j > 0 && fallback_rank(&pl->t[order[j - 1]]) > fallback_rank(t); j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    for (int k = 0; k < m && rc == 0 && !pl->lost && !pl->hung &&
                    pl->mc_fallback < PROBE_MEMCHECK_FALLBACK &&
                    pl->nt < PROBE_TRIES && pl->pick < 0 && pl->fallback < 0 && pl->small < 0;
         k++) {
        const struct probe_result *t = &pl->t[order[k]];
        rc = run_again(pl, o, large, t);
        pl->mc_fallback += rc != RUN_AGAIN_UNREAD;
        if (rc == 0 && faulted(&pl->t[pl->nt - 1]))
            break; /* the likeliest to pass the MMU faulted there: the others would too */
        rc = rc == RUN_AGAIN_UNREAD ? 0 : rc;
    }
    return rc;
}

/* When no binding ran clean and the guard skipped the large configurations of some (each wrote
 * past a buffer at the small sizes): those bindings again in order, the large configurations
 * too, until one runs them clean (kept, as a try with a report: it still wrote past a buffer).
 * Session 20: histogram, invert_mapping and UpsampleNearest2D2XForward wrote past a buffer under
 * both area and side, and side ran clean at 2024x2024; without this, area was kept at the small
 * sizes only. */
static int guard_rerun(struct plan *pl, const struct probe_options *o, int large)
{
    struct probe_options all = *o;
    all.guard = 2; /* no stop before the large configurations; still ranked by the guard */
    int rc = 0, n = pl->nt;
    for (int i = 0; i < n && rc == 0 && !pl->stopped && pl->nt < PROBE_TRIES && pl->pick < 0 &&
                    pl->fallback < 0; i++) {
        const struct probe_result *t = &pl->t[i];
        if (!t->past_skipped || t->memcheck)
            continue;
        rc = run_again(pl, &all, large, t);
        pl->guard_reruns += rc != RUN_AGAIN_UNREAD;
        rc = rc == RUN_AGAIN_UNREAD ? 0 : rc;
        if (rc == 0 && budget_spent(pl, o))
            break;
    }
    return rc;
}

/* Whether every try so far faulted in a configuration at the small sizes (faulted). */
static int all_faulted(const struct plan *pl)
{
    int n = 0;
    for (int i = 0; i < pl->nt; i++) {
        int mc = pl->t[i].memcheck; /* clean or inconclusive: a plain run comes after it */
        if (mc == PROBE_MC_CLEAN || mc == PROBE_MC_INCONCLUSIVE)
            continue;
        if (!faulted(&pl->t[i]))
            return 0;
        n++;
    }
    return n > 0;
}

/* Whether every try so far ran the first small configuration (1024x1, a 256-wide 1D block) and
 * then hung at 64x64 with the 16x16 block, for a 1D kernel: code written for a block x of whole
 * warps (`row += blockDim.x / warpSize` steps by 0 at 16 wide; llm.c's
 * matmul_backward_bias_kernel4). tune's fitted space gives a 1D kernel 1D shapes only, so the
 * 1D retry shapes decide (docs/execute.md "Block retry"). */
static int hung_at_16x16(const struct plan *pl, const struct probe_options *o)
{
    if (probe_is2d(o->params) || pl->nt == 0)
        return 0;
    for (int i = 0; i < pl->nt; i++) {
        const struct probe_result *p = &pl->t[i];
        if ((p->outcome != PROBE_TOO_SLOW && p->outcome != PROBE_TIMEOUT) || !p->first_only)
            return 0;
    }
    return 1;
}

/* The retry shapes of this kernel, in order: the source's own block first, then
 * PROBE_RETRY_BLOCKS_1D/_2D without it; none over its __launch_bounds__ (refused with
 * `invalid argument`: a wasted fault), none against its block assert (a device-side assert:
 * another). Where no listed shape satisfies the assert, one made from it (its dimensions, the
 * others 32 / 8 (2D) or 1, at most 1,024 threads). Returns the count (at most 8). */
static int retry_shapes(struct shape *out, const struct probe_options *o)
{
    static const struct shape one[] = PROBE_RETRY_BLOCKS_1D, two[] = PROBE_RETRY_BLOCKS_2D;
    int is2d = probe_is2d(o->params), src[3], bounds, eq[3], n = 0;
    size_t nfix = is2d ? sizeof(two) / sizeof(two[0]) : sizeof(one) / sizeof(one[0]);
    probe_source_launch(src, &bounds, o->params);
    int asserted = block_eq_parse(eq, o->params);
    long long st = (long long)src[0] * src[1] * src[2];
    if (src[0] && st <= 1024 && (!bounds || st <= bounds) &&
        block_eq_fits(eq, src[0], src[1], src[2]))
        out[n++] = (struct shape){ src[0], src[1], src[2] };
    for (size_t i = 0; i < nfix; i++) {
        struct shape f = is2d ? two[i] : one[i];
        if ((bounds && f.bx * f.by > bounds) ||
            (src[0] && f.bx == src[0] && f.by == src[1] && src[2] == 1) ||
            !block_eq_fits(eq, f.bx, f.by, 1))
            continue;
        out[n++] = f;
    }
    if (asserted && n == 0) {
        struct shape a = { eq[0] ? eq[0] : 32, eq[1] ? eq[1] : is2d ? 8 : 1, eq[2] ? eq[2] : 1 };
        while ((long long)a.bx * a.by * a.bz > 1024 && !eq[1] && a.by > 1)
            a.by /= 2;
        long long t = (long long)a.bx * a.by * a.bz;
        if (t <= 1024 && (!bounds || t <= bounds))
            out[n++] = a;
    }
    return n;
}

/* The block retry (docs/execute.md "Block retry"): the bindings again with each retry shape
 * (retry_shapes), until one runs clean (or clean at the small sizes). */
/* A kernel that ran clean only at the small sizes, under a binding with the probe's own blocks,
 * whose source computes its grid from its sizes with a block that is not one of those (so tiles
 * was never tried): the tiles binding once with the source's block. Its sizes rounded to the
 * source's tiles may run at the large size where W x H did not (sgemmVectorize and friends:
 * docs/execute.md "The source's grid"). */
static int tiles_after_small(struct plan *pl, const struct probe_options *o, int large)
{
    int src[3], bounds;
    if (pl->pick >= 0 || pl->fallback >= 0 || pl->small < 0 || pl->stopped || !large ||
        tried(pl, "tiles") || !probe_binding_matters(PROBE_BIND_TILES, o->params) ||
        !probe_source_launch(src, &bounds, o->params) || budget_spent(pl, o) ||
        pl->nt >= PROBE_TRIES)
        return 0;
    struct shape s = { src[0], src[1], src[2] };
    struct probe_result *p;
    int rc = run_try(&p, pl, o, PROBE_BIND_TILES, large, &s);
    if (rc == 0)
        consider(pl, p);
    return rc;
}

static int retry_blocks(struct plan *pl, const struct probe_options *o, int large)
{
    struct shape list[8];
    int n = retry_shapes(list, o), rc = 0;
    for (int i = 0; i < n && rc == 0 && pl->pick < 0 && pl->fallback < 0 && pl->small < 0 &&
                    !pl->stopped; i++)
        rc = try_bindings(pl, o, large, &list[i]);
    return rc;
}

/* Why the probe's own blocks are not run, the retry shapes being tried at once: over the
 * kernel's __launch_bounds__ (256 threads: each would be refused), or against its block assert
 * (256x1, and 16x16 for every kernel, would fire it). NULL: they are run. */
static const char *own_refused(const struct probe_options *o)
{
    int src[3], bounds, eq[3];
    if (!o->retry_blocks)
        return NULL;
    probe_source_launch(src, &bounds, o->params);
    if (bounds > 0 && bounds < 256)
        return "over its __launch_bounds__";
    if (!block_eq_parse(eq, o->params))
        return NULL;
    int own_fit = block_eq_fits(eq, 16, 16, 1) &&
                  (probe_is2d(o->params) || block_eq_fits(eq, 256, 1, 1));
    return own_fit ? NULL : "against its block assert";
}

/* A pick made with a retry shape says so (and whether it is the source's own launch), and what
 * the probe's own shapes gave (first; NULL: not run, for the reason `refused` gives). */
static void mark_reblocked(struct probe_result *p, const struct probe_result *first,
                           const struct probe_options *o, const char *refused)
{
    int src[3], bounds;
    char own[32];
    probe_source_launch(src, &bounds, o->params);
    snprintf(own, sizeof own, "%dx%dx%d", src[0], src[1], src[2]);
    int is_src = src[0] && strcmp(own, p->block) == 0;
    char *d = xasprintf("block %s%s%s%s; with the probe's own blocks: %s%s%s%s", p->block,
                        is_src ? " (the source's launch)" : "", p->detail ? ": " : "",
                        p->detail ? p->detail : "",
                        first ? probe_outcome_name(first->outcome) : "not run, ",
                        first ? "" : refused ? refused : "", first && first->detail ? ": " : "",
                        first && first->detail ? first->detail : "");
    free(p->detail);
    p->detail = d;
}

/* A kept try whose kernel wrote past a buffer (the harness's guard) says so. */
static void mark_past(struct probe_result *p)
{
    char *d = xasprintf("%s%sit %s", p->detail ? p->detail : "", p->detail ? "; " : "", p->past);
    free(p->detail);
    p->detail = d;
}

/* A verdict made when the fault budget ended the search says so. */
static void mark_stopped(struct probe_result *p, int faults)
{
    char *d = xasprintf("%s%sfault budget: stopped after %d faulting runs", p->detail ? p->detail
                        : "", p->detail ? "; " : "", faults);
    free(p->detail);
    p->detail = d;
}

/* A search stopped early says why: after a fault, the harness cannot make an argument; or a run
 * hung at the first configuration. */
static void mark_ended(struct probe_result *p, const char *why)
{
    char *d = xasprintf("%s%sno other binding or block tried: %s", p->detail ? p->detail : "",
                        p->detail ? "; " : "", why);
    free(p->detail);
    p->detail = d;
}

int probe_run(struct probe_result *out, const struct probe_options *o)
{
    struct plan pl;
    int rc = 0, large = 0;
    double t0 = fs_mono_s();
    memset(out, 0, sizeof(*out));
    memset(&pl, 0, sizeof(pl));
    pl.pick = pl.fallback = pl.small = -1;
    /* The large size is there to choose among bindings: where no other binding changes a value
     * of this kernel, the small configurations decide, as before bindings (tune gives up what
     * fails at large sizes after --max-failures). */
    for (int b = 1; probe_bindings[b] && o->large > 0; b++) /* tiles alone does not: it only */
        large |= strcmp(probe_bindings[b], "tiles") != 0 &&  /* rounds the sizes side gives; */
                 b != PROBE_BIND_FIXED &&                    /* fixed runs its one size */
                 probe_binding_matters(b, o->params);
    const char *refused = own_refused(o);
    int over = refused != NULL;
    if (!over)
        rc = try_bindings(&pl, o, large, NULL);
    int own = pl.nt; /* tries with the probe's own shapes */
    if (rc == 0 && o->retry_blocks && pl.pick < 0 && pl.fallback < 0 && pl.small < 0 &&
        (over || all_faulted(&pl) || hung_at_16x16(&pl, o)))
        rc = retry_blocks(&pl, o, large);
    if (rc == 0 && o->retry_blocks)
        rc = tiles_after_small(&pl, o, large);
    if (rc == 0 && pl.mc_reports && pl.pick < 0 && pl.fallback < 0 && pl.small < 0)
        rc = memcheck_fallback(&pl, o, large);
    if (rc == 0 && pl.guard_stops && pl.pick < 0 && pl.fallback < 0 && !pl.lost)
        rc = guard_rerun(&pl, o, large);
    if (pl.lost) { /* no verdict on the kernel: the try that found the device gone says why */
        pl.pick = pl.lost - 1;
        pl.fallback = pl.small = -1;
    }
    int kept = !pl.lost && (pl.pick >= 0 || pl.fallback >= 0 || pl.small >= 0);
    struct buf j = BUF_INIT;
    tries_json(&j, pl.t, pl.nt); /* what each binding really gave */
    if (pl.pick < 0 && pl.fallback < 0 && pl.small >= 0) {
        mark_small_only(&pl.t[pl.small], o->large);
        pl.pick = pl.small;
    }
    if (pl.pick < 0)
        pl.pick = pl.fallback >= 0 ? pl.fallback : 0; /* ran ok with a report, else the default's */
    if (kept && pl.t[pl.pick].past && !pl.t[pl.pick].past_skipped) /* kept, but it overran */
        mark_past(&pl.t[pl.pick]);
    if (pl.pick >= own && pl.nt > 0 && (own > 0 || kept) && !pl.lost && pl.t[pl.pick].block)
        /* only a retry shape ran clean (the fixed binding says its own block: mark_fixed) */
        mark_reblocked(&pl.t[pl.pick], own > 0 ? &pl.t[0] : NULL, o, refused);
    if (pl.unmade && !pl.lost && pl.nt > 0)
        mark_ended(&pl.t[pl.pick], "the harness cannot make an argument");
    else if (pl.hang_stop && !pl.lost && pl.nt > 0)
        mark_ended(&pl.t[pl.pick], "a run hung at the first configuration");
    else if (pl.stopped && !pl.lost && pl.nt > 0) /* the verdict is what the runs made give */
        mark_stopped(&pl.t[pl.pick], pl.faults);
    enum probe_outcome last = pl.nt > 0 ? pl.t[pl.nt - 1].outcome : PROBE_OK;
    if (pl.nt > 0) {
        *out = pl.t[pl.pick];
        memset(&pl.t[pl.pick], 0, sizeof(pl.t[pl.pick]));
    }
    out->ended_on_clock = last == PROBE_TIMEOUT || last == PROBE_TOO_SLOW || last == PROBE_CRASH;
    out->bindings = buf_detach(&j, NULL);
    out->probe_s = fs_mono_s() - t0;
    out->too_slow = pl.too_slow;
    out->guard_stops = pl.guard_stops;
    out->guard_reruns = pl.guard_reruns;
    out->fault_budget = pl.stopped && !pl.lost && !pl.unmade && !pl.hang_stop;
    out->device_lost = pl.lost > 0;
    out->memcheck_runs = pl.mc_runs;
    out->memcheck_reports = pl.mc_reports;
    out->memcheck_inconclusive = pl.mc_inconclusive;
    out->confirm_runs = pl.confirms;
    out->memcheck_fallback_runs = pl.mc_fallback;
    if (out->outcome == PROBE_TOO_SLOW) /* not an outcome of the probes table: the clock's */
        out->outcome = PROBE_TIMEOUT;
    for (int i = 0; i < pl.nt; i++)
        probe_result_release(&pl.t[i]);
    return rc;
}

void probe_result_release(struct probe_result *r)
{
    free(r->detail);
    free(r->sanitizer);
    free(r->sanitizer_detail);
    free(r->binding);
    free(r->bindings);
    free(r->configs);
    free(r->config_s);
    free(r->block);
    free(r->kernel_s);
    free(r->wrote_past);
    free(r->past);
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
