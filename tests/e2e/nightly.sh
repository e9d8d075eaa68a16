#!/usr/bin/env bash
# End-to-end: `lscat nightly` on the bundled sample, served by the test's own HTTP server on
# 127.0.0.1 (GH Archive hours and GitHub zipballs). Two nights with a new hour, a new repository
# and a changed one between them (the second release = the first + what is new, CHANGES.md says
# so); nights killed at random points of every stage (the releases and `latest` stay whole, the
# next night takes the lock over and completes); two nightlies at once (one exits 4); the systemd
# unit's command line; the pages in headless Chromium.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
FIX=$ROOT/tests/nightly/support/fixture.py
W=$T_TMP/work
REL=$W/releases
WWW=$T_TMP/www
check() { if [ "$2" = "$3" ]; then t_ok "$1"; else t_fail "$1" "want '$2', got '$3'"; fi; }
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; [ "$T_FAILED" = 0 ] && rm -rf "$T_TMP"; }
trap cleanup EXIT

# ---- the sample, as GH Archive and GitHub serve it
cp -r "$ROOT/sample" "$T_TMP/sample"
python3 "$T_TMP/sample/make-sample.py" "$T_TMP/gen" >/dev/null
mkdir -p "$WWW/gha" "$WWW/zip"
cp -r "$T_TMP/gen/archives/." "$WWW/zip/"
hour_name() { date -u -d "@$(( ($(date -u +%s) / 3600 - $1) * 3600 ))" +"$2"; }
A=$(hour_name 5 %Y-%m-%dT%H)          # night 1's hour (and --from)
B_FILE=$(hour_name 4 %Y-%m-%d-%-H)    # the hour that appears before night 2
python3 "$FIX" hour "$WWW/gha/$(hour_name 5 %Y-%m-%d-%-H).json.gz" \
    "$T_TMP/sample/gharchive/2014-06-01-12.json" "$T_TMP/sample/gharchive/2025-11-02-3.json"
python3 -u -m http.server --bind 127.0.0.1 --directory "$WWW" 0 >"$T_TMP/http.log" 2>&1 &
PIDS+=($!)
port_known() { grep -qs 'port' "$T_TMP/http.log"; }
t_wait_until port_known
URL="http://127.0.0.1:$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$T_TMP/http.log" | head -1)"
SRC=(--source "$URL/gha/{YYYY}-{MM}-{DD}-{H}.json.gz" --archive-url "$URL/zip/{owner}/{name}.zip"
     --refresh-older-than 1s)
N() { lscat --work "$W" nightly "${SRC[@]}" "$@"; }
kernels() { python3 "$FIX" kernels "$REL/$1/csv/kernels.csv.gz" | cut -d' ' -f2 | sort | tr '\n' ' '; }
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(*v) if isinstance(v, tuple) else print(v)' "$@"; }
TODAY=$(date -u +%F)

# ---- night 1: the first release
t_expect nightly__the_first_night_succeeds 0 N --from "$A" --summary-json "$T_TMP/s1.json"
cp "$T_OUT" "$T_TMP/night1.out"
R1=$(readlink "$REL/latest")
check nightly__the_first_release_is_named_by_date "$TODAY" "$R1"
(cd "$REL/$R1" && sha256sum -c --quiet SHA256SUMS) && t_ok nightly__the_first_release_checksums_verify ||
    t_fail nightly__the_first_release_checksums_verify "sha256sum -c failed"
check nightly__the_first_release_holds_the_first_hours_kernels "matmul_tiled reduce_partial saxpy " "$(kernels "$R1")"
for f in parquet/kernels.parquet parquet/measurements.parquet csv/kernels.csv.gz README.md columns.md \
         CHANGES.md CITATION.cff release.json index.html report/index.html kernel-ids.txt; do
    [ -s "$REL/$R1/$f" ] || t_fail "nightly__the_release_has_$f" "missing $REL/$R1/$f"
done
t_contains nightly__the_first_changes_say_everything_is_new "$REL/$R1/CHANGES.md" "The first release"
t_contains nightly__the_citation_carries_the_version "$REL/$R1/CITATION.cff" "version: \"$R1\""
check nightly__the_summary_counts_the_new_kernels "3 1 0" \
    "$(json "$T_TMP/s1.json" 'd["new"]["kernels"], d["new"]["hours"], d["exit_status"]')"
check nightly__tune_is_left_to_a_gpu_machine_here elsewhere "$(json "$T_TMP/s1.json" 'd["stages"]["tune"]["outcome"]')"
t_contains nightly__the_summary_is_one_screen_on_stdout "$T_TMP/night1.out" "failures recorded tonight"

