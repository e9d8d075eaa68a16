#!/usr/bin/env python3
"""Where a store's probe time went, and what a large-configuration budget would have saved
(docs/execute.md "Probe budget"; session 8 measured session 7's real-code store with it).

  scripts/probe-budget-replay.py STORE [BUDGET_S ...]        (default budgets: 3 5)

Reads probes.bindings (each try's configs, config_s, budget_s); prints probe-seconds by outcome
and size bucket, the timeouts at the small and the large sizes, and for each budget B the
probe-seconds had every 2024x2024 configuration been cut at B: a try whose large configuration
ran (or waited) longer than B costs B there instead. A try cut where it had run clean under
`area` as the probe's only binding would then try `side`: those are counted, and charged their
small configurations' time again plus 0.3 s. Hangs at the small sizes are left as they were
(no budget applies there). It replays the large configurations only: an estimate, not a rerun."""
import collections
import json
import sqlite3
import sys


def replay(rows, budget):
    total, moved = 0.0, 0
    for _kid, ps, bindings in rows:
        tries = json.loads(bindings or "[]")
        new = ps or 0
        for i, t in enumerate(tries):
            cf, cs = t.get("configs") or [], t.get("config_s") or []
            small = [x for c, x in zip(cf, cs) if not c.startswith("2024x")]
            if any(x is None for x in small):
                continue
            spent = 0.0
            for c, x in zip(cf, cs):
                if not c.startswith("2024x"):
                    continue
                if x is None:
                    if t["outcome"] == "timeout":
                        spent = 30 - sum(small)
                    elif t["outcome"] == "too_slow":
                        spent = t.get("budget_s", 0)
                    break
                if x > budget:
                    spent = x
                    break
            if spent > budget:
                new -= spent - budget
                if t["outcome"] == "ok" and t["binding"] == "area" and len(tries) == 1:
                    moved += 1
                    new += 0.3 + sum(small)
        total += new
    return total, moved


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    db = sqlite3.connect(sys.argv[1])
    rows = db.execute("SELECT kernel_id, probe_s, bindings FROM probes").fetchall()
    old = sum(r[1] or 0 for r in rows)
    print("%d probes, %.0f probe-seconds" % (len(rows), old))
    for o, n, s in db.execute("SELECT outcome, count(*), sum(probe_s) FROM probes GROUP BY 1 ORDER BY 3 DESC"):
        print("  %-16s %4d  %7.1f s" % (o, n, s or 0))
    b = collections.Counter()
    bs = collections.Counter()
    for _k, ps, _b in rows:
        k = ">=25 s" if ps >= 25 else "5-25 s" if ps >= 5 else "1-5 s" if ps >= 1 else "<1 s"
        b[k] += 1
        bs[k] += ps
    print("  by probe time: " + ", ".join("%s %d/%.0f s" % (k, b[k], bs[k]) for k in ("<1 s", "1-5 s", "5-25 s", ">=25 s")))
    hang = collections.Counter()
    for _k, _ps, bindings in rows:
        for t in json.loads(bindings or "[]"):
            if t["outcome"] != "timeout":
                continue
            cf, cs = t.get("configs") or [], t.get("config_s") or []
            small = [x for c, x in zip(cf, cs) if not c.startswith("2024x")]
            hang["small" if any(x is None for x in small) else "2024x2024"] += 1
    print("  binding runs that met the timeout: " + ", ".join("at %s %d" % kv for kv in sorted(hang.items())))
    for arg in sys.argv[2:] or ["3", "5"]:
        tot, moved = replay(rows, float(arg))
        print("budget %s s at 2024x2024: %.0f probe-seconds (%.0f%% less), %d clean area-only probes would try side"
              % (arg, tot, 100 * (1 - tot / old) if old else 0, moved))


if __name__ == "__main__":
    main()
