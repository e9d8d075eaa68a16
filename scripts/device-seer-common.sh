# Sourced by scripts/device-seer-eval.sh and scripts/device-seer-async.sh (not run by itself):
# what both do before their own table and evaluation. From the source root, with OUT, MAT
# (MATRIX_DIR as given) and BENCH_S set by the caller: find the 128 SuiteSparse files (MAT,
# else build/seer-matrices, else ../shared/data/matrices), list the matrices of the table CSV
# (SEER_TABLE, default tests/data/seer/bench-h200.csv: files by name, generated ones by spec),
# and run `lscat seer bench --features-only` on them into the store SEER_WORK (default
# OUT/work; resumable). Sets CSV, PY, W, S (the summary), t0 and note(); seer_features_bench
# TITLE writes the summary's first lines.
for m in "$MAT" build/seer-matrices ../shared/data/matrices; do [ -d "$m" ] && { MAT=$m; break; }; done
CSV=${SEER_TABLE:-tests/data/seer/bench-h200.csv}
PY=${LSCAT_PYTHON:-python3}
export PATH="$PWD/build/bin:$PATH" LSCAT_NO_PROGRESS=1
mkdir -p "$OUT"
W=${SEER_WORK:-$OUT/work}
S=$OUT/summary.md
note() { echo "$*" >>"$S"; }
: >"$S"
t0=$(date +%s)

seer_features_bench() {
    note "# $1 on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
    "$PY" - "$CSV" "$MAT" "$OUT/items" <<'PY' >>"$S"
import csv, os, sys
seen, files, specs, missing = set(), [], [], []
for r in csv.DictReader(open(sys.argv[1])):
    if r["matrix"] in seen:
        continue
    seen.add(r["matrix"])
    if r["source"] == "file":
        p = os.path.join(sys.argv[2], r["matrix"] + ".mtx")
        (files if os.path.exists(p) else missing).append(p)
    else:
        specs.append(r["spec"])
with open(sys.argv[3], "w") as f:
    for p in files:
        f.write("--matrices\n" + p + "\n")
    for s in specs:
        f.write("--generate\n" + s + "\n")
print(f"table {sys.argv[1]}: {len(seen)} matrices, {len(files)} files found in {sys.argv[2]}, "
      f"{len(missing)} missing, {len(specs)} generated")
PY
    local items
    mapfile -t items <"$OUT/items"
    timeout -k 10 $((BENCH_S + 120)) lscat --work "$W" seer bench --features-only --chunk 32 \
        "${items[@]}" --time-budget "$BENCH_S" --csv "$OUT/features-store.csv" >"$OUT/bench.log" 2>&1
    note "bench --features-only exit $? after $(( $(date +%s) - t0 )) s: $(grep 'seer bench' "$OUT/bench.log" | tail -1 | sed 's/^lscat-seer: //')"
    grep -h 'time budget' "$OUT/bench.log" | sed 's/^lscat-seer: //' >>"$S"
}
