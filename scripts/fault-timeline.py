#!/usr/bin/env python3
"""What each fault of a traced tune run cost, per lscat-tune process (an MPI rank's server, or
the one process of a plain run), from scripts/device-multigpu.sh's MG_TRACE=1 files.

Usage: scripts/fault-timeline.py TRACES_DIR [RUN ...]
  TRACES_DIR  the unpacked traces.tgz (RUN.tune files from LSCAT_TUNE_TRACE, ps.txt from the
              process sampler); RUN: the runs to show (default: every *.tune file)

Per process it prints: results by status; for the faults (cuda_error and crashed results) the
time from each to the next result (what a fault cost: the runner's end, the spare's takeover or
a fresh start); the longest gaps between two results, with what the trace says happened in
them (gate waits, runner starts, spare takeovers, GPU lock waits, deadlines); and, from ps.txt,
the lscat processes seen in state D (waiting in the kernel, e.g. a killed runner's context
teardown in the driver) for more than one sample, with their wait channel.
"""
import glob
import os
import statistics
import sys


def parse_trace(path):
    """[(t, pid, event, rest)] in file order."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            p = line.rstrip("\n").split(" ", 3)
            if len(p) < 3:
                continue
            try:
                t, pid = float(p[0]), int(p[1])
            except ValueError:
                continue
            out.append((t, pid, p[2], p[3] if len(p) > 3 else ""))
    return out


def status_of(rest):
    # "child=N WxH BXxBYxBZ STATUS check=..."
    f = rest.split()
    return f[3] if len(f) > 3 else "?"


def summarize(name, events):
    by_pid = {}
    for e in events:
        by_pid.setdefault(e[1], []).append(e)
    t_first = min(e[0] for e in events) if events else 0
    print("== %s (%d process(es))" % (name, len(by_pid)))
    for pid, evs in sorted(by_pid.items()):
        results = [e for e in evs if e[2] == "result"]
        if not results:
            continue
        counts = {}
        for e in results:
            counts[status_of(e[3])] = counts.get(status_of(e[3]), 0) + 1
        print("  pid %d: %d results (%s), %.1f-%.1f s" % (
            pid, len(results), ", ".join("%s %d" % kv for kv in sorted(counts.items())),
            results[0][0] - t_first, results[-1][0] - t_first))
        costs = []
        for a, b in zip(results, results[1:]):
            if status_of(a[3]) in ("cuda_error", "crashed"):
                costs.append(b[0] - a[0])
        if costs:
            costs_s = sorted(costs)
            print("    a fault to the next result: n %d, median %.2f s, p90 %.2f s, max %.2f s, "
                  "sum %.1f s" % (len(costs), statistics.median(costs),
                                  costs_s[int(0.9 * (len(costs_s) - 1))], costs_s[-1], sum(costs)))
        gates = [e for e in evs if e[2] == "gate_taken"]
        waited = [float(e[3].split("waited=")[1]) for e in gates if "waited=" in e[3]]
        held = [float(e[3].split("held=")[1].split()[0]) for e in evs
                if e[2] == "gate_released" and "held=" in e[3]]
        if gates:
            print("    context gate: %d fresh start(s), waited max %.2f s (sum %.2f), held max %.2f s"
                  % (len(gates), max(waited or [0]), sum(waited), max(held or [0])))
        # a spare's @ready is read only once it took over: a marker right after the takeover
        # was there already; one later is the wait for its context
        taken, waits = {}, []
        for e in evs:
            if e[2] == "spare_taken":
                taken[e[3].split()[0]] = e[0]
            elif e[2] == "marker" and "@ready" in e[3] and e[3].split()[0] in taken:
                waits.append(e[0] - taken.pop(e[3].split()[0]))
        if waits:
            late = [w for w in waits if w > 0.05]
            print("    spare takeovers: %d; %d waited for the spare's context (mean %.2f s)"
                  % (len(waits), len(late), sum(late) / len(late) if late else 0))
        locks = [e for e in evs if e[2] == "gpu_turn"]
        slow_locks = [e for e in locks if float(e[3].split("lock_wait=")[1]) > 1.0]
        if slow_locks:
            print("    GPU lock waits over 1 s: %d, max %.2f s" % (
                len(slow_locks), max(float(e[3].split("lock_wait=")[1]) for e in slow_locks)))
        # the longest gaps between results, and what happened in them
        gaps = sorted(((b[0] - a[0], a, b) for a, b in zip(results, results[1:])), reverse=True)
        for g, a, b in gaps[:5]:
            if g < 1.0:
                break
            inside = [e for e in evs if a[0] < e[0] < b[0] and e[2] not in ("result",)]
            what = "; ".join("%+.2f %s %s" % (e[0] - a[0], e[2], e[3][:48]) for e in inside[:8])
            print("    gap %.2f s after %s at %.1f s: %s" % (g, status_of(a[3]), a[0] - t_first,
                                                        what or "nothing traced"))


def ps_stuck(path):
    """Processes in state D for 2+ consecutive samples: (pid, comm, first, last, wchan)."""
    if not os.path.exists(path):
        return []
    seen, open_runs, stuck = {}, {}, []
    t = None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("@ "):
                if t is not None:  # close runs not seen in the last sample
                    for pid in list(open_runs):
                        if pid not in seen:
                            stuck.append(open_runs.pop(pid))
                seen = {}
                t = float(line.split()[1])
                continue
            p = line.split()
            if len(p) < 5 or t is None:
                continue
            pid, stat, wchan, comm = p[0], p[2], p[3], p[4]
            if stat.startswith("D"):
                seen[pid] = 1
                r = open_runs.setdefault(pid, [pid, comm, t, t, wchan, 0])
                r[3] = t
                r[5] += 1
    stuck.extend(open_runs.values())
    return [r for r in stuck if r[5] >= 2]


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    d = sys.argv[1]
    runs = sys.argv[2:] or sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(d, "*.tune")))
    if not runs:
        print("fault-timeline: no *.tune trace in %s (run with MG_TRACE=1)" % d, file=sys.stderr)
        sys.exit(1)
    for r in runs:
        path = os.path.join(d, r + ".tune")
        if not os.path.exists(path):
            print("fault-timeline: no trace %s" % path, file=sys.stderr)
            continue
        summarize(r, parse_trace(path))
    stuck = ps_stuck(os.path.join(d, "ps.txt"))
    print("== processes in state D for 2+ samples (0.5 s apart): %d" % len(stuck))
    for pid, comm, a, b, wchan, n in stuck[:30]:
        print("  %s %s: %.1f-%.1f s (uptime), %d samples, wchan %s" % (pid, comm, a, b, n, wchan))


if __name__ == "__main__":
    main()
