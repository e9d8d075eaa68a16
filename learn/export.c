/* Tree export: Graphviz DOT (what a person reads), a C header with nested conditions (what a
 * program ships, e.g. a kernel selector) and a versioned JSON form that saves and reloads a
 * tree exactly (thresholds printed with 17 significant digits round-trip). */
#include "learn/export.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* ---- names */

static const char *criterion_name(enum learn_criterion c)
{
    return c == LEARN_GINI ? "gini" : c == LEARN_ENTROPY ? "entropy" : "cost";
}

static void add_feature(struct buf *b, const char *const *names, int f)
{
    if (names && names[f])
        buf_adds(b, names[f]);
    else
        buf_addf(b, "x[%d]", f);
}

static void add_class(struct buf *b, const char *const *names, int c)
{
    if (names && names[c])
        buf_adds(b, names[c]);
    else
        buf_addf(b, "class %d", c);
}

/* Append `s` with DOT string escapes (quotes, backslashes; line breaks become spaces). */
static void add_dot_escaped(struct buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            buf_addch(b, '\\');
        buf_addch(b, *s == '\n' || *s == '\r' ? ' ' : *s);
    }
}

/* Append `s` safe inside a C comment (no "*" "/" pair, no line breaks). */
static void add_comment_safe(struct buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '/' && b->len > 0 && b->data[b->len - 1] == '*')
            buf_addch(b, ' ');
        buf_addch(b, *s == '\n' || *s == '\r' ? ' ' : *s);
    }
}

/* ---- DOT */

static void dot_node(struct buf *out, const struct learn_tree *t, int i,
                     const char *const *fn, const char *const *cn)
{
    const struct learn_node *nd = learn_tree_node(t, i);
    struct buf s = BUF_INIT;
    int k = learn_tree_n_classes(t);
    if (nd->feature >= 0) {
        add_feature(&s, fn, nd->feature);
        buf_addf(&s, " <= %.6g\n", nd->threshold);
    }
    buf_addf(&s, "%s = %.4g\nsamples = %d\nvalue = [", criterion_name(learn_tree_criterion(t)),
             nd->impurity, nd->n_samples);
    for (int c = 0; c < k; c++)
        buf_addf(&s, "%s%.4g", c ? ", " : "", nd->value[c]);
    buf_adds(&s, "]\nclass = ");
    add_class(&s, cn, nd->label);
    buf_addf(out, "%d [label=\"", i);
    for (char *p = strtok(s.data, "\n"); p; p = strtok(NULL, "\n")) {
        if (p != s.data)
            buf_adds(out, "\\n");
        add_dot_escaped(out, p);
    }
    buf_adds(out, "\"] ;\n");
    buf_release(&s);
}

int learn_tree_to_dot(struct buf *out, const struct learn_tree *t,
                      const char *const *feature_names, const char *const *class_names)
{
    buf_adds(out, "digraph Tree {\nnode [shape=box, style=\"rounded\", fontname=\"helvetica\"] ;\n"
                  "edge [fontname=\"helvetica\"] ;\n");
    for (int i = 0; i < learn_tree_node_count(t); i++) {
        const struct learn_node *nd = learn_tree_node(t, i);
        dot_node(out, t, i, feature_names, class_names);
        if (nd->feature < 0)
            continue;
        if (i == 0) {
            buf_addf(out, "0 -> %d [labeldistance=2.5, labelangle=45, headlabel=\"True\"] ;\n",
                     nd->left);
            buf_addf(out, "0 -> %d [labeldistance=2.5, labelangle=-45, headlabel=\"False\"] ;\n",
                     nd->right);
        } else {
            buf_addf(out, "%d -> %d ;\n%d -> %d ;\n", i, nd->left, i, nd->right);
        }
    }
    buf_adds(out, "}\n");
    return 0;
}

/* ---- C header */

