#!/usr/bin/env python3
"""Does a GPU fault in one process stall the other processes' work on the same GPU? (issue #14:
734 of session 9's 1,429 probe runs ended in a fault.) Needs the binary built from
device-fault-stall.cu. Usage: device-fault-stall.py BIN WORKDIR [sizes|sanitizer|env|envq|knobs|xgpu]   (sizes: only the
fault time against the number of faulting threads; sanitizer: faults caught by compute-sanitizer
instead; knobs: what a faulting process controls, session 21)
Phases (each prints one line): beats alone; beats while faults run back to back in new processes
(as probe runners do); faults alone; 4 faulting processes at once; contexts made while faulting."""
import os, subprocess, sys, time

BIN, W = sys.argv[1], sys.argv[2]
os.makedirs(W, exist_ok=True)

def fault_once():
    t0 = time.monotonic()
    r = subprocess.run([BIN, "fault"], capture_output=True, text=True, timeout=120)
    te = time.monotonic()
    f = r.stdout.split()
    # fault t0 tctx tlaunch tfault name
    return dict(start=t0, ctx=float(f[2]) - float(f[1]), fault=float(f[4]) - float(f[3]),
                exit=te - float(f[4]), total=te - t0, name=f[5] if len(f) > 5 else "?", end=te)

def beats(n, secs, tag):
    ps, files = [], []
    for i in range(n):
        fn = os.path.join(W, f"beat-{tag}-{i}.txt")
        files.append(fn)
        ps.append(subprocess.Popen([BIN, "beat", str(secs), fn], stdout=subprocess.PIPE, text=True))
    return ps, files

def read_beats(files):
    ts = []
    for fn in files:
        with open(fn) as f:
            ts.append([float(x) for x in f if x.strip()])
    return ts

def gaps_in(ts, a, b):
    """Per beat process: its largest gap between completions inside [a, b]."""
    out = []
    for t in ts:
        prev, g = None, 0.0
        for x in t:
            if x < a:
                prev = x
                continue
            if prev is not None:
                g = max(g, min(x, b) - max(prev, a))
            if x > b:
                break
            prev = x
        out.append(g)
    return out

def rate(ts, a, b):
    return sum(sum(1 for x in t if a <= x < b) for t in ts) / max(b - a, 1e-9)

def beats_while_faulting(start_beats, fault, tag):
    """Beat processes (start_beats(tag) -> (procs, files)) for 16 s; after 4 s, 8 faults back to
    back (fault() -> dict with start, end). Returns the beat rate before the faults, the rate
    inside the faulting processes' lifetimes, the largest beat gap per fault, and the faults."""
    ps, files = start_beats(tag)
    time.sleep(4)
    fl = [fault() for _ in range(8)]
    for p in ps: p.communicate()
    ts = read_beats(files)
    win = [(f["start"], f["end"]) for f in fl]
    inw = sum(rate(ts, s, e) * (e - s) for s, e in win) / sum(e - s for s, e in win)
    quiet = rate(ts, max(t[0] for t in ts) + 0.5, fl[0]["start"] - 0.2)
    return quiet, inw, [max(gaps_in(ts, s, e)) for s, e in win], fl

def stats(v):
    v = sorted(v)
    return f"n={len(v)} median={v[len(v)//2]:.3f} max={v[-1]:.3f} sum={sum(v):.2f}"

if len(sys.argv) > 3 and sys.argv[3] == "sanitizer":
    # Faults caught by compute-sanitizer's instrumentation instead of the GPU's MMU: does the
    # context survive, what does a process of K of them cost, and do they stall other contexts?
    SAN = ["compute-sanitizer", "--tool", "memcheck", "--destroy-on-device-error", "kernel",
           "--print-limit", "1"]
    for k in (1, 10):
        for cmd, tag in (([BIN, "faultloop", str(k)], "bare"), (SAN + [BIN, "faultloop", str(k)], "memcheck")):
            t0 = time.monotonic()
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            line = [l for l in r.stdout.splitlines() if l.startswith("faultloop")]
            print(f"{tag:8s} K={k:2d}: process {time.monotonic() - t0:.2f} s; {line[0] if line else r.stdout[-200:]}", flush=True)
    ps, files = beats(4, 14, "san")
    time.sleep(3)
    a = time.monotonic()
    subprocess.run(SAN + [BIN, "faultloop", "10"], capture_output=True, timeout=300)
    b = time.monotonic()
    for p in ps: p.communicate()
    ts = read_beats(files)
    quiet = rate(ts, max(t[0] for t in ts) + 0.5, a - 0.2)
    print(f"beats: {quiet:.0f}/s before, {rate(ts, a, b):.0f}/s while a memcheck process made 10 faults "
          f"({b - a:.2f} s); largest gap {max(gaps_in(ts, a, b)):.3f} s", flush=True)
    sys.exit(0)

