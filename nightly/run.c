/* The night (run.h): each stage runs the lscat program that does it as a child process through
 * common/proc, with the store and work folder passed on; its stderr goes straight to ours, its
 * counts are read back from the stage_runs row it wrote. Children die with the night
 * (PR_SET_PDEATHSIG), so a killed night leaves no stage running on the store. */
#include "nightly/run.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"
#include "nightly/release.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static const char *const stage_names[NIGHTLY_NSTAGES] = {
    "harvest", "fetch", "isolate", "execute", "tune", "export", "release",
};

const char *nightly_stage_name(int stage)
{
    return stage >= 0 && stage < NIGHTLY_NSTAGES ? stage_names[stage] : "?";
}

int nightly_stages_parse(unsigned *out, const char *list)
{
    char *copy = xstrdup(list), *save = NULL;
    int rc = 0;
    *out = 0;
    for (char *w = strtok_r(copy, ",", &save); w && !rc; w = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < NIGHTLY_NSTAGES; i++)
            if (!strcmp(w, stage_names[i]))
                found = i;
        if (found < 0)
            rc = lscat_error_setc(LSCAT_EINVALID, "'%s' is not a nightly stage (harvest, fetch, "
                                                  "isolate, execute, tune, export, release)", w);
        else
            *out |= 1u << found;
    }
    if (!rc && !*out)
        rc = lscat_error_setc(LSCAT_EINVALID, "no stage named in '%s'", list);
    free(copy);
    return rc;
}

/* ---------------------------------------------------------------- child processes */

struct night {
    struct store *store;
    const struct nightly_options *o;
    char *self_dir;     /* the folder of this program */
    int err_fd;         /* a copy of our stderr, for the children's */
    char *last_counts;  /* the counts of the last child's stage_runs row, NULL when none */
};

struct argv_list {
    char **v;
    size_t n, cap;
};

static void args_add(struct argv_list *a, const char *s)
{
    XGROW(a->v, a->n + 2, a->cap);
    a->v[a->n++] = xstrdup(s);
    a->v[a->n] = NULL;
}

static void args_release(struct argv_list *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

/* The program `name`: beside this one, else on PATH; NULL when neither (caller frees). */
static char *find_program(const struct night *n, const char *name)
{
    char *p = n->self_dir ? fs_join(n->self_dir, name) : NULL;
    if (p && access(p, X_OK) == 0)
        return p;
    free(p);
    const char *path = getenv("PATH");
    char *copy = xstrdup(path ? path : ""), *save = NULL;
    p = NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !p; d = strtok_r(NULL, ":", &save)) {
        char *c = fs_join(d, name);
        if (access(c, X_OK) == 0)
            p = c;
        else
            free(c);
    }
    free(copy);
    return p;
}

static char *self_dir(void)
{
    char buf[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (len <= 0)
        return NULL;
    buf[len] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    return xstrdup(buf);
}

struct child_ctx {
    pid_t parent;
    int err_fd;
};

/* In the child, before exec: die with the night, write stderr to the night's stderr. */
static int child_setup(void *arg)
{
    const struct child_ctx *c = arg;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != c->parent)
        return 1;
    if (c->err_fd >= 0 && dup2(c->err_fd, 2) < 0)
        return 1;
    return 0;
}

static void args_globals(struct argv_list *a, const struct night *n)
{
    char jobs[16];
    args_add(a, "--db");
    args_add(a, n->o->db_path);
    args_add(a, "--work");
    args_add(a, n->o->work_dir);
    if (n->o->jobs > 0) {
        snprintf(jobs, sizeof(jobs), "%d", n->o->jobs);
        args_add(a, "-j");
        args_add(a, jobs);
    }
}

static void add_counts(struct nightly_stage_result *r, const char *step, const char *json)
{
    buf_setlen(&r->counts, r->counts.len ? r->counts.len - 1 : 0); /* drop the '}' */
    buf_adds(&r->counts, r->counts.len ? "," : "{");
    buf_add_json_str(&r->counts, step, strlen(step));
    buf_addf(&r->counts, ":%s}", json && *json ? json : "null");
}

