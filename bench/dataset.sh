#!/usr/bin/env bash
# Benchmark of `lscat dataset export` on a generated measurements table (default 5,000,000
# rows, LSCAT_BENCH_ROWS to change; SYNTHETIC data: 2 GPUs x 7 LS-CAT matrix sizes x 20 block
# shapes per kernel, random full-precision timings, one configuration measured every 0.25 s).
# Side by side in one run:
#   sqlite3 -csv dumping the same rows (same SELECT: the same columns, same order) | lscat CSV
#   | lscat CSV --gzip (ISA-L) | lscat CSV --zstd | lscat Parquet (default row groups, and small
#   row groups to show memory follows the row-group size).
# Targets (CPU time, user + system: wall time on a shared machine follows the other users):
# CSV export at most sqlite3 -csv's; Parquet under 2x sqlite3's; Parquet at most 1/5 of the CSV's size; memory bounded by the row-group size;
# the same column count in lscat's CSV and sqlite3's. Prints TARGET MISSED.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(cd "${LSCAT_BIN:-build/bin}" && pwd)
ROWS=${LSCAT_BENCH_ROWS:-5000000}
D=${LSCAT_BENCH_DIR:-build/bench-dataset}
mkdir -p "$D"
DB=$D/measurements-$ROWS.db
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench/dataset.sh: /usr/bin/time missing (apt-get install time)"; exit 0; }

if [ ! -f "$DB" ]; then
    echo "generating $ROWS measurement rows into $DB (once; SYNTHETIC)..."
    rm -f "$DB.tmp"
    "$BIN/lscat-init" --db "$DB.tmp" -q
    KERNELS=$(( (ROWS + 279) / 280 ))
    sqlite3 "$DB.tmp" <<SQL
PRAGMA synchronous = OFF;
INSERT INTO gpus(id, uuid, name, first_seen) VALUES
 (1, 'GPU-bench-1', 'NVIDIA H100 80GB HBM3', '2026-11-21T00:00:00Z'),
 (2, 'GPU-bench-2', 'Tesla T4', '2026-11-21T00:00:00Z');
CREATE TEMP TABLE sizes(w INTEGER);
INSERT INTO sizes VALUES (240), (496), (784), (1016), (1232), (1680), (2024);
CREATE TEMP TABLE blocks(bx INTEGER, byy INTEGER);
INSERT INTO blocks VALUES (8, 8), (16, 16), (24, 24), (32, 32);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 16)
INSERT INTO blocks SELECT 1, 64 * i FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $KERNELS)
INSERT INTO kernels(id, name, dir, params, param_count, created_at)
SELECT lower(hex(randomblob(32))), 'kernel_' || i, 'x', '[]', 3, '2026-11-21T00:00:00Z' FROM n;
INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, block_y, block_z, grid_x,
    grid_y, grid_z, status, median_ns, min_ns, max_ns, mean_ns, stddev_ns, mad_ns, p10_ns, p90_ns,
    samples, launches_per_sample, sm_clock_mhz_before, sm_clock_mhz_after, mem_clock_mhz,
    temp_c_before, temp_c_after, measured_at)
SELECT k, g, w, w, bx, byy, 1, (w + bx - 1) / bx, (w + byy - 1) / byy, 1, 'ok', t, t * 0.97,
    t * 1.4, t * 1.02, t * 0.013, t * 0.004, t * 0.98, t * 1.05, 31, 1 + (w * w) % 97,
    1980 - g * 400, 1965 - g * 400, 2619, 40 + abs(random() % 20), 44 + abs(random() % 20),
    strftime('%Y-%m-%dT%H:%M:%SZ', '2026-11-01', '+' || (seq / 4) || ' seconds')
FROM (SELECT k.id AS k, g.id AS g, s.w AS w, b.bx AS bx, b.byy AS byy,
      1000.0 + w * w / 50.0 + abs(random() % 1000000000000) / 1e6 AS t,
      row_number() OVER (ORDER BY k.rowid, g.id, s.w, b.rowid) AS seq
      FROM kernels k, gpus g, sizes s, blocks b LIMIT $ROWS);
SQL
    mv "$DB.tmp" "$DB"
fi

# The columns of dataset/columns.c's measurements table, in order (checked below by count).
Q="SELECT m.kernel_id, g.name, g.uuid, m.width, m.height, m.block_x, m.block_y, m.block_z,
 m.grid_x, m.grid_y, m.grid_z, m.status, m.error, m.median_ns, m.min_ns, m.max_ns,
 m.mean_ns, m.stddev_ns, m.mad_ns, m.p10_ns, m.p90_ns, m.samples,
 m.launches_per_sample, m.graph_nodes, m.sm_clock_mhz_before, m.sm_clock_mhz_after, m.mem_clock_mhz,
 m.temp_c_before, m.temp_c_after, m.clocks_locked, m.l2_flush, m.binding, m.measured_at
 FROM measurements m JOIN gpus g ON g.id = m.gpu_id WHERE m.superseded = 0
 ORDER BY m.kernel_id, m.gpu_id, m.width, m.height, m.block_x, m.block_y, m.block_z"

