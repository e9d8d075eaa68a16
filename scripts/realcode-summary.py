# The tables of a real-code run (scripts/realcode-gpu.sh) for issues #14 and #21, from its store:
# per repository __global__ lines, kernels found, built, probed, runnable; failure classes; probe
# throughput; tune configurations per second and the share lost to faults and timeouts; the
# output check per kernel, best blocks that change once mismatches are excluded, the check's cost.
# Usage: python3 scripts/realcode-summary.py STORE.db [RUNS.tsv] [GLOBALS.tsv]
#   RUNS.tsv (realcode-gpu.sh): phase, start, wall seconds, GPUs, exit codes, one line per call
#   GLOBALS.tsv (realcode-prepare.sh): repository folder, lines with `__global__`
import collections, datetime, json, os, re, sqlite3, statistics, sys

db = sqlite3.connect(sys.argv[1])
q = lambda sql, *a: db.execute(sql, a).fetchall()
cols = lambda t: {r[1] for r in q("PRAGMA table_info(%s)" % t)}
runs = collections.defaultdict(float)
if len(sys.argv) > 2 and os.path.exists(sys.argv[2]):
    for line in open(sys.argv[2]):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 3:
            runs[f[0]] += float(f[2])
globs = {}
if len(sys.argv) > 3 and os.path.exists(sys.argv[3]):
    for line in open(sys.argv[3]):
        name, n = line.split("\t")
        globs[name] = int(n)
pc = lambda a, b: "%.1f%%" % (100.0 * a / b) if b else "-"

print("== #14: per repository ==")
print("%-44s %6s %6s %6s %6s %6s %6s %6s %6s" % ("repository", "global", "found", "distnc",
      "built1", "repair", "failed", "probed", "runnbl"))
rows = q("""
WITH ks AS (SELECT DISTINCT s.root AS root, o.kernel_id AS kid FROM kernel_occurrences o
            JOIN sources s ON s.id = o.source_id)
SELECT ks.root,
  (SELECT count(*) FROM kernel_occurrences o JOIN sources s ON s.id = o.source_id
   WHERE s.root = ks.root),
  count(DISTINCT ks.kid),
  sum(b.status = 'ok' AND b.attempts = 1), sum(b.status = 'ok' AND b.attempts > 1),
  sum(b.status = 'failed'), sum(p.outcome IS NOT NULL), sum(p.outcome = 'ok')
FROM ks LEFT JOIN builds b ON b.kernel_id = ks.kid LEFT JOIN probes p ON p.kernel_id = ks.kid
GROUP BY ks.root ORDER BY ks.root""")
seen = set()
tot = [0] * 8
for r in rows:
    name = os.path.basename(r[0].rstrip("/"))
    seen.add(name)
    v = [globs.get(name, 0)] + [x or 0 for x in r[1:]]
    print("%-44.44s %6d %6d %6d %6d %6d %6d %6d %6d" % ((name,) + tuple(v)))
    tot = [a + b for a, b in zip(tot, v)]
for name in sorted(set(globs) - seen):
    print("%-44.44s %6d %6s (no kernel found)" % (name, globs[name], 0))
    tot[0] += globs[name]
print("%-44s %6d %6d %6d %6d %6d %6d %6d %6d" % (("sum over repositories",) + tuple(tot)))
n = q("SELECT count(*) FROM kernels")[0][0]
occ = q("SELECT count(*) FROM kernel_occurrences")[0][0]
built1 = q("SELECT count(DISTINCT kernel_id) FROM builds WHERE status='ok' AND attempts=1")[0][0]
builtr = q("SELECT count(DISTINCT kernel_id) FROM builds WHERE status='ok' AND attempts>1")[0][0]
probed = q("SELECT count(DISTINCT kernel_id) FROM probes")[0][0]
runnable = q("SELECT count(DISTINCT kernel_id) FROM probes WHERE outcome='ok'")[0][0]
print("found %d occurrences against %d __global__ lines (%s); %d distinct kernels; built %d first "
      "try + %d after repair; probed %d; runnable %d = %s of distinct, %s of probed"
      % (occ, tot[0], pc(occ, tot[0]), n, built1, builtr, probed, runnable, pc(runnable, n),
         pc(runnable, probed)))
print("kernel status:", dict(q("SELECT status, count(*) FROM kernels GROUP BY 1 ORDER BY 2 DESC")))

print("== #14: failure classes ==")
print("isolate failures (rows):", dict(q("SELECT class, count(*) FROM failures WHERE "
      "stage='isolate' GROUP BY 1 ORDER BY 2 DESC")))
