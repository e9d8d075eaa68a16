#!/usr/bin/env python3
"""Where a real-code execute run's probe time went (issue #14; docs/execute.md "The corpus at
ISOLATE_VERSION 12"), read from its store's probes.bindings (every try, its configurations'
times). Session 14's numbers come from this script on the store of ids 0-6.

Usage: scripts/realcode-probe-costs.py STORE.db[.gz] [--alone PREFIXES]
  --alone PREFIXES  id prefixes probed with no build beside them (realcode-prefix.sh
                    RCP_SPLIT_FIRST=1: its first prefix), compared with the others on the
                    kernels that ran clean at their first try
Prints: probe-seconds inside and outside the configurations, faulting runs, timeouts and
too_slow bindings; the time outside the configurations by a kernel's faulting runs; the kernels
with a grid expression and a source block of their own, by the binding and block that ran; and
what `side` gave after `area` faulted with the same block, by the configuration of the fault.
"""
import atexit
import collections
import gzip
import json
import os
import sqlite3
import statistics as st
import sys
import tempfile

FAULTS = {"illegal_address", "cuda_error", "launch_failure", "crash"}


def open_store(path):
    if not path.endswith(".gz"):
        return sqlite3.connect(path)
    tmp = tempfile.NamedTemporaryFile(suffix=".db", delete=False)
    with gzip.open(path, "rb") as f:
        tmp.write(f.read())
    tmp.close()
    atexit.register(os.unlink, tmp.name)
    return sqlite3.connect(tmp.name)


def at(t):
    d = t.get("detail") or ""
    i = d.find("(at ")
    return d[i + 4:d.find(",", i)] if i >= 0 else ""


def config_s(tries):
    return sum(x for t in tries for x in (t.get("config_s") or []) if x)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    alone = ""
    if "--alone" in args:
        i = args.index("--alone")
        alone = args[i + 1]
        del args[i:i + 2]
    db = open_store(args[0])
    rows = [(kid, name, params, s, o, json.loads(b) if b else [])
            for kid, name, params, s, o, b in db.execute(
                "SELECT p.kernel_id, k.name, k.params, p.probe_s, p.outcome, p.bindings "
                "FROM probes p JOIN kernels k ON k.id = p.kernel_id")]
    n = len(rows)
    total = sum(r[3] for r in rows)
    cs = sum(config_s(r[5]) for r in rows)
    large = sum(x for r in rows for t in r[5] for c, x in zip(t.get("configs", []),
                t.get("config_s") or []) if x and c.startswith("2024"))
    kern = sum(x for r in rows for t in r[5] for x in (t.get("kernel_s") or []) if x)
    nf = sum(1 for r in rows for t in r[5] if t["outcome"] in FAULTS)
    nto = sum(1 for r in rows for t in r[5] if t["outcome"] == "timeout")
    nslow = sum(1 for r in rows for t in r[5] if t["outcome"] == "too_slow")
    print(f"{n} probes, {total:.0f} probe-seconds: configurations {cs:.0f} s (2024x2024 "
          f"{large:.0f} s, kernels' own {kern:.0f} s), outside them {total - cs:.0f} s")
    print(f"faulting runs {nf} ({nf / max(n, 1):.2f} per kernel), timeouts {nto}, "
          f"too_slow {nslow}")
    ok1 = [r for r in rows if r[4] == "ok" and len(r[5]) == 1]
    print(f"clean at the first try: {len(ok1)} kernels, mean {st.mean(r[3] for r in ok1):.2f} s"
          if ok1 else "clean at the first try: none")
    by = collections.defaultdict(list)
    for r in rows:
        if any(t["outcome"] in ("timeout", "too_slow") for t in r[5]):
            continue
        by[sum(1 for t in r[5] if t["outcome"] in FAULTS)].append(r[3] - config_s(r[5]))
    print("outside-configuration time by faulting runs (kernels without timeouts or too_slow):")
    for k in sorted(by):
        print(f"  {k}: {len(by[k])} kernels, median {st.median(by[k]):.2f} s, "
              f"mean {st.mean(by[k]):.2f} s")
    if alone:
        g = {"alone": [], "beside builds": []}
        for r in ok1:
            g["alone" if r[0][0] in alone else "beside builds"].append(r[3])
        for k, v in g.items():
            if v:
                print(f"first-try clean, probed {k}: {len(v)} kernels, median {st.median(v):.3f} s,"
                      f" mean {st.mean(v):.3f} s")
    # kernels with the source's grid (tiles) and a source block other than the probe's own
    c = collections.Counter()
    for kid, name, params, s, o, tries in rows:
        try:
            pj = json.loads(params)
        except (TypeError, ValueError):
            continue
        la = pj.get("launch") or {}
        if not la.get("grid_expr") or not la.get("block"):
            continue
        src = "x".join(str(v) for v in la["block"])
        if src == ("16x16x1" if pj.get("is2d") else "256x1x1"):
            continue
        ok = next((t for t in tries if t["outcome"] == "ok"), None)
        where = ("-" if not ok else "source's block" if ok.get("block") == src
                 else "own block" if not ok.get("block") else ok["block"])
        c[(ok["binding"] if ok else "none", where)] += 1
    print(f"kernels with a grid expression and a source block of their own: {sum(c.values())}")
    for k, v in c.most_common():
        print(f"  {v} ran under {k[0]} with {k[1]}")
    # side after area faulted with the same block
    c = collections.Counter()
    for r in rows:
        tries = r[5]
        for i, t in enumerate(tries):
            if t["binding"] != "area" or t["outcome"] not in FAULTS:
                continue
            nxt = [y for y in tries[i + 1:] if y["binding"] == "side" and y.get("block") == t.get("block")]
            if nxt:
                y = nxt[0]
                c[(at(t), "fault" if y["outcome"] in FAULTS else y["outcome"])] += 1
    print("side after area faulted with the same block (area's fault at; side gave):")
    for k, v in sorted(c.items(), key=lambda x: -x[1]):
        print(f"  {v} at {k[0] or '?'}: {k[1]}")


main()
