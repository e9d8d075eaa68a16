#!/usr/bin/env python3
# Issue #14 (session 11): would compute-sanitizer find a faulting kernel's binding and block
# faster than GPU faults do? docs/roadmap.md "Next (end of session 10)": a fault stops every
# context on the GPU for 0.11-0.15 s and faults are handled one after another, while under
# `compute-sanitizer --tool memcheck --destroy-on-device-error kernel` an out-of-bounds access is
# caught by the instrumentation and the context lives on. This measures the search, not a
# built feature: each kernel's tries, in the order session 10's probe made them (its store's
# probes.bindings: binding, block retry shape), each as one memcheck process on the try's small
# configurations only, until the first try that runs clean (no report, every line ok). Kernels
# go to N workers at once.
#
# Usage: device-memcheck-search.py WORK BEFORE.db N OUT.json [--all]
#   WORK       an execute work folder whose kernels are built (lscat execute --no-probe)
#   BEFORE.db  session 10's store of the same kernels (their plain probe's tries and verdicts)
#   --all      run every stored try (no stop at the first clean one): each try's plain outcome
#              against memcheck's
# Prints, last: kernels/s, memcheck processes and their wall, and the verdicts compared.
# The harnesses are untrusted: each runs as nobody (when root), in its own session killed at
# MCS_TIMEOUT seconds (default 10, the probe's small-size deadline), its output
# capped (16 MiB files, 64 KiB read back).
import concurrent.futures as cf, json, os, re, resource, sqlite3, subprocess, sys, tempfile, time

SAN = os.environ.get("COMPUTE_SANITIZER", "/usr/local/cuda/bin/compute-sanitizer")
LIMIT = float(os.environ.get("MCS_TIMEOUT", "10"))  # s per process (a harness's 1024x1 deadline)
SMALL = re.compile(r"\(at (1024x1|64x64),")


def small_lines(is2d, block):
    if block:
        bx, by, bz = (int(v) for v in block.split("x"))
    else:
        bx, by, bz = (16, 16, 1) if is2d else (256, 1, 1)
    if is2d:
        return ["64 64 %d %d %d" % (bx, by, bz)]
    if block:
        return ["1024 1 %d %d %d" % (bx, by, bz), "64 64 %d %d %d" % (bx, by, bz)]
    return ["1024 1 256 1 1", "64 64 16 16 1"]


def plain_small(t):
    """What the plain probe saw at the small sizes: fault, ok, or other (hang, crash...)."""
    o, d = t.get("outcome"), t.get("detail") or ""
    if o in ("illegal_address", "launch_failure", "cuda_error"):
        return "fault" if SMALL.search(d) or "at 2024" not in d else "ok"
    if o in ("ok", "too_slow"):
        return "ok"
    return o or "other"


def drop():
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 20, 16 << 20))
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)


def run_try(harness, binding, lines, tmp):
    res = os.path.join(tmp, "r.jsonl")
    log = os.path.join(tmp, "mc.log")
    for f in (res, log):
        if os.path.exists(f):
            os.unlink(f)
    cmd = [SAN, "--tool", "memcheck", "--destroy-on-device-error", "kernel", "--error-exitcode",
           "99", "--print-limit", "4", "--show-backtrace", "no", "--report-api-errors", "no",
           "--log-file", log, harness, "--probe", "--device", "0", "--results", res]
    if binding != "area":
        cmd += ["--bind", binding]
    t0 = time.time()
    # its own session, killed whole at the limit: killing compute-sanitizer alone left the
    # harness holding the GPU (7 compute apps after session 11's first pass)
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, cwd=tmp, text=True, start_new_session=True,
                         preexec_fn=drop)
    try:
        p.communicate("\n".join(lines) + "\n", timeout=LIMIT)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        p.wait()
        rc = "timeout"
    wall = time.time() - t0
    text = open(log, errors="replace").read(65536) if os.path.exists(log) else ""
    m = re.search(r"ERROR SUMMARY: (\d+) error", text)
    errors = int(m.group(1)) if m else None
    statuses = []
    if os.path.exists(res):
        for ln in open(res, errors="replace").read(65536).splitlines():
            try:
                j = json.loads(ln)
            except ValueError:
                continue
            if "status" in j:
                statuses.append(j["status"])
    first = next((ln.strip("= ").strip() for ln in text.splitlines()
                  if "Invalid" in ln or "Error" in ln and "SUMMARY" not in ln), "")
    clean = rc == 0 and errors == 0 and len(statuses) == len(lines) and \
        all(s == "ok" for s in statuses)
    return {"rc": rc, "wall": round(wall, 3), "errors": errors, "statuses": statuses,
            "clean": clean, "report": first[:160]}