/* Run one child to its end. Returns its exit code, 128 + signal, or -1 when it could not start
 * (the note says why). Its stage_runs counts (rows of `row_stage` it wrote) go into r->counts
 * under `step`; its stdout is copied to our stderr and, when `out` is set, into *out. */
static int run_child(struct nightly_stage_result *r, struct night *n, const char *step,
                     const char *row_stage, struct argv_list *a, struct buf *out)
{
    struct proc_options po = PROC_OPTIONS_INIT;
    struct proc_result pr;
    struct child_ctx cc = { .parent = getpid(), .err_fd = n->err_fd };
    int64_t last_run = 0;
    char *counts = NULL;
    store_query_int(&last_run, n->store, "SELECT coalesce(max(id), 0) FROM stage_runs", "");
    po.argv = (const char *const *)a->v;
    po.out_cap_bytes = 4u << 20;
    po.child_setup = child_setup;
    po.child_setup_arg = &cc;
    int rc = proc_run(&pr, &po);
    if (rc < 0) {
        buf_addf(&r->note, "%s%s could not start: %s", r->note.len ? "; " : "", step,
                 lscat_error_last());
        proc_result_release(&pr);
        return -1;
    }
    fwrite(pr.out.data, 1, pr.out.len, stderr);
    if (out)
        buf_add(out, pr.out.data, pr.out.len);
    rc = pr.signal ? 128 + pr.signal : pr.exit_code;
    if (rc >= 2) {
        struct buf why = BUF_INIT;
        proc_describe(&why, &pr, &po);
        buf_addf(&r->note, "%s%s failed (%s; its messages are above)", r->note.len ? "; " : "",
                 step, why.data);
        buf_release(&why);
    }
    proc_result_release(&pr);
    store_query_text(&counts, n->store, "SELECT counts FROM stage_runs WHERE id > ? AND stage = ?"
                                        " ORDER BY id LIMIT 1", "it", last_run, row_stage);
    add_counts(r, step, counts);
    free(n->last_counts);
    n->last_counts = counts;
    r->exit_code = rc;
    if (rc >= 2 || rc < 0)
        r->outcome = NIGHTLY_FAILED;
    else if (r->outcome != NIGHTLY_FAILED)
        r->outcome = NIGHTLY_OK;
    return rc;
}

/* Run `a` and release it. */
static int run_args(struct nightly_stage_result *r, struct night *n, const char *step,
                    const char *row_stage, struct argv_list *a, struct buf *out)
{
    int rc = run_child(r, n, step, row_stage, a, out);
    args_release(a);
    return rc;
}

static void elsewhere(struct nightly_stage_result *r, const char *why)
{
    r->outcome = NIGHTLY_ELSEWHERE;
    buf_adds(&r->note, why);
}

/* The program for a stage, or NULL with the stage marked ELSEWHERE (`machine` says where). */
static char *need_program(struct nightly_stage_result *r, struct night *n, const char *prog,
                          const char *machine)
{
    char *p = find_program(n, prog);
    if (!p) {
        buf_addf(&r->note, "%s is not built here: left to %s", prog, machine);
        r->outcome = NIGHTLY_ELSEWHERE;
    }
    return p;
}

/* ---------------------------------------------------------------- the stages */

/* "YYYY-MM-DDTHH" of `hours_ago` hours ago, or "YYYY-MM-DD" of `days_ago` days ago. */
static void utc_stamp(char out[32], const char *fmt, long seconds_ago)
{
    time_t t = time(NULL) - seconds_ago;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, fmt, &tm);
}

