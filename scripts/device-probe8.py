#!/usr/bin/env python3
"""The numbers of scripts/device-probe8.sh (probe throughput before and after, side by side).

  device-probe8.py mode STORE MODE WALL_S EXIT CAP_S OPTIONS   one probe pass's line
  device-probe8.py compare BASE MODE...                       each after mode against the first
                                                              before mode (BASE/<mode>/lscat.db,
                                                              ':' in a mode written '-')
  device-probe8.py dump STORE                                 every probe as one JSON line (kernel,
                                                              name, outcome, binding, probe_s,
                                                              probed_at, tries) on stdout
Reads only the stores (probes, kernels, stage_runs); prints a few compact lines each."""
import json
import os
import sqlite3
import statistics
import sys
from datetime import datetime, timezone


def rows(db, sql, *a):
    return db.execute(sql, a).fetchall()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def epoch(at):
    return datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def tries(bindings):
    try:
        return json.loads(bindings) if bindings else []
    except ValueError:
        return []


def mode_line(store, mode, wall, rc, cap, opts):
    db = sqlite3.connect(store)
    wall = float(wall)
    ps = rows(db, "SELECT probe_s, probed_at, outcome, bindings FROM probes")
    n, tot = len(ps), sum(r[0] or 0 for r in ps)
    span = 0
    if ps:
        span = max(epoch(r[1]) for r in ps) + 1 - min(epoch(r[1]) - (r[0] or 0) for r in ps)
    c = rows(db, "SELECT counts FROM stage_runs WHERE stage = 'execute' ORDER BY id DESC LIMIT 1")
    c = json.loads(c[0][0]) if c and c[0][0] else {}
    print("== %-9s (%s) exit %s (cap %s s): %d probed in %.1f s = %.2f kernels/s (%.2f/s over the "
          "%.0f s span of the probes); probe-seconds %.0f (mean %.2f s); runnable %s (small only "
          "%s), too_slow bindings %s; cached %s; runner %s starts, %s runs, %s ended, %s spare ready, "
          "%s s waited for one"
          % (mode, opts, rc, cap, n, wall, n / wall if wall else 0, n / span if span else 0, span,
             tot, tot / n if n else 0, c.get("runnable", "?"), c.get("small_only", "?"),
             c.get("too_slow", "-"), c.get("cached", "?"), c.get("runner_starts", "-"),
             c.get("runner_probe_runs", "-"), c.get("runner_ended", "-"),
             c.get("runner_spare_ready", "-"), c.get("runner_wait_s", "-")))
    b = [0] * 5
    for r in ps:
        s = r[0] or 0
        b[0 if s < 0.5 else 1 if s < 2 else 2 if s < 10 else 3 if s < 25 else 4] += 1
    long_s = sum(r[0] for r in ps if (r[0] or 0) >= 25)
    print("   probes <0.5 s %d, <2 s %d, <10 s %d, <25 s %d, >=25 s %d (holding %.0f s)" % (*b, long_s))
    by = {}
    for r in ps:
        e = by.setdefault(r[2], [0, 0.0])
        e[0] += 1
        e[1] += r[0] or 0
    print("   by outcome: " + ", ".join("%s %d/%.0f s" % (k, v[0], v[1])
                                        for k, v in sorted(by.items(), key=lambda x: -x[1][1])))
    t = {}
    for r in ps:
        for x in tries(r[3]):
            e = t.setdefault("%s/%s" % (x.get("binding"), x.get("outcome")), 0)
            t["%s/%s" % (x.get("binding"), x.get("outcome"))] = e + 1
    print("   tries: " + ", ".join("%s %d" % kv for kv in sorted(t.items(), key=lambda x: -x[1])))


def load(base, mode):
    p = os.path.join(base, mode.replace(":", "-"), "lscat.db")
    if not os.path.exists(p):
        return {}
    return {r[0]: r[1:] for r in sqlite3.connect(p).execute(
        "SELECT k.name || ' ' || substr(k.id, 1, 8), p.outcome, p.binding, p.probe_s, p.bindings, "
        "coalesce(p.detail, '') FROM probes p JOIN kernels k ON k.id = p.kernel_id")}


