/* Storing the kernels of one parse: each kernel's content-addressed folder (kernel.cu, harness.cu,
 * params.json, meta.json), its rows, and which of two units' kernels for one definition is kept
 * (the one with more template arguments from the tree's launches). */
#include "isolate/isolate_impl.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "isolate/harness.h"
#include "isolate/indexing.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void isolate_normalise(struct buf *out, const char *s, size_t n)
{
    int space = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                i++;
            space = 1;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            for (i += 2; i + 1 < n && !(s[i] == '*' && s[i + 1] == '/'); i++)
                ;
            i++;
            space = 1;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            space = 1;
            continue;
        }
        if (space && out->len)
            buf_addch(out, ' ');
        space = 0;
        if (c == '"' || c == '\'') { /* literals are kept byte for byte */
            size_t j = i + 1;
            while (j < n && s[j] != c && s[j] != '\n')
                j += s[j] == '\\' ? 2 : 1;
            if (j > n)
                j = n;
            buf_add(out, s + i, (j < n ? j + 1 : n) - i);
            i = j < n ? j : n;
            continue;
        }
        buf_addch(out, c);
    }
}

void kstore_failure(struct run *r, const char *subject, const char *cls, const char *msg)
{
    char now[32];
    fs_utc_now(now);
    store_run(r->s, "INSERT INTO failures(stage, subject, class, message, created_at, run_id) "
                    "VALUES ('isolate', ?, ?, ?, ?, ?)",
              "ttttI", subject, cls, msg, now, (int)r->o->run_id);
    r->c->notes++;
}

/* ,"textures":[{"param","fetch","resource","elem"}] when the kernel fetches through texture
 * object parameters (what the harness binds: docs/isolate.md "Textures"). */
static void add_textures_json(struct buf *b, const struct harness_kernel *hk)
{
    struct buf lines = BUF_INIT;
    if (harness_textures(&lines, hk) > 0) {
        buf_adds(b, ",\"textures\":[");
        int n = 0;
        for (char *line = lines.data; *line;) {
            char *nl = strchr(line, '\n'), *f[5] = { line };
            *nl = '\0';
            for (int j = 1; j < 5; j++) {
                f[j] = strchr(f[j - 1], '\t');
                *f[j]++ = '\0';
            }
            buf_adds(b, n++ ? ",{\"param\":" : "{\"param\":");
            buf_add_json_str(b, f[3], strlen(f[3]));
            buf_addf(b, ",\"index\":%s,\"fetch\":\"%s\",\"resource\":\"%s\",\"elem\":", f[0],
                     f[1], f[2]);
            buf_add_json_str(b, f[4], strlen(f[4]));
            buf_addch(b, '}');
            line = nl + 1;
        }
        buf_addch(b, ']');
    }
    buf_release(&lines);
}

static void add_params_json(struct buf *b, const struct record *k, const struct harness_kernel *hk)
{
    struct buf targs = BUF_INIT;
    harness_template_args(&targs, hk, "BX");
    buf_adds(b, "{\"kernel\":");
    buf_add_json_str(b, hk->name, strlen(hk->name));
    buf_adds(b, ",\"template_args\":");
    if (hk->is_template)
        buf_add_json_str(b, targs.data, targs.len);
    else
        buf_adds(b, "null");
    if (hk->is_template && strstr(hk->tparams, "block ")) {
        const int *v;
        int n = harness_block_values(&v, hk->is2d);
        buf_adds(b, ",\"template_block_values\":[");
        for (int i = 0; i < n; i++)
            buf_addf(b, "%s%d", i ? "," : "", v[i]);
        buf_adds(b, "]");
    }
    buf_addf(b, ",\"is2d\":%s,\"indexing\":\"%s\",\"indexing_uses\":",
             hk->is2d ? "true" : "false", hk->indexing);
    const char *uses = record_str(k, "indexing_uses");
    buf_add_json_str(b, uses ? uses : "", uses ? strlen(uses) : 0);
    if (hk->arg_note && *hk->arg_note) {
        buf_adds(b, ",\"note\":");
        buf_add_json_str(b, hk->arg_note, strlen(hk->arg_note));
    }
    struct harness_launch launch;
    harness_launch_parse(&launch, hk->launch);
    harness_launch_json(b, &launch, hk->names);
    add_textures_json(b, hk);
    if (hk->cooperative)
        buf_adds(b, ",\"cooperative\":true");
    const char *incomplete = record_str(k, "incomplete");
    if (incomplete && *incomplete) {
        buf_adds(b, ",\"incomplete\":");
        buf_add_json_str(b, incomplete, strlen(incomplete));
    }
    buf_addf(b, ",\"dynamic_shared\":%s,\"device_launch\":%s,\"params\":",
             hk->dynshared ? "true" : "false", record_int(k, "device_launch") ? "true" : "false");
    buf_adds(b, record_str(k, "params"));
    buf_adds(b, "}\n");
    buf_release(&targs);
}