if len(sys.argv) > 3 and sys.argv[3] == "knobs":
    # What a faulting process controls (session 21): for each variant (the binary's `knob`), 6
    # processes one at a time (each one's life, median) and 16 processes 4 at a time (the wall
    # over 16: the GPU's cost per process when four workers fault at once, as probe workers
    # do). One queue per context, as lscat's probe runs. Then `twoctx` 3 times.
    import concurrent.futures as cf
    import statistics
    env = dict(os.environ, CUDA_DEVICE_MAX_CONNECTIONS="1")
    def life(args):
        t0 = time.monotonic()
        r = subprocess.run([BIN] + args, capture_output=True, text=True, timeout=120, env=env)
        return time.monotonic() - t0, r.stdout.strip(), r.returncode
    for v in ("clean", "fault", "nomalloc", "limits", "lmem", "bigmem", "trap", "kill", "fault",
              "clean"):
        life(["knob", v])  # warm
        one = [life(["knob", v]) for _ in range(6)]
        t0 = time.monotonic()
        with cf.ThreadPoolExecutor(4) as ex:
            par = list(ex.map(lambda _: [life(["knob", v]) for _ in range(4)], range(4)))
        wall = time.monotonic() - t0
        bad = sum(1 for p in par for x in p if x[2] not in (0, -9))
        print(f"{v:9s} alone median {statistics.median(x[0] for x in one):.3f} s | 4 at a time "
              f"{wall / 16:.3f} s per process | e.g. {one[0][1]!r} rc={one[0][2]} bad_rc={bad}",
              flush=True)
    for _ in range(3):
        print(life(["twoctx"]), flush=True)
    sys.exit(0)

