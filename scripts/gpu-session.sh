#!/usr/bin/env bash
# One batch of GPU work on a GPU node that lacks the CPU-side libraries (libclang, libarchive,
# libgit2 — as on the lent GPU machines), with programs built elsewhere:
#   1. the GPU tests (what `make test-gpu` runs), from prebuilt test programs;
#   2. the GPU half of the sample pipeline on a work folder that `make run` prepared elsewhere
#      (harvest and isolate ran there): execute (probe runs), tune (the sweep), dataset export
#      (Parquet) and report, status;
#   3. the pyarrow check of the Parquet writer (tests/dataset/check_pyarrow.py).
# Usage: scripts/gpu-session.sh OUT_DIR   (run from the source root; build/bin, build/tests and the
# work folder ./lscat-work carried along). Writes logs and summary.txt into OUT_DIR.
# build/tests (36 MiB without objects) may travel packed instead, beside other carried work:
#   tar c --exclude='*.o' --exclude='*.d' build/tests | xz -3 > .dev-carry/tests.tar.xz  (~5 MB)
# and carry .dev-carry: it is unpacked here when build/tests is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu-session.sh OUT_DIR}
mkdir -p "$OUT"
export LSCAT_BIN=$PWD/build/bin LSCAT_TEST_BIN=$PWD/build/tests LSCAT_SHARE_DIR=$PWD
export PATH="$LSCAT_BIN:$PATH" LSCAT_WORK=$PWD/lscat-work LSCAT_DB=$PWD/lscat-work/lscat.db
export LSCAT_NO_PROGRESS=1
[ ! -f .dev-carry/tests.tar.xz ] || [ -x build/tests/tune/gpu_timing ] || tar xJf .dev-carry/tests.tar.xz
summary=$OUT/summary.txt
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

note "== gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"

# 1. GPU tests, output capped.
LSCAT_GPU_ONLY=1 timeout 220 tests/run.sh 2>&1 | head -c 2000000 > "$OUT/test-gpu.log"
note "== test-gpu: $(tail -n 1 "$OUT/test-gpu.log")"
{ grep -E '^not ok' "$OUT/test-gpu.log" || true; } | head -20 | tee -a "$summary" # no match is no failure

# 2. The GPU half of the sample pipeline.
{
    for step in "90 execute" "150 tune" "40 dataset export --format parquet --out $LSCAT_WORK/export-gpu" \
                "40 dataset report --out $LSCAT_WORK/report-gpu" "20 status"; do
        echo "== lscat ${step#* }"
        # shellcheck disable=SC2086
        timeout ${step%% *} lscat ${step#* }
        echo "exit $?"
    done
} > "$OUT/pipeline.log" 2>&1
note "== pipeline (exit statuses): $(grep -E '^exit ' "$OUT/pipeline.log" | tr '\n' ' ')"
sed -n '/== lscat status/,$p' "$OUT/pipeline.log" | head -40 >> "$summary"
cp "$LSCAT_WORK/report-gpu/report.txt" "$OUT/report.txt" 2>/dev/null
python3 - "$LSCAT_DB" >> "$summary" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("== measurements by kernel and status")
for row in db.execute("""SELECT k.name, m.status, count(*), min(m.median_ns), max(m.median_ns)
                         FROM measurements m JOIN kernels k ON k.id = m.kernel_id
                         WHERE m.superseded = 0 GROUP BY 1, 2 ORDER BY 1, 2"""):
    print("  %-20s %-12s %4d  median_ns %s .. %s" % row)
print("== probes:", db.execute("SELECT group_concat(outcome) FROM probes").fetchone()[0])
PY

# 3. pyarrow reads what our Parquet writer wrote, value by value.
timeout 60 python3 tests/dataset/check_pyarrow.py --self-test build/bin > "$OUT/pyarrow.log" 2>&1
note "== pyarrow: $(grep -c '^ok' "$OUT/pyarrow.log") ok, $(grep -c '^not ok' "$OUT/pyarrow.log") not ok"
{ grep -E '^not ok' "$OUT/pyarrow.log" || true; } | head -10 | tee -a "$summary" # no match is no failure
# The status says whether anything failed, not what the last grep found.
if grep -qE '^not ok' "$OUT/test-gpu.log" "$OUT/pyarrow.log"; then exit 1; fi
exit 0