def kernel(job):
    kid, harness, is2d, tries, run_all = job
    out = []
    with tempfile.TemporaryDirectory(prefix="mcs.") as tmp:
        os.chmod(tmp, 0o777)
        for t in tries:
            r = run_try(harness, t.get("binding", "area"), small_lines(is2d, t.get("block")), tmp)
            r.update(binding=t.get("binding"), block=t.get("block"), plain=plain_small(t))
            out.append(r)
            if r["clean"] and not run_all:
                break
    return kid, out


def main():
    a = [x for x in sys.argv[1:] if x != "--all"]
    run_all = "--all" in sys.argv
    work, before, n, outp = a[0], a[1], int(a[2]), a[3]
    w = sqlite3.connect(os.path.join(work, "lscat.db"))
    b = sqlite3.connect(before)
    jobs = []
    for kid, path, params in w.execute(
            """SELECT k.id, bd.binary_path, k.params FROM kernels k JOIN builds bd ON
               bd.kernel_id = k.id AND bd.status = 'ok' ORDER BY k.id"""):
        row = b.execute("SELECT bindings, outcome, binding, detail, probe_s FROM probes WHERE "
                        "kernel_id = ?", (kid,)).fetchone()
        if not row or not row[0]:
            continue
        tries = json.loads(row[0])
        if not any(plain_small(t) == "fault" for t in tries):
            continue  # the search only replaces tries after a fault at the small sizes
        harness = path if path.startswith("/") else os.path.join(work, path)
        jobs.append((kid, harness, bool(json.loads(params).get("is2d")), tries, run_all))
    t0 = time.time()
    res = {}
    with cf.ThreadPoolExecutor(n) as ex:
        for kid, out in ex.map(kernel, jobs):
            res[kid] = out
    wall = time.time() - t0
    json.dump(res, open(outp, "w"))
    procs = sum(len(v) for v in res.values())
    pw = sum(r["wall"] for v in res.values() for r in v)
    walls = sorted(r["wall"] for v in res.values() for r in v if r["rc"] != "timeout")
    print("processes that ended by themselves: %d, median %.2f s, mean %.2f s; at the limit: %d" % (
        len(walls), walls[len(walls) // 2] if walls else 0, sum(walls) / len(walls) if walls else 0,
        procs - len(walls)))
    print("memcheck search: %d kernels, %d processes, %.1f s wall with %d workers: %.2f kernels/s, "
          "%.2f s per process (process-seconds %.0f)" % (len(res), procs, wall, n,
                                                        len(res) / wall if wall else 0,
                                                        pw / procs if procs else 0, pw))
    agree = {}
    for v in res.values():
        for r in v:
            key = "plain %s / memcheck %s" % (r["plain"], "clean" if r["clean"] else
                                              "timeout" if r["rc"] == "timeout" else
                                              "report" if r["errors"] else "not ok (%s)" % r["rc"])
            agree[key] = agree.get(key, 0) + 1
    for k in sorted(agree):
        print("  tries %-40s %d" % (k, agree[k]))
    same = differ = none = 0
    for kid, v in res.items():
        tries = json.loads(b.execute("SELECT bindings FROM probes WHERE kernel_id = ?",
                                     (kid,)).fetchone()[0])
        pfirst = next(((t.get("binding"), t.get("block")) for t in tries
                       if plain_small(t) == "ok"), None)
        mfirst = next(((r["binding"], r["block"]) for r in v if r["clean"]), None)
        if pfirst is None and mfirst is None:
            none += 1
        elif pfirst == mfirst:
            same += 1
        else:
            differ += 1
            if differ <= 12:
                print("  differs %s: plain %s, memcheck %s" % (kid[:12], pfirst, mfirst))
    print("first try clean at the small sizes: same %d, different %d, neither %d" % (
        same, differ, none))


if __name__ == "__main__":
    main()
