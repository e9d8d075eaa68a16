#!/usr/bin/env bash
# lscat dataset export end to end, on the SYNTHETIC store (tests/dataset/fixtures/synthetic.sql):
# Parquet (default, many row groups, no dictionary), CSV, CSV.gz and CSV.zst, a 1-row/0-row
# filtered export and an empty store — each read back by the readers researchers use
# (hyparquet, DuckDB and nodejs-polars from npm; an RFC 4180 parser and DuckDB for CSV, with
# the data card's loading lines as written) and compared column by column, type and checksum,
# with the store (tests/dataset/js/check.mjs). Also: checksums, columns.md, the card, errors.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
S=$T_TMP/syn
"$ROOT/tests/dataset/support/synth-store.sh" "$S/lscat.db" "$S/work" >"$T_OUT" 2>"$T_ERR" ||
    t_fail dataset_export__synthetic_store_builds "$(cat "$T_ERR")"
X="lscat-dataset --db $S/lscat.db --work $S/work -q"

t_expect dataset_export__writes_parquet 0 $X export --out "$S/pq"
t_expect dataset_export__writes_many_row_groups 0 $X export --out "$S/pq-rg" --row-group-rows 2
t_expect dataset_export__writes_plain_only 0 $X export --out "$S/pq-plain" --no-dictionary --zstd-level 0
t_expect dataset_export__writes_csv 0 $X export --out "$S/csv" --format csv
t_expect dataset_export__writes_csv_gzip 0 $X export --out "$S/csvgz" --format csv --gzip
t_expect dataset_export__writes_csv_zstd 0 $X export --out "$S/csvzst" --format csv --zstd
t_expect dataset_export__filters_since 0 $X export --out "$S/since" --since 2026-11-20T00:00:02Z
t_expect dataset_export__kernels_only 0 $X export --out "$S/ko" --kernels-only
t_expect dataset_export__filters_gpu 0 $X export --out "$S/t4" --gpu t4 --tables measurements,gpus
lscat-init --db "$S/empty.db" -q
t_expect dataset_export__exports_an_empty_store 0 lscat-dataset --db "$S/empty.db" --work "$S/work" -q export --out "$S/empty"

# Files beside the tables.
for d in pq csv csvgz csvzst; do
    if (cd "$S/$d" && sha256sum -c --quiet SHA256SUMS) >"$T_OUT" 2>&1; then t_ok "dataset_export__${d}_sha256sums_verify"
    else t_fail "dataset_export__${d}_sha256sums_verify" "$(cat "$T_OUT")"; fi
done
t_contains dataset_export__columns_md_lists_source_raw "$S/pq/columns.md" '| `source_raw` | BYTES | no |'
t_contains dataset_export__columns_md_types_timestamps "$S/pq/columns.md" '| `measured_at` | TIMESTAMP (UTC, us) | no |'
t_contains dataset_export__columns_md_types_lists "$S/pq/columns.md" '| `evidence` | LIST<STRING> | no |'
t_contains dataset_export__columns_md_lists_param_fields "$S/pq/columns.md" '| `template_dependent` | BOOLEAN | yes |'
t_contains dataset_export__card_gives_duckdb_csv_types "$S/csv/README.md" "'driver_version': 'VARCHAR'"
t_contains dataset_export__card_gives_duckdb_the_long_source_lines "$S/csv/README.md" "read_csv('sources.csv', header = true, allow_quoted_nulls = false, max_line_size = 4194304"
t_contains dataset_export__card_counts_measurements "$S/pq/README.md" '| `measurements.parquet` | 21 | measurements |'
t_contains dataset_export__card_names_gpus "$S/pq/README.md" '| Tesla T4 | 7.5 | 535.10 | 12.2 | 5 |'
t_contains dataset_export__card_counts_non_utf8_sources "$S/pq/README.md" '1 kernel sources are not valid UTF-8'
t_contains dataset_export__gpu_filter_keeps_the_t4_rows "$S/t4/README.md" '| `measurements.parquet` | 5 | measurements |'
t_contains dataset_export__gpu_filter_keeps_the_t4 "$S/t4/README.md" '| `gpus.parquet` | 1 | gpus |'
if [ -e "$S/ko/kernels.parquet" ] && [ ! -e "$S/ko/measurements.parquet" ]; then t_ok dataset_export__kernels_only_skips_measurements
else t_fail dataset_export__kernels_only_skips_measurements "$(ls "$S/ko")"; fi
n=$(sqlite3 "$S/lscat.db" "SELECT count(*) FROM stage_runs WHERE stage = 'dataset' AND exit_status = 0 AND counts LIKE '%\"measurements\":21%'")
[ "$n" -ge 1 ] && t_ok dataset_export__records_a_stage_run || t_fail dataset_export__records_a_stage_run "no stage_runs row"