hdr = collections.Counter()
for (msg,) in q("SELECT message FROM failures WHERE stage='isolate' AND class='missing_header'"):
    m = re.search(r"'([^']+)' file not found", msg or "") or re.search(r"header ([^ ,:;]+)", msg or "")
    hdr[m.group(1) if m else (msg or "?")[:40]] += 1
print("missing headers (failure rows):", dict(hdr.most_common(15)))
print("build failure classes (last attempt):", dict(q("""SELECT coalesce(a.error_class, '?'),
      count(*) FROM builds b JOIN build_attempts a ON a.build_id = b.id AND a.attempt = b.attempts
      WHERE b.status = 'failed' GROUP BY 1 ORDER BY 2 DESC""")))
print("probe outcomes:", dict(q("SELECT outcome, count(*) FROM probes GROUP BY 1 ORDER BY 2 DESC")))
fixes = collections.Counter()
for (f,) in q("SELECT fixes FROM builds WHERE status='ok' AND attempts>1"):
    for x in json.loads(f or "[]"):
        fixes[x if isinstance(x, str) else json.dumps(x)[:60]] += 1
print("repairs on kernels that built after repair:", dict(fixes.most_common(12)))

def ts(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").timestamp()


print("== #14: throughput ==")
ps = [r[0] for r in q("SELECT probe_s FROM probes WHERE probe_s IS NOT NULL")]
# Each execute run from the store itself (a call continuing an earlier store has only its own
# runs in realcode-runs.tsv, so "all calls" once divided every probe by the last call's wall):
# its wall and its own counts. A run killed before it ended has no ended_at: its last probe.
ex_wall = ex_probed = 0
for rid, st, en, c in q("SELECT id, started_at, ended_at, counts FROM stage_runs "
                        "WHERE stage='execute' ORDER BY id"):
    en = en or q("SELECT max(probed_at) FROM probes WHERE run_id=?", rid)[0][0]
    c = json.loads(c or "{}")
    if not en or not c.get("probed"):
        continue
    w = ts(en) - ts(st)
    ex_wall, ex_probed = ex_wall + w, ex_probed + c["probed"]
    print("execute run %d: %.0f s, %d probed = %.2f kernels/s, %d built; runner ended after %d "
          "of %d runs, spare ready %d; too_slow %d"
          % (rid, w, c["probed"], c["probed"] / max(w, 1), c.get("built_first_try", 0) +
             c.get("built_after_repair", 0), c.get("runner_ended", 0),
             c.get("runner_probe_runs", 0), c.get("runner_spare_ready", 0), c.get("too_slow", 0)))
if ex_wall > runs.get("execute", 0):
    runs["execute"], probed = ex_wall, ex_probed
if runs.get("execute"):
    print("execute wall %.0f s (all calls): %d probes = %.2f kernels/s probed, %d builds = %.2f/s"
          % (runs["execute"], probed, probed / runs["execute"],
             q("SELECT count(*) FROM builds")[0][0],
             q("SELECT count(*) FROM builds")[0][0] / runs["execute"]))
if ps:
    print("probe time per kernel: mean %.2f s, median %.2f s, max %.1f s"
          % (statistics.mean(ps), statistics.median(ps), max(ps)))
mcols = cols("measurements")
meas = q("SELECT count(*) FROM measurements WHERE superseded=0")[0][0]
print("tune rows by status:", dict(q("SELECT status, count(*) FROM measurements WHERE "
      "superseded=0 GROUP BY 1 ORDER BY 2 DESC")),
      "kernels measured:", q("SELECT count(DISTINCT kernel_id) FROM measurements WHERE "
                             "superseded=0 AND status='ok'")[0][0],
      "given up:", q("SELECT count(*) FROM tune_kernels WHERE status='given_up'")[0][0])



# The tune runs' wall from the store itself (a call continuing an earlier store has only its
# own runs in realcode-runs.tsv): start to end, or to the run's last row when it was killed.
store_tune = 0.0
for rid, st, en in q("SELECT id, started_at, ended_at FROM stage_runs WHERE stage='tune'"):
    last = en or q("SELECT max(measured_at) FROM measurements WHERE run_id=?", rid)[0][0]
    if last:
        store_tune += ts(last) - ts(st)
if store_tune > runs.get("tune", 0):
    runs["tune"] = store_tune
if runs.get("tune"):
    print("tune wall %.0f s (all calls): %d configurations = %.2f configurations/s"
          % (runs["tune"], meas, meas / runs["tune"]))


# Wall time per row: the gap since the previous row of the same run and GPU (1 s resolution);
# the rows that ended in a fault or timeout carry what was lost to them.
lost = collections.Counter()
prev = {}
for rid, gpu, st, at in q("SELECT run_id, gpu_id, status, measured_at FROM measurements "
                          "WHERE superseded=0 ORDER BY run_id, gpu_id, measured_at, id"):
    t = ts(at)
    key = (rid, gpu)
    if key in prev:
        lost[st] += t - prev[key]
    prev[key] = t
span = sum(lost.values())
if span:
    print("tune wall between rows %.0f s: %s" % (span, ", ".join(
        "%s %.0f s (%s)" % (k, v, pc(v, span)) for k, v in lost.most_common())))

print("== #21: output check ==")
if "output_check" not in mcols:
    print("(this store has no output check: lscat before schema v6)")
    sys.exit(0)
print("ok rows by check:", dict(q("SELECT output_check, count(*) FROM measurements WHERE "
      "superseded=0 AND status='ok' GROUP BY 1 ORDER BY 2 DESC")))
per = q("""SELECT kernel_id, count(*), sum(output_check='match'), sum(output_check='mismatch'),
           sum(output_check='nondeterministic'), sum(output_check='not_checked')
           FROM measurements WHERE superseded=0 AND status='ok' GROUP BY kernel_id""")
if per:
    share = lambda i: [r[i] / r[1] for r in per]
    for i, name in ((2, "match"), (3, "mismatch"), (4, "nondeterministic"), (5, "not_checked")):
        s = share(i)
        print("  %-16s per-kernel share: mean %5.1f%%, median %5.1f%%; kernels with any: %d, "
              "with all: %d" % (name, 100 * statistics.mean(s), 100 * statistics.median(s),
                                sum(x > 0 for x in s), sum(x == 1 for x in s)))
    print("  %d kernels with ok rows" % len(per))
    why = q("SELECT coalesce(output_check_why, '?'), count(*) FROM measurements WHERE superseded=0 "
            "AND status='ok' AND output_check='not_checked' GROUP BY 1 ORDER BY 2 DESC LIMIT 6")
    if why:
        print("  not_checked, why:", dict((w[:60], c) for w, c in why))
ix = "k.indexing" if "indexing" in cols("kernels") else "NULL"
print("  mismatch rows by indexing and shape:", dict(
    ("%s %s" % r[:2], r[2]) for r in q("""SELECT coalesce(%s, '?'),
    CASE WHEN m.block_y > 1 THEN '2D shape' ELSE '1D shape' END, count(*) FROM measurements m
    JOIN kernels k ON k.id = m.kernel_id WHERE m.superseded=0 AND m.status='ok' AND
    m.output_check='mismatch' GROUP BY 1, 2 ORDER BY 3 DESC""" % ix)))
best = collections.defaultdict(dict)
for g, k, w, h, bx, by, bz, chk, ns in q("""SELECT gpu_id, kernel_id, width, height, block_x,
        block_y, block_z, output_check, median_ns FROM measurements WHERE superseded=0 AND
        status='ok' AND median_ns > 0"""):
    c = best[(g, k, w, h)]
    if "all" not in c or ns < c["all"][0]:
        c["all"] = (ns, (bx, by, bz), chk)
    if chk == "match" and ("match" not in c or ns < c["match"][0]):
        c["match"] = (ns, (bx, by, bz))
cases = [c for c in best.values() if "all" in c]
changed = [c for c in cases if "match" in c and c["match"][1] != c["all"][1]]
nomatch = [c for c in cases if "match" not in c]
print("best blocks (kernel x size): %d cases; %d change once mismatches are excluded (%s); %d "
      "have no match row at all; the all-rows best was a mismatch in %d"
      % (len(cases), len(changed), pc(len(changed), len(cases)), len(nomatch),
         sum(c["all"][2] == "mismatch" for c in cases)))
if changed:
    r = sorted(c["match"][0] / c["all"][0] for c in changed)
    print("  in those, best match time / best time of all rows: median %.2f, max %.1f"
          % (statistics.median(r), r[-1]))
check_s = 0.0
for (c,) in q("SELECT counts FROM stage_runs WHERE stage='tune' AND counts IS NOT NULL"):
    try:
        check_s += json.loads(c).get("check_s", 0)
    except ValueError:
        pass
check_rows = (q("SELECT sum(check_ns) FROM measurements WHERE superseded=0")[0][0] or 0) / 1e9
print("check cost: %.1f s (tune runs' check_s; %.1f s summed over rows) against %.0f s of tune "
      "wall = %s" % (check_s, check_rows, runs.get("tune", 0),
                     pc(check_s or check_rows, runs.get("tune", 0))))
