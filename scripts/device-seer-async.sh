#!/usr/bin/env bash
# Seer's 1-iteration goal with asynchronous gathering (seer_gather_async(), docs/seer.md
# "Session 8"), on a lent GPU in one call of about 4-6 minutes: `lscat seer bench
# --features-only` re-measures, for the 384 matrices of tests/data/seer/bench-h200.csv (128
# SuiteSparse files + 256 generated specs regenerated from their recorded seeds), the
# synchronous feature cost timed alone (feature_ns: one launch + stream synchronisation) and the
# exposed costs in defined caller flows, per precision: async (the CSR uploaded from the host,
# gathered right after row_ptr), async-resident (the matrix on the GPU, gathered before the x
# upload) and sync-upload (the flow of async, seer_select() gathering itself after the uploads);
# writes the table with all of them (OUT/bench-new.csv; every kernel time is the table's), then
# imports, trains and evaluates both precisions five ways: the table as it was (session 7's sync
# cost), and the new table charged each of the four costs (--feature-cost), and prints the
# Oracle fractions at 1-10000 iterations side by side, with the costs by rows (summary last).
# Usage (from the source root; build/ carried; programs built on the CPU machine):
#   scripts/device-seer-async.sh OUT_DIR [MATRIX_DIR]
# MATRIX_DIR holds the 128 SuiteSparse .mtx files (default .dev/mat, else build/seer-matrices,
# else ../shared/data/matrices). Resumable: the bench store is SEER_WORK (default OUT_DIR/work);
# when BENCH_S (default 270) runs out, carry that folder back and call again with SEER_WORK=it.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/device-seer-async.sh OUT_DIR [MATRIX_DIR]}
MAT=${2:-.dev/mat}
BENCH_S=${BENCH_S:-270}
. scripts/device-seer-common.sh # MAT, CSV, PY, W, S, note, t0; seer_features_bench
seer_features_bench "lscat seer asynchronous gathering"
# The table with the new costs (matrices not re-measured keep their sync cost and get no async
# one, so --feature-cost async refuses the table until they are measured: the count is printed).
"$PY" - "$CSV" "$W/lscat.db" "$OUT/bench-new.csv" <<'PY' >>"$S" 2>&1
import csv, sqlite3, statistics as st, sys
db = sqlite3.connect(sys.argv[2])
new = {r[0]: r[1:] for r in db.execute(
    "SELECT m.name, f.feature_ns, f.agrees, m.rows, m.nnz, f.async_float_ns, f.async_double_ns, "
    "f.resident_float_ns, f.resident_double_ns, f.sync_upload_float_ns, f.sync_upload_double_ns "
    "FROM seer_feature_costs f JOIN seer_matrices m ON m.id = f.matrix_id")}
old, out = {}, []
rd = csv.DictReader(open(sys.argv[1]))
fields = list(rd.fieldnames)
for c in ("feature_async_ns", "feature_resident_ns", "feature_sync_upload_ns"):
    if c not in fields:
        fields.append(c)
for r in rd:
    old[r["matrix"]] = (float(r["feature_ns"]), int(r["rows"]), int(r["nnz"]))
    r.setdefault("feature_async_ns", "")
    r.setdefault("feature_resident_ns", "")
    r.setdefault("feature_sync_upload_ns", "")
    if r["matrix"] in new:
        n = new[r["matrix"]]
        r["feature_ns"] = "%.17g" % n[0]
        d = r["precision"] == "double"
        for c, v in (("feature_async_ns", n[4 + d]), ("feature_resident_ns", n[6 + d]),
                     ("feature_sync_upload_ns", n[8 + d])):
            r[c] = "" if v is None else "%.17g" % v
    out.append(r)