# Usage and fatal errors.
t_expect dataset_export__no_subcommand_is_a_usage_error 2 lscat-dataset
t_expect dataset_export__missing_out_is_a_usage_error 2 $X export
t_expect dataset_export__bad_format_is_a_usage_error 2 $X export --out "$S/x" --format xml
t_expect dataset_export__gzip_needs_csv 2 $X export --out "$S/x" --gzip
t_expect dataset_export__zstd_needs_csv 2 $X export --out "$S/x" --zstd
for bad in notadate 2026-13-01 2026-11-1 "2026-11-01 10:00" 2026-11-01T25 2026-11-01T; do
    t_expect "dataset_export__since_${bad//[^0-9a-z]/_}_is_a_usage_error" 2 \
        $X export --out "$S/badsince" --format csv --since "$bad" &&
        t_contains "dataset_export__since_${bad//[^0-9a-z]/_}_error_says_what_a_date_is" \
            "$T_ERR" "is not a UTC date or time (YYYY-MM-DD"
done
[ ! -e "$S/badsince" ] && t_ok dataset_export__a_bad_since_writes_nothing ||
    t_fail dataset_export__a_bad_since_writes_nothing "$S/badsince exists"
t_expect dataset_export__since_takes_a_bare_day 0 $X export --out "$S/since-day" --format csv \
    --tables failures --since 2026-11-20
t_expect dataset_export__an_out_option_before_the_subcommand_is_its_value 0 \
    $X --out "$S/out-first" export --tables gpus
t_expect dataset_export__missing_store_is_fatal 3 lscat-dataset --db "$S/none.db" export --out "$S/x"

# Independent readers, value by value.
JS=$ROOT/build/dataset-js
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    t_skip dataset_export__independent_readers "node/npm not installed"
    t_done
fi
mkdir -p "$JS"
if ! cmp -s "$ROOT/tests/dataset/js/package-lock.json" "$JS/.installed-lock" || [ ! -d "$JS/node_modules/hyparquet" ]; then
    cp "$ROOT/tests/dataset/js/package.json" "$ROOT/tests/dataset/js/package-lock.json" "$JS/"
    if ! (cd "$JS" && npm install --no-audit --no-fund --loglevel=error) >"$T_OUT" 2>&1; then
        if grep -qiE 'ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|network' "$T_OUT"; then
            t_skip dataset_export__independent_readers "npm registry unreachable: $(tail -n 1 "$T_OUT")"
            t_done
        fi
        T_ERR=$T_OUT t_fail dataset_export__npm_install "npm install failed"
        t_done
    fi
    cp "$ROOT/tests/dataset/js/package-lock.json" "$JS/.installed-lock"
fi
cp "$ROOT/tests/dataset/js/check.mjs" "$JS/check.mjs"
chk() { node "$JS/check.mjs" "$@" 2>&1 | sed 's/^\(not \)\{0,1\}ok - /&dataset_export__/' || true; }
chk parquet "$S/pq" "$S/lscat.db" "$S/work" default
chk parquet "$S/pq-rg" "$S/lscat.db" "$S/work" row_groups
chk parquet "$S/pq-plain" "$S/lscat.db" "$S/work" plain
chk csv "$S/csv" "$S/lscat.db" "$S/work" csv
chk csv.gz "$S/csvgz" "$S/lscat.db" "$S/work" csvgz
chk csv.zst "$S/csvzst" "$S/lscat.db" "$S/work" csvzst
chk parquet "$S/since" "$S/lscat.db" "$S/work" since 2026-11-20T00:00:02Z
chk parquet "$S/empty" "$S/empty.db" "$S/work" empty

# A medium SYNTHETIC store: 20,000 kernels x 3 configurations with random timings, so the
# kernel_id dictionary outgrows its 1 MiB limit inside one row group (falls back to PLAIN)
# while it stays a dictionary in 7,000-row groups.
M=$T_TMP/medium
lscat-init --db "$M/lscat.db" -q
sqlite3 "$M/lscat.db" <<'SQL'
INSERT INTO gpus(id, uuid, name, first_seen) VALUES (1, 'GPU-m', 'Synthetic GPU', '2026-11-21T00:00:00Z');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO kernels(id, name, dir, params, param_count, created_at)
SELECT lower(hex(randomblob(32))), 'k' || i, 'none', '[]', 1, '2026-11-21T00:00:00Z' FROM n;
INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, block_y, status, median_ns,
    min_ns, max_ns, samples, measured_at)
SELECT k.id, 1, 240, 240, b.bx, 1, 'ok', abs(random()) / 1e9, abs(random()) / 3e9,
    CASE WHEN random() % 5 = 0 THEN NULL ELSE abs(random()) / 7e9 END, abs(random() % 100),
    '2026-11-21T00:00:00Z'
FROM kernels k, (SELECT 64 AS bx UNION ALL SELECT 128 UNION ALL SELECT 256) b;
SQL
X2="lscat-dataset --db $M/lscat.db --work $M/work -q"
t_expect dataset_export__medium_store_one_row_group 0 $X2 export --tables measurements --out "$M/one"
t_expect dataset_export__medium_store_small_row_groups 0 $X2 export --tables measurements --out "$M/rg" --row-group-rows 7000
chk parquet "$M/one" "$M/lscat.db" "$M/work" medium_one 2>/dev/null
chk parquet "$M/rg" "$M/lscat.db" "$M/work" medium_rg 2>/dev/null
t_done