if len(sys.argv) > 3 and sys.argv[3] in ("env", "envq"):
    # What the project controls: does a fault or a new context cost less with one hardware
    # queue per context (CUDA_DEVICE_MAX_CONNECTIONS=1; the harness uses one stream), does it
    # cost more when other processes hold idle contexts (probe spares), and is recovering in
    # the same process (cudaDeviceReset, a new context) cheaper than a new process?
    import concurrent.futures as cf
    base_env = dict(os.environ)
    def run(args, env):
        return subprocess.run([BIN] + args, capture_output=True, text=True, timeout=120, env=env)
    def fault_env(env):
        t0 = time.monotonic()
        r = run(["fault"], env)
        te = time.monotonic()
        f = r.stdout.split()
        return dict(ctx=float(f[2]) - float(f[1]), fault=float(f[4]) - float(f[3]), total=te - t0)
    def ctx_env(env):
        t0 = time.monotonic()
        run(["ctx"], env)
        return time.monotonic() - t0
    quick = sys.argv[3] == "envq" # only the first two settings, then stop (before and after a run)
    for tag, extra in (("default", {}), ("max_connections_1", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}),
                       ("module_loading_eager", {"CUDA_MODULE_LOADING": "EAGER"}))[:2 if quick else 3]:
        env = dict(base_env, **extra)
        fault_env(env)
        fl = [fault_env(env) for _ in range(8)]
        cx = [ctx_env(env) for _ in range(8)]
        t0 = time.monotonic()
        with cf.ThreadPoolExecutor(4) as ex:
            res = list(ex.map(lambda _: [fault_env(env) for _ in range(4)], range(4)))
        t4 = time.monotonic() - t0
        print(f"{tag:22s} fault process {stats([f['total'] for f in fl])} | its ctx {stats([f['ctx'] for f in fl])} | "
              f"launch->error {stats([f['fault'] for f in fl])} | ctx process {stats(cx)} | "
              f"16 faults from 4 processes {t4:.2f} s ({t4/16:.3f} each)", flush=True)
    if quick:
        sys.exit(0)
    for n in (0, 8, 16):
        idle = [subprocess.Popen([BIN, "idle", "60"], stdout=subprocess.PIPE, text=True) for _ in range(n)]
        for p in idle:
            p.stdout.readline()
        fl = [fault_env(base_env) for _ in range(6)]
        cx = [ctx_env(base_env) for _ in range(6)]
        print(f"idle contexts {n:2d}: fault process {stats([f['total'] for f in fl])} | launch->error "
              f"{stats([f['fault'] for f in fl])} | ctx process {stats(cx)}", flush=True)
        for p in idle:
            p.kill(); p.wait()
    for tag, extra in (("default", {}), ("max_connections_1", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"})):
        t0 = time.monotonic()
        r = run(["faultreset", "8"], dict(base_env, **extra))
        lines = [l.split() for l in r.stdout.splitlines() if l.startswith("faultreset")]
        print(f"in-process recovery, {tag}: 8 cycles {time.monotonic() - t0:.2f} s; fault "
              f"{stats([float(l[3]) for l in lines])} | cudaDeviceReset {stats([float(l[5]) for l in lines])} | "
              f"new context {stats([float(l[7]) for l in lines])} | {lines[-1][8:] if lines else r.stderr[-200:]}", flush=True)
    sys.exit(0)

if len(sys.argv) > 3 and sys.argv[3] == "xgpu":
    # Issue #20: does a fault on one GPU stall the host's other GPUs? (needs 2 GPUs; faults on
    # GPU 0, the others' work on GPU 1). A multi-GPU tune over real code lost most where kernels
    # fault: a fault cost ~0.8 s with one GPU at work and 1.2-1.4 s beside a working GPU.
    import concurrent.futures as cf
    def on(gpu):
        return dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu))
    def fault_on(gpu):
        t0 = time.monotonic()
        r = subprocess.run([BIN, "fault"], capture_output=True, text=True, timeout=120, env=on(gpu))
        te = time.monotonic()
        f = r.stdout.split()
        return dict(start=t0, end=te, total=te - t0, ctx=float(f[2]) - float(f[1]),
                    fault=float(f[4]) - float(f[3]))
    def ctx_on(gpu):
        t0 = time.monotonic()
        subprocess.run([BIN, "ctx"], capture_output=True, timeout=120, env=on(gpu))
        return time.monotonic() - t0
    def beats_on(gpu, n, secs, tag):
        ps, files = [], []
        for i in range(n):
            fn = os.path.join(W, f"xbeat-{tag}-{i}.txt")
            files.append(fn)
            ps.append(subprocess.Popen([BIN, "beat", str(secs), fn], stdout=subprocess.PIPE,
                                       text=True, env=on(gpu)))
        return ps, files
    if len(sys.argv) > 4 and sys.argv[4] == "ops":
        # Which driver calls of a tune configuration wait while GPU 0 makes contexts or faults?
        # ops on GPU 1 for 16 s: quiet, then 5 s of context processes on GPU 0, then 5 s of
        # faulting processes on GPU 0.
        fn = os.path.join(W, "ops.txt")
        p = subprocess.Popen([BIN, "ops", "17", fn], env=on(1))
        time.sleep(4)
        a = time.monotonic(); n_ctx = 0
        while time.monotonic() < a + 5:
            ctx_on(0); n_ctx += 1
        b = time.monotonic(); n_f = 0
        while time.monotonic() < b + 5:
            fault_on(0); n_f += 1
        c = time.monotonic()
        p.wait()
        rows = [[float(x) for x in l.split()] for l in open(fn) if l.strip()]
        def summ(lo, hi, tag):
            r = [x for x in rows if lo <= x[0] < hi]
            out = [f"{tag}: {len(r)} rounds"]
            for i, name in ((1, "nvml x5"), (2, "graph"), (3, "malloc+free"), (4, "launch+sync")):
                v = sorted(x[i] for x in r)
                if v:
                    out.append(f"{name} median {v[len(v)//2]*1e3:.2f} ms p99 {v[int(len(v)*0.99)]*1e3:.2f} max {v[-1]*1e3:.1f} sum {sum(v):.2f} s")
            print("xops " + " | ".join(out), flush=True)
        start = rows[0][0] if rows else a
        summ(start + 0.5, a, "quiet")
        summ(a, b, f"GPU 0 making contexts ({n_ctx})")
        summ(b, c, f"GPU 0 faulting ({n_f})")
        sys.exit(0)
    fault_on(0); fault_on(1); ctx_on(1)
    alone = [fault_on(0) for _ in range(8)]
    print(f"xgpu faults on GPU 0, GPU 1 idle: total {stats([f['total'] for f in alone])} | ctx "
          f"{stats([f['ctx'] for f in alone])} | launch->error {stats([f['fault'] for f in alone])}", flush=True)
    # beats on GPU 1: before, during 8 back-to-back faults on GPU 0
    quiet, inw, gmax, fl = beats_while_faulting(lambda t: beats_on(1, 4, 16, t), lambda: fault_on(0), "g1")
    print(f"xgpu beats on GPU 1 (4 processes): {quiet:.0f}/s before, {inw:.0f}/s while GPU 0 faults; "
          f"largest GPU-1 gap per GPU-0 fault {stats(gmax)} | those faults: total "
          f"{stats([f['total'] for f in fl])}, launch->error {stats([f['fault'] for f in fl])}", flush=True)
    # the same beats on GPU 0 itself, for scale
    quiet, inw, gmax, fl = beats_while_faulting(lambda t: beats_on(0, 4, 16, t), lambda: fault_on(0), "g0")
    print(f"same-GPU beats on GPU 0: {quiet:.0f}/s before, {inw:.0f}/s while GPU 0 faults; "
          f"largest gap per fault {stats(gmax)}", flush=True)
    # faults on GPU 0 while GPU 1 faults too, back to back
    with cf.ThreadPoolExecutor(2) as ex:
        f1 = ex.submit(lambda: [fault_on(1) for _ in range(10)])
        time.sleep(0.3)
        both = [fault_on(0) for _ in range(8)]
        f1.result()
    print(f"xgpu faults on GPU 0 while GPU 1 faults: total {stats([f['total'] for f in both])} | ctx "
          f"{stats([f['ctx'] for f in both])} | launch->error {stats([f['fault'] for f in both])}", flush=True)
    # a new context on GPU 1 while GPU 0 faults
    plain = [ctx_on(1) for _ in range(6)]
    with cf.ThreadPoolExecutor(2) as ex:
        fut = ex.submit(lambda: [fault_on(0) for _ in range(6)])
        during = []
        while not fut.done():
            during.append(ctx_on(1))
    print(f"xgpu context on GPU 1: alone {stats(plain)}; while GPU 0 faults {stats(during)}", flush=True)
    sys.exit(0)

