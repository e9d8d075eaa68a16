#!/usr/bin/env bash
# End-to-end: `lscat harvest scan` and `import` on real GH Archive hours (tests/data), on
# the bundled sample, and on damaged hours; the result is checked against an independent
# count made here with Python's gzip and json modules (tests/harvest/support/gha_count.py).
source "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
COUNT=$ROOT/tests/harvest/support/gha_count.py
W=$T_TMP/w
H() { lscat harvest --work "$W" -q "$@"; }
db() { sqlite3 "$W/lscat.db" "$@"; }

# Same rows as the independent count: "name<TAB>kinds<TAB>events" sorted, and totals.
compare_with_python() { # name, files...
    local name=$1; shift
    python3 "$COUNT" "$@" | grep -v '^#' >"$T_TMP/want"
    db -separator $'\t' "SELECT lower(full_name), evidence, event_count FROM repos
        WHERE source = 'gharchive' ORDER BY lower(full_name)" |
        python3 -c 'import sys
for l in sys.stdin:
    n, k, c = l.rstrip("\n").split("\t")
    print("%s\t%s\t%s" % (n, ",".join(sorted(k.split(","))), c))' >"$T_TMP/got"
    if diff "$T_TMP/want" "$T_TMP/got" >"$T_TMP/diff"; then t_ok "$name"
    else t_fail "$name" "differs from the Python count: $(head -c 400 "$T_TMP/diff")"; fi
}

GHA=$ROOT/tests/data/gharchive
rm -rf "$W"
t_expect harvest_scan__scans_a_real_pre_2015_hour 0 H scan --source "$GHA" --from 2014-02-15T00 --to 2014-02-15T00
t_expect harvest_scan__scans_a_real_post_2015_hour 0 H scan \
    --source "file://$GHA/{YYYY}-{MM}-{DD}-{H}.sample.json.gz" --from 2021-01-01T01 --to 2021-01-01T01
compare_with_python harvest_scan__real_hours_match_an_independent_python_count \
    "$GHA/2014-02-15-0.json.gz" "$GHA/2021-01-01-1.sample.json.gz"
want=$(python3 "$COUNT" "$GHA/2014-02-15-0.json.gz" "$GHA/2021-01-01-1.sample.json.gz" | tail -1)
got=$(db "SELECT '#events ' || sum(events) || ' candidates ' || sum(candidates) || ' bad ' || sum(bad_lines) FROM gha_hours")
if [ "$want" = "$got" ]; then t_ok harvest_scan__hour_totals_match_the_python_count
else t_fail harvest_scan__hour_totals_match_the_python_count "want '$want' got '$got'"; fi

# The bundled sample: three hours, both schemas and trimmed 2025 payloads, one damaged line.
rm -rf "$W" "$T_TMP/smp"
python3 "$ROOT/sample/make-sample.py" "$T_TMP/smp" >/dev/null
t_expect harvest_scan__scans_the_sample_hours_in_parallel 0 H -j 3 scan --source "file://$T_TMP/smp/gharchive" \
    --from 2014-06-01T12 --to 2014-06-01T12