# ---- between the nights: a new hour names a new repository (fluidsim/stencil2d) and a push to
# alice-gpu/cuda-saxpy, whose archive now holds a second kernel; a GPU node's shard has timings
cat >"$T_TMP/sample/repos/alice-gpu/cuda-saxpy/src/scale.cu" <<'CU'
__global__ void scale(int n, float a, float *x)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i];
}
CU
python3 "$T_TMP/sample/make-sample.py" "$T_TMP/gen2" >/dev/null
cp "$T_TMP/gen2/archives/alice-gpu/cuda-saxpy.zip" "$WWW/zip/alice-gpu/cuda-saxpy.zip"
python3 "$FIX" hour "$WWW/gha/$B_FILE.json.gz" --push alice-gpu/cuda-saxpy "$T_TMP/sample/gharchive/2016-03-10-9.json"
mkdir -p "$T_TMP/shards"
sqlite3 "$W/lscat.db" ".backup '$T_TMP/shards/gpu-node-1.db'"
python3 "$FIX" shard "$T_TMP/shards/gpu-node-1.db" saxpy
cp -r "$REL/$R1" "$T_TMP/r1-copy"

# ---- night 2: the first release plus what is new
t_expect nightly__the_second_night_succeeds 0 N --shards "$T_TMP/shards" --summary-json "$T_TMP/s2.json"
R2=$(readlink "$REL/latest")
check nightly__a_second_release_the_same_day_is_dot_2 "$TODAY.2" "$R2"
diff -r "$T_TMP/r1-copy" "$REL/$R1" >/dev/null && t_ok nightly__the_first_release_is_left_as_it_was ||
    t_fail nightly__the_first_release_is_left_as_it_was "$(diff -r "$T_TMP/r1-copy" "$REL/$R1" | head -3)"
check nightly__the_second_release_is_the_first_plus_the_new_kernels \
    "advect matmul_tiled reduce_partial saxpy scale stencil2d " "$(kernels "$R2")"
python3 "$FIX" kernels "$REL/$R1/csv/kernels.csv.gz" >"$T_TMP/k1"
python3 "$FIX" kernels "$REL/$R2/csv/kernels.csv.gz" >"$T_TMP/k2"
check nightly__every_kernel_of_the_first_release_is_unchanged_in_the_second "" "$(comm -23 "$T_TMP/k1" "$T_TMP/k2")"
check nightly__the_shard_measurements_are_in_the_second_release 8 \
    "$(zcat "$REL/$R2/csv/measurements.csv.gz" | tail -n +2 | grep -c .)"
t_contains nightly__changes_count_the_new_kernels "$REL/$R2/CHANGES.md" "| kernels | 3 | 6 | +3 |"
t_contains nightly__changes_count_the_new_measurements "$REL/$R2/CHANGES.md" "| measurements | 0 | 8 | +8 |"
for k in scale stencil2d advect; do
    t_contains "nightly__changes_name_the_new_kernel_$k" "$REL/$R2/CHANGES.md" "- \`$k\`"
done
t_contains nightly__changes_name_the_new_gpu "$REL/$R2/CHANGES.md" "- NVIDIA H100 80GB HBM3"
t_contains nightly__changes_say_since_which_release "$REL/$R2/CHANGES.md" "Since release $R1"
check nightly__the_second_summary_counts_hours_repos_kernels_measurements "1 1 3 8 merged" \
    "$(json "$T_TMP/s2.json" 'd["new"]["hours"], d["new"]["repositories"], d["new"]["kernels"], d["new"]["measurements"], d["stages"]["tune"]["note"].split()[0]')"
check nightly__the_index_lists_both_releases_newest_first "$R2 $R1 $R2" \
    "$(json "$REL/index.json" 'tuple([r["name"] for r in d["releases"]] + [d["latest"]])')"
ls "$REL/$R2/report/"*.png >/dev/null 2>&1 && t_ok nightly__the_release_report_has_plots ||
    t_fail nightly__the_release_report_has_plots "no PNG in $REL/$R2/report"

