/* A trained Seer model on disk: model.json (what was trained on, the split, the accuracies),
 * each tree as JSON (learn's form), as a C header and as DOT, predictions.csv, and the
 * seer_select() runtime sources (embedded at build time) so the folder builds a library. */
#include "seer/train.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "learn/export.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

extern const char seer_rt_select_h[], seer_rt_select_cu[], seer_rt_features_cuh[],
    seer_rt_derived_h[], seer_rt_makefile[];

static const char *const KNOWN_NAMES[SEER_NG] = {
    "rows",    "cols",    "nnz",     "iterations",   "nnz_per_row",  "row_max",
    "row_min", "row_var", "row_max_rel", "row_min_rel", "row_var_rel",
};
static const char *const SELECTOR_CLASSES[2] = { "known", "gather" };
static const char *const SPLIT[2] = { "gini", "cost" }; /* SEER_SPLIT_* */

/* SEER_SPLIT_* of a name in model.json; -1 for "chosen" or none. */
static int split_by_name(const char *s)
{
    return s && !strcmp(s, SPLIT[1]) ? SEER_SPLIT_COST : s && !strcmp(s, SPLIT[0]) ? 0 : -1;
}

static int write_text(const char *dir, const char *file, const char *text, size_t len)
{
    char *p = fs_join(dir, file);
    int rc = fs_write_atomic(p, text, len);
    free(p);
    return rc;
}

static json_t *model_json(const struct seer_model *m)
{
    json_t *o = json_object(), *cls = json_array(), *its = json_array(), *test = json_array();
    for (int c = 0; c < m->k; c++)
        json_array_append_new(cls, json_string(seer_kernel_name(m->class_kernel[c])));
    for (int i = 0; i < m->opt.niter; i++)
        json_array_append_new(its, json_real(m->opt.iterations[i]));
    for (int i = 0; i < m->ntest; i++)
        json_array_append_new(test, json_string(m->test[i]));
    json_object_set_new(o, "format", json_string("lscat-seer-model"));
    json_object_set_new(o, "version", json_integer(1));
    json_object_set_new(o, "gpu", json_string(m->gpu));
    json_object_set_new(o, "precision", json_string(m->precision));
    json_object_set_new(o, "feature_cost", json_string(seer_cost_name(m->feature_cost)));
    json_object_set_new(o, "classes", cls);
    json_object_set_new(o, "iterations", its);
    json_object_set_new(o, "seed", json_integer((json_int_t)m->opt.seed));
    json_object_set_new(o, "test_fraction", json_real(m->opt.test_fraction));
    json_object_set_new(o, "max_depth", json_integer(m->opt.max_depth));
    json_object_set_new(o, "min_samples_leaf", json_integer(m->opt.min_samples_leaf));
    json_object_set_new(o, "folds", json_integer(m->opt.folds));
    json_object_set_new(o, "test", test);
    json_object_set_new(o, "accuracy", json_pack("{s:f,s:f,s:f}", "known", m->acc_known,
                                                 "gathered", m->acc_gathered, "selector",
                                                 m->acc_selector));
    json_object_set_new(o, "train_accuracy", json_pack("{s:f,s:f,s:f}", "known", m->train_known,
                                                       "gathered", m->train_gathered, "selector",
                                                       m->train_selector));
    json_object_set_new(o, "train_matrices", json_integer(m->train_matrices));
    json_object_set_new(o, "train_samples", json_integer(m->train_samples));
    json_object_set_new(o, "test_samples", json_integer(m->test_samples));
    json_object_set_new(o, "selector_gather_labels", json_integer(m->selector_gather_labels));
    json_object_set_new(o, "split", json_string(m->opt.split < 0 ? "chosen" : SPLIT[m->opt.split]));
    json_object_set_new(o, "chosen", json_pack("{s:{s:s,s:i,s:i,s:f},s:{s:s,s:i,s:i,s:f},"
                                               "s:{s:s,s:i,s:i}}", "known", "split",
                                               SPLIT[m->split[0]], "max_depth", m->depth[0],
                                               "min_samples_leaf", m->leaf[0],
                                               "oof_oracle_fraction", m->cv_score[0],
                                               "gathered", "split", SPLIT[m->split[1]],
                                               "max_depth", m->depth[1],
                                               "min_samples_leaf", m->leaf[1],
                                               "oof_oracle_fraction", m->cv_score[1], "selector",
                                               "split", SPLIT[m->split[2]], "max_depth",
                                               m->depth[2], "min_samples_leaf", m->leaf[2]));
    json_object_set_new(o, "risk", json_real(m->opt.risk));
    json_object_set_new(o, "guard", json_real(m->opt.guard));
    json_object_set_new(json_object_get(json_object_get(o, "chosen"), "gathered"), "guard",
                        json_real(m->guard[1])); /* 0: none; else the guard's ratio */
    const char *tree[3] = { "known", "gathered", "selector" };
    for (int g = 0; g < 3; g++) /* 0: any kernel; else the worst training ratio allowed */
        json_object_set_new(json_object_get(json_object_get(o, "chosen"), tree[g]), "risk",
                            json_real(m->risk[g]));
    return o;
}

