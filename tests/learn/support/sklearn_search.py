#!/usr/bin/python3
"""Reference for learn_tree_fit_smallest: the leaf-count search of the Tenzing authors'
postprocess.py (train_tree / get_f1: entropy, balanced class weights, min_impurity_decrease
0.001, max_depth = leaves - 1; start at the class count, try +1, +2, +3, +5, move to the first
with a lower mean one-vs-rest training error, stop when none is lower or leaves >= 5 x classes),
written from its description, on random binary-feature data sets. A data set counts only when
4 random_states give the same search (no ties). Usage: sklearn_search.py OUT.json [CASES]"""
import json
import sys

import numpy as np
from sklearn.tree import DecisionTreeClassifier


def error(X, y, leaves, seed):
    clf = DecisionTreeClassifier(criterion="entropy", class_weight="balanced",
                                 max_leaf_nodes=leaves, max_depth=leaves - 1,
                                 min_impurity_decrease=0.001, random_state=seed).fit(X, y)
    k = len(np.unique(y))
    wrong = int(np.count_nonzero(clf.predict(X) != y))
    return 2.0 * wrong / (len(y) * k), clf


def search(X, y, seed):
    k = len(np.unique(y))
    leaves = k
    err, _ = error(X, y, leaves, seed)
    tried = [(leaves, err)]
    while leaves < 5 * k:
        for step in (1, 2, 3, 5):
            e, _ = error(X, y, leaves + step, seed)
            tried.append((leaves + step, e))
            if e < err:
                leaves, err = leaves + step, e
                break
        else:
            break
    return leaves, err, tried


def main():
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    out = []
    for s in range(count):
        rng = np.random.default_rng(100 + s)
        n, d, k = int(rng.integers(150, 500)), int(rng.integers(6, 30)), int(rng.integers(2, 5))
        X = rng.integers(0, 2, (n, d)).astype(float)
        score = X[:, :4] @ rng.integers(1, 4, 4) + rng.normal(size=n) * 0.7
        y = np.digitize(score, np.quantile(score, np.sort(rng.uniform(0.1, 0.9, k - 1))))
        y[:k] = np.arange(k)
        runs = [search(X, y, seed) for seed in range(4)]
        if any(r != runs[0] for r in runs):
            continue
        leaves, err, tried = runs[0]
        out.append({"n": n, "d": d, "k": k, "X": X.ravel().tolist(), "y": y.tolist(),
                    "leaves": leaves, "accuracy": 1.0 - err * k / 2.0,
                    "tried": [t[0] for t in tried]})
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