static void stage_harvest(struct nightly_stage_result *r, struct night *n, struct nightly_night *x)
{
    const struct nightly_options *o = n->o;
    struct argv_list a = { 0 };
    int64_t done = 0;
    char to[32], since[32];
    (void)x;
    char *prog = need_program(r, n, "lscat-harvest", "a CPU machine with libcurl, libarchive and "
                                                     "libgit2 (lscat-harvest)");
    if (!prog)
        return;
    store_query_int(&done, n->store, "SELECT count(*) FROM gha_hours WHERE status = 'done'", "");
    if (!o->from && done == 0) {
        r->outcome = NIGHTLY_FAILED;
        buf_adds(&r->note, "no GH Archive hour was scanned yet: give --from HOUR for the first "
                           "night, or seed the store with 'lscat harvest scan --from'");
    } else {
        args_add(&a, prog);
        args_add(&a, "scan");
        args_add(&a, o->from ? "--from" : "--since-last");
        if (o->from)
            args_add(&a, o->from);
        utc_stamp(to, "%Y-%m-%dT%H", 2 * 3600); /* what --since-last takes by default */
        if (o->to || o->from) {
            args_add(&a, "--to");
            args_add(&a, o->to ? o->to : to);
        }
        if (o->source) {
            args_add(&a, "--source");
            args_add(&a, o->source);
        }
        args_globals(&a, n);
        run_args(r, n, "scan", "harvest", &a, NULL);
    }
    /* GH Archive's payloads lost the language of pull requests in 2025-10: the search API
     * covers the last days' pushes (overlap is harmless: repositories are kept once) */
    if (!getenv("GITHUB_TOKEN") && !o->api_url) {
        buf_addf(&r->note, "%ssearch skipped (no GITHUB_TOKEN)", r->note.len ? "; " : "");
    } else {
        utc_stamp(since, "%Y-%m-%d", 2 * 86400);
        args_add(&a, prog);
        args_add(&a, "search");
        args_add(&a, "--language");
        args_add(&a, "Cuda");
        args_add(&a, "--pushed-since");
        args_add(&a, since);
        if (o->api_url) {
            args_add(&a, "--api-url");
            args_add(&a, o->api_url);
        }
        args_globals(&a, n);
        run_args(r, n, "search", "harvest", &a, NULL);
    }
    free(prog);
}

static void stage_fetch(struct nightly_stage_result *r, struct night *n, struct nightly_night *x)
{
    struct argv_list a = { 0 };
    (void)x;
    char *prog = need_program(r, n, "lscat-harvest", "a CPU machine with libcurl, libarchive and "
                                                     "libgit2 (lscat-harvest)");
    if (!prog)
        return;
    args_add(&a, prog);
    args_add(&a, "fetch");
    args_add(&a, "--refresh-older-than");
    args_add(&a, n->o->refresh_age);
    if (n->o->archive_url) {
        args_add(&a, "--archive-url");
        args_add(&a, n->o->archive_url);
    }
    if (n->o->git_url) {
        args_add(&a, "--git-url");
        args_add(&a, n->o->git_url);
    }
    args_globals(&a, n);
    run_args(r, n, "fetch", "harvest", &a, NULL);
    free(prog);
}

static void stage_isolate(struct nightly_stage_result *r, struct night *n, struct nightly_night *x)
{
    struct argv_list a = { 0 };
    (void)x;
    char *prog = need_program(r, n, "lscat-isolate", "a CPU machine with libclang 22 "
                                                     "(lscat-isolate)");
    if (!prog)
        return;
    args_add(&a, prog);
    args_globals(&a, n);
    run_args(r, n, "isolate", "isolate", &a, NULL);
    free(prog);
}

/* nvcc as lscat-execute finds it: $CUDA_HOME/bin, /usr/local/cuda/bin, PATH. */
static int have_nvcc(struct night *n)
{
    const char *home = getenv("CUDA_HOME");
    char *p = home && *home ? fs_join(home, "bin/nvcc") : NULL;
    int ok = p && access(p, X_OK) == 0;
    free(p);
    if (!ok)
        ok = access("/usr/local/cuda/bin/nvcc", X_OK) == 0;
    if (!ok && (p = find_program(n, "nvcc")) != NULL) {
        ok = 1;
        free(p);
    }
    return ok;
}

static void stage_execute(struct nightly_stage_result *r, struct night *n, struct nightly_night *x)
{
    struct argv_list a = { 0 };
    (void)x;
    char *prog = need_program(r, n, "lscat-execute", "a machine with the CUDA toolkit "
                                                     "(lscat-execute)");
    if (!prog)
        return;
    if (!have_nvcc(n)) {
        elsewhere(r, "nvcc is not here: left to a machine with the CUDA toolkit");
    } else {
        args_add(&a, prog);
        args_globals(&a, n);
        if (run_args(r, n, "execute", "execute", &a, NULL) <= 1 && r->counts.len &&
            strstr(r->counts.data, "\"gpu_present\":0"))
            buf_adds(&r->note, "built and repaired; probes left to a GPU machine");
    }
    free(prog);
}