static int save_tree(const struct learn_tree *t, const char *dir, const char *name, int d,
                     const char *const *classes)
{
    struct buf h = BUF_INIT, dot = BUF_INIT;
    char prefix[64], file[80];
    (void)d;
    snprintf(prefix, sizeof(prefix), "seer_%s", name);
    snprintf(file, sizeof(file), "%s.json", name);
    char *json_path = fs_join(dir, file);
    int rc = learn_tree_save(t, json_path);
    free(json_path);
    if (rc == 0)
        rc = learn_tree_to_c(&h, t, prefix, KNOWN_NAMES, classes);
    snprintf(file, sizeof(file), "seer_%s.h", name);
    if (rc == 0)
        rc = write_text(dir, file, h.data, h.len);
    if (rc == 0)
        rc = learn_tree_to_dot(&dot, t, KNOWN_NAMES, classes);
    snprintf(file, sizeof(file), "%s.dot", name);
    if (rc == 0)
        rc = write_text(dir, file, dot.data, dot.len);
    buf_release(&h);
    buf_release(&dot);
    return rc;
}

static int save_classes(const struct seer_model *m, const char *dir)
{
    struct buf b = BUF_INIT;
    buf_addf(&b, "/* Generated by lscat seer train: the trees' classes as SEER_KERNEL_* numbers "
             "(seer_select.h).\n * GPU: %s, precision: %s. */\n#ifndef SEER_CLASSES_H\n"
             "#define SEER_CLASSES_H\n\nstatic const int seer_class_kernel[%d] = {\n", m->gpu,
             m->precision, m->k);
    for (int c = 0; c < m->k; c++)
        buf_addf(&b, "    %d, /* class %d: %s */\n", m->class_kernel[c], c,
                 seer_kernel_name(m->class_kernel[c]));
    buf_adds(&b, "};\n\n#endif\n");
    int rc = write_text(dir, "seer_classes.h", b.data, b.len);
    buf_release(&b);
    return rc;
}