# ---- nights killed at random points of every stage: the releases and `latest` stay whole
releases_whole() { # every release folder verifies; latest names one of them
    local d
    for d in "$REL"/20*; do (cd "$d" && sha256sum -c --quiet SHA256SUMS >/dev/null 2>&1) || { echo "$d"; return 1; }; done
    [ -f "$REL/latest/release.json" ] || { echo "latest -> $(readlink "$REL/latest")"; return 1; }
}
STAGES=(harvest fetch isolate execute tune export release)
target_started_or_night_over() {
    grep -q "nightly: $target started" "$T_TMP/kill.err" 2>/dev/null || ! kill -0 "$pid" 2>/dev/null
}
no_stage_left() { ! pgrep -f "lscat-[a-z]* .*--work $W( |\$)" >/dev/null; }
kills=0 attempts=0 completed=0 broken="" staged="" leftover=""
while [ "$kills" -lt 12 ] && [ "$attempts" -lt 30 ]; do
    target=${STAGES[$((attempts % 7))]}
    attempts=$((attempts + 1))
    prev_latest=$(readlink "$REL/latest")
    (exec lscat --work "$W" nightly "${SRC[@]}" --shards "$T_TMP/shards") >"$T_TMP/kill.out" 2>"$T_TMP/kill.err" &
    pid=$!
    # kill when the night says the target stage started (the first round of 7 right then, so
    # the kills surely spread over the stages; later ones a random 0-90 ms into it)
    # polled every 10 ms: on the sample the early stages last less than the default 0.1 s, and
    # a fresh clone's CI once saw every kill land in execute or export
    T_POLL_S=0.01 t_wait_until target_started_or_night_over
    [ "$attempts" -gt 7 ] && sleep "0.0$((RANDOM % 10))"
    if kill -9 "$pid" 2>/dev/null; then
        wait "$pid" 2>/dev/null
        kills=$((kills + 1))
        staged="$staged $(grep -o 'nightly: [a-z]* started' "$T_TMP/kill.err" | tail -1 | cut -d' ' -f2)"
        # latest moves only to a release the killed night had put in place whole (killed
        # between its rename and the log line after it, while pruning or writing the index); a
        # fresh clone's CI once killed a night after the switch, before "published release"
        now_latest=$(readlink "$REL/latest")
        [ "$now_latest" = "$prev_latest" ] ||
            grep -q "nightly: release $now_latest is in place" "$T_TMP/kill.err" ||
            broken="$broken latest-moved-by-a-killed-night($prev_latest->$now_latest)"
        # the children die with the night (PR_SET_PDEATHSIG, SIGKILL): at once, though a busy
        # machine may take a moment to run their exit
        T_PATIENCE_S=30 t_wait_until no_stage_left
        left=$(pgrep -af "lscat-[a-z]* .*--work $W( |\$)") && leftover="$leftover $target: $left"
    else
        wait "$pid"
        completed=$((completed + 1))
    fi
    why=$(releases_whole) || broken="$broken $why"
    grep -q "took over the lock" "$T_TMP/kill.err" && took_over=1
done
[ "$kills" -ge 10 ] && t_ok nightly__ten_or_more_nights_were_killed ||
    t_fail nightly__ten_or_more_nights_were_killed "$kills kills in $attempts attempts"
distinct=$(echo $staged | tr ' ' '\n' | sort -u | grep -c .)
[ "$distinct" -ge 3 ] && t_ok nightly__the_kills_fell_in_three_or_more_stages ||
    t_fail nightly__the_kills_fell_in_three_or_more_stages "stages killed in:$staged"
check nightly__killed_nights_leave_every_release_and_latest_whole "" "$broken"
check nightly__no_stage_outlives_a_killed_night "" "$leftover"
check nightly__a_night_after_a_kill_takes_the_lock_over 1 "${took_over:-0}"
echo "# $kills kills ($completed nights completed) in $attempts attempts; stages:$staged"
before=$(readlink "$REL/latest")
t_expect nightly__the_next_night_completes 0 N --shards "$T_TMP/shards"
[ "$(readlink "$REL/latest")" != "$before" ] && releases_whole >/dev/null &&
    t_ok nightly__the_next_night_publishes_a_whole_release || t_fail nightly__the_next_night_publishes_a_whole_release "latest $(readlink "$REL/latest")"
ls -d "$REL"/.*tmp* 2>/dev/null | grep -q . && t_fail nightly__no_temporary_is_left "$(ls -a "$REL")" ||
    t_ok nightly__no_temporary_is_left

# ---- two nightlies started together: one runs, the other exits 4 with the lock message
for try in 1 2 3; do
    (exec lscat --work "$W" nightly --stages export) >"$T_TMP/l1.out" 2>"$T_TMP/l1.err" & p1=$!
    (exec lscat --work "$W" nightly --stages export) >"$T_TMP/l2.out" 2>"$T_TMP/l2.err" & p2=$!
    wait $p1; c1=$?; wait $p2; c2=$?
    [ "$c1 $c2" != "0 0" ] && break # both ran one after the other: start them again
done
codes=$(echo "$c1 $c2" | tr ' ' '\n' | sort | tr '\n' ' ')
check nightly__of_two_nightlies_at_once_one_runs_and_one_exits_4 "0 4 " "$codes"
grep -h "another lscat nightly is running on this store" "$T_TMP/l1.err" "$T_TMP/l2.err" | grep -q "this run did nothing" &&
    t_ok nightly__the_second_nightly_says_another_one_holds_the_lock ||
    t_fail nightly__the_second_nightly_says_another_one_holds_the_lock "$(cat "$T_TMP/l1.err" "$T_TMP/l2.err" | grep -i lock)"

