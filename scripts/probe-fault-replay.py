#!/usr/bin/env python3
"""What a fault budget per kernel and a small-size hang deadline would have saved on a store
(docs/execute.md "Fault budget").

  scripts/probe-fault-replay.py STORE [N ...]        (default budgets: 2 3 4 6 7 9)
  options: --small-timeout S (default 10), --timeout S (the store's --probe-timeout, default 30)

Reads probes.bindings: every binding run of each probe, in the order it ran. A run *faulted*
when it ended illegal_address or launch_failure, or cuda_error with a configuration line's
error (a detail with " (at WxH"): the set the block retry follows (execute/probe.c,
all_faulted). For each budget N the tries are cut where the probe would stop: after the run
that made N faults, when more runs were to come. The verdict is then made from the runs kept
by the probe's pick rules (first ok without a sanitizer report, else the first ok with one,
else the first clean at the small sizes: small_only), and compared with the stored one.
That is exact for the runs kept: the runs before the cut are the same runs.

Seconds per run: the store keeps each configuration's seconds (config_s, runs in a probe
runner) but not each run's wall time. A run's known seconds are its configurations' seconds,
plus --timeout minus those for a run that timed out, plus its budget for a too_slow one. What
is left of the probe's probe_s (runner hand-over, module load, the fault's recovery, the wait
for a spare) is spread over its runs by weights fitted on the whole store by least squares:
one weight per faulting run, one per other run. The skipped runs' seconds are then an
estimate; the counts of runs and faults are exact.

The small-size deadline: a run that timed out while its first configuration had not reported
(config_s[0] null) would end after S seconds instead of --timeout: it saves --timeout - S;
its outcome stays timeout. It also lists which retry shapes and bindings rescued a kernel."""
import collections
import json
import sqlite3
import sys

TIMEOUT_S = 30.0


def faulted(t):
    o = t.get("outcome")
    return not small_ok(t) and (o in ("illegal_address", "launch_failure") or (
        o == "cuda_error" and " (at " in (t.get("detail") or "")))


def gpu_fault(t):
    """Any run that ended in a GPU fault, the small sizes clean or not (what the GPU pays)."""
    o = t.get("outcome")
    return o in ("illegal_address", "launch_failure") or (
        o == "cuda_error" and " (at " in (t.get("detail") or ""))


def small_ok(t):
    """Clean at the small configurations (execute/probe.c small_clean, from what the store
    keeps): ok; else every small configuration reported its seconds, the run ran some
    configuration, and its error (if it says where) is at the large size."""
    if t.get("outcome") == "ok":
        return True
    cf, cs = t.get("configs") or [], t.get("config_s") or []
    small = [i for i, c in enumerate(cf) if not c.startswith("2024x")]
    d = t.get("detail") or ""
    if not small or len(cs) < len(cf) or any(cs[i] is None for i in small):
        return False
    if "0 configurations ran" in d:
        return False
    return not any(("(at %s," % cf[i].split()[0]) in d for i in small)


def pick(tries):
    """The probe plan's pick: index and kind ('ok', 'flagged', 'small'), or (None, None)."""
    fallback = small = None
    for i, t in enumerate(tries):
        flagged = t.get("sanitizer") in ("out_of_bounds", "errors")
        if t.get("outcome") == "ok" and not flagged:
            return i, "ok"
        if t.get("outcome") == "ok" and fallback is None:
            fallback = i
        elif small is None and small_ok(t):
            small = i
    if fallback is not None:
        return fallback, "flagged"
    if small is not None:
        return small, "small"
    return None, None


def cut(tries, n):
    """The runs a fault budget of n keeps, and whether it stopped the probe."""
    faults = 0
    for i, t in enumerate(tries):
        faults += faulted(t)
        if n > 0 and faults >= n and i + 1 < len(tries):
            return tries[:i + 1], True
    return tries, False


def known_s(t):
    s = sum(x for x in (t.get("config_s") or []) if x is not None)
    if t.get("outcome") == "timeout":
        return max(TIMEOUT_S, s)
    if t.get("outcome") == "too_slow":
        return s + (t.get("budget_s") or 0)
    return s


def fit_weights(rows):
    """Least squares of a probe's unexplained seconds on (faulting runs, other runs)."""
    sff = sfo = soo = yf = yo = 0.0
    for _k, ps, tries in rows:
        nf = sum(faulted(t) for t in tries)
        no = len(tries) - nf
        y = (ps or 0) - sum(known_s(t) for t in tries)
        sff += nf * nf
        sfo += nf * no
        soo += no * no
        yf += nf * y
        yo += no * y
    det = sff * soo - sfo * sfo
    a = (yf * soo - yo * sfo) / det
    b = (yo * sff - yf * sfo) / det
    return max(a, 0.01), max(b, 0.01)