static int save_predictions(const struct seer_model *m, const struct seer_table *t, const char *dir)
{
    struct buf b = BUF_INIT;
    buf_adds(&b, "matrix,set,rows,cols,nnz,iterations,nnz_per_row,row_max,row_min,row_var,row_max_rel,"
             "row_min_rel,row_var_rel,label,"
             "known,gathered,selector\n");
    for (int i = 0; i < t->n; i++) {
        const struct seer_row *r = &t->rows[i];
        for (int j = 0; j < m->opt.niter; j++) {
            double it = m->opt.iterations[j], xg[SEER_NG];
            int y = seer_best_class(m, r, it);
            if (y < 0)
                continue;
            seer_gathered_x(xg, r, it);
            buf_addf(&b, strchr(r->name, ',') ? "\"%s\",%s" : "%s,%s", r->name, seer_model_is_test(m, r->name) ? "test" : "train");
            for (int f = 0; f < SEER_NG; f++)
                buf_addf(&b, ",%.17g", xg[f]);
            buf_addf(&b, ",%d,%d,%d,%d\n", y, learn_tree_predict(m->known, xg),
                     learn_tree_predict(m->gathered, xg), learn_tree_predict(m->selector, xg));
        }
    }
    int rc = write_text(dir, "predictions.csv", b.data, b.len);
    buf_release(&b);
    return rc;
}

static int save_runtime(const char *dir)
{
    const char *files[5][2] = { { "seer_select.h", seer_rt_select_h },
                                { "seer_select.cu", seer_rt_select_cu },
                                { "seer_features.cuh", seer_rt_features_cuh },
                                { "seer_derived.h", seer_rt_derived_h },
                                { "Makefile", seer_rt_makefile } };
    for (int i = 0; i < 5; i++)
        if (write_text(dir, files[i][0], files[i][1], strlen(files[i][1])) < 0)
            return LSCAT_ERR;
    return 0;
}

int seer_model_save(const struct seer_model *m, const struct seer_table *t, const char *dir)
{
    const char *cls[SEER_K_COUNT];
    for (int c = 0; c < m->k; c++)
        cls[c] = seer_kernel_name(m->class_kernel[c]);
    if (fs_mkdirs(dir, 0755) < 0)
        return lscat_error_wrap("cannot create '%s'", dir);
    json_t *o = model_json(m);
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(o);
    int rc = write_text(dir, "model.json", text, strlen(text));
    free(text);
    if (rc == 0)
        rc = save_tree(m->known, dir, "known", SEER_NK, cls);
    if (rc == 0)
        rc = save_tree(m->gathered, dir, "gathered", SEER_NG, cls);
    if (rc == 0)
        rc = save_tree(m->selector, dir, "selector", SEER_NK, SELECTOR_CLASSES);
    if (rc == 0)
        rc = save_classes(m, dir);
    if (rc == 0)
        rc = save_predictions(m, t, dir);
    if (rc == 0)
        rc = save_runtime(dir);
    return rc;
}

