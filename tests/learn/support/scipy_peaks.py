#!/usr/bin/python3
"""Reference results for tests/learn/peaks.c from SciPy's find_peaks and numpy: random signals
(continuous, integer-valued with many plateaus, random walks) under prominence and width
conditions, percentiles, the step-kernel convolution, and, when a Tenzing measurement file is
given, the authors' labelling (postprocess.py's df_peaks) of its first 50/100/200/400/all rows.
Usage: scipy_peaks.py OUT.json [TENZING.csv]"""
import json
import math
import sys

import numpy as np
from scipy.signal import find_peaks


def signal(rng, kind, n):
    if kind == "integer":
        return rng.integers(0, 4, n).astype(float)
    if kind == "walk":
        return np.cumsum(rng.normal(size=n))
    if kind == "steps":
        return np.repeat(rng.normal(size=n // 4 + 1), 4)[:n]
    return rng.normal(size=n)


def peaks_case(rng, seed):
    kind = ["normal", "integer", "walk", "steps"][seed % 4]
    x = signal(rng, kind, int(rng.integers(3, 300)))
    o = {}
    r = rng.random()
    if r < 0.6:
        o["prominence"] = float(rng.choice([0.0, 0.5, 1.0, 2.0]))
    if r > 0.4:
        o["width"] = float(rng.choice([0.5, 1.0, 2.0, 4.0]))
    args = {k: v for k, v in o.items()}
    if "prominence" not in args:
        args["prominence"] = (None, None)   # prominences without a condition
    p, props = find_peaks(x, **args)
    out = {"kind": kind, "x": x.tolist(), "options": o, "peaks": p.tolist(),
           "prominences": props["prominences"].tolist(),
           "left_bases": props["left_bases"].tolist(),
           "right_bases": props["right_bases"].tolist()}
    if "widths" in props:
        out["widths"] = props["widths"].tolist()
    return out


def tenzing(path):
    rows = [l.split("|") for l in open(path) if l.strip()]
    p10 = [float(r[2]) for r in rows]
    out = []
    for n, pctl in zip([50, 100, 200, 400, len(p10)], [97, 97, 99, 98, 98]):
        arr = np.sort(np.array(p10[:n]), kind="stable")
        kr = int(math.ceil(len(arr) * 0.005))
        res = np.convolve(arr, [1] * kr + [-1] * kr, "valid")
        cutoff = np.percentile(res, pctl)
        peaks, _ = find_peaks(res, prominence=cutoff, width=1)
        out.append({"n": n, "percentile": pctl, "times": p10[:n], "radius": kr,
                    "convolution": res.tolist(), "cutoff": float(cutoff),
                    "boundaries": (peaks + kr).tolist()})
    return out


def main():
    rng = np.random.default_rng(2026)
    plateaus = [[0, 1, 1, 0], [0, 1, 1, 1, 0], [0, 2, 2, 1, 2, 2, 2, 0], [1, 1, 2, 2],
                [0, 3, 3, 3, 3, 0, 3, 3, 0], [5, 4, 5, 5, 4, 5], [0, 1, 0, 1, 0]]
    cases = [peaks_case(rng, s) for s in range(300)]
    for x in plateaus:
        p, props = find_peaks(np.array(x, dtype=float), prominence=(None, None))
        cases.append({"kind": "plateau", "x": [float(v) for v in x], "options": {},
                      "peaks": p.tolist(), "prominences": props["prominences"].tolist(),
                      "left_bases": props["left_bases"].tolist(),
                      "right_bases": props["right_bases"].tolist()})
    pct = []
    for s in range(100):
        x = rng.normal(size=int(rng.integers(1, 50)))
        q = float(rng.choice([0, 1, 10, 25, 50, 97, 98, 99, 100, rng.uniform(0, 100)]))
        pct.append({"x": x.tolist(), "q": q, "value": float(np.percentile(x, q))})
    conv = []
    for s in range(30):
        x = np.sort(rng.exponential(size=int(rng.integers(2, 200))))
        r = int(rng.integers(1, max(2, len(x) // 2 + 1)))
        conv.append({"x": x.tolist(), "r": r,
                     "res": np.convolve(x, [1] * r + [-1] * r, "valid").tolist()})
    out = {"peaks": cases, "percentiles": pct, "convolutions": conv,
           "tenzing": tenzing(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else None}
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