static int is_identifier(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

static void c_indent(struct buf *out, int depth)
{
    for (int i = 0; i < depth + 1; i++)
        buf_adds(out, "    ");
}

static void c_node(struct buf *out, const struct learn_tree *t, int i, int depth,
                   const char *const *fn, const char *const *cn)
{
    const struct learn_node *nd = learn_tree_node(t, i);
    c_indent(out, depth);
    if (nd->feature < 0) {
        buf_addf(out, "return %d; /* ", nd->label);
        struct buf name = BUF_INIT;
        add_class(&name, cn, nd->label);
        add_comment_safe(out, name.data);
        buf_addf(out, ", %d samples */\n", nd->n_samples);
        buf_release(&name);
        return;
    }
    buf_addf(out, "if (x[%d] <= %.17g) { /* ", nd->feature, nd->threshold);
    struct buf name = BUF_INIT;
    add_feature(&name, fn, nd->feature);
    add_comment_safe(out, name.data);
    buf_release(&name);
    buf_adds(out, " */\n");
    c_node(out, t, nd->left, depth + 1, fn, cn);
    c_indent(out, depth);
    buf_adds(out, "} else {\n");
    c_node(out, t, nd->right, depth + 1, fn, cn);
    c_indent(out, depth);
    buf_adds(out, "}\n");
}

static void c_preamble(struct buf *out, const struct learn_tree *t, const char *guard,
                       const char *const *fn, const char *const *cn)
{
    buf_addf(out, "/* Generated by lscat (learn/export.c): a decision tree of %d nodes, %d leaves, "
                  "depth %d.\n * No dependencies. x[i] is feature i:\n",
             learn_tree_node_count(t), learn_tree_leaf_count(t), learn_tree_depth(t));
    for (int f = 0; f < learn_tree_n_features(t); f++) {
        struct buf name = BUF_INIT;
        add_feature(&name, fn, f);
        buf_addf(out, " *   x[%d] ", f);
        add_comment_safe(out, name.data);
        buf_adds(out, "\n");
        buf_release(&name);
    }
    buf_adds(out, " * The result is the class:\n");
    for (int c = 0; c < learn_tree_n_classes(t); c++) {
        struct buf name = BUF_INIT;
        add_class(&name, cn, c);
        buf_addf(out, " *   %d ", c);
        add_comment_safe(out, name.data);
        buf_adds(out, "\n");
        buf_release(&name);
    }
    buf_addf(out, " */\n#ifndef %s\n#define %s\n\n", guard, guard);
}

int learn_tree_to_c(struct buf *out, const struct learn_tree *t, const char *prefix,
                    const char *const *feature_names, const char *const *class_names)
{
    if (!is_identifier(prefix))
        return lscat_error_setc(LSCAT_EINVALID, "C header prefix '%s' is not a C identifier "
                                "(letters, digits, '_'; not starting with a digit)",
                                prefix ? prefix : "(null)");
    char *guard = xasprintf("%s_TREE_H", prefix);
    for (char *p = guard; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    c_preamble(out, t, guard, feature_names, class_names);
    buf_addf(out, "static inline int %s_predict(const double *x)\n{\n    (void)x;\n", prefix);
    c_node(out, t, 0, 0, feature_names, class_names);
    buf_addf(out, "}\n\n#endif /* %s */\n", guard);
    free(guard);
    return 0;
}

/* ---- JSON */

int learn_tree_to_json(struct buf *out, const struct learn_tree *t)
{
    int k = learn_tree_n_classes(t);
    buf_addf(out, "{\"format\": \"lscat-learn-tree\", \"version\": 1, \"criterion\": \"%s\", "
                  "\"n_features\": %d, \"n_classes\": %d, \"nodes\": [",
             criterion_name(learn_tree_criterion(t)), learn_tree_n_features(t), k);
    for (int i = 0; i < learn_tree_node_count(t); i++) {
        const struct learn_node *nd = learn_tree_node(t, i);
        buf_addf(out, "%s\n {\"feature\": %d, \"threshold\": %.17g, \"left\": %d, \"right\": %d, "
                      "\"n_samples\": %d, \"weighted_n_samples\": %.17g, \"impurity\": %.17g, "
                      "\"improvement\": %.17g, \"value\": [",
                 i ? "," : "", nd->feature, nd->threshold, nd->left, nd->right, nd->n_samples,
                 nd->weighted_n_samples, nd->impurity, nd->improvement);
        for (int c = 0; c < k; c++)
            buf_addf(out, "%s%.17g", c ? ", " : "", nd->value[c]);
        buf_adds(out, "]}");
    }
    buf_adds(out, "\n]}\n");
    return 0;
}

/* Read number field `name` of node i; integer fields must hold integers. */
static int json_field(double *out, json_t *node, int i, const char *name, int integer)
{
    json_t *v = json_object_get(node, name);
    if (!json_is_number(v) || (integer && !json_is_integer(v)))
        return lscat_error_setc(LSCAT_EINVALID, "tree JSON: node %d: '%s' is missing or not %s",
                                i, name, integer ? "an integer" : "a number");
    *out = json_number_value(v);
    return 0;
}

static int json_node(struct learn_node *nd, double *value, json_t *node, int i, int k)
{
    double f, l, r, n;
    int rc;
    if (!json_is_object(node))
        return lscat_error_setc(LSCAT_EINVALID, "tree JSON: node %d is not an object", i);
    if ((rc = json_field(&f, node, i, "feature", 1)) < 0 ||
        (rc = json_field(&nd->threshold, node, i, "threshold", 0)) < 0 ||
        (rc = json_field(&l, node, i, "left", 1)) < 0 ||
        (rc = json_field(&r, node, i, "right", 1)) < 0 ||
        (rc = json_field(&n, node, i, "n_samples", 1)) < 0 ||
        (rc = json_field(&nd->weighted_n_samples, node, i, "weighted_n_samples", 0)) < 0 ||
        (rc = json_field(&nd->impurity, node, i, "impurity", 0)) < 0 ||
        (rc = json_field(&nd->improvement, node, i, "improvement", 0)) < 0)
        return rc;
    nd->feature = f < -1 ? -1 : (int)f;
    nd->left = (int)l;
    nd->right = (int)r;
    nd->n_samples = (int)n;
    json_t *val = json_object_get(node, "value");
    if (!json_is_array(val) || (int)json_array_size(val) != k)
        return lscat_error_setc(LSCAT_EINVALID, "tree JSON: node %d: 'value' must hold %d "
                                "numbers", i, k);
    for (int c = 0; c < k; c++) {
        if (!json_is_number(json_array_get(val, (size_t)c)))
            return lscat_error_setc(LSCAT_EINVALID, "tree JSON: node %d: value %d is not a "
                                    "number", i, c);
        value[c] = json_number_value(json_array_get(val, (size_t)c));
    }
    nd->value = value;
    return 0;
}

static int json_header(json_t *root, int *d, int *k, enum learn_criterion *crit, json_t **nodes)
{
    const char *fmt = json_string_value(json_object_get(root, "format"));
    const char *cs = json_string_value(json_object_get(root, "criterion"));
    json_t *ver = json_object_get(root, "version");
    if (!fmt || strcmp(fmt, "lscat-learn-tree") != 0)
        return lscat_error_setc(LSCAT_EINVALID, "tree JSON: 'format' is not \"lscat-learn-tree\"");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1)
        return lscat_error_setc(LSCAT_EVERSION, "tree JSON: version %lld is not 1 (saved by a "
                                "newer lscat? load it with that version)",
                                (long long)json_integer_value(ver));
    int c = LEARN_GINI;
    while (cs && c < LEARN_COST && strcmp(cs, criterion_name((enum learn_criterion)c)) != 0)
        c++;
    *crit = (enum learn_criterion)c;
    if (!cs || strcmp(cs, criterion_name(*crit)) != 0)
        return lscat_error_setc(LSCAT_EINVALID, "tree JSON: 'criterion' must be gini, entropy "
                                "or cost");
    *d = (int)json_integer_value(json_object_get(root, "n_features"));
    *k = (int)json_integer_value(json_object_get(root, "n_classes"));
    *nodes = json_object_get(root, "nodes");
    if (*d < 1 || *k < 1 || !json_is_array(*nodes) || json_array_size(*nodes) < 1)
        return lscat_error_setc(LSCAT_EINVALID, "tree JSON: needs n_features >= 1, n_classes "
                                ">= 1 and a non-empty 'nodes' array");
    return 0;
}

int learn_tree_from_json(struct learn_tree **out, const char *json, size_t len)
{
    json_error_t je;
    struct learn_node *nodes = NULL;
    double *values = NULL;
    json_t *root = json_loadb(json, len, 0, &je), *jn = NULL;
    int d = 0, k = 0, n = 0, rc;
    enum learn_criterion crit = LEARN_GINI;
    *out = NULL;
    if (!root)
        return lscat_error_setc(LSCAT_EINVALID, "tree JSON: line %d: %s", je.line, je.text);
    if ((rc = json_header(root, &d, &k, &crit, &jn)) < 0)
        goto done;
    n = (int)json_array_size(jn);
    nodes = xcalloc((size_t)n, sizeof(*nodes));
    values = xmalloc((size_t)n * (size_t)k * sizeof(double));
    for (int i = 0; i < n; i++)
        if ((rc = json_node(&nodes[i], values + (size_t)i * (size_t)k,
                            json_array_get(jn, (size_t)i), i, k)) < 0)
            goto done;
    rc = learn_tree_from_nodes(out, d, k, crit, nodes, n);
done:
    free(nodes);
    free(values);
    json_decref(root);
    return rc;
}

int learn_tree_save(const struct learn_tree *t, const char *path)
{
    struct buf b = BUF_INIT;
    learn_tree_to_json(&b, t);
    int rc = fs_write_atomic(path, b.data, b.len);
    buf_release(&b);
    return rc < 0 ? lscat_error_wrap("saving tree to '%s'", path) : 0;
}

int learn_tree_load(struct learn_tree **out, const char *path)
{
    struct buf b = BUF_INIT;
    int rc;
    *out = NULL;
    if (buf_read_file(&b, path) < 0) {
        rc = lscat_error_wrap("loading tree from '%s'", path);
    } else {
        rc = learn_tree_from_json(out, b.data, b.len);
        if (rc < 0)
            lscat_error_wrap("'%s'", path);
    }
    buf_release(&b);
    return rc;
}