H scan --source "$T_TMP/smp/gharchive" --from 2016-03-10T09 --to 2016-03-10T09
H scan --source "$T_TMP/smp/gharchive" --from 2025-11-02T03 --to 2025-11-02T03
compare_with_python harvest_scan__sample_matches_an_independent_python_count "$ROOT"/sample/gharchive/*.json
[ "$(db "SELECT sum(bad_lines) FROM gha_hours")" = 1 ] && t_ok harvest_scan__counts_the_damaged_sample_line_bad ||
    t_fail harvest_scan__counts_the_damaged_sample_line_bad "bad_lines = $(db "SELECT sum(bad_lines) FROM gha_hours")"

# Done hours are never rescanned: counts stay.
before=$(db "SELECT sum(event_count) FROM repos")
H scan --source "$T_TMP/smp/gharchive" --from 2016-03-10T09 --to 2016-03-10T09
after=$(db "SELECT sum(event_count) FROM repos")
runs=$(db "SELECT json_extract(counts, '\$.skipped') FROM stage_runs ORDER BY id DESC LIMIT 1")
[ "$before" = "$after" ] && [ "$runs" = 1 ] && t_ok harvest_scan__never_rescans_a_done_hour ||
    t_fail harvest_scan__never_rescans_a_done_hour "events $before -> $after, skipped $runs"

# A mistyped source is a usage error before anything is recorded (issue 13): a folder that does
# not exist, an unknown placeholder.
hours_before=$(db "SELECT count(*) FROM gha_hours")
t_expect harvest_scan__a_source_folder_that_does_not_exist_is_a_usage_error 2 H scan \
    --source "$T_TMP/nonexistent/folder" --from 2016-04-01T00 --to 2016-04-01T05
t_contains harvest_scan__says_the_source_folder_does_not_exist "$T_ERR" "does not exist"
t_expect harvest_scan__an_unknown_placeholder_is_a_usage_error 2 H scan \
    --source "file://$T_TMP/smp/gharchive/{YYYY}-{XX}-{DD}-{H}.json.gz" --from 2016-04-01T00 --to 2016-04-01T05
t_contains harvest_scan__names_the_unknown_placeholder "$T_ERR" "unknown placeholder '{XX}'"
check_rows=$(db "SELECT count(*) FROM gha_hours")
[ "$check_rows" = "$hours_before" ] && t_ok harvest_scan__a_refused_source_records_no_hour ||
    t_fail harvest_scan__a_refused_source_records_no_hour "$hours_before hours before, $check_rows after"

# Damaged and missing hours: recorded with a reason, the scan goes on to the next hour.
mkdir -p "$T_TMP/bad"
cp "$T_TMP/smp/gharchive/2016-03-10-9.json.gz" "$T_TMP/bad/2016-03-10-10.json.gz"
head -c 900 "$T_TMP/smp/gharchive/2016-03-10-9.json.gz" >"$T_TMP/bad/2016-03-10-11.json.gz"
echo "<html>rate limited</html>" >"$T_TMP/bad/2016-03-10-12.json.gz"
: >"$T_TMP/bad/2016-03-10-13.json.gz"
t_expect harvest_scan__goes_on_after_bad_hours 0 H scan --source "$T_TMP/bad" --from 2016-03-10T10 --to 2016-03-10T14
got=$(db "SELECT group_concat(hour || ':' || status, ' ') FROM (SELECT * FROM gha_hours WHERE hour BETWEEN '2016-03-10T10' AND '2016-03-10T14' ORDER BY hour)")
want="2016-03-10T10:done 2016-03-10T11:bad 2016-03-10T12:bad 2016-03-10T13:bad 2016-03-10T14:missing"
[ "$got" = "$want" ] && t_ok harvest_scan__marks_truncated_non_gzip_empty_bad_and_absent_missing ||
    t_fail harvest_scan__marks_truncated_non_gzip_empty_bad_and_absent_missing "$got"
t_contains harvest_scan__records_why_an_hour_is_bad <(db "SELECT reason FROM gha_hours WHERE hour = '2016-03-10T11'") "truncated"

# --since-last starts after the last done hour (here 2016-03-10T14, recorded missing, is not done).
ln -s "$T_TMP/smp/gharchive/2016-03-10-9.json.gz" "$T_TMP/bad/2016-03-10-15.json.gz"
ln -s "$T_TMP/smp/gharchive/2016-03-10-9.json.gz" "$T_TMP/bad/2016-03-10-16.json.gz"
rm -rf "$T_TMP/w2"; W=$T_TMP/w2
H scan --source "$T_TMP/bad" --from 2016-03-10T10 --to 2016-03-10T10
t_expect harvest_scan__since_last_continues_after_the_last_done_hour 0 H scan --since-last --to 2016-03-10T16 --source "$T_TMP/bad"
check_since=$(db "SELECT group_concat(hour, ' ') FROM (SELECT hour FROM gha_hours ORDER BY hour)")
[ "$check_since" = "2016-03-10T10 2016-03-10T11 2016-03-10T12 2016-03-10T13 2016-03-10T14 2016-03-10T15 2016-03-10T16" ] &&
    t_ok harvest_scan__since_last_scans_the_following_hours || t_fail harvest_scan__since_last_scans_the_following_hours "$check_since"
W=$T_TMP/w
# The nightly mode retries recent hours that were not published yet ('missing').
W=$T_TMP/wlate; mkdir -p "$T_TMP/late"
now=$(date -u +%s)   # one clock reading, so an hour boundary during the test changes nothing
hr() { date -u -d "@$((now - $1 * 3600))" +%Y-%m-%dT%H; }
fn() { date -u -d "@$((now - $1 * 3600))" +%Y-%m-%d-%-H.json.gz; }
for a in 5 4; do cp "$T_TMP/smp/gharchive/2014-06-01-12.json.gz" "$T_TMP/late/$(fn $a)"; done
H scan --source "$T_TMP/late" --from "$(hr 5)" --to "$(hr 5)"
H scan --source "$T_TMP/late" --since-last --to "$(hr 2)"
cp "$T_TMP/smp/gharchive/2014-06-01-12.json.gz" "$T_TMP/late/$(fn 3)"
t_expect harvest_scan__since_last_runs_nightly 0 H scan --source "$T_TMP/late" --since-last --to "$(hr 2)"
got=$(db "SELECT group_concat(status, ' ') FROM (SELECT status FROM gha_hours ORDER BY hour)")
[ "$got" = "done done done missing" ] && t_ok harvest_scan__since_last_retries_hours_published_late ||
    t_fail harvest_scan__since_last_retries_hours_published_late "statuses: $got"
W=$T_TMP/w

t_expect harvest_scan__since_last_excludes_from 2 H scan --since-last --from 2016-01-01
t_expect harvest_scan__rejects_a_bad_date 2 H scan --from 2016-13-01
t_expect harvest_scan__help_documents_the_selection_rule 0 H --help
t_contains harvest_scan__help_lists_evidence_kinds "$T_OUT" "pr_base_language"

# SIGKILL in the middle of a parallel scan: the next run finishes; the result equals a clean run.
# Every hour is the real 2014 hour (tests/data), linked 72 times.
KILL_HOUR=$T_TMP/kill-hour.json.gz
cp "$GHA/2014-02-15-0.json.gz" "$KILL_HOUR"
if [ -s "$KILL_HOUR" ]; then
    mkdir -p "$T_TMP/many"
    for h in $(seq 0 23); do for d in 01 02 03; do
        ln -s "$KILL_HOUR" "$T_TMP/many/2014-03-$d-$h.json.gz"; done; done
    W=$T_TMP/wkill
    lscat harvest --work "$W" -q -j 2 scan --source "$T_TMP/many" --from 2014-03-01T00 --to 2014-03-03T23 &
    victim=$!
    scanned() { [ "$(db "SELECT count(*) FROM gha_hours" 2>/dev/null || echo 0)" -ge "$1" ]; }
    t_wait_until scanned 2 # kill once some hours are in: a point the run shows, not a time
    kill -9 "$victim" 2>/dev/null
    wait "$victim" 2>/dev/null
    mid=$(db "SELECT count(*) FROM gha_hours" 2>/dev/null || echo 0)
    t_expect harvest_scan__finishes_after_sigkill 0 H -j 2 scan --source "$T_TMP/many" --from 2014-03-01T00 --to 2014-03-03T23
    killed=$(db "SELECT full_name, event_count, first_seen, last_seen, evidence FROM repos ORDER BY 1; SELECT count(*), sum(events) FROM gha_hours")
    W=$T_TMP/wclean
    H -j 2 scan --source "$T_TMP/many" --from 2014-03-01T00 --to 2014-03-03T23
    clean=$(db "SELECT full_name, event_count, first_seen, last_seen, evidence FROM repos ORDER BY 1; SELECT count(*), sum(events) FROM gha_hours")
    check_eq() { if [ "$2" = "$3" ]; then t_ok "$1"; else t_fail "$1" "$(diff <(echo "$2") <(echo "$3") | head -5)"; fi; }
    check_eq harvest_scan__a_killed_scan_loses_and_doubles_nothing "$clean" "$killed"
    W=$T_TMP/wtwo   # two scans of the same hours at once: each hour still counted once
    H scan --source "$T_TMP/many" --from 2014-03-01T00 --to 2014-03-01T00
    H -j 2 scan --source "$T_TMP/many" --from 2014-03-01T00 --to 2014-03-03T23 & two=$!
    H -j 2 scan --source "$T_TMP/many" --from 2014-03-01T00 --to 2014-03-03T23
    wait "$two"
    both=$(db "SELECT full_name, event_count, first_seen, last_seen, evidence FROM repos ORDER BY 1; SELECT count(*), sum(events) FROM gha_hours")
    check_eq harvest_scan__two_concurrent_scans_count_each_hour_once "$clean" "$both"
    [ "$mid" -lt 72 ] && t_ok harvest_scan__the_kill_hit_mid_run || t_skip harvest_scan__the_kill_hit_mid_run "all $mid hours were done before the kill"
    W=$T_TMP/w
else
    t_fail harvest_scan__a_killed_scan_loses_and_doubles_nothing "could not make the hour to scan"
fi

# import: CSV with header, URLs, duplicates, a bad line.
cat >"$T_TMP/list.csv" <<'CSV'
repo_name,stars
"NVIDIA/cuda-samples",5000
https://github.com/hpc-lab/tiled-matmul
https://api.github.com/repos/Rkumar/parallel-reduce
nvidia/CUDA-samples,12
git@github.com:owner/repo.git
not a repo line
CSV
t_expect harvest_import__reads_a_csv_with_header_urls_and_duplicates 1 H import "$T_TMP/list.csv"
got=$(db "SELECT json_extract(counts, '\$.repos') || ' ' || json_extract(counts, '\$.duplicates') || ' ' || json_extract(counts, '\$.bad_lines') || ' ' || json_extract(counts, '\$.header') FROM stage_runs ORDER BY id DESC LIMIT 1")
[ "$got" = "4 1 1 1" ] && t_ok harvest_import__counts_repos_duplicates_bad_lines_and_header ||
    t_fail harvest_import__counts_repos_duplicates_bad_lines_and_header "counts: $got"
[ "$(db "SELECT evidence FROM repos WHERE full_name = 'rkumar/parallel-reduce'")" = "description_keyword,imported" ] &&
    t_ok harvest_import__merges_evidence_with_scanned_repos ||
    t_fail harvest_import__merges_evidence_with_scanned_repos "$(db "SELECT evidence FROM repos WHERE full_name = 'rkumar/parallel-reduce'")"
t_expect harvest_import__a_missing_file_is_a_usage_error 2 H import "$T_TMP/nope.csv"
t_done
