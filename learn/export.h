/* A fitted tree out of the process: Graphviz DOT for people, a dependency-free C header for
 * programs (int <prefix>_predict(const double *x)), and a stable JSON form to save and reload.
 *
 * Names: feature_names (d strings) and class_names (k strings) may each be NULL; then features
 * read "x[i]" and classes "class i". Names go into comments and labels only, escaped.
 *
 * JSON form (version 1; numbers printed with 17 significant digits, so a reloaded tree predicts
 * bit for bit as the saved one):
 *   {"format": "lscat-learn-tree", "version": 1, "criterion": "gini"|"entropy",
 *    "n_features": d, "n_classes": k,
 *    "nodes": [{"feature": f (-1 at a leaf), "threshold": t, "left": l, "right": r,
 *               "n_samples": n, "weighted_n_samples": w, "impurity": i,
 *               "improvement": g, "value": [k numbers]}, ...]}   node 0 is the root
 * Names are not part of it (the caller keeps them beside the tree). */
#ifndef LSCAT_LEARN_EXPORT_H
#define LSCAT_LEARN_EXPORT_H

#include "common/buf.h"
#include "learn/tree.h"

#include <stddef.h>

/* Append the tree as a Graphviz digraph ("digraph Tree { ... }", sklearn's export_graphviz
 * layout: split, impurity, samples, value, class per node; True/False on the root's edges). */
int learn_tree_to_dot(struct buf *out, const struct learn_tree *t,
                      const char *const *feature_names, const char *const *class_names);

/* Append a C header defining `static inline int <prefix>_predict(const double *x)` as nested
 * if/else on x[feature] <= threshold, returning the class 0..k-1, with the feature and class
 * names in comments and a guard <PREFIX>_TREE_H. prefix must be a C identifier (LSCAT_EINVALID
 * otherwise). The header includes nothing. */
int learn_tree_to_c(struct buf *out, const struct learn_tree *t, const char *prefix,
                    const char *const *feature_names, const char *const *class_names);

/* Append / parse the JSON form above. Parsing checks the format, version, every field's type
 * and the tree's shape; errors (LSCAT_EINVALID) name the node and field. */
int learn_tree_to_json(struct buf *out, const struct learn_tree *t);
int learn_tree_from_json(struct learn_tree **out, const char *json, size_t len);

/* The JSON form to and from a file (written atomically: a temporary file, then rename). */
int learn_tree_save(const struct learn_tree *t, const char *path);
int learn_tree_load(struct learn_tree **out, const char *path);

#endif
