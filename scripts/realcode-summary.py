# Per-repository summary of a real-code run (scripts/realcode-gpu.sh): occurrences, distinct kernels,
# builds, probes, failure classes, repairs, tune rows. Usage: python3 scripts/realcode-summary.py STORE.db
import sqlite3, sys, os, json, collections
db = sqlite3.connect(sys.argv[1])
q = lambda sql, *a: db.execute(sql, a).fetchall()
print("per repository: occurrences, distinct kernels, built first try, built after repair, build failed, probed, runnable (probe ok)")
rows = q("""
WITH ks AS (SELECT DISTINCT s.root AS root, o.kernel_id AS kid FROM kernel_occurrences o JOIN sources s ON s.id = o.source_id)
SELECT ks.root,
  (SELECT count(*) FROM kernel_occurrences o JOIN sources s ON s.id=o.source_id WHERE s.root = ks.root),
  count(DISTINCT ks.kid),
  sum(b.status='ok' AND b.attempts=1), sum(b.status='ok' AND b.attempts>1), sum(b.status='failed'),
  sum(p.outcome IS NOT NULL), sum(p.outcome='ok')
FROM ks JOIN kernels k ON k.id = ks.kid LEFT JOIN builds b ON b.kernel_id = ks.kid LEFT JOIN probes p ON p.kernel_id = ks.kid
GROUP BY ks.root ORDER BY ks.root""")
tot = [0]*7
for r in rows:
    print("  %-58s %5d %5d %5d %5d %5d %5d %5d" % ((os.path.basename(r[0]),) + tuple(x or 0 for x in r[1:])))
    tot = [a + (b or 0) for a, b in zip(tot, r[1:])]
print("  %-58s %5d %5d %5d %5d %5d %5d %5d" % (("total",) + tuple(tot)))
n = q("SELECT count(*) FROM kernels")[0][0]
print("distinct kernels %d; status: %s" % (n, dict(q("SELECT status, count(*) FROM kernels GROUP BY 1"))))
print("probe outcomes:", dict(q("SELECT outcome, count(*) FROM probes GROUP BY 1")))
print("build failure classes (last attempt):", dict(q("""SELECT coalesce(a.error_class,'?'), count(*) FROM builds b JOIN build_attempts a ON a.build_id=b.id AND a.attempt=b.attempts WHERE b.status='failed' GROUP BY 1 ORDER BY 2 DESC""")))
fixes = collections.Counter()
for (f,) in q("SELECT fixes FROM builds WHERE status='ok' AND attempts>1"):
    for x in json.loads(f or "[]"):
        fixes[x if isinstance(x, str) else json.dumps(x)[:60]] += 1
print("fixes on kernels that built after repair:", dict(fixes.most_common(12)))
print("isolate failures:", dict(q("SELECT class, count(*) FROM failures WHERE stage='isolate' GROUP BY 1 ORDER BY 2 DESC")))
print("tune:", dict(q("SELECT status, count(*) FROM measurements WHERE superseded=0 GROUP BY 1")), "kernels measured:", q("SELECT count(DISTINCT kernel_id) FROM measurements WHERE status='ok'")[0][0])