if len(sys.argv) > 3 and sys.argv[3] == "sizes":
    # How the time from a faulting launch to its error grows with the faulting threads.
    for where in ("near", "far"):
        for blocks in (1, 4, 64, 1024, 16384, 65536):
            ts = []
            for _ in range(3):
                t0 = time.monotonic()
                r = subprocess.run([BIN, "faultn", str(blocks), where], capture_output=True,
                                   text=True, timeout=120)
                f = r.stdout.split()
                ts.append((float(f[3]), time.monotonic() - t0, f[4] if len(f) > 4 else "?"))
            print(f"faulting threads {blocks * 256:9d} ({where}): launch to error "
                  f"{sorted(t[0] for t in ts)[1]:.3f} s, process {sorted(t[1] for t in ts)[1]:.3f} s, {ts[0][2]}",
                  flush=True)
    sys.exit(0)

# 1. faults alone (warm the driver, then 8 back to back)
fault_once()
alone = [fault_once() for _ in range(8)]
print("faults alone: total", stats([f["total"] for f in alone]), "| ctx", stats([f["ctx"] for f in alone]),
      "| fault->reported", stats([f["fault"] for f in alone]), "| reported->exit", stats([f["exit"] for f in alone]), flush=True)

# 2. four beat processes alone
ps, files = beats(4, 6, "alone")
for p in ps: p.communicate()
ts = read_beats(files)
a, b = max(t[0] for t in ts) + 0.5, min(t[-1] for t in ts) - 0.5
base = rate(ts, a, b)
print(f"beats alone: {base:.0f} completions/s over 4 processes; max gap {max(gaps_in(ts, a, b)):.3f} s", flush=True)

# 3. four beat processes while 8 faults run back to back
quiet, inw, gmax, fl = beats_while_faulting(lambda t: beats(4, 16, t), fault_once, "faults")
print(f"beats with faults: {quiet:.0f}/s before the faults, {inw:.0f}/s inside the fault processes' lifetimes; "
      f"largest beat gap per fault: {stats(gmax)}; fault totals {stats([f['total'] for f in fl])}", flush=True)

# 4. four processes faulting at once, 4 faults each, against 16 in one row (seen above: 8)
t0 = time.monotonic()
import concurrent.futures as cf
with cf.ThreadPoolExecutor(4) as ex:
    res = list(ex.map(lambda _: [fault_once() for _ in range(4)], range(4)))
t = time.monotonic() - t0
allf = [f for r in res for f in r]
print(f"4 faulters x 4 faults: {t:.2f} s wall for 16 faults ({t/16:.3f} s each; alone {sum(f['total'] for f in alone)/8:.3f}); "
      f"fault->reported {stats([f['fault'] for f in allf])}; reported->exit {stats([f['exit'] for f in allf])}", flush=True)

# 5. contexts made while faults recover
def ctx_once():
    t0 = time.monotonic()
    subprocess.run([BIN, "ctx"], capture_output=True, timeout=120)
    return time.monotonic() - t0
plain = [ctx_once() for _ in range(6)]
with cf.ThreadPoolExecutor(2) as ex:
    fut = ex.submit(lambda: [fault_once() for _ in range(6)])
    during = []
    while not fut.done():
        during.append(ctx_once())
print(f"context process alone: {stats(plain)}; while faults run: {stats(during)}", flush=True)
