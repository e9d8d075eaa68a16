#!/usr/bin/env bash
# An export killed (SIGKILL) over an older export (issue 13, defect 10): the folder holds either
# the old export or the new one, whole (SHA256SUMS checks, one format only), never a mix; what
# the user keeps there besides the export (a report/ folder) stays; the next export cleans up
# the killed one's temporary folder. Kills land at increasing delays, so some hit mid-export on
# any machine; each kill switches the format (CSV <-> Parquet) so that a mix would show.
. "$(dirname "$0")/lib.sh"
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
    abs(random()) / 7e9, abs(random() % 100), '2026-11-21T00:00:00Z'
FROM kernels k, (SELECT 64 AS bx UNION ALL SELECT 128 UNION ALL SELECT 256) b;
SQL
X="lscat-dataset --db $M/lscat.db --work $M/work -q"
OUT=$M/release
t_expect dataset_export_kill__first_export 0 $X export --format csv --out "$OUT"
mkdir -p "$OUT/report" && echo "kept" >"$OUT/report/index.html"

# whole: SHA256SUMS lists every table file present, all of one format, and they check
whole() {
    [ -s "$OUT/SHA256SUMS" ] && (cd "$OUT" && sha256sum -c --quiet SHA256SUMS >/dev/null 2>&1) || return 1
    local csv pq
    csv=$(find "$OUT" -maxdepth 1 -name '*.csv' | wc -l)
    pq=$(find "$OUT" -maxdepth 1 -name '*.parquet' | wc -l)
    [ $((csv * pq)) = 0 ] && [ $((csv + pq)) -gt 0 ] || return 1
    [ "$(grep -c '' "$OUT/SHA256SUMS")" = $((csv + pq + 2)) ]
}
fmt=parquet bad=0 mid=0
# each export is killed once its own temporary folder exists (a point it shows, on any
# machine), then at ever later points inside it
tmp_made() { [ -d "$M/.release.export.tmp.$pid" ] || ! kill -0 "$pid" 2>/dev/null; }
for delay in 0 0 0.02 0.05 0.1 0.15 0.2 0.3 0.4 0.6 0.8 1.0; do
    $X export --format $fmt --out "$OUT" >/dev/null 2>&1 &
    pid=$!
    t_wait_until tmp_made
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    [ -d "$M/.release.export.tmp.$pid" ] && mid=$((mid + 1))
    whole || { bad=1; t_fail dataset_export_kill__a_killed_export_leaves_a_whole_export "after a kill at ${delay} s: $(ls "$OUT" | tr '\n' ' ')"; break; }
    [ "$fmt" = parquet ] && fmt=csv || fmt=parquet
done
[ "$bad" = 0 ] && t_ok dataset_export_kill__a_killed_export_leaves_a_whole_export
if [ "$mid" -gt 0 ]; then t_ok dataset_export_kill__some_kills_hit_mid_export
else t_skip dataset_export_kill__some_kills_hit_mid_export "every export finished before its kill"; fi
t_contains dataset_export_kill__the_users_files_stay "$OUT/report/index.html" "kept"
t_expect dataset_export_kill__the_next_export_succeeds 0 $X export --format parquet --out "$OUT"
left=$(ls -a "$M" | grep -c '^\.release\.export')
[ "$left" = 0 ] && t_ok dataset_export_kill__the_next_export_removes_the_killed_ones_temporaries \
    || t_fail dataset_export_kill__the_next_export_removes_the_killed_ones_temporaries "$(ls -a "$M")"
whole && [ -z "$(find "$OUT" -maxdepth 1 -name '*.csv')" ] && t_ok dataset_export_kill__the_next_export_is_whole \
    || t_fail dataset_export_kill__the_next_export_is_whole "$(ls "$OUT" | tr '\n' ' ')"
t_contains dataset_export_kill__the_users_files_survive_the_swap "$OUT/report/index.html" "kept"
t_done
