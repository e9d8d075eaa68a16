# Why the kernels of a real-code store are not runnable (issue #14): every build_failed and
# probe_failed kernel gets one PATTERN, read from the store (the build's first error, the probe's
# outcome, detail and bindings) and from its isolated source (kernel.cu, params.json), so that the
# fixes can be aimed at the large groups and measured per group.
# Usage: python3 scripts/realcode-nonrunnable.py STORE.db [AFTER.db ...]
#   STORE.db   the store to classify (its kernels' dir are relative to the work folder beside it,
#              or to --work W)
#   AFTER.db   stores of later runs over the same kernels: each adds a column, how many of the
#              pattern's kernels are runnable there (a probe ok), and the kernels that changed
# Options: --work W (the work folder holding kernels/), --list (every kernel with its pattern)
import collections, json, os, re, sqlite3, sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
opts = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "1") for a in sys.argv[1:]
            if a.startswith("--"))
if not args:
    sys.exit("usage: realcode-nonrunnable.py [--work=W] [--list] STORE.db [AFTER.db ...]")
db = sqlite3.connect(args[0])
work = opts.get("work") or os.path.dirname(os.path.abspath(args[0]))

def source(d):
    try:
        return open(os.path.join(work, d, "kernel.cu"), errors="replace").read()
    except OSError:
        return ""

DIMS = {"B", "T", "C", "N", "OC", "NH", "V", "P"}

def probe_pattern(name, targs, params, src, outcome, detail):
    ps = params.get("params", [])
    types = " ".join(p.get("type", "") for p in ps)
    if outcome == "timeout":
        return "P9 hangs or runs past the probe timeout at the small sizes"
    if "cudaGraphConditionalHandle" in types or re.search(r"this_grid\(\)|grid_group|\.sync\(\)", src) \
            and re.search(r"this_grid\(\)|grid_group", src):
        return "P7 needs a cooperative (grid-wide sync) or graph launch"
    if "TextureObject" in types:
        return "P6 texture object parameter (the harness passes 0)"
    if len(DIMS & {p["name"] for p in ps if p.get("kind") == "scalar"}) >= 2:
        return "P2 transformer dims (B, T, C, N, OC, NH, V) bound as scale 1: x128 loads misaligned, asserts on T % 4, C-sized shared"
    structs = set(re.findall(r"\b(?:struct|class)\s+(\w+)\s*\{[^}]*\*", src))
    if any(p.get("kind") in ("struct", "other") or
           (p.get("kind") == "pointer" and re.sub(r"\W|const|volatile", "", p.get("elem", "")) in structs)
           or p.get("type", "").count("*") >= 2 and "<" in p.get("type", "") for p in ps):
        return "P5 struct arguments whose pointer members (or objects) the harness leaves null/zero"
    if re.search(r"extern\s+__shared__", src):
        return "P4 dynamic shared memory / tiles sized by the host beyond the harness's threads x 16 bytes, or hard-coded problem sizes"
    ones = len(re.findall(r"(?:<|,)\s*1\b", targs or ""))
    if ones >= 3:
        return "P8 template values left at 1 (tile counts the isolate could not infer)"
    if re.search(r"assert\s*\(\s*(blockDim|BM\s*\*|gridDim)", src) or \
            re.search(r"__launch_bounds__\s*\(\s*(\d+)", src) and \
            int(re.search(r"__launch_bounds__\s*\(\s*(\d+)", src).group(1)) < 256 or \
            re.search(r"__shared__[^;(]*\[[^\]]*[A-Za-z_0-9]\s*\]\s*;", src):
        return "P1 fixed launch assumptions: shared arrays, asserts or launch bounds made for another block (or grid)"
    if ones:
        return "P8 template values left at 1 (tile counts the isolate could not infer)"
    return "P10 other: index arrays whose contents need structure, hard-coded sizes, data asserts"

def build_pattern(cls, err, src):
    if re.search(r"\bcute::|namespace cute\b|cutlass|CUTLASS|\bTensor\b", src):
        return "B1 needs CUTLASS/CuTe, which the repository does not ship"
    if "FIXME" in (err or ""):
        return "B2 exercise placeholders (FIXME) left in the code"
    if cls == "removed_cuda_api":
        return "B3 texture references (removed in CUDA 12)"
    if cls in ("template_functor", "template_value", "template_type", "template") or "must have class type" in (err or ""):
        return "B4 template arguments the isolate could not infer (functors, vector types, tile counts)"
    return "B5 other: %s" % (cls or "?")

def classify(db):
    rows = db.execute("""SELECT k.id, k.name, k.template_args, k.params, k.dir, k.status,
        p.outcome, p.detail, a.error_class, a.first_error
        FROM kernels k LEFT JOIN probes p ON p.kernel_id = k.id
        LEFT JOIN builds b ON b.kernel_id = k.id
        LEFT JOIN build_attempts a ON a.build_id = b.id AND a.attempt = b.attempts
        WHERE k.status IN ('build_failed', 'probe_failed') GROUP BY k.id""").fetchall()
    out = {}
    for kid, name, targs, params, d, status, outcome, detail, cls, err in rows:
        src = source(d)
        if status == "build_failed":
            out[kid] = (name, build_pattern(cls, err, src))
        else:
            out[kid] = (name, probe_pattern(name, targs, json.loads(params or "{}"), src,
                                            outcome, detail))
    return out

pats = classify(db)
later = []
for a in args[1:]:
    d = sqlite3.connect(a)
    later.append(dict(d.execute("SELECT kernel_id, outcome FROM probes").fetchall()))
n = db.execute("SELECT count(*) FROM kernels WHERE status NOT IN ('isolated')").fetchone()[0]
ok = db.execute("SELECT count(DISTINCT kernel_id) FROM probes WHERE outcome = 'ok'").fetchone()[0]
print("%s: %d kernels executed, %d with a probe ok (%.1f%%), %d not runnable"
      % (args[0], n, ok, 100.0 * ok / max(n, 1), len(pats)))
groups = collections.defaultdict(list)
for kid, (name, p) in pats.items():
    groups[p].append((name, kid))
hdr = "%-6s %5s" % ("", "count") + "".join(" %7s" % ("ok@%d" % (i + 1)) for i in range(len(later)))
print(hdr + "  pattern (examples)")
gained = [0] * len(later)
for p in sorted(groups):
    ks = groups[p]
    cols = []
    for i, L in enumerate(later):
        g = sum(L.get(kid) == "ok" for _, kid in ks)
        gained[i] += g
        cols.append(" %7d" % g)
    ex = ", ".join(sorted({nm for nm, _ in ks})[:4])
    key, _, text = p.partition(" ")
    print("%-6s %5d%s  %s (%s)" % (key, len(ks), "".join(cols), text, ex))
for i, g in enumerate(gained):
    print("after %s: %d of these %d now runnable: %d + %d = %d of %d executed (%.1f%%)"
          % (args[i + 1], g, len(pats), ok, g, ok + g, n, 100.0 * (ok + g) / max(n, 1)))
if "list" in opts:
    for kid, (name, p) in sorted(pats.items(), key=lambda x: (x[1][1], x[1][0])):
        print("%s\t%s\t%s\t%s" % (p.split()[0], name, kid[:12],
                                  "\t".join(L.get(kid, "-") for L in later)))