def measured(new):
    """What the after lines said: the kernel's share of a small line, the large lines' rest."""
    share, ks, rest, budgets = [], [], [], []
    for v in new.values():
        for x in tries(v[3]):
            cf, cs, kt = x.get("configs") or [], x.get("config_s") or [], x.get("kernel_s") or []
            if x.get("budget_s"):
                budgets.append(x["budget_s"])
            for i, (c, s) in enumerate(zip(cf, cs)):
                k = kt[i] if i < len(kt) else None
                if s is None or k is None:
                    continue
                if c.startswith("64x64"):
                    share.append(k / s if s > 0 else 0)
                    ks.append(k)
                elif not c.startswith(("1024x1 ", "64x64")):
                    rest.append(s - k)
    if share:
        print("   after lines: 64x64 kernel %.3g ms median, p90 %.3g ms, max %.3g ms; its share of "
              "the line interval median %.1f%%, p90 %.1f%%" % (
                  statistics.median(ks) * 1e3, pct(ks, .9) * 1e3, max(ks) * 1e3,
                  100 * statistics.median(share), 100 * pct(share, .9)))
    if rest:
        print("   large configurations' time besides the kernel (the allowance's part): median %.3f s, "
              "p90 %.3f s, max %.3f s, %d of %d over 1 s" % (
                  statistics.median(rest), pct(rest, .9), max(rest), sum(r > 1 for r in rest), len(rest)))
    if budgets:
        print("   budgets: median %.2f s, p90 %.2f s, max %.1f s (%d tries)" % (
            statistics.median(budgets), pct(budgets, .9), max(budgets), len(budgets)))


def compare(base, modes):
    # the first before mode; without one, the first mode
    ref = next((m for m in modes if m.startswith("before")), modes[0] if modes else None)
    old = load(base, ref) if ref else {}
    for m in modes:
        if m == ref or (m.startswith("before") and ref.startswith("before")):
            continue
        new = load(base, m)
        both = sorted(set(old) & set(new))
        so = sum(old[k][2] or 0 for k in both)
        sn = sum(new[k][2] or 0 for k in both)
        lost = [k for k in both if old[k][0] == "ok" and new[k][0] != "ok"]
        gained = [k for k in both if old[k][0] != "ok" and new[k][0] == "ok"]
        rebound = [k for k in both if old[k][0] == new[k][0] == "ok" and old[k][1] != new[k][1]]
        small = [k for k in both if new[k][0] == "ok" and new[k][4].startswith("small sizes only")
                 and not old[k][4].startswith("small sizes only")]
        print("== %s vs %s on %d kernels both probed: probe-seconds %.0f vs %.0f (%.2fx); runnable "
              "%d vs %d; runnable before and not after %d, after and not before %d; binding "
              "changed %d; newly small-sizes-only %d" % (
                  m, ref, len(both), sn, so, so / sn if sn else 0,
                  sum(new[k][0] == "ok" for k in both), sum(old[k][0] == "ok" for k in both),
                  len(lost), len(gained), len(rebound), len(small)))
        for k in lost[:8]:
            print("   LOST %s: %s/%s %.1f s -> %s/%s %.1f s: %s\n     after tries %s" % (
                k, old[k][0], old[k][1], old[k][2], new[k][0], new[k][1], new[k][2],
                new[k][4][:200], new[k][3][:700]))
        for k in (gained + rebound)[:6]:
            print("   %s: %s/%s %.1f s -> %s/%s %.1f s" % (
                k, old[k][0], old[k][1], old[k][2], new[k][0], new[k][1], new[k][2]))
        slow = sorted(both, key=lambda k: -(old[k][2] or 0))[:6]
        print("   slowest before: " + "; ".join("%s %.1f -> %.1f s" % (k, old[k][2], new[k][2]) for k in slow))
        measured(new)


def dump(store):
    db = sqlite3.connect(store)
    for r in rows(db, "SELECT p.kernel_id, k.name, p.outcome, p.binding, p.probe_s, p.probed_at, "
                  "p.bindings FROM probes p JOIN kernels k ON k.id = p.kernel_id"):
        print(json.dumps({"kernel": r[0], "name": r[1], "outcome": r[2], "binding": r[3],
                          "probe_s": r[4], "probed_at": r[5], "tries": tries(r[6])}))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        dump(sys.argv[2])
    elif len(sys.argv) >= 8 and sys.argv[1] == "mode":
        mode_line(*sys.argv[2:8])
    elif len(sys.argv) >= 3 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