run() { # label outfile-for-size cmd...
    local label=$1 size_of=$2; shift 2
    sync
    "$TIME" -f "%e %M %U %S" -o "$D/time.$label" "$@" >"$D/stdout.$label" 2>"$D/stderr.$label" || {
        echo "$label failed:"; tail -5 "$D/stderr.$label"; exit 1; }
    read -r secs kb usr sys < <(tail -n 1 "$D/time.$label")
    local bytes cpu; bytes=$(stat -c %s "$size_of"); cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')
    awk -v l="$label" -v s="$secs" -v c="$cpu" -v b="$bytes" -v k="$kb" \
        'BEGIN { printf "%-26s %8.2f s %8.2f s CPU %9.1f MB %8.1f MB peak RSS\n", l, s, c, b / 1e6, k / 1024 }'
    eval "T_$label=$secs C_$label=$cpu B_$label=$bytes M_$label=$kb"
}
rm -rf "$D/csv" "$D/csvgz" "$D/csvzst" "$D/pq" "$D/pq-small"
echo "rows: $(sqlite3 "$DB" 'SELECT count(*) FROM measurements')"
run sqlite3_csv "$D/stdout.sqlite3_csv" sqlite3 -csv -header "$DB" "$Q"
run lscat_csv "$D/csv/measurements.csv" "$BIN/lscat-dataset" --db "$DB" -q export --format csv --tables measurements --out "$D/csv"
run lscat_csv_gzip "$D/csvgz/measurements.csv.gz" "$BIN/lscat-dataset" --db "$DB" -q export --format csv --gzip --tables measurements --out "$D/csvgz"
run lscat_csv_zstd "$D/csvzst/measurements.csv.zst" "$BIN/lscat-dataset" --db "$DB" -q export --format csv --zstd --tables measurements --out "$D/csvzst"
run lscat_parquet "$D/pq/measurements.parquet" "$BIN/lscat-dataset" --db "$DB" -q export --tables measurements --out "$D/pq"
run lscat_parquet_rg128k "$D/pq-small/measurements.parquet" "$BIN/lscat-dataset" --db "$DB" -q export --tables measurements --row-group-rows 131072 --out "$D/pq-small"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
r_csv=$(ratio "$T_lscat_csv" "$T_sqlite3_csv")
r_cpu=$(ratio "$C_lscat_csv" "$C_sqlite3_csv")
ncol() { head -n 1 "$1" | tr -cd ',' | wc -c; }
n_sq=$(ncol "$D/stdout.sqlite3_csv") n_ls=$(ncol "$D/csv/measurements.csv")
r_pq=$(ratio "$C_lscat_parquet" "$C_sqlite3_csv")
r_size=$(ratio "$B_lscat_parquet" "$B_lscat_csv")
miss() { awk "BEGIN { exit !($1) }" && echo " TARGET MISSED" || true; }
echo "columns: sqlite3 $((n_sq + 1)), lscat $((n_ls + 1))$(miss "$n_sq != $n_ls")"
echo "lscat CSV CPU / sqlite3 -csv CPU:       $r_cpu (target <= 1)$(miss "$r_cpu > 1")"
echo "lscat CSV time / sqlite3 -csv time:     $r_csv"
echo "CSV --gzip (ISA-L): time $(ratio "$T_lscat_csv_gzip" "$T_lscat_csv")x, CPU $(ratio "$C_lscat_csv_gzip" "$C_lscat_csv")x, size $(ratio "$B_lscat_csv_gzip" "$B_lscat_csv") of the plain CSV"
echo "CSV --zstd:         time $(ratio "$T_lscat_csv_zstd" "$T_lscat_csv")x, CPU $(ratio "$C_lscat_csv_zstd" "$C_lscat_csv")x, size $(ratio "$B_lscat_csv_zstd" "$B_lscat_csv") of the plain CSV"
echo "lscat Parquet CPU / sqlite3 -csv CPU:   $r_pq (target < 2)$(miss "$r_pq >= 2"); time $(ratio "$T_lscat_parquet" "$T_sqlite3_csv")"
echo "Parquet size / CSV size:                $r_size (target <= 0.2)$(miss "$r_size > 0.2")"
echo "peak RSS: Parquet $((M_lscat_parquet / 1024)) MB with 1M-row groups, $((M_lscat_parquet_rg128k / 1024)) MB with 128k-row groups (memory follows the row-group size)"
rm -rf "$D/csv" "$D/csvgz" "$D/csvzst" "$D/pq" "$D/pq-small" "$D"/stdout.*
