#!/usr/bin/env bash
# Batched builds (docs/execute.md "Batched builds"), side by side in one run: the 44 golden
# harnesses of tests/isolate/fixtures/harness-golden built from scratch with --build-batch 1
# (each kernel alone) and --build-batch 8, in the order 1 8 8 1, on every core, without probes.
# Reports both walls, their ratio (target >= 1.3: 1.43 measured on 320 real kernels on 2 cores)
# and whether the two stores hold the same builds rows (they must: a mismatch is a bug, not a
# missed target). Env: BENCH_JOBS (default nproc).
set -eu
cd "$(dirname "$0")/.."
export PATH="${LSCAT_BIN:-$PWD/build/bin}:$PATH"
N=${BENCH_JOBS:-$(nproc)}
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "execute batched builds: skipped (nvcc not found)"
    exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/lscat-bench-XXXXXX")
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
export LSCAT_NO_PROGRESS=1
sql() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA foreign_keys = ON")
r = c.executescript(sys.stdin.read()) if len(sys.argv) < 3 else c.execute(sys.argv[2]).fetchall()
c.commit()
print("\n".join("|".join(str(v) for v in row) for row in r)) if len(sys.argv) > 2 else None' "$@"; }
seed() { # work folder: the golden kernels
    local w=$1 g id d name
    export LSCAT_WORK=$w LSCAT_DB=$w/lscat.db
    lscat init -q
    {
        echo "BEGIN;"
        for g in tests/isolate/fixtures/harness-golden/*/; do
            name=$(basename "$g")
            id=$(printf "batch-%s" "$name" | sha256sum | cut -c1-64)
            d=$w/kernels/${id:0:2}/$id
            mkdir -p "$d"
            cp "$g/kernel.cu" "$g/harness.cu" "$g/params.json" "$d/"
            echo "INSERT INTO kernels(id, name, dir, params, param_count, created_at) VALUES ('$id', '$name', 'kernels/${id:0:2}/$id', '[]', 2, '2026-01-01T00:00:00Z');"
        done
        echo "COMMIT;"
    } | sql "$LSCAT_DB"
}
now() { date +%s.%N; }
run() { # run WORKDIR BATCH: prints the wall
    export LSCAT_WORK=$1 LSCAT_DB=$1/lscat.db
    local t0 t1
    t0=$(now)
    lscat execute -q --no-probe --arch sm_90 -j "$N" --build-batch "$2" || true
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}
rows() {
    sql "$1/lscat.db" "SELECT kernel_id, status, attempts, fixes, error_class, registers, shared_bytes, stack_bytes, spill_store_bytes, spill_load_bytes, const_bytes, barriers, ptxas, cache_key FROM builds ORDER BY kernel_id"
}
# the timing core compiled once, outside the timings (one kernel), and copied to every folder
seed "$T/warm"
export LSCAT_WORK=$T/warm LSCAT_DB=$T/warm/lscat.db
lscat execute -q --no-probe --arch sm_90 -j 1 --build-batch 1 \
    --kernel "$(printf batch-saxpy | sha256sum | cut -c1-12)" || true
for w in a1 b8 c8 d1; do
    seed "$T/$w"
    mkdir -p "$T/$w/builds"
    cp -a "$T"/warm/builds/core-* "$T/$w/builds/"
done
wa=$(run "$T/a1" 1); wb=$(run "$T/b8" 8); wc=$(run "$T/c8" 8); wd=$(run "$T/d1" 1)
same=yes
for w in b8 c8 d1; do
    [ "$(rows "$T/a1")" = "$(rows "$T/$w")" ] || same=NO
done
kernels=$(sql "$T/a1/lscat.db" "SELECT count(*) FROM builds")
awk -v a="$wa" -v b="$wb" -v c="$wc" -v d="$wd" -v k="$kernels" -v n="$N" -v same="$same" 'BEGIN {
    alone = a + d; batch = b + c; r = alone / batch
    printf "execute batched builds: %d kernels on %d cores, alone %.2f + %.2f s, batches of 8 %.2f + %.2f s: %.2fx (target >= 1.3) %s; the same builds rows in all four: %s\n", k, n, a, d, b, c, r, (r >= 1.3 ? "met" : "TARGET MISSED"), same }'
[ "$same" = yes ] || { echo "execute batched builds: the stores differ (a bug: see docs/execute.md \"Batched builds\")" >&2; exit 1; }
