#!/usr/bin/env python3
"""Issue #14: the GPU-wide cost of a faulting process, by what the process does
(scripts/device-fault-knobs.cu). For each variant: 6 processes one at a time (each one's whole
life, median) and 16 processes 4 at a time (the wall over 16: the GPU's cost per process when
four workers fault at once, as probe workers do). Every process gets
CUDA_DEVICE_MAX_CONNECTIONS=1, as lscat's probe runs do. Then twoctx 3 times.
usage: device-fault-knobs.py BIN [VARIANT ...]"""
import os, statistics, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor

BIN = sys.argv[1]
VARIANTS = sys.argv[2:] or ["clean", "fault", "ctx", "nomalloc", "limits", "lmem", "bigmem",
                             "trap", "kill", "fault", "clean"]
ENV = dict(os.environ, CUDA_DEVICE_MAX_CONNECTIONS="1")

def life(v):
    t = time.monotonic()
    r = subprocess.run([BIN, v], capture_output=True, text=True, timeout=120, env=ENV)
    return time.monotonic() - t, r.stdout.strip(), r.returncode

for v in VARIANTS:
    life(v)  # warm
    one = [life(v) for _ in range(6)]
    t = time.monotonic()
    with ThreadPoolExecutor(4) as ex:
        par = list(ex.map(lambda _: [life(v) for _ in range(4)], range(4)))
    wall = time.monotonic() - t
    flat = [x for p in par for x in p]
    print(f"{v:9s} alone median {statistics.median(x[0] for x in one):.3f} s | 4 at a time "
          f"{wall / 16:.3f} s per process | e.g. {one[0][1]!r} rc={one[0][2]} "
          f"bad_rc={sum(1 for x in flat if x[2] not in (0, -9))}", flush=True)
for _ in range(3):
    print(life("twoctx"), flush=True)
