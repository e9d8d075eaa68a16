#!/usr/bin/env python3
"""Where a probe pass's time went, from scripts/device-probe8.sh with PB_TRACE=1.

  probe-timeline.py DIR MODE...   reads DIR/execute-<mode>.log.gz (lscat -v --log-format json:
                                  the probing / probe_run / probed events) and
                                  DIR/probes-<mode>.json.gz (every probe's tries, config_s);
                                  ':' in a mode is written '-'

Per pass: the span from the first probe's start to the last one's end, how busy the workers
were, and the probe-seconds split into the wait for a runner holding its context (after a
runner ended: its spare's), the slot sweep, the runs' wall (their configuration lines, and the
rest of the run: the harness's load, its arguments, its exit), and the probe's own time
outside the runs (the probe plan, scratch folders, a process run's start). Kernels are split
into those clean at their first try and the rest. Then the tries: plain ones that faulted (GPU
faults: illegal address, assert, launch failure), and those in the memcheck runner by verdict
with the plain runs confirming them (session 21). Read-only, standard library only."""
import gzip
import json
import statistics
import sys
from datetime import datetime, timezone


def ts(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def load(d, mode):
    m = mode.replace(":", "-")
    events = []
    with gzip.open("%s/execute-%s.log.gz" % (d, m), "rt", errors="replace") as f:
        for line in f:
            if line.startswith("{"):
                try:
                    events.append(json.loads(line))
                except ValueError:
                    pass
    probes = {}
    with gzip.open("%s/probes-%s.json.gz" % (d, m), "rt") as f:
        for line in f:
            p = json.loads(line)
            probes[p["kernel"]] = p
    return events, probes


def lines_s(tries):
    return sum(c for t in tries for c in (t.get("config_s") or []) if c is not None)


def report(d, mode):
    events, probes = load(d, mode)
    open_at, worker_of, spans = {}, {}, {}
    runs = []  # (t_end, slot, wait, sweep, run, took_spare, ended)
    for e in events:
        ev = e.get("event")
        if ev == "probing":
            open_at[e["kernel"]] = ts(e["ts"])
            worker_of[e["kernel"]] = int(e.get("worker_slot", -1))
        elif ev == "probed" and e["kernel"] in open_at:
            spans[e["kernel"]] = (open_at[e["kernel"]], ts(e["ts"]))
        elif ev == "probe_run":
            # the worker's first slot (worker_slot; older logs: the run's own slot)
            runs.append((ts(e["ts"]), int(e.get("worker_slot", e["slot"])), float(e["wait_s"]),
                         float(e["sweep_s"]), float(e["run_s"]), int(e["took_spare"]),
                         int(e["ended"])))
    if not spans:
        print("== %s: no probing/probed events (run without PB_TRACE=1?)" % mode)
        return
    workers = sorted(set(worker_of.values()))
    t0 = min(s[0] for s in spans.values())
    t1 = max(s[1] for s in spans.values())
    busy = sum(b - a for a, b in spans.values())
    # each run to the kernel its worker was probing when it ended
    by_kernel = {k: [] for k in spans}
    slot_worker = {}
    for r in runs:
        w = max((x for x in workers if x <= r[1]), default=None)
        slot_worker[r[1]] = w
        for k, (a, b) in spans.items():
            if worker_of.get(k) == w and a - 0.002 <= r[0] <= b + 0.002:
                by_kernel[k].append(r)
                break
    tot = {"probe": 0.0, "wait": 0.0, "sweep": 0.0, "run": 0.0, "lines": 0.0}
    cls = {"clean first": [], "the rest": []}
    for k, p in probes.items():
        if k not in spans:
            continue
        rs = by_kernel.get(k, [])
        wait, sweep, run = (sum(r[i] for r in rs) for i in (2, 3, 4))
        ln = lines_s(p["tries"])
        ps = p["probe_s"] or 0
        tot["probe"] += ps
        tot["wait"] += wait
        tot["sweep"] += sweep
        tot["run"] += run
        tot["lines"] += ln
        clean = len(p["tries"]) == 1 and p["tries"][0]["outcome"] == "ok"
        cls["clean first" if clean else "the rest"].append((ps, wait, sweep, run, ln, len(rs)))
    span = t1 - t0
    print("== %s: %d kernels, %d workers, span %.1f s (%.2f kernels/s), workers busy %.0f%% "
          "(%.0f of %.0f worker-seconds)" % (mode, len(spans), len(workers), span,
                                             len(spans) / span if span else 0,
                                             100 * busy / (len(workers) * span) if span else 0,
                                             busy, len(workers) * span))
    other = tot["probe"] - tot["wait"] - tot["sweep"] - tot["run"]
    print("   probe-seconds %.1f: waiting for a runner %.1f, sweeps %.1f, runs %.1f (lines %.1f, "
          "the rest of the runs %.1f), outside the runs %.1f" % (
              tot["probe"], tot["wait"], tot["sweep"], tot["run"], tot["lines"],
              tot["run"] - tot["lines"], other))
    for name, xs in cls.items():
        if not xs:
            continue
        n = len(xs)
        print("   %-11s %4d kernels: probe %.3f s mean (median %.3f), wait %.3f, runs %.3f "
              "(lines %.3f), outside %.3f; %.2f runs each" % (
                  name, n, sum(x[0] for x in xs) / n, statistics.median(x[0] for x in xs),
                  sum(x[1] for x in xs) / n, sum(x[3] for x in xs) / n,
                  sum(x[4] for x in xs) / n, sum(x[0] - x[1] - x[2] - x[3] for x in xs) / n,
                  sum(x[5] for x in xs) / n))
    waits = [r[2] for r in runs]
    after_end = [r[2] for i, r in enumerate(runs) if r[5]]
    print("   %d runs in runners: wait median %.3f s, p90 %.3f, max %.2f, %d over 0.1 s holding "
          "%.1f s; %d took a spare (their wait median %.3f s, p90 %.3f); %d ended their runner"
          % (len(runs), pct(waits, .5), pct(waits, .9), max(waits) if waits else 0,
             sum(1 for w in waits if w > 0.1), sum(w for w in waits if w > 0.1), len(after_end),
             pct(after_end, .5), pct(after_end, .9), sum(r[6] for r in runs)))
    # a run's wall besides its lines: per run of a clean-first kernel (one run, one try)
    extra = []
    for k, p in probes.items():
        rs = by_kernel.get(k, [])
        if len(rs) == 1 and len(p["tries"]) == 1 and p["tries"][0]["outcome"] == "ok":
            extra.append(rs[0][4] - lines_s(p["tries"]))
    if extra:
        print("   a clean run's wall besides its lines: median %.3f s, p90 %.3f, max %.3f "
              "(%d runs)" % (pct(extra, .5), pct(extra, .9), max(extra), len(extra)))
    # the tries: GPU faults of plain runs, and the memcheck runner's share
    plain_faults, mc, confirms, confirm_faults = 0, {}, 0, 0
    for p in probes.values():
        for t in p["tries"]:
            if t.get("memcheck"):
                mc[t["memcheck"]] = mc.get(t["memcheck"], 0) + 1
                continue
            gpu_fault = t["outcome"] in ("illegal_address", "cuda_error", "launch_failure")
            plain_faults += gpu_fault
            if t.get("confirm"):
                confirms += 1
                confirm_faults += gpu_fault
    print("   tries: %d plain ones faulted on the GPU; memcheck runs %d (%s); %d confirming "
          "plain runs, %d of them faulted" % (plain_faults, sum(mc.values()),
                                               ", ".join("%s %d" % kv for kv in sorted(mc.items()))
                                               or "none", confirms, confirm_faults))
    # the tail: when the last kernels started, and what ran past the others
    ends = sorted(b for a, b in spans.values())
    if len(ends) > len(workers):
        print("   tail: the last %d probes ended %.1f s after the one before them; the longest "
              "probes %s" % (len(workers) - 1, ends[-1] - ends[-len(workers)],
                            ", ".join("%s %.1f s" % (probes[k]["name"][:28], b - a) for k, (a, b) in
                                      sorted(spans.items(), key=lambda kv: kv[1][0] - kv[1][1])[:4])))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    for m in sys.argv[2:]:
        report(sys.argv[1], m)
