#!/usr/bin/env bash
# Sweep efficiency on one GPU: time spent inside timed kernel executions (sum over ok
# measurements of samples x launches_per_sample x mean_ns) over the wall time of `lscat tune`
# sweeping K short kernels x the default 140 configurations. Target >= 0.8. Needs a CUDA
# device and the fixture harnesses (built where nvcc exists); otherwise says why and skips.
set -u
cd "$(dirname "$0")/.."
BIN=${LSCAT_BIN:-build/bin}
BIN=$(cd "$BIN" && pwd)
TB=${LSCAT_TEST_BIN:-$(dirname "$BIN")/tests}
export PATH="$BIN:$PATH"
K=${TUNE_BENCH_KERNELS:-10}
if [ ! -x "$BIN/lscat-gpuinfo" ] || [ -z "$("$BIN/lscat-gpuinfo" 2>/dev/null)" ] || [ ! -x "$TB/tune/fixtures/ok/harness" ]; then
    echo "tune efficiency: skipped (no CUDA device or fixture harnesses)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LSCAT_WORK=$tmp LSCAT_DB=$tmp/lscat.db
lscat init >/dev/null 2>&1
specs=(); for i in $(seq 1 "$K"); do specs+=("bench$i=$TB/tune/fixtures/ok/harness"); done
python3 tests/tune/support/seed_store.py "$LSCAT_DB" "${specs[@]}"
t0=$(date +%s.%N)
lscat tune --gpus "${TUNE_BENCH_GPUS:-0}" -q "$@"
t1=$(date +%s.%N)
python3 - "$LSCAT_DB" "$t0" "$t1" "$K" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
wall = float(sys.argv[3]) - float(sys.argv[2])
n, timed_ns = db.execute("select count(*), sum(samples * launches_per_sample * mean_ns) "
                         "from measurements where status = 'ok'").fetchone()
eff = timed_ns / 1e9 / wall
print(f"tune efficiency: {eff:.3f} (target >= 0.8{'' if eff >= 0.8 else ', TARGET MISSED'}): "
      f"{n} configurations of {sys.argv[4]} kernels in {wall:.2f} s wall, "
      f"{timed_ns / 1e9:.2f} s inside timed kernels, {wall / max(n, 1) * 1e3:.2f} ms per configuration")
PY
