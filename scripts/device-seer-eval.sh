#!/usr/bin/env bash
# Seer's 1-iteration goal with the session-7 feature kernel, on a lent GPU in one call of a few
# minutes: re-measure ONLY the feature cost (`lscat seer bench --features-only`, feature_ns) of
# the 384 matrices of tests/data/seer/bench-h200.csv (128 SuiteSparse files + 256 generated specs,
# regenerated here from their recorded seeds), write that table with the new feature_ns
# (OUT/bench-new.csv; the kernels' times are the table's), then import + train + eval in double
# and float exactly as README / docs/seer.md do, for the table as it was and the new one, and
# print the Oracle fractions at 1-10000 iterations side by side (summary printed last).
# Usage (from the source root; build/ carried; programs built on the CPU machine):
#   scripts/device-seer-eval.sh OUT_DIR [MATRIX_DIR]
# MATRIX_DIR holds the 128 SuiteSparse .mtx files (default .dev/mat, else build/seer-matrices,
# else ../shared/data/matrices). Resumable: the bench store is SEER_WORK (default OUT_DIR/work);
# when BENCH_S (default 300) runs out, carry that folder back and call again with SEER_WORK=it.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/device-seer-eval.sh OUT_DIR [MATRIX_DIR]}
MAT=${2:-.dev/mat}
BENCH_S=${BENCH_S:-300}
. scripts/device-seer-common.sh # MAT, CSV, PY, W, S, note, t0; seer_features_bench
seer_features_bench "lscat seer feature cost"
# The table with the new feature_ns (matrices not re-measured keep theirs; the count is printed).
"$PY" - "$CSV" "$W/lscat.db" "$OUT/bench-new.csv" <<'PY' >>"$S" 2>&1
import csv, sqlite3, statistics as st, sys
db = sqlite3.connect(sys.argv[2])
new = {n: (ns, ag, rows, nnz) for n, ns, ag, rows, nnz in db.execute(
    "SELECT m.name, f.feature_ns, f.agrees, m.rows, m.nnz FROM seer_feature_costs f "
    "JOIN seer_matrices m ON m.id = f.matrix_id")}
old, out = {}, []
rd = csv.DictReader(open(sys.argv[1]))
for r in rd:
    old[r["matrix"]] = (float(r["feature_ns"]), int(r["rows"]), int(r["nnz"]))
    if r["matrix"] in new:
        r["feature_ns"] = "%.17g" % new[r["matrix"]][0]
    out.append(r)
with open(sys.argv[3], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=rd.fieldnames, lineterminator="\n")
    w.writeheader()
    w.writerows(out)
both = [n for n in old if n in new]
print(f"re-measured {len(both)} of {len(old)} matrices; GPU features disagree with the CPU on "
      f"{sum(1 for n in both if not new[n][1])}; shape differs from the table on "
      f"{sum(1 for n in both if (new[n][2], new[n][3]) != old[n][1:])}")
print("| rows | matrices | feature_ns before: median (min-max) us | now: median (min-max) us |")
print("|---|---|---|---|")
for lo, hi in ((0, 1e5), (1e5, 1e6), (1e6, 1e9), (0, 1e9)):
    ns = [n for n in both if lo <= old[n][1] < hi]
    if ns:
        b = [old[n][0] / 1e3 for n in ns]
        a = [new[n][0] / 1e3 for n in ns]
        print(f"| {'all' if (lo, hi) == (0, 1e9) else f'{lo:.0f}-{hi:.0f}'} | {len(ns)} | "
              f"{st.median(b):.1f} ({min(b):.1f}-{max(b):.1f}) | {st.median(a):.1f} ({min(a):.1f}-{max(a):.1f}) |")
PY
# import + train + eval as docs/seer.md, for the table before and after.
for t in before new; do
    T=$CSV
    [ "$t" = new ] && T=$OUT/bench-new.csv
    E=$OUT/eval-$t
    rm -rf "$E"
    mkdir -p "$E"
    lscat --work "$E/w" seer import "$T" >"$E/import.log" 2>&1 || note "$t: import failed"
    for p in double float; do
        lscat --work "$E/w" seer train --precision "$p" --out "$E/$p" >"$E/train-$p.log" 2>&1 &&
            lscat --work "$E/w" seer eval --out "$E/$p" >"$E/eval-$p.log" 2>&1 ||
            note "$t $p: train/eval failed (see $E)"
    done
done
"$PY" - "$OUT" <<'PY' >>"$S" 2>&1
import re, sys
def rows(path):
    r = {}
    for line in open(path):
        c = [x.strip() for x in line.split("|")]
        if len(c) > 12 and re.fullmatch(r"\d+", c[1]):
            r[int(c[1])] = (c[8], c[11])  # Oracle / selector, gathered / paid
    return r
print("| precision | table | 1 | 10 | 100 | 1000 | 10000 | gathered / paid at 1 |")
print("|---|---|---|---|---|---|---|---|")
for p in ("double", "float"):
    for t in ("before", "new"):
        try:
            r = rows(f"{sys.argv[1]}/eval-{t}/{p}/eval.md")
        except OSError:
            print(f"| {p} | {t} | (no eval) |")
            continue
        its = [1, 10, 100, 1000, 10000]
        print(f"| {p} | {t} | " + " | ".join(r.get(i, ("-",))[0] for i in its) + f" | {r.get(1, ('', '-'))[1]} |")
PY
note "goal: Oracle / selector >= 0.909 (within 10%); total $(( $(date +%s) - t0 )) s"
tail -c 6000 "$S"
