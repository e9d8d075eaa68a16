#!/usr/bin/env python3
"""CPU time by command name while something runs (issue #14: is a real-code execute run bound by
nvcc, by the probe runners, or by neither?).

Usage: scripts/cpu-by-command.py OUT.tsv [INTERVAL_S]   (runs until SIGTERM or SIGINT)

Every INTERVAL_S (default 0.2) it reads /proc/<pid>/stat of every process and adds each one's
user+system time since the last look (a process seen for the first time counts from its start, so
short-lived nvcc children are counted up to the last look before they end; what a process spends
after that last look is lost: keep the interval short against build times; at 1 s nvcc's
children were mostly missed). It also reads /proc/stat, so the TSV's first line is the whole
machine's busy share. On SIGTERM it writes OUT.tsv: `command<TAB>cpu_s<TAB>processes`, largest
first, after a `#` line with the wall time, the number of CPUs and the machine's busy
CPU-seconds, and a line `(not seen)` with the busy time no look attributed (processes that
ended between two looks, and what the ones that ended did after the last).
"""
import os
import signal
import sys
import time

out = sys.argv[1]
interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
tick = os.sysconf("SC_CLK_TCK")
ncpu = os.cpu_count() or 1
seen = {}      # pid -> (comm, last utime+stime in ticks)
total = {}     # comm -> ticks
procs = {}     # comm -> processes seen
stop = False


def machine_busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]  # idle + iowait
    return sum(v) - idle


def look():
    live = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
        except OSError:
            continue
        pid = int(d)
        comm = s[s.index("(") + 1:s.rindex(")")]
        rest = s[s.rindex(")") + 2:].split()
        t = int(rest[11]) + int(rest[12])  # utime, stime (fields 14, 15)
        old = seen.get(pid)
        if old is None or old[0] != comm:
            procs[comm] = procs.get(comm, 0) + 1
            # a pid that changed its name (exec, kernel threads) keeps its time so far
            old = (comm, old[1] if old else 0)
        total[comm] = total.get(comm, 0) + t - old[1]
        seen[pid] = (comm, t)
        live.add(pid)
    for pid in list(seen):
        if pid not in live:
            del seen[pid]


def finish(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, finish)
signal.signal(signal.SIGINT, finish)
t0 = time.monotonic()
b0 = machine_busy()
# what ran before the first look is not this run's
look()
for k in total:
    total[k] = 0
while not stop:
    time.sleep(interval)
    look()
wall = time.monotonic() - t0
busy = (machine_busy() - b0) / tick
with open(out + ".tmp", "w") as f:
    f.write(f"# wall_s {wall:.1f} cpus {ncpu} busy_cpu_s {busy:.1f} busy_share {busy / wall / ncpu:.3f}\n")
    for comm, t in sorted(total.items(), key=lambda x: -x[1]):
        if t > 0:
            f.write(f"{comm}\t{t / tick:.1f}\t{procs.get(comm, 0)}\n")
    f.write(f"(not seen)\t{busy - sum(total.values()) / tick:.1f}\t0\n")
os.replace(out + ".tmp", out)
