#!/usr/bin/env python3
"""LS-CAT's own harness beside lscat's timing core, on the same kernels and configurations.

  tune_lscat.py prepare LSCAT_REPO OUT_DIR [N]   (where nvcc exists; LSCAT_REPO from `fetch`)
  tune_lscat.py run OUT_DIR                      (on the GPU machine)

prepare picks N kernels (every 97th folder of data/kernels, deterministic, status 'runs' in
kernel_list.csv), copies each folder to OUT_DIR/<repo>_<n>/ (never into lscat's repository), and
builds two programs: `orig` from LS-CAT's main.cu unchanged (1,000 launches between two host
clock reads, no synchronisation) and `ours`, the same main.cu with that timing block replaced
by a call to lscat's timing core (tune/timing.cu). run executes both (timeout 30 s each) and
reports wall time per configuration and the agreement of the times, configuration by
configuration (LS-CAT's time/1000 over our median)."""
import csv, io, os, re, shutil, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OURS_PRELUDE = '''#include "tune/timing.h"
template <class F> static int lscat_tramp(void *c, timing_stream_t) {
    (*(F *)c)(); return (int)cudaGetLastError(); }
'''

def transform(src):
    """Replace LS-CAT's timing block with a call to the timing core; None if not recognised."""
    m = re.search(r"auto start = steady_clock::now\(\);\s*for \(int loop_counter = 0; "
                  r"loop_counter < 1000; loop_counter\+\+\) \{\s*(.*?;)\s*\}\s*auto end = "
                  r"steady_clock::now\(\);.*?endl;", src, re.S)
    if not m:
        return None
    call = m.group(1)
    block = ('{ auto lscat_fn = [&]() { %s };\n'
             'struct timing_stats lscat_st; struct timing_options lscat_o = TIMING_OPTIONS_INIT;\n'
             'int lscat_rc = timing_measure_launch(&lscat_st, &lscat_o, '
             'lscat_tramp<decltype(lscat_fn)>, &lscat_fn, NULL);\n'
             'cout << "{\\"bx\\":" << BLOCKX << ",\\"by\\":" << BLOCKY << ",\\"w\\":" << XSIZE '
             '<< ",\\"rc\\":" << lscat_rc << ",\\"median_ns\\":" << lscat_st.median_ns << "}" '
             '<< endl;\nif (lscat_rc) return 4; }' % call)
    return OURS_PRELUDE + src[:m.start()] + block + src[m.end():]

def prepare(repo, out, n):
    listing = subprocess.run(["git", "-C", repo, "show", "HEAD:data/kernel_list.csv"],
                             capture_output=True, text=True, check=True).stdout
    runs = [(r["Repo"], r["underdirectory"]) for r in csv.DictReader(io.StringIO(listing))
            if r["status"] == "runs"]
    os.makedirs(out, exist_ok=True)
    chosen = []
    for repo_n, sub in runs[::97]:
        if len(chosen) >= n:
            break
        d = os.path.join(out, f"{repo_n}_{sub}")
        os.makedirs(d, exist_ok=True)
        files = subprocess.run(["git", "-C", repo, "ls-tree", "--name-only", "HEAD",
                                f"data/kernels/{repo_n}/{sub}/"], capture_output=True,
                               text=True).stdout.split()
        for f in files:
            data = subprocess.run(["git", "-C", repo, "show", f"HEAD:{f}"],
                                  capture_output=True).stdout
            open(os.path.join(d, os.path.basename(f)), "wb").write(data)
        src = open(os.path.join(d, "main.cu")).read()
        ours = transform(src)
        if ours is None:
            continue
        open(os.path.join(d, "ours.cu"), "w").write(ours)
        nv = ["nvcc", "-O2", "-arch=sm_90", "-w"]
        a = subprocess.run(nv + ["main.cu", "-o", "orig"], cwd=d, capture_output=True)
        b = subprocess.run(nv + ["-I", ROOT, "ours.cu", os.path.join(ROOT, "build/tune/timing.cu.o"),
                                 os.path.join(ROOT, "build/tune/stats.cu-host.o"), "-o", "ours"],
                           cwd=d, capture_output=True)
        if a.returncode or b.returncode:
            print(f"skip {d}: build failed: {(a.stderr or b.stderr)[:200]!r}")
            continue
        chosen.append(d)
    print(f"prepared {len(chosen)} kernels in {out}")

def run_one(exe, d):
    t0 = time.time()
    try:
        p = subprocess.run([exe, "7"], cwd=d, capture_output=True, text=True, timeout=30)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
    return out, rc, time.time() - t0

def run(out):
    theirs_wall = ours_wall = 0.0
    nt = no = 0
    ratios_all = []
    for d in sorted(os.listdir(out)):
        path = os.path.join(out, d)
        if not os.path.exists(os.path.join(path, "ours")):
            continue
        o_out, o_rc, o_wall = run_one("./orig", path)
        u_out, u_rc, u_wall = run_one("./ours", path)
        theirs = {}
        for m in re.finditer(r"\[([\d.e+-]+),\((\d+),(\d+)\),\((\d+),(\d+)\)\]", o_out):
            theirs[(int(m.group(2)), int(m.group(3)), int(m.group(4)))] = float(m.group(1))
        ours = {}
        for m in re.finditer(r'\{"bx":(\d+),"by":(\d+),"w":(\d+),"rc":(\d+),"median_ns":([\d.e+-]+)\}', u_out):
            if m.group(4) == "0":
                ours[(int(m.group(1)), int(m.group(2)), int(m.group(3)))] = float(m.group(5))
        ratios = [theirs[c] * 1e3 / 1000 / ours[c] for c in ours if c in theirs and ours[c] > 0]
        ratios_all += ratios
        theirs_wall += o_wall; ours_wall += u_wall
        nt += len(theirs); no += len(ours)
        med = statistics.median(ratios) if ratios else float("nan")
        print(f"{d}: LS-CAT {len(theirs)} configs in {o_wall:.2f} s (exit {o_rc}), lscat "
              f"{len(ours)} ok in {u_wall:.2f} s (exit {u_rc}); LS-CAT/lscat time ratio median "
              f"{med:.3f} over {len(ratios)}")
    if ratios_all:
        q = statistics.quantiles(ratios_all, n=10, method="inclusive")
        print(f"overall: LS-CAT {theirs_wall / max(nt, 1) * 1e3:.2f} ms wall per configuration, "
              f"lscat {ours_wall / max(no, 1) * 1e3:.2f} ms; time ratio LS-CAT/lscat median "
              f"{statistics.median(ratios_all):.3f}, p10 {q[0]:.3f}, p90 {q[8]:.3f} over "
              f"{len(ratios_all)} configurations")

if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 6)
    else:
        run(sys.argv[2])
