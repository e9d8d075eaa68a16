#!/usr/bin/env python3
"""Does a fault cost more when other processes hold CUDA contexts on the same GPU? Starts N
idle harness processes (each creates its context and waits on stdin), then times a faulting
configuration in another harness process: the fault line's arrival and the process's exit.
Usage: device-fault-ctx.py HARNESS FAULT_CFG N [N ...]"""
import subprocess, sys, time

h, bad = sys.argv[1], sys.argv[2]
for n in map(int, sys.argv[3:]):
    idle = []
    for _ in range(n):
        p = subprocess.Popen([h, "--results", "/dev/stdout"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        p.stdout.readline()  # header: its context exists
        idle.append(p)
    for r in range(2):
        t0 = time.monotonic()
        p = subprocess.Popen([h, "--results", "/dev/stdout", "--warmup", "1", "--samples", "3"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
        p.stdin.write(bad + "\n"); p.stdin.close()
        th = tf = None
        for line in p.stdout:
            if '"harness"' in line and th is None:
                th = time.monotonic() - t0
            elif '"status"' in line:
                tf = time.monotonic() - t0
        p.wait()
        te = time.monotonic() - t0
        print(f"idle contexts {n:2d} #{r}: header@{th:.3f} fault@{tf:.3f} exit@{te:.3f}", flush=True)
    for p in idle:
        p.stdin.close(); p.wait()
