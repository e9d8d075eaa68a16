#!/usr/bin/env bash
# Isolate on real code: for each source tree under $LSCAT_ISOLATE_TREES (default /work/ext; the
# trees are public repositories fetched by hand, never committed), run `lscat isolate --path`
# in its own work folder and report: files parsed, `__global__` occurrences by grep (rough),
# kernels found/isolated, harnesses compiling with nvcc on the first try (a sample of up to
# $LSCAT_ISOLATE_NVCC_SAMPLE per tree, 0 = skip), parameter-role coverage, throughput (files per
# second per core) and the parse workers' peak memory.
set -u
TREES=${LSCAT_ISOLATE_TREES:-/work/ext}
OUTW=${LSCAT_ISOLATE_BENCH_WORK:-${TMPDIR:-/tmp}/lscat-isolate-bench}
SAMPLE=${LSCAT_ISOLATE_NVCC_SAMPLE:-20}
JOBS=${LSCAT_JOBS:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${LSCAT_BIN:-$ROOT/build/bin}
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [ ! -d "$TREES" ]; then echo "isolate bench: skipped: no trees in $TREES (set LSCAT_ISOLATE_TREES)"; exit 0; fi
[ -x "$NVCC" ] || SAMPLE=0
printf '%-34s %6s %6s %7s %7s %8s %9s %9s %8s %9s\n' tree files grep kernels occur parse_s files/s/c compiles roles scal_roles
for dir in "$TREES"/*/; do
    name=$(basename "$dir"); w=$OUTW/$name
    rm -rf "$w"
    start=$(date +%s.%N)
    "$BIN/lscat-isolate" --work "$w" --path "$dir" -j"$JOBS" -q --timeout 120 >/dev/null 2>&1
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    db=$w/lscat.db
    files=$(sqlite3 "$db" "SELECT count(*) FROM parses WHERE status <> 'skipped'")
    grepn=$(grep -r --include='*.cu' --include='*.cuh' --include='*.h' --include='*.hpp' --include='*.inl' -o '__global__' "$dir" 2>/dev/null | wc -l)
    kernels=$(sqlite3 "$db" "SELECT count(*) FROM kernels")
    occ=$(sqlite3 "$db" "SELECT count(*) FROM kernel_occurrences")
    roles=$(sqlite3 "$db" "SELECT printf('%.0f%%', 100.0 * sum(roles_known) / max(1, sum(param_count))) FROM kernels")
    scal=$(sqlite3 "$db" "SELECT printf('%.0f%%', 100.0 * sum(json_extract(p.value, '$.role') <> 'unknown') / max(1, count(*))) FROM kernels, json_each(json_extract(kernels.params, '$.params')) p WHERE json_extract(p.value, '$.kind') <> 'pointer'")
    comp=-
    if [ "$SAMPLE" -gt 0 ] && [ "$kernels" -gt 0 ]; then
        sqlite3 "$db" "SELECT dir FROM kernels ORDER BY id LIMIT $SAMPLE" > "$w/sample"
        ok=$(W=$w NVCC=$NVCC ROOT=$ROOT xargs -P "$JOBS" -I{} sh -c 'cd "$W/{}" && timeout 300 "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" -c harness.cu -o harness.o >build.log 2>&1 && echo ok; exit 0' < "$w/sample" | wc -l)
        comp="$ok/$(wc -l < "$w/sample")"
    fi
    printf '%-34s %6s %6s %7s %7s %8.1f %9.2f %9s %8s %9s\n' "${name:0:34}" "$files" "$grepn" "$kernels" "$occ" "$wall" \
        "$(echo "$files / $wall / $JOBS" | bc -l)" "$comp" "$roles" "$scal"
done
echo "peak parse-worker memory (MiB), largest trees:"
for dir in "$TREES"/*/; do
    name=$(basename "$dir")
    sqlite3 "$OUTW/$name/lscat.db" "SELECT '$name', count(*), printf('%.0f', max(max_rss_kb) / 1024.0), printf('%.2f', avg(parse_s)) FROM parses WHERE status <> 'skipped'"
done | sort -t'|' -k2 -n -r | head -3