def run_seconds(ps, tries, wf, wo):
    known = [known_s(t) for t in tries]
    left = max((ps or 0) - sum(known), 0)
    w = [wf if faulted(t) else wo for t in tries]
    return [k + left * x / sum(w) for k, x in zip(known, w)] if tries else []


def verdict(tries):
    i, kind = pick(tries)
    if i is None:
        return None
    t = tries[i]
    return (t.get("binding"), t.get("block"), kind)


def main():
    global TIMEOUT_S
    args, small_s = [], 10.0
    argv = sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a == "--small-timeout":
            small_s = float(argv.pop(0))
        elif a == "--timeout":
            TIMEOUT_S = float(argv.pop(0))
        else:
            args.append(a)
    if not args:
        sys.exit(__doc__)
    budgets = [int(x) for x in args[1:]] or [2, 3, 4, 6, 7, 9]
    db = sqlite3.connect(args[0])
    rows = [(k, ps, json.loads(b or "[]")) for k, ps, b in
            db.execute("SELECT kernel_id, probe_s, bindings FROM probes ORDER BY kernel_id")]
    wf, wo = fit_weights(rows)
    secs = {k: run_seconds(ps, tries, wf, wo) for k, ps, tries in rows}
    total_s = sum(ps or 0 for _k, ps, _t in rows)
    nruns = sum(len(t) for _k, _p, t in rows)
    nfaults = sum(faulted(x) for _k, _p, t in rows for x in t)
    runnable = sum(verdict(t) is not None for _k, _p, t in rows)
    print("%d probes, %.0f probe-seconds, %d binding runs, %d faulting runs, %d runnable"
          % (len(rows), total_s, nruns, nfaults, runnable))
    print("run overhead besides the configurations (fitted): %.2f s a faulting run, %.2f s "
          "another" % (wf, wo))
    nr = collections.Counter()
    for _k, _p, t in rows:
        nf = sum(map(faulted, t))
        nr["runnable" if verdict(t) else "not runnable"] += nf
    print("faulting runs of kernels that end runnable: %d, not runnable: %d"
          % (nr["runnable"], nr["not runnable"]))
    print()
    print("| N | probes stopped | runs saved | faulting runs saved | probe-seconds saved "
          "(est.) | runnable lost | verdict changed (binding, block or small-only) |")
    print("|---|---|---|---|---|---|---|")
    for n in budgets:
        stopped = runs = faults = 0
        saved = 0.0
        lost, changed = [], []
        for k, _ps, tries in rows:
            kept, hit = cut(tries, n)
            if not hit:
                continue
            stopped += 1
            skipped = tries[len(kept):]
            runs += len(skipped)
            faults += sum(map(faulted, skipped))
            saved += sum(secs[k][len(kept):])
            old, new = verdict(tries), verdict(kept)
            if old and not new:
                lost.append(k[:12])
            elif old != new:
                changed.append("%s %s->%s" % (k[:12], "/".join(map(str, old or ())),
                                              "/".join(map(str, new or ()))))
        print("| %d | %d | %d | %d | %.0f (%.0f%%) | %d %s | %d %s |"
              % (n, stopped, runs, faults, saved, 100 * saved / total_s, len(lost),
                 " ".join(lost), len(changed), "; ".join(changed)))
    print()
    hung = [(k, i) for k, _p, t in rows for i, x in enumerate(t)
            if x.get("outcome") == "timeout" and not (x.get("config_s") or [None])[0]]
    print("small-size deadline %.0f s: %d runs timed out before their first configuration "
          "reported (%d kernels), saving %.0f of %.0f probe-seconds (%.0f%%); verdicts stay"
          % (small_s, len(hung), len({k for k, _ in hung}),
             len(hung) * (TIMEOUT_S - small_s), total_s,
             100 * len(hung) * (TIMEOUT_S - small_s) / total_s))
    print()
    rescued, runs, faults = collections.Counter(), collections.Counter(), collections.Counter()
    for _k, _p, tries in rows:
        i, _kind = pick(tries)
        if i is not None and tries[i].get("block"):
            rescued[(tries[i]["block"], tries[i]["binding"])] += 1
        for t in tries:
            runs[t.get("block") or "own"] += 1
            faults[t.get("block") or "own"] += faulted(t)
    print("block retry rescues (shape, binding: kernels): " + ", ".join(
        "%s %s: %d" % (b, g, c) for (b, g), c in rescued.most_common()))
    print("runs (faulting runs) per shape: " + ", ".join(
        "%s %d (%d), rescued %d" % (b, n, faults[b], sum(c for (x, _g), c in rescued.items()
                                                         if x == b))
        for b, n in runs.most_common()))

if __name__ == "__main__":
    main()
