#!/usr/bin/python3
"""Reference for tests/learn/relabel.c: cost-sensitive leaf labels on scikit-learn trees.
Random continuous data sets (float32-exact; 2-6 features, so that seeds reveal ties), 2-6 classes, with and without sample weights,
fitted by DecisionTreeClassifier; each leaf reached by the training samples is relabelled with
the class of the least summed cost (numpy argmin: the lowest class on ties), found with
tree.apply. A case is "stable" when 4 random_states grow the same tree. Writes the data, the
costs and the relabelled predictions on the training and on unseen samples.
Usage: sklearn_relabel.py OUT.json [CASES]"""
import json
import sys

import numpy as np
from sklearn.tree import DecisionTreeClassifier


def case(seed):
    rng = np.random.default_rng(1000 + seed)
    n, d, k = int(rng.integers(30, 300)), int(rng.integers(2, 7)), int(rng.integers(2, 7))
    X = (rng.normal(size=(n, d)) * 10).astype(np.float32).astype(np.float64)
    Xt = (rng.normal(size=(80, d)) * 10).astype(np.float32).astype(np.float64)
    y = np.digitize(X @ rng.normal(size=d) + rng.normal(size=n), np.linspace(-10, 10, k - 1))
    y[:k] = np.arange(k)
    cost = rng.exponential(size=(n, k)) * rng.choice([1.0, 1e-6, 1e6], size=(n, 1))
    cost[np.arange(n), y] *= 0.2                  # the label is usually, not always, cheapest
    w = None
    if seed % 2:
        w = np.round(rng.uniform(0.2, 4.0, n), 2)
    o = dict(max_depth=int(rng.choice([0, 2, 4, 6])), min_samples_leaf=int(rng.choice([1, 2, 5])))
    trees = []
    for s in range(4):
        clf = DecisionTreeClassifier(max_depth=o["max_depth"] or None,
                                     min_samples_leaf=o["min_samples_leaf"], random_state=s)
        trees.append(clf.fit(X, y, sample_weight=w))
    t0 = trees[0].tree_
    stable = all(np.array_equal(t.tree_.feature, t0.feature) and
                 np.array_equal(t.tree_.threshold, t0.threshold) for t in trees)
    leaf = trees[0].apply(X)
    sums = np.zeros((t0.node_count, k))
    np.add.at(sums, leaf, cost)
    label = np.argmax(t0.value[:, 0, :], axis=1)  # unreached leaves keep the majority
    reached = np.unique(leaf)
    label[reached] = np.argmin(sums[reached], axis=1)
    return {"seed": seed, "n": n, "d": d, "k": k, "X": X.ravel().tolist(),
            "Xt": Xt.ravel().tolist(), "y": y.tolist(), "w": None if w is None else w.tolist(),
            "cost": cost.ravel().tolist(), "options": o, "stable": bool(stable),
            "nodes": int(t0.node_count),
            "plain": [int(v) for v in trees[0].predict(X)],
            "pred": [int(v) for v in label[leaf]],
            "pred_test": [int(v) for v in label[trees[0].apply(Xt)]]}


def main():
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    with open(sys.argv[1], "w") as f:
        json.dump([case(s) for s in range(count)], f)


if __name__ == "__main__":
    main()
