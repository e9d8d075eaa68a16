#!/usr/bin/python3
"""Reference trees for tests/learn/tree.c: random data sets (continuous, binary, integer and
mixed features; 2-5 classes; with and without sample weights and balanced class weights; gini
and entropy; max_depth, max_leaf_nodes, min_samples_*, min_impurity_decrease), each fitted by
scikit-learn's DecisionTreeClassifier with 16 random_states. sklearn breaks ties in improvement
by a random feature order, so a case whose 16 trees are all equal is tie-free ("stable"); for
the others every distinct tree is written. Usage: sklearn_trees.py OUT.json [CASES]"""
import json
import sys

import numpy as np
from sklearn.tree import DecisionTreeClassifier

SEEDS = 16


def features(rng, kind, n, d):
    if kind == "binary":
        return rng.integers(0, 2, (n, d)).astype(float)
    if kind == "integer":
        return rng.integers(0, 6, (n, d)).astype(float)
    scale = rng.choice([1.0, 100.0, 1e-3])
    X = rng.normal(size=(n, d)) * scale
    if kind == "mixed":
        X[:, ::2] = rng.integers(0, 2, (n, (d + 1) // 2))
    # sklearn fits on float32: data float32 represents make the two agree exactly
    return X.astype(np.float32).astype(np.float64)


def labels(rng, X, k):
    n, d = X.shape
    s = X @ rng.normal(size=d)
    s = s + rng.normal(size=n) * (s.std() + 1e-9) * 0.3
    cuts = np.sort(rng.uniform(0.05, 0.95, k - 1))   # unequal classes
    y = np.digitize(s, np.quantile(s, cuts))
    flip = rng.random(n) < 0.08
    y[flip] = rng.integers(0, k, flip.sum())
    y[:k] = np.arange(k)                              # every class present
    return y.astype(int)


def options(rng):
    o = {
        "criterion": str(rng.choice(["gini", "entropy"])),
        "balanced": bool(rng.random() < 0.5),
        "max_depth": int(rng.choice([0, 0, 2, 3, 5])),
        "max_leaf_nodes": int(rng.choice([0, 0, 3, 5, 8, 15])),
        "min_samples_leaf": int(rng.choice([1, 1, 3, 7])),
        "min_samples_split": int(rng.choice([2, 2, 10])),
        "min_impurity_decrease": float(rng.choice([0.0, 0.0, 0.001, 0.01])),
    }
    return o


def fit(X, y, w, o, seed):
    clf = DecisionTreeClassifier(
        criterion=o["criterion"],
        class_weight="balanced" if o["balanced"] else None,
        max_depth=o["max_depth"] or None,
        max_leaf_nodes=o["max_leaf_nodes"] or None,
        min_samples_leaf=o["min_samples_leaf"],
        min_samples_split=o["min_samples_split"],
        min_impurity_decrease=o["min_impurity_decrease"],
        random_state=seed)
    return clf.fit(X, y, sample_weight=w)


def tree_json(clf, X, Xt):
    t = clf.tree_
    leaf = t.children_left < 0
    return {
        "feature": [int(f) if not l else -1 for f, l in zip(t.feature, leaf)],
        "threshold": [float(v) if not l else 0.0 for v, l in zip(t.threshold, leaf)],
        "left": [int(v) for v in t.children_left],
        "right": [int(v) for v in t.children_right],
        "impurity": [float(v) for v in t.impurity],
        "n_samples": [int(v) for v in t.n_node_samples],
        "weighted_n_samples": [float(v) for v in t.weighted_n_node_samples],
        "value": [[float(c) for c in v[0]] for v in t.value],
        "pred": [int(v) for v in clf.predict(X)],
        "pred_test": [int(v) for v in clf.predict(Xt)],
    }


def case(seed):
    rng = np.random.default_rng(seed)
    kind = ["continuous", "binary", "integer", "mixed"][seed % 4]
    n = int(rng.integers(40, 400))
    d = int(rng.integers(3, 20)) if kind == "binary" else int(rng.integers(1, 9))
    k = int(rng.integers(2, 6))
    X = features(rng, kind, n, d)
    Xt = features(rng, kind, 100, d)
    y = labels(rng, X, k)
    w = None
    if rng.random() < 0.3:
        w = np.round(rng.uniform(0.25, 3.0, n), 2)
        w[rng.random(n) < 0.05] = 0.0                 # some samples take no part
    o = options(rng)
    trees, keys = [], set()
    for s in range(SEEDS):
        tj = tree_json(fit(X, y, w, o, s), X, Xt)
        key = json.dumps([tj["feature"], tj["threshold"], tj["left"]])
        if key not in keys:
            keys.add(key)
            trees.append(tj)
    return {"seed": seed, "kind": kind, "n": n, "d": d, "k": k,
            "X": X.ravel().tolist(), "Xt": Xt.ravel().tolist(), "y": y.tolist(),
            "w": None if w is None else w.tolist(), "options": o,
            "stable": len(trees) == 1, "trees": trees}


def main():
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 160
    with open(sys.argv[1], "w") as f:
        json.dump([case(s) for s in range(count)], f)


if __name__ == "__main__":
    main()