static int write_meta(struct run *r, const char *id, const char *dir, const struct harness_kernel *hk)
{
    struct buf b = BUF_INIT, targs = BUF_INIT;
    struct store_stmt *st = NULL;
    harness_template_args(&targs, hk, "BX");
    buf_adds(&b, "{\"name\":");
    buf_add_json_str(&b, hk->name, strlen(hk->name));
    buf_adds(&b, ",\"template_args\":");
    if (hk->is_template)
        buf_add_json_str(&b, targs.data, targs.len);
    else
        buf_adds(&b, "null");
    buf_adds(&b, ",\"isolate_version\":\"" ISOLATE_VERSION "\",\"occurrences\":[");
    int rc = store_prepare(&st, r->s,
                           "SELECT COALESCE(r.full_name, s.root), o.path, o.line FROM "
                           "kernel_occurrences o JOIN sources s ON s.id = o.source_id LEFT JOIN "
                           "repos r ON r.id = s.repo_id WHERE o.kernel_id = ? ORDER BY 1, 2, 3");
    if (rc >= 0)
        rc = store_bind(st, "t", id);
    int n = 0;
    while (rc >= 0 && (rc = store_step(st)) == STORE_ROW) {
        const char *src = store_col_text(st, 0), *path = store_col_text(st, 1);
        buf_adds(&b, n++ ? ",{\"source\":" : "{\"source\":");
        buf_add_json_str(&b, src, strlen(src));
        buf_adds(&b, ",\"path\":");
        buf_add_json_str(&b, path, strlen(path));
        buf_addf(&b, ",\"line\":%lld}", (long long)store_col_int(st, 2));
    }
    buf_adds(&b, "]}\n");
    char *meta = xasprintf("%s/meta.json", dir);
    if (rc >= 0)
        rc = fs_write_atomic(meta, b.data, b.len);
    free(meta);
    store_finalize(st);
    buf_release(&b);
    buf_release(&targs);
    return rc;
}

/* Rewrite <dir>/<name> with `want` when its content differs (atomically). */
static int refresh_file(const char *dir, const char *name, const struct buf *want)
{
    char *path = fs_join(dir, name);
    struct buf have = BUF_INIT;
    int rc = 0;
    if (buf_read_file(&have, path) < 0 || have.len != want->len ||
        memcmp(have.data, want->data, want->len) != 0)
        rc = fs_write_atomic(path, want->data, want->len);
    buf_release(&have);
    free(path);
    return rc < 0 ? lscat_error_wrap("cannot refresh '%s/%s' (disk full? check --work)", dir,
                                     name) : 0;
}

/* How many of a template's arguments ("<float, 1, BX>") are lscat's own defaults, float or 1:
 * fewer means more came from the tree's launches. */
static int default_args(const char *targs)
{
    int n = 0;
    for (const char *p = targs; p && *p;) {
        p += strspn(p, "<, >");
        size_t len = strcspn(p, "<, >");
        n += (len == 5 && strncmp(p, "float", 5) == 0) || (len == 1 && *p == '1');
        p += len;
    }
    return n;
}

/* One copy of a kernel, for better_copy: its id, template arguments, closure's gap ("" when
 * complete) and source bytes. */
struct copy {
    const char *id, *targs, *incomplete;
    int64_t bytes;
};

/* Is copy a better than the stored copy b? A complete closure beats an incomplete one (a `.cu`
 * file meant to be #included, parsed alone, lacks its includer's typedef); at equal
 * completeness, more template arguments from the tree's launches win; then the longer closure
 * (it carries more of the program the kernel was compiled in: on the real-code corpus, of 99
 * kernels with two copies, the shorter ones built 90 times, the longer ones 94; the shorter lacked
 * device functions and functor types); then the smaller id. A total order, so the copy a run keeps
 * does not depend on the order its workers parsed the translation units in (session 13: shoc's
 * bottom_scan came out of scan_kernel.h through two includers, and two -j 2 runs kept different
 * ones). */