static int load_fields(struct seer_model *m, json_t *o, const char *path)
{
    json_t *cls = json_object_get(o, "classes"), *its = json_object_get(o, "iterations");
    json_t *test = json_object_get(o, "test");
    const char *fmt = json_string_value(json_object_get(o, "format"));
    if (!fmt || strcmp(fmt, "lscat-seer-model") || !json_is_array(cls) || !json_is_array(its) ||
        !json_is_array(test) || json_array_size(its) > SEER_MAX_ITER ||
        json_array_size(cls) > SEER_K_COUNT)
        return lscat_error_setc(LSCAT_EINVALID, "%s is not an lscat seer model (run lscat seer "
                                "train)", path);
    m->gpu = xstrdup(json_string_value(json_object_get(o, "gpu")) ?: "?");
    m->precision = xstrdup(json_string_value(json_object_get(o, "precision")) ?: "double");
    const char *cost = json_string_value(json_object_get(o, "feature_cost"));
    if ((m->feature_cost = cost ? seer_cost_by_name(cost) : SEER_COST_SYNC) < 0)
        return lscat_error_setc(LSCAT_EINVALID, "%s: feature_cost '%s' is not sync, async, "
                                "async-resident or sync-upload", path, cost);
    m->k = (int)json_array_size(cls);
    for (int c = 0; c < m->k; c++) {
        int k = seer_kernel_by_name(json_string_value(json_array_get(cls, (size_t)c)) ?: "");
        if (k < 0)
            return lscat_error_setc(LSCAT_EINVALID, "%s: class %d names no seer kernel", path, c);
        m->class_kernel[c] = k;
    }
    m->opt.niter = (int)json_array_size(its);
    for (int i = 0; i < m->opt.niter; i++)
        m->opt.iterations[i] = json_number_value(json_array_get(its, (size_t)i));
    m->ntest = (int)json_array_size(test);
    m->test = xcalloc((size_t)(m->ntest ? m->ntest : 1), sizeof(char *));
    for (int i = 0; i < m->ntest; i++)
        m->test[i] = xstrdup(json_string_value(json_array_get(test, (size_t)i)) ?: "");
    m->opt.seed = (unsigned long long)json_integer_value(json_object_get(o, "seed"));
    m->opt.test_fraction = json_number_value(json_object_get(o, "test_fraction"));
    m->opt.max_depth = (int)json_integer_value(json_object_get(o, "max_depth"));
    m->opt.min_samples_leaf = (int)json_integer_value(json_object_get(o, "min_samples_leaf"));
    m->opt.folds = (int)json_integer_value(json_object_get(o, "folds"));
    m->opt.split = split_by_name(json_string_value(json_object_get(o, "split")));
    m->opt.risk = json_is_number(json_object_get(o, "risk"))
                      ? json_number_value(json_object_get(o, "risk")) : -1;
    m->opt.guard = json_is_number(json_object_get(o, "guard"))
                       ? json_number_value(json_object_get(o, "guard")) : -1;
    m->train_matrices = (int)json_integer_value(json_object_get(o, "train_matrices"));
    m->train_samples = (int)json_integer_value(json_object_get(o, "train_samples"));
    m->test_samples = (int)json_integer_value(json_object_get(o, "test_samples"));
    json_t *acc = json_object_get(o, "accuracy");
    m->acc_known = json_number_value(json_object_get(acc, "known"));
    m->acc_gathered = json_number_value(json_object_get(acc, "gathered"));
    m->acc_selector = json_number_value(json_object_get(acc, "selector"));
    const char *tree[3] = { "known", "gathered", "selector" };
    for (int g = 0; g < 3; g++) {
        json_t *c = json_object_get(json_object_get(o, "chosen"), tree[g]);
        m->depth[g] = (int)json_integer_value(json_object_get(c, "max_depth"));
        m->leaf[g] = (int)json_integer_value(json_object_get(c, "min_samples_leaf"));
        m->split[g] = split_by_name(json_string_value(json_object_get(c, "split")));
        m->split[g] = m->split[g] < 0 ? SEER_SPLIT_GINI : m->split[g];
        m->risk[g] = json_number_value(json_object_get(c, "risk"));
        m->guard[g] = json_number_value(json_object_get(c, "guard")); /* 0 when absent */
        if (g < 2)
            m->cv_score[g] = json_number_value(json_object_get(c, "oof_oracle_fraction"));
    }
    return 0;
}

int seer_model_load(struct seer_model *out, const char *dir)
{
    struct seer_model m;
    json_error_t je;
    memset(&m, 0, sizeof(m));
    memset(out, 0, sizeof(*out));
    char *path = fs_join(dir, "model.json");
    json_t *o = json_load_file(path, 0, &je);
    int rc = o ? load_fields(&m, o, path)
               : lscat_error_setc(LSCAT_ENOTFOUND, "cannot read %s: %s (run lscat seer train "
                                  "--out %s first)", path, je.text, dir);
    const char *names[3] = { "known.json", "gathered.json", "selector.json" };
    struct learn_tree **trees[3] = { &m.known, &m.gathered, &m.selector };
    for (int i = 0; i < 3 && rc == 0; i++) {
        char *tp = fs_join(dir, names[i]);
        rc = learn_tree_load(trees[i], tp);
        free(tp);
    }
    json_decref(o);
    free(path);
    if (rc < 0)
        seer_model_release(&m);
    else
        *out = m;
    return rc;
}
