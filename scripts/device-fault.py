#!/usr/bin/env python3
"""Where a faulting configuration's time goes (issue #14 item 5), on a lent GPU: run a kernel's
harness as a process with an ok configuration then a faulting one, stamping each result line's
arrival and the process's exit; optionally with a second harness process already holding a
context (a spare) that launches right after the fault, to see whether the faulted context's
teardown blocks other contexts. Usage: device-fault.py HARNESS OK_CFG FAULT_CFG [ROUNDS]"""
import os, subprocess, sys, time

def run(h, cfgs, label):
    t0 = time.monotonic()
    p = subprocess.Popen([h, "--results", "/dev/stdout", "--warmup", "1", "--samples", "3"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    p.stdin.write("".join(c + "\n" for c in cfgs)); p.stdin.close()
    marks = []
    for line in p.stdout:
        if line.startswith("{"):
            st = "header" if '"harness"' in line else ("ok" if '"status":"ok"' in line else "err")
            marks.append((st, time.monotonic() - t0))
    t_eof = time.monotonic() - t0
    p.wait()
    t_exit = time.monotonic() - t0
    print(f"{label}: " + " ".join(f"{s}@{t:.3f}" for s, t in marks) +
          f" eof@{t_eof:.3f} exit@{t_exit:.3f} rc={p.returncode}", flush=True)
    return marks, t_exit

h, ok, bad = sys.argv[1:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
for r in range(rounds):
    run(h, [ok], f"ok-only#{r}")
    run(h, [ok, bad], f"ok+fault#{r}")
# a spare holding a context: started first, it launches its ok configuration only once the
# other has reported its fault (its stdin is written then)
for r in range(rounds):
    sp = subprocess.Popen([h, "--results", "/dev/stdout", "--warmup", "1", "--samples", "3"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    sp.stdout.readline()  # its header: context created
    t0 = time.monotonic()
    p = subprocess.Popen([h, "--results", "/dev/stdout", "--warmup", "1", "--samples", "3"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    p.stdin.write(bad + "\n"); p.stdin.close()
    for line in p.stdout:
        if '"status"' in line:
            break
    t_fault = time.monotonic() - t0
    sp.stdin.write(ok + "\n"); sp.stdin.close()
    t_spare = None
    for line in sp.stdout:
        if '"status"' in line:
            t_spare = time.monotonic() - t0
            break
    p.wait(); t_exit = time.monotonic() - t0
    sp.wait()
    print(f"spare#{r}: fault line@{t_fault:.3f} spare's ok line@{t_spare:.3f} "
          f"faulted exit@{t_exit:.3f}", flush=True)
