"""Reference for tests/learn/costtree.c: learn_tree_fit_cost's rule written out in numpy by
exhaustive search (scikit-learn has no cost criterion). A node predicts its cheapest class (least
summed cost, lowest class on ties); it is split where the children's cheapest classes cost the
least in sum, strictly below the node's (relative 1e-12), over every feature and every boundary
between sorted values more than 1e-7 apart that leaves min_samples_leaf on each side; the lowest
feature, then the lowest threshold, wins ties. Costs are integers, so every sum is exact.
Usage: numpy_cost_tree.py out.json CASES"""
import json
import sys

import numpy as np


def grow(X, C, idx, depth, o, nodes):
    s = C[idx].sum(axis=0)
    me = len(nodes)
    nodes.append({"label": int(np.argmin(s))})
    min_split = max(o["min_samples_split"], 2 * o["min_samples_leaf"])
    if (o["max_depth"] and depth >= o["max_depth"]) or len(idx) < min_split:
        return me
    best, choice = s.min() - 1e-12 * abs(s.min()), None
    for f in range(X.shape[1]):
        order = idx[np.lexsort((idx, X[idx, f]))]
        xs, cs = X[order, f], np.cumsum(C[order], axis=0)
        for p in range(len(order) - 1):
            n_left = p + 1
            if xs[p + 1] <= xs[p] + 1e-7 or n_left < o["min_samples_leaf"] \
                    or len(order) - n_left < o["min_samples_leaf"]:
                continue
            v = cs[p].min() + (s - cs[p]).min()
            if v < best:
                thr = xs[p] / 2.0 + xs[p + 1] / 2.0
                if thr == xs[p + 1]:
                    thr = xs[p]
                best, choice = v, (f, thr)
    if choice is None:
        return me
    f, thr = choice
    nodes[me].update(feature=f, threshold=thr)
    nodes[me]["left"] = grow(X, C, idx[X[idx, f] <= thr], depth + 1, o, nodes)
    nodes[me]["right"] = grow(X, C, idx[X[idx, f] > thr], depth + 1, o, nodes)
    return me


def predict(nodes, x):
    i = 0
    while "feature" in nodes[i]:
        i = nodes[i]["left"] if x[nodes[i]["feature"]] <= nodes[i]["threshold"] else nodes[i]["right"]
    return nodes[i]["label"]


def case(seed):
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(20, 160)), int(rng.integers(1, 5)), int(rng.integers(2, 6))
    X = rng.integers(0, 12, size=(n, d)).astype(float)
    if seed % 2:
        X[:, 0] = rng.normal(size=n) * 1e4  # continuous values, few ties
    # costs that depend on the features (so splits pay) plus integer noise
    w, b = rng.integers(-10, 11, size=(d, k)), rng.integers(0, 60, size=k)
    C = np.abs(np.rint(X @ w / (1.0 if seed % 2 == 0 else 1e4) + b
                       + rng.integers(0, 8, size=(n, k))))
    o = {"max_depth": int(rng.choice([0, 1, 2, 3, 5])),
         "min_samples_leaf": int(rng.choice([1, 2, 5])), "min_samples_split": 2}
    nodes = []
    grow(X, C, np.arange(n), 0, o, nodes)
    Xt = rng.integers(-1, 13, size=(40, d)).astype(float)
    if seed % 2:
        Xt[:, 0] = rng.normal(size=40) * 1e4
    return {"seed": seed, "n": n, "d": d, "k": k, "X": X.ravel().tolist(),
            "cost": C.ravel().tolist(), "Xt": Xt.ravel().tolist(), "options": o,
            "nodes": len(nodes), "pred": [predict(nodes, x) for x in X],
            "pred_test": [predict(nodes, x) for x in Xt]}


json.dump([case(s) for s in range(int(sys.argv[2]))], open(sys.argv[1], "w"))