# ---- the systemd unit's and the crontab's command lines, as docs/nightly.md gives them
subst() { sed -e "s|/usr/local/bin/lscat|$LSCAT_BIN/lscat|g" -e "s|/srv/lscat/releases|$REL|g" -e "s|/var/lib/lscat|$W|g"; }
unit=$(sed -n 's/^ExecStart=//p' "$ROOT/examples/systemd/lscat-nightly.service" | subst)
t_expect nightly__the_systemd_units_command_line_runs_a_night 0 bash -c "$unit ${SRC[*]}"
[ -s "$W/nightly-summary.json" ] && t_ok nightly__the_unit_writes_its_summary_json ||
    t_fail nightly__the_unit_writes_its_summary_json "no $W/nightly-summary.json"
cron=$(grep -v '^#' "$ROOT/examples/cron/lscat-nightly.crontab" | grep '^[0-9]' | cut -d' ' -f6- | subst)
t_expect nightly__the_crontab_line_runs_a_night 0 bash -c "${cron/ ||/ ${SRC[*]} ||}"

# ---- --keep: the newest releases stay, latest among them, the index follows
latest=$(readlink "$REL/latest")
t_expect nightly__keep_prunes_old_releases 0 lscat --work "$W" nightly --stages release --keep 3
check nightly__keep_leaves_the_newest_three 3 "$(ls -d "$REL"/20* | wc -l)"
check nightly__the_index_lists_what_is_kept 3 "$(json "$REL/index.json" 'len(d["releases"])')"
releases_whole >/dev/null && t_ok nightly__pruning_leaves_latest_whole || t_fail nightly__pruning_leaves_latest_whole "$(releases_whole)"

# ---- a failed stage does not stop the others; a machine without lscat-isolate (no libclang)
# leaves isolation to one that has it
mkdir -p "$T_TMP/bin"
cp "$LSCAT_BIN/lscat-nightly" "$T_TMP/bin/"
for p in lscat-harvest lscat-dataset lscat-tune lscat-execute; do ln -s "$LSCAT_BIN/$p" "$T_TMP/bin/$p"; done
t_expect nightly__a_failed_stage_ends_the_night_with_exit_1 1 env PATH=/usr/bin:/bin "$T_TMP/bin/lscat-nightly" \
    --work "$W" "${SRC[@]}" --to not-an-hour --stages harvest,isolate,export --summary-json "$T_TMP/s3.json"
check nightly__the_stages_after_a_failed_one_still_run "failed elsewhere ok" \
    "$(json "$T_TMP/s3.json" 'tuple(d["stages"][s]["outcome"] for s in ("harvest", "isolate", "export"))')"
t_contains nightly__the_summary_says_where_isolation_is_left "$T_OUT" "lscat-isolate is not built here: left to a CPU machine with libclang"

# ---- the pages in a real browser, from a static server of the releases folder
if ! command -v chromium >/dev/null; then
    t_skip nightly__the_pages_render_in_chromium "chromium is not installed (mk/deps.sh lists it)"
else
    python3 -u -m http.server --bind 127.0.0.1 --directory "$REL" 0 >"$T_TMP/rel.log" 2>&1 &
    PIDS+=($!)
    rel_port_known() { grep -qs 'port' "$T_TMP/rel.log"; }
    t_wait_until rel_port_known
    RURL="http://127.0.0.1:$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$T_TMP/rel.log" | head -1)"
    CHROME=(chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$T_TMP/chrome")
    "${CHROME[@]}" --dump-dom "$RURL/index.html" >"$T_TMP/index.dom" 2>"$T_TMP/chrome.err"
    t_contains nightly__chromium_shows_the_release_table "$T_TMP/index.dom" "<td class=\"n\">6</td>"
    t_contains nightly__the_table_names_the_latest_release "$T_TMP/index.dom" "$(readlink "$REL/latest")</a> (latest)"
    "${CHROME[@]}" --dump-dom "$RURL/latest/index.html" >"$T_TMP/page.dom" 2>>"$T_TMP/chrome.err"
    t_contains nightly__the_release_page_shows_the_card "$T_TMP/page.dom" "<h2>lscat CUDA launch-configuration dataset</h2>"
    t_contains nightly__the_release_page_shows_the_report_plots "$T_TMP/page.dom" '<img src="report/'
    t_expect nightly__every_link_of_the_pages_resolves 0 python3 "$FIX" links "$RURL" index.html latest/index.html
    "${CHROME[@]}" --window-size=1280,900 --screenshot="$T_TMP/index.png" "$RURL/index.html" >/dev/null 2>>"$T_TMP/chrome.err"
    t_expect nightly__a_screenshot_shows_the_table 0 python3 "$FIX" png "$T_TMP/index.png" 40
fi
t_done
