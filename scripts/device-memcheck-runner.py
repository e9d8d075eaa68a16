#!/usr/bin/env python3
"""scripts/device-memcheck-runner.sh's numbers (docs/execute.md "The memcheck runner"): one probe pass (`pass STORE NAME WALL RC CAP`) and the memcheck
runner's pass against the plain one on the kernels both probed (`compare OFF AUTO`)."""
import json, sqlite3, statistics, sys


def tries(b):
    try:
        return json.loads(b) if b else []
    except ValueError:
        return []


def load(store):
    db = sqlite3.connect(store)
    rows = db.execute("SELECT k.name, substr(k.id, 1, 12), p.outcome, p.binding, p.probe_s, "
                      "coalesce(p.detail, ''), p.bindings FROM probes p JOIN kernels k ON "
                      "k.id = p.kernel_id").fetchall()
    c = db.execute("SELECT counts FROM stage_runs WHERE stage = 'execute' ORDER BY id DESC "
                   "LIMIT 1").fetchone()
    return {r[1]: r for r in rows}, (json.loads(c[0]) if c and c[0] else {})


FAULTS = ("illegal memory", "illegal address", "misaligned", "assert", "launch failure",
          "unspecified launch", "exception", "out of range")


def gpu_fault(t):
    d = (t.get("detail") or "").lower()
    return not t.get("memcheck") and t.get("outcome") in ("illegal_address", "launch_failure",
                                                           "cuda_error") and \
        any(f in d for f in FAULTS)


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def block_of(r):
    d = r[5]  # the kept try's detail names a retry block
    return d.split(";")[0][6:] if d.startswith("block ") else "own"


def one(store, name, wall, rc, cap):
    ps, c = load(store)
    wall = float(wall)
    n = len(ps)
    runnable = sum(r[2] == "ok" for r in ps.values())
    ts = [t for r in ps.values() for t in tries(r[6])]
    faults = sum(gpu_fault(t) for t in ts)
    mc = [t for t in ts if t.get("memcheck")]
    by = {}
    for t in mc:
        by.setdefault(t["memcheck"], []).append(t.get("run_s") or 0)
    users = sum(any(t.get("memcheck") for t in tries(r[6])) for r in ps.values())
    print("== %s: exit %s (cap %s s): %d probed in %.1f s = %.2f kernels/s; probe-seconds %.0f "
          "(mean %.2f s); runnable %d (small only %s); tries %d, plain GPU faults %d; runner "
          "starts %s, ended %s, spare ready %s" % (
              name, rc, cap, n, wall, n / wall if wall else 0, sum(r[4] or 0 for r in ps.values()),
              sum(r[4] or 0 for r in ps.values()) / n if n else 0, runnable,
              c.get("small_only", "?"), len(ts), faults, c.get("runner_starts"),
              c.get("runner_ended"), c.get("runner_spare_ready")))
    if mc or c.get("memcheck_starts"):
        print("   memcheck runner: %s starts, %s runs (%d kernels, %.1f runs each), %s reports, %s "
              "run plain again, %s confirm runs, %s fallback runs, %s late, %s stray" % (
                  c.get("memcheck_starts"), c.get("memcheck_runs"), users,
                  len(mc) / users if users else 0, c.get("memcheck_reports"),
                  c.get("memcheck_inconclusive"), c.get("confirm_runs"),
                  c.get("memcheck_fallback_runs"), c.get("memcheck_late"),
                  c.get("memcheck_stray")))
        for k, v in sorted(by.items()):
            print("   memcheck %s: %d runs, wall median %.3f s, mean %.3f s, p90 %.3f s, max %.2f s"
                  % (k, len(v), statistics.median(v), sum(v) / len(v), q(v, .9), max(v)))
        firsts = {}
        for t in mc:
            if t["memcheck"] == "report":
                k = (t.get("detail") or "")[10:60]
                firsts[k] = firsts.get(k, 0) + 1
        print("   reports: " + "; ".join("%s %d" % kv for kv in
                                          sorted(firsts.items(), key=lambda x: -x[1])[:6]))
        conf = [t for t in ts if t.get("confirm")]
        bad = [t for t in conf if t.get("outcome") != "ok"]
        print("   confirm runs %d: ok %d, not ok %d (%s)" % (
            len(conf), len(conf) - len(bad), len(bad),
            ", ".join("%s %s" % (t.get("outcome"), (t.get("detail") or "")[:60]) for t in bad[:4])))


def compare(off, auto):
    a, _ = load(off)
    b, _ = load(auto)
    both = sorted(set(a) & set(b))
    ra = sum(a[k][2] == "ok" for k in both)
    rb = sum(b[k][2] == "ok" for k in both)
    sa = sum(a[k][4] or 0 for k in both)
    sb = sum(b[k][4] or 0 for k in both)
    fa = sum(gpu_fault(t) for k in both for t in tries(a[k][6]))
    fb = sum(gpu_fault(t) for k in both for t in tries(b[k][6]))
    print("== memcheck (auto) vs plain (off) on %d kernels both probed: runnable %d vs %d; "
          "probe-seconds %.0f vs %.0f; plain GPU faults %d vs %d" % (len(both), rb, ra, sb, sa,
                                                                       fb, fa))
    changed = [k for k in both if (a[k][2] == "ok") != (b[k][2] == "ok")]
    moved = [k for k in both if a[k][2] == b[k][2] == "ok" and
             (a[k][3] != b[k][3] or block_of(a[k]) != block_of(b[k]))]
    for k in changed:
        print("   VERDICT %s %s: off %s %s/%s (%.1f s) -> auto %s %s/%s (%.1f s): %s" % (
            b[k][0], k, a[k][2], a[k][3], block_of(a[k]), a[k][4] or 0, b[k][2], b[k][3],
            block_of(b[k]), b[k][4] or 0, b[k][5][:160]))
        print("     auto tries: " + " | ".join(
            "%s/%s %s%s" % (t.get("binding"), t.get("block") or "own", t.get("memcheck") or
                            "plain", "" if t.get("outcome") == "ok" else ":" + t.get("outcome"))
            for t in tries(b[k][6]))[:400])
    print("   runnable both ways with another binding or block: %d%s" % (
        len(moved), (": " + ", ".join("%s %s/%s->%s/%s" % (b[k][0], a[k][3], block_of(a[k]),
                                                          b[k][3], block_of(b[k]))
                                       for k in moved[:8])) if moved else ""))


if __name__ == "__main__":
    if sys.argv[1] == "pass":
        one(*sys.argv[2:7])
    else:
        compare(sys.argv[2], sys.argv[3])
