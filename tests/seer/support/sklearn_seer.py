"""Reference for tests/seer/train.c: fit scikit-learn's DecisionTreeClassifier on the training
rows of lscat seer train's predictions.csv (the same samples, features and labels lscat's trees
were fitted on) with the depth and leaf size lscat chose for each tree, relabel each leaf with
the class of the least summed cost of its training samples (numpy argmin over the per-sample
class costs the test writes, as lscat's learn_tree_relabel_by_cost does), and write its
predictions on every row as JSON.
Usage: sklearn_seer.py predictions.csv out.json costs.csv known_depth known_leaf gathered_depth
       gathered_leaf"""
import csv
import json
import sys

import numpy as np
from sklearn.tree import DecisionTreeClassifier

rows = list(csv.DictReader(open(sys.argv[1])))
cost = np.loadtxt(sys.argv[3], delimiter=",", ndmin=2)
names = ["rows", "cols", "nnz", "iterations", "nnz_per_row", "row_max", "row_min", "row_var",
         "row_max_rel", "row_min_rel", "row_var_rel"]
opts = {"known": (5, int(sys.argv[4]), int(sys.argv[5])),
        "gathered": (len(names), int(sys.argv[6]), int(sys.argv[7]))}
out = {}
for tree, (d, depth, leaf) in opts.items():
    X = np.array([[float(r[n]) for n in names[:d]] for r in rows])
    y = np.array([int(r["label"]) for r in rows])
    train = np.array([r["set"] == "train" for r in rows])
    fits = []
    for seed in range(8):  # ties depend on random_state; keep every seed's predictions
        t = DecisionTreeClassifier(max_depth=depth or None, min_samples_leaf=leaf,
                                   random_state=seed)
        t.fit(X[train], y[train])
        leaf_of = t.apply(X[train])
        sums = np.zeros((t.tree_.node_count, cost.shape[1]))
        np.add.at(sums, leaf_of, cost[train])
        label = np.argmax(t.tree_.value[:, 0, :], axis=1)
        reached = np.unique(leaf_of)
        label[reached] = np.argmin(sums[reached], axis=1)
        fits.append({"pred": [int(p) for p in label[t.apply(X)]],
                     "nodes": int(t.tree_.node_count)})
    out[tree] = fits
json.dump(out, open(sys.argv[2], "w"))