static int better_copy(const struct copy *a, const struct copy *b, int is_template)
{
    int gap = *a->incomplete != '\0', gap_b = *b->incomplete != '\0';
    if (gap != gap_b)
        return gap_b;
    if (is_template && default_args(a->targs) != default_args(b->targs))
        return default_args(a->targs) < default_args(b->targs);
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes;
    return strcmp(a->id, b->id) < 0;
}

/* The same definition reached through two translation units of one run: the kernel stored
 * first wins, except that a better copy (better_copy) replaces it: a complete closure over an
 * incomplete one (Learn-CUDA-Programming's gpuSolverFunctions.cu without the stSolverState
 * typedef its includer brings), one with more template arguments from the tree's launches (two
 * .cu files parsed side by side: `bottom_scan` launched with `<T, vecT, blockSize>` in one, as
 * `<float, float4, 256>` through a host template in the other). Only a kernel this run made,
 * with this one occurrence, is replaced; *seen becomes 0 when it was. */
static int replace_worse(struct run *r, const struct task *t, const struct record *k,
                         const struct harness_kernel *hk, const char *id, int64_t *seen)
{
    struct store_stmt *st = NULL;
    struct buf targs = BUF_INIT;
    char *old_id = NULL, *old_dir = NULL;
    harness_template_args(&targs, hk, "BX");
    int rc = store_prepare(&st, r->s,
                           "SELECT k.id, k.dir, COALESCE(k.template_args, ''), (SELECT count(*) FROM "
                           "kernel_occurrences x WHERE x.kernel_id = k.id), COALESCE(json_extract("
                           "k.params, '$.incomplete'), ''), COALESCE(k.source_bytes, 0) FROM "
                           "kernel_occurrences "
                           "o JOIN kernels k ON k.id = o.kernel_id WHERE o.source_id = ? AND "
                           "o.path = ? AND o.line = ? AND k.name = ? AND k.run_id = ? LIMIT 1");
    if (rc >= 0)
        rc = store_bind(st, "ititI", t->source_id, record_str(k, "path"),
                        (int64_t)record_int(k, "line"), hk->name, (int)r->o->run_id);
    if (rc >= 0 && (rc = store_step(st)) == STORE_ROW && store_col_int(st, 3) == 1) {
        const struct record_field *src = record_get(k, "source");
        struct copy a = { id, targs.data, record_str(k, "incomplete"), (int64_t)src->value_len };
        struct copy b = { store_col_text(st, 0), store_col_text(st, 2), store_col_text(st, 4),
                          store_col_int(st, 5) };
        if (better_copy(&a, &b, hk->is_template)) {
            old_id = xstrdup(store_col_text(st, 0));
            old_dir = fs_join(r->o->work_dir, store_col_text(st, 1));
        }
    }
    store_finalize(st);
    if (rc >= 0 && old_id) {
        rc = store_run(r->s, "DELETE FROM kernel_occurrences WHERE kernel_id = ?", "t", old_id);
        if (rc >= 0)
            rc = store_run(r->s, "DELETE FROM kernels WHERE id = ?", "t", old_id);
        if (rc >= 0) {
            fs_remove_tree(old_dir);
            r->c->kernels_new--;
            r->c->kernels--;
            *seen = 0;
        }
    }
    free(old_id);
    free(old_dir);
    buf_release(&targs);
    return rc < 0 ? rc : 0;
}

/* Write the kernel's folder (content-addressed: once, then only generated files refreshed)
 * and its rows. */