/* Merge the shard stores (*.db) of `dir`, sorted by name. */
static void merge_shards(struct nightly_stage_result *r, struct night *n, const char *dir)
{
    struct argv_list a = { 0 };
    struct dirent **names = NULL;
    int count = scandir(dir, &names, NULL, alphasort), shards = 0;
    char *prog = need_program(r, n, "lscat-dataset", "a machine with lscat-dataset");
    if (count < 0) {
        r->outcome = NIGHTLY_FAILED;
        buf_addf(&r->note, "cannot read the shard folder '%s' (--shards)", dir);
    }
    if (prog && count >= 0)
        args_add(&a, prog);
    for (int i = 0; i < count; i++) {
        const char *nm = names[i]->d_name;
        size_t len = strlen(nm);
        if (prog && len > 3 && !strcmp(nm + len - 3, ".db")) {
            char *p = fs_join(dir, nm);
            if (!shards++)
                args_add(&a, "merge");
            args_add(&a, p);
            free(p);
        }
        free(names[i]);
    }
    free(names);
    if (prog && count >= 0 && !shards) {
        r->outcome = NIGHTLY_OK;
        buf_addf(&r->note, "no shard stores (*.db) in '%s' tonight", dir);
    } else if (prog && shards) {
        args_globals(&a, n);
        if (run_args(r, n, "merge", "dataset", &a, NULL) <= 1)
            buf_addf(&r->note, "merged %d shard store%s from '%s'", shards, shards > 1 ? "s" : "",
                     dir);
    }
    args_release(&a);
    free(prog);
}

static void stage_tune(struct nightly_stage_result *r, struct night *n, struct nightly_night *x)
{
    struct argv_list a = { 0 };
    struct buf out = BUF_INIT;
    (void)x;
    if (n->o->shards_dir) {
        merge_shards(r, n, n->o->shards_dir);
        return;
    }
    char *prog = need_program(r, n, "lscat-tune", "a GPU machine (lscat-tune; or give --shards)");
    if (!prog)
        return;
    args_add(&a, prog);
    args_globals(&a, n);
    if (run_args(r, n, "tune", "tune", &a, &out) == 0 && strstr(out.data, "no CUDA device"))
        elsewhere(r, "no CUDA device here: left to a GPU machine (lscat tune there, or --shards "
                     "with the shard stores of an MPI/Slurm run)");
    buf_release(&out);
    free(prog);
}

/* One `lscat-dataset` run: export/report into <export>/<sub>. */
static int dataset_step(struct nightly_stage_result *r, struct night *n, const char *prog,
                        const char *exp, const char *sub, const char *const *words)
{
    struct argv_list a = { 0 };
    char *dir = fs_join(exp, sub);
    args_add(&a, prog);
    for (size_t i = 0; words[i]; i++)
        args_add(&a, words[i]);
    args_add(&a, "--out");
    args_add(&a, dir);
    args_globals(&a, n);
    int rc = run_args(r, n, sub, "dataset", &a, NULL);
    free(dir);
    return rc >= 0 && rc <= 1 ? 0 : -1;
}

static void stage_export(struct nightly_stage_result *r, struct night *n, struct nightly_night *x)
{
    static const char *const parquet[] = { "export", "--format", "parquet", NULL };
    static const char *const csv[] = { "export", "--format", "csv", "--gzip", NULL };
    static const char *const report[] = { "report", NULL };
    char *exp = nightly_export_dir(n->o->work_dir), *counts = NULL;
    (void)x;
    char *prog = need_program(r, n, "lscat-dataset", "a machine with lscat-dataset");
    if (!prog)
        goto done;
    if (nightly_export_begin(exp) < 0) {
        r->outcome = NIGHTLY_FAILED;
        buf_adds(&r->note, lscat_error_last());
        goto done;
    }
    if (dataset_step(r, n, prog, exp, "parquet", parquet) < 0)
        goto done;
    counts = n->last_counts ? xstrdup(n->last_counts) : NULL;
    if (dataset_step(r, n, prog, exp, "csv", csv) < 0 ||
        dataset_step(r, n, prog, exp, "report", report) < 0)
        goto done;
    if (nightly_export_finish(n->store, exp, counts ? counts : "{}") < 0) {
        r->outcome = NIGHTLY_FAILED;
        buf_adds(&r->note, lscat_error_last());
    }
done:
    free(counts);
    free(prog);
    free(exp);
}

