"""Reference for tests/seer/train.c: fit scikit-learn's DecisionTreeClassifier on the training
rows of lscat seer train's predictions.csv (the same samples, features and labels lscat's trees
were fitted on) with the same options, and write its predictions on every row as JSON.
Usage: sklearn_seer.py predictions.csv out.json max_depth"""
import csv
import json
import sys

from sklearn.tree import DecisionTreeClassifier

rows = list(csv.DictReader(open(sys.argv[1])))
depth = int(sys.argv[3]) or None
names = ["rows", "cols", "nnz", "iterations", "row_max", "row_min", "row_mean", "row_var"]
out = {}
for tree, d in (("known", 4), ("gathered", 8)):
    X = [[float(r[n]) for n in names[:d]] for r in rows]
    y = [int(r["label"]) for r in rows]
    train = [i for i, r in enumerate(rows) if r["set"] == "train"]
    fits = []
    for seed in range(8):  # ties depend on random_state; keep every seed's predictions
        t = DecisionTreeClassifier(max_depth=depth, random_state=seed)
        t.fit([X[i] for i in train], [y[i] for i in train])
        fits.append({"pred": [int(p) for p in t.predict(X)], "nodes": int(t.tree_.node_count)})
    out[tree] = fits
json.dump(out, open(sys.argv[2], "w"))