with open(sys.argv[3], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(out)
both = [n for n in old if n in new]
print(f"re-measured {len(both)} of {len(old)} matrices; GPU features disagree with the CPU on "
      f"{sum(1 for n in both if not new[n][1])}; shape differs from the table on "
      f"{sum(1 for n in both if (new[n][2], new[n][3]) != old[n][1:])}; no async cost on "
      f"{sum(1 for n in both if None in new[n][4:])}")
print("\nFeature cost in us, median (min to max): the table's sync (session 7), sync now (timed "
      "alone), and the exposed costs in the caller flows async, async-resident and sync-upload, "
      "float / double (negative = the flow with gathering was faster; charged as 0)\n")
print("| rows | matrices | table sync | sync now | async float | async double | "
      "resident float | resident double | sync-upload float | sync-upload double |")
print("|---|---|---|---|---|---|---|---|---|---|")
def cell(v):
    v = [x / 1e3 for x in v if x is not None]
    return f"{st.median(v):.2f} ({min(v):.2f} to {max(v):.2f})" if v else "-"
for lo, hi in ((0, 1e4), (1e4, 1e5), (1e5, 1e6), (1e6, 1e9), (0, 1e9)):
    ns = [n for n in both if lo <= old[n][1] < hi]
    if ns:
        label = "all" if (lo, hi) == (0, 1e9) else f"{lo:.0f}-{hi:.0f}"
        print(f"| {label} | {len(ns)} | {cell([old[n][0] for n in ns])} | "
              f"{cell([new[n][0] for n in ns])} | " +
              " | ".join(cell([new[n][k] for n in ns]) for k in (4, 5, 6, 7, 8, 9)) + " |")
names = ("async float", "async double", "resident float", "resident double",
         "sync-upload float", "sync-upload double")
print("\nnegative medians (charged as 0): " + ", ".join(
    f"{nm} {sum(1 for n in both if new[n][k] is not None and new[n][k] < 0)}"
    for nm, k in zip(names, range(4, 10))) + f" of {len(both)}")
PY
# import + train + eval as docs/seer.md: the table as it was, then the new table charged each
# feature cost.
for t in before sync async async-resident sync-upload; do
    T=$OUT/bench-new.csv
    [ "$t" = before ] && T=$CSV
    E=$OUT/eval-$t
    rm -rf "$E"
    mkdir -p "$E"
    lscat --work "$E/w" seer import "$T" >"$E/import.log" 2>&1 || note "$t: import failed"
    for p in double float; do
        lscat --work "$E/w" seer train --precision "$p" --feature-cost "${t/before/sync}" \
            --out "$E/$p" >"$E/train-$p.log" 2>&1 &&
            lscat --work "$E/w" seer eval --out "$E/$p" >"$E/eval-$p.log" 2>&1 ||
            note "$t $p: train/eval failed: $(tail -c 300 "$E/train-$p.log" "$E/eval-$p.log" 2>/dev/null | tr '\n' ' ')"
    done
done
"$PY" - "$OUT" <<'PY' >>"$S" 2>&1
import re, sys
def rows(path):
    r, cost = {}, "?"
    for line in open(path):
        m = re.search(r"Feature cost charged: \*\*([\w-]+)\*\*", line)
        if m:
            cost = m.group(1)
        c = [x.strip() for x in line.split("|")]
        if len(c) > 12 and re.fullmatch(r"\d+", c[1]):
            r[int(c[1])] = (c[8], c[11])  # Oracle / selector, gathered / paid
    return r, cost
print("\nOracle / selector on the held-back matrices (seed 42; the table as it was = session 7); goal >= 0.909\n")
print("| precision | table | cost charged | 1 | 10 | 100 | 1000 | 10000 | gathered / paid at 1 |")
print("|---|---|---|---|---|---|---|---|---|")
its = [1, 10, 100, 1000, 10000]
for p in ("double", "float"):
    for t in ("before", "sync", "async", "async-resident", "sync-upload"):
        try:
            r, cost = rows(f"{sys.argv[1]}/eval-{t}/{p}/eval.md")
        except OSError:
            print(f"| {p} | {t} | (no eval) |")
            continue
        print(f"| {p} | {t} | {cost} | " + " | ".join(r.get(i, ("-",))[0] for i in its) +
              f" | {r.get(1, ('', '-'))[1]} |")
PY
note "total $(( $(date +%s) - t0 )) s"
tail -c 6000 "$S"