static void stage_release(struct nightly_stage_result *r, struct night *n, struct nightly_night *x)
{
    struct nightly_release_options ro = { .releases_dir = NULL, .export_dir = NULL,
                                          .keep = n->o->keep };
    char *exp = nightly_export_dir(n->o->work_dir);
    char *rel = n->o->releases_dir ? xstrdup(n->o->releases_dir) : fs_join(n->o->work_dir,
                                                                           "releases");
    ro.releases_dir = rel;
    ro.export_dir = exp;
    if (!nightly_export_complete(exp)) {
        int blocked = x->stages[NIGHTLY_EXPORT].outcome == NIGHTLY_FAILED;
        r->outcome = blocked ? NIGHTLY_BLOCKED : NIGHTLY_FAILED;
        buf_addf(&r->note, "%s: nothing published (the latest release stays as it was)",
                 blocked ? "the export failed tonight" : "no complete export (run the export stage)");
    } else if (nightly_release_publish(&x->release, n->store, &ro) < 0) {
        r->outcome = NIGHTLY_FAILED;
        buf_addf(&r->note, "%s (the latest release stays as it was)", lscat_error_last());
    } else {
        r->outcome = NIGHTLY_OK;
        buf_addf(&r->note, "%s/%s (latest)", rel, x->release);
    }
    free(rel);
    free(exp);
}

/* ---------------------------------------------------------------- the night */

typedef void (*stage_fn)(struct nightly_stage_result *, struct night *, struct nightly_night *);
static const stage_fn stage_fns[NIGHTLY_NSTAGES] = {
    stage_harvest, stage_fetch, stage_isolate, stage_execute, stage_tune, stage_export,
    stage_release,
};

const char *nightly_outcome_name(int outcome)
{
    static const char *const words[] = { "not chosen", "ok", "FAILED", "elsewhere", "blocked" };
    return outcome >= 0 && outcome <= NIGHTLY_BLOCKED ? words[outcome] : "?";
}

int nightly_run(struct nightly_night *out, struct store *s, const struct nightly_options *o)
{
    struct night n = { .store = s, .o = o, .self_dir = self_dir(), .err_fd = -1,
                       .last_counts = NULL };
    out->release = NULL;
    for (int i = 0; i < NIGHTLY_NSTAGES; i++) {
        struct nightly_stage_result *r = &out->stages[i];
        r->outcome = NIGHTLY_NOT_CHOSEN;
        r->exit_code = -1;
        r->wall_s = 0;
        buf_init(&r->note, 0);
        buf_init(&r->counts, 0);
    }
    n.err_fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
    for (int i = 0; i < NIGHTLY_NSTAGES; i++) {
        struct nightly_stage_result *r = &out->stages[i];
        if (!(o->stages & (1u << i)))
            continue;
        log_info("nightly: %s started", stage_names[i]);
        double t0 = fs_mono_s();
        stage_fns[i](r, &n, out);
        r->wall_s = fs_mono_s() - t0;
        log_msg(r->outcome == NIGHTLY_FAILED || r->outcome == NIGHTLY_BLOCKED ? LOG_WARN : LOG_INFO,
                "nightly: %s %s in %.1f s%s%s", stage_names[i], nightly_outcome_name(r->outcome),
                r->wall_s, r->note.len ? ": " : "", r->note.data);
    }
    if (n.err_fd >= 0)
        close(n.err_fd);
    free(n.self_dir);
    free(n.last_counts);
    return 0;
}

void nightly_night_release(struct nightly_night *n)
{
    for (int i = 0; i < NIGHTLY_NSTAGES; i++) {
        buf_release(&n->stages[i].note);
        buf_release(&n->stages[i].counts);
    }
    free(n->release);
    n->release = NULL;
}