int kstore_kernel(struct run *r, const struct task *t, const struct record *k)
{
    struct harness_kernel hk = { record_str(k, "name"), record_str(k, "call"),
                                 record_str(k, "tparams"), (int)record_int(k, "template"),
                                 (int)record_int(k, "is2d"), (int)record_int(k, "dynshared"),
                                 record_str(k, "roles"), record_str(k, "param_names"),
                                 record_str(k, "indexing"), record_str(k, "members"),
                                 record_str(k, "arg_note"), record_str(k, "launch"),
                                 record_str(k, "source"), (int)record_int(k, "cooperative") };
    if (!hk.indexing || indexing_parse(hk.indexing) < 0)
        hk.indexing = hk.is2d ? "2d" : "1d";
    const struct record_field *src = record_get(k, "source");
    struct buf norm = BUF_INIT, params = BUF_INIT, harness = BUF_INIT, targs = BUF_INIT;
    char id[65], now[32], *dir = NULL, *reldir = NULL;
    int rc = 0;
    isolate_normalise(&norm, src->value, src->value_len);
    buf_addf(&norm, "\n//lscat kernel %s tparams %s", hk.call, hk.tparams);
    sha256_hex(id, norm.data, norm.len);
    /* The same definition (tree, file, line, instantiation) reached through another translation
     * unit is the same kernel, even when its closure came out differently there. */
    int64_t seen = 0;
    rc = store_query_int(&seen, r->s, "SELECT count(*) FROM kernel_occurrences o JOIN kernels k "
                         "ON k.id = o.kernel_id WHERE o.source_id = ? AND o.path = ? AND o.line = ? "
                         "AND k.name = ? AND k.id <> ?", "ititt", t->source_id,
                         record_str(k, "path"), (int64_t)record_int(k, "line"), hk.name, id);
    if (rc >= 0 && seen > 0)
        rc = replace_worse(r, t, k, &hk, id, &seen);
    if (rc < 0 || seen > 0)
        goto done;
    reldir = xasprintf("kernels/%.2s/%s", id, id);
    dir = fs_join(r->o->work_dir, reldir);
    add_params_json(&params, k, &hk);
    harness_generate(&harness, &hk);
    if (fs_is_dir(dir)) {
        /* Made by an older isolate: bring the generated files up to date (kernel.cu is the
         * folder's identity and never changes). */
        if ((rc = refresh_file(dir, "harness.cu", &harness)) < 0 ||
            (rc = refresh_file(dir, "params.json", &params)) < 0)
            goto done;
    } else {
        char *tmp = xasprintf("%s.tmp.%d", dir, (int)getpid());
        char *f1 = xasprintf("%s/kernel.cu", tmp), *f2 = xasprintf("%s/harness.cu", tmp),
             *f3 = xasprintf("%s/params.json", tmp);
        fs_remove_tree(tmp);
        if (fs_mkdirs(tmp, 0755) < 0 || fs_write_atomic(f1, src->value, src->value_len) < 0 ||
            fs_write_atomic(f2, harness.data, harness.len) < 0 ||
            fs_write_atomic(f3, params.data, params.len) < 0 || rename(tmp, dir) != 0)
            rc = lscat_error_set("cannot write kernel folder '%s' (disk full? check --work)", dir);
        free(f1), free(f2), free(f3), free(tmp);
        if (rc < 0)
            goto done;
    }
    harness_template_args(&targs, &hk, "BX");
    fs_utc_now(now);
    int64_t known = 0;
    const char *roles = hk.roles;
    for (const char *p = roles; p && *p;) {
        known += strncmp(p, "unknown", 7) != 0;
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    rc = store_run(r->s, "INSERT OR IGNORE INTO kernels(id, name, template_args, dir, params, "
                         "param_count, roles_known, source_bytes, created_at, run_id, indexing) "
                         "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                   "tttttiiitIt", id, hk.name, hk.is_template ? targs.data : NULL, reldir,
                   params.data, (int64_t)record_int(k, "param_count"), known,
                   (int64_t)src->value_len, now, (int)r->o->run_id, hk.indexing);
    if (rc > 0)
        r->c->kernels_new++;
    else if (rc == 0) /* made by an older isolate: its model follows this one's */
        rc = store_run(r->s, "UPDATE kernels SET params = ?, roles_known = ?, indexing = ? "
                             "WHERE id = ?", "titt", params.data, known, hk.indexing, id);
    if (rc >= 0)
        rc = store_run(r->s, "INSERT OR IGNORE INTO kernel_occurrences(kernel_id, source_id, "
                             "path, line) VALUES (?,?,?,?)",
                       "titi", id, t->source_id, record_str(k, "path"),
                       (int64_t)record_int(k, "line"));
    if (rc > 0)
        r->c->occurrences++;
    if (rc >= 0)
        rc = write_meta(r, id, dir, &hk);
    r->c->kernels++;
done:
    free(dir);
    free(reldir);
    buf_release(&norm);
    buf_release(&params);
    buf_release(&harness);
    buf_release(&targs);
    return rc;
}
