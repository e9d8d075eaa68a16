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
configuration (LS-CAT's time/1000 over our median). `ours` launches on the timing core's
stream (LS-CAT's `<<<grid, block>>>` gets `, 0, stream`), so its samples go through CUDA graphs;
it runs a second time with LSCAT_TIMING_GRAPH=0 (launches one by one) for comparison."""
import csv, io, os, re, shutil, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OURS_PRELUDE = '''#include "tune/timing.h"
template <class F> static int lscat_tramp(void *c, timing_stream_t s) {
    (*(F *)c)((cudaStream_t)s); return (int)cudaGetLastError(); }
'''

def transform(src):
    """Replace LS-CAT's timing block with a call to the timing core; None if not recognised."""
    m = re.search(r"auto start = steady_clock::now\(\);\s*for \(int loop_counter = 0; "
                  r"loop_counter < 1000; loop_counter\+\+\) \{\s*(.*?;)\s*\}\s*auto end = "
                  r"steady_clock::now\(\);.*?endl;", src, re.S)
    if not m:
        return None
    call = m.group(1)
    # launch on the stream the timing core gives (it may capture the launches into a graph)
    call = re.sub(r"<<<\s*([^,<>]+?)\s*,\s*([^,<>]+?)\s*>>>", r"<<<\1, \2, 0, lscat_s>>>", call)
    block = ('{ auto lscat_fn = [&](cudaStream_t lscat_s) { (void)lscat_s; %s };\n'
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

def run_one(exe, d, env=None):
    t0 = time.time()
    try:
        p = subprocess.run([exe, "7"], cwd=d, capture_output=True, text=True, timeout=30,
                           env=env)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
    return out, rc, time.time() - t0

def parse_ours(text):
    ours = {}
    for m in re.finditer(r'\{"bx":(\d+),"by":(\d+),"w":(\d+),"rc":(\d+),"median_ns":([\d.e+-]+)\}', text):
        if m.group(4) == "0":
            ours[(int(m.group(1)), int(m.group(2)), int(m.group(3)))] = float(m.group(5))
    return ours

def run(out):
    """LS-CAT's harness, then ours with graphs (the default) and launches one by one
    (LSCAT_TIMING_GRAPH=0), each kernel's three side by side."""
    wall = {"lscat": 0.0, "ours": 0.0, "ours1": 0.0}
    count = {"lscat": 0, "ours": 0, "ours1": 0}
    ratios_all, ratios1_all, graph_vs_one = [], [], []
    env1 = dict(os.environ, LSCAT_TIMING_GRAPH="0")
    for d in sorted(os.listdir(out)):
        path = os.path.join(out, d)
        if not os.path.exists(os.path.join(path, "ours")):
            continue
        o_out, o_rc, o_wall = run_one("./orig", path)
        u_out, u_rc, u_wall = run_one("./ours", path)
        v_out, v_rc, v_wall = run_one("./ours", path, env1)
        theirs = {}
        for m in re.finditer(r"\[([\d.e+-]+),\((\d+),(\d+)\),\((\d+),(\d+)\)\]", o_out):
            theirs[(int(m.group(2)), int(m.group(3)), int(m.group(4)))] = float(m.group(1))
        ours, ours1 = parse_ours(u_out), parse_ours(v_out)
        ratios = [theirs[c] * 1e3 / 1000 / ours[c] for c in ours if c in theirs and ours[c] > 0]
        ratios1 = [theirs[c] * 1e3 / 1000 / ours1[c] for c in ours1 if c in theirs and ours1[c] > 0]
        gv = [ours[c] / ours1[c] for c in ours if c in ours1 and ours1[c] > 0]
        ratios_all += ratios
        ratios1_all += ratios1
        graph_vs_one += gv
        for k, w, n in (("lscat", o_wall, theirs), ("ours", u_wall, ours), ("ours1", v_wall, ours1)):
            wall[k] += w
            count[k] += len(n)
        med = lambda v: statistics.median(v) if v else float("nan")
        print(f"{d}: LS-CAT {len(theirs)} configs in {o_wall:.2f} s (exit {o_rc}); lscat graphs "
              f"{len(ours)} ok in {u_wall:.2f} s (exit {u_rc}), one by one {len(ours1)} ok in "
              f"{v_wall:.2f} s (exit {v_rc}); LS-CAT/lscat time ratio median {med(ratios):.3f} "
              f"(one by one {med(ratios1):.3f}); graph/one-by-one {med(gv):.3f}")
    per = {k: wall[k] / max(count[k], 1) * 1e3 for k in wall}
    for name, r in (("graphs", ratios_all), ("one by one", ratios1_all)):
        if len(r) >= 2:
            q = statistics.quantiles(r, n=10, method="inclusive")
            print(f"overall ({name}): time ratio LS-CAT/lscat median {statistics.median(r):.3f}, "
                  f"p10 {q[0]:.3f}, p90 {q[8]:.3f} over {len(r)} configurations")
    if len(graph_vs_one) >= 2:
        q = statistics.quantiles(graph_vs_one, n=10, method="inclusive")
        print(f"overall: lscat graph/one-by-one median {statistics.median(graph_vs_one):.3f}, "
              f"p10 {q[0]:.3f}, p90 {q[8]:.3f}")
    print(f"overall: wall per configuration LS-CAT {per['lscat']:.2f} ms, lscat graphs "
          f"{per['ours']:.2f} ms, lscat one by one {per['ours1']:.2f} ms")

if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 6)
    else:
        run(sys.argv[2])
