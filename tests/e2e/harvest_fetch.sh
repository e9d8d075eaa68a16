#!/usr/bin/env bash
# End-to-end: `lscat harvest fetch` and `scan` over HTTP against a real server on 127.0.0.1
# (tests/harvest/support/fault_server.py) that injects faults: 500-then-200, 429 with
# Retry-After, rate-limit headers, a reset mid-body (resumed with Range), a slow body, a
# stalled body, redirect chains, 404/410/451, a truncated gzip. Then the git route, and
# SIGKILL in the middle of a fetch and of a scan.
source "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/support/lsan.supp:print_suppressions=0}
W=$T_TMP/w
SRV=$T_TMP/srv
H() { lscat harvest --work "$W" -q "$@"; }
db() { sqlite3 "$W/lscat.db" "$@"; }
check() { # name, want, got
    if [ "$2" = "$3" ]; then t_ok "$1"; else t_fail "$1" "want '$2', got '$3'"; fi
}

python3 "$ROOT/sample/make-sample.py" "$T_TMP/smp" >/dev/null
mkdir -p "$SRV/gha"
for z in "$T_TMP"/smp/archives/*/*.zip; do cp "$z" "$SRV/"; done
cp "$T_TMP"/smp/gharchive/*.gz "$SRV/gha/"
python3 "$ROOT/tests/harvest/support/fault_server.py" "$SRV" "$T_TMP/port" "$T_TMP/requests" &
SERVER_PID=$!
trap 'kill $SERVER_PID 2>/dev/null; [ "$T_FAILED" = 0 ] && rm -rf "$T_TMP"' EXIT
port_known() { [ -s "$T_TMP/port" ]; }
t_wait_until port_known
URL="http://127.0.0.1:$(cat "$T_TMP/port")"

# ---- zip downloads with faults (repository owner = the fault, name = the archive)
cat >"$T_TMP/list" <<'LIST'
ok/cuda-saxpy
500x2/tiled-matmul
429/parallel-reduce
reset/stencil2d
slow/cuda-saxpy
redir3/tiled-matmul
redir9/tiled-matmul
ratelimit/parallel-reduce
404/cuda-saxpy
410/cuda-saxpy
451/cuda-saxpy
500/cuda-saxpy
LIST
H import "$T_TMP/list"
t_expect harvest_fetch__finishes_with_exit_1_when_some_failed 1 H -j 4 fetch --method zip-only \
    --archive-url "$URL/f/{owner}/{name}.zip" --backoff 0.1 --attempts 4
status_of() { db "SELECT fetch_status FROM repos WHERE full_name = '$1'"; }
for r in ok/cuda-saxpy 500x2/tiled-matmul 429/parallel-reduce reset/stencil2d slow/cuda-saxpy \
         redir3/tiled-matmul ratelimit/parallel-reduce; do
    check "harvest_fetch__fetches_through_fault_${r%%/*}" fetched "$(status_of "$r")"
done
check harvest_fetch__retries_500_until_it_succeeds 3 "$(grep -c '^GET /f/500x2/tiled-matmul.zip' "$T_TMP/requests")"
check harvest_fetch__resumes_a_reset_download_with_range 1 \
    "$(grep '^GET /f/reset/stencil2d.zip' "$T_TMP/requests" | grep -vc ' - ')"
check harvest_fetch__a_resumed_zip_extracts_whole 5 "$(db "SELECT files_kept FROM repos WHERE full_name = 'reset/stencil2d'")"
t429=$(grep '^GET /f/429/parallel-reduce.zip' "$T_TMP/requests" | awk '{print $5}' | tr '\n' ' ')
python3 -c 'import sys; a, b = map(float, sys.argv[1:3]); sys.exit(0 if b - a >= 0.9 else 1)' $t429 &&
    t_ok harvest_fetch__waits_for_retry_after || t_fail harvest_fetch__waits_for_retry_after "request times $t429"
for r in 404 410 451; do
    check "harvest_fetch__records_${r}_as_gone" gone "$(status_of "$r/cuda-saxpy")"
done
check harvest_fetch__gives_up_on_a_long_redirect_chain failed "$(status_of redir9/tiled-matmul)"
check harvest_fetch__a_failed_repo_waits_for_its_next_attempt 1 \
    "$(db "SELECT next_attempt_at > strftime('%Y-%m-%dT%H:%M:%SZ', 'now') FROM repos WHERE full_name = '500/cuda-saxpy'")"
check harvest_fetch__records_the_license "MIT" "$(db "SELECT license_spdx FROM repos WHERE full_name = 'reset/stencil2d'")"
check harvest_fetch__records_the_zip_commit_id 40 "$(db "SELECT length(commit_sha) FROM repos WHERE full_name = 'ok/cuda-saxpy'")"
check harvest_fetch__forks_share_blobs 1 "$(db "SELECT count(DISTINCT f.sha256) = (SELECT count(*) FROM blobs WHERE sha256 IN (SELECT sha256 FROM files)) FROM files f")"
check harvest_fetch__trees_hold_only_sources "kernels/advect.cu" \
    "$(cd "$W/trees/reset/stencil2d" && find . -name '*.cu' | sort | head -1 | sed 's|^\./||')"
[ ! -e "$W/trees/reset/stencil2d/tools/render.js" ] && [ ! -e "$W/trees/reset/stencil2d/LICENSE" ] &&
    t_ok harvest_fetch__filters_out_non_source_files || t_fail harvest_fetch__filters_out_non_source_files "render.js or LICENSE kept"
check harvest_fetch__records_the_refused_symlink "symlink" \
    "$(db "SELECT reason FROM refused_entries r JOIN repos p ON p.id = r.repo_id WHERE p.full_name = '429/parallel-reduce'")"
n_before=$(grep -c . "$T_TMP/requests")
t_expect harvest_fetch__a_second_run_does_nothing_new 0 H fetch --method zip-only --archive-url "$URL/f/{owner}/{name}.zip"
check harvest_fetch__a_second_run_sends_no_request "$n_before" "$(grep -c . "$T_TMP/requests")"

# ---- --refresh-older-than: a repository pushed after its old fetch is fetched again
db "UPDATE repos SET fetched_at = '2020-01-01T00:00:00Z', pushed_at = '2021-01-01T00:00:00Z' WHERE full_name = 'ok/cuda-saxpy';
    UPDATE repos SET fetched_at = '2020-01-01T00:00:00Z', pushed_at = '2019-01-01T00:00:00Z' WHERE full_name = 'slow/cuda-saxpy'"
t_expect harvest_fetch__refreshes_repos_pushed_since_an_old_fetch 0 H fetch --method zip-only \
    --archive-url "$URL/f/{owner}/{name}.zip" --refresh-older-than 30d
check harvest_fetch__refresh_takes_only_pushed_repos "1 1" \
    "$(db "SELECT (fetched_at > '2020-01-02') FROM repos WHERE full_name = 'ok/cuda-saxpy'") $(db "SELECT json_extract(counts, '\$.fetched') FROM stage_runs ORDER BY id DESC LIMIT 1")"

# ---- a partial download left by an earlier run is resumed with Range
H import - <<<"ok/tiled-matmul"
mkdir -p "$W/archives/ok"
head -c 1000 "$SRV/tiled-matmul.zip" >"$W/archives/ok/tiled-matmul.zip.part"
t_expect harvest_fetch__resumes_a_part_file_from_an_earlier_run 0 H fetch --method zip-only --repo ok/tiled-matmul \
    --archive-url "$URL/f/{owner}/{name}.zip"
check harvest_fetch__asks_for_the_missing_bytes_only "bytes=1000-" \
    "$(grep '^GET /f/ok/tiled-matmul.zip' "$T_TMP/requests" | awk '{print $3}')"
check harvest_fetch__a_resumed_archive_is_whole "$(sha256sum <"$SRV/tiled-matmul.zip" | cut -d' ' -f1)" \
    "$(db "SELECT archive_sha256 FROM repos WHERE full_name = 'ok/tiled-matmul'")"

# ---- an archive over --max-archive-mb is refused, and not cloned instead
H import - <<<"ok/parallel-reduce"
t_expect harvest_fetch__refuses_an_archive_over_the_size_cap 1 H fetch --repo ok/parallel-reduce \
    --archive-url "$URL/f/{owner}/{name}.zip" --git-url "file://$T_TMP/git/{owner}/{name}" --max-archive-mb 0.001
check harvest_fetch__records_the_size_cap "failed zip: over the size cap (1000 bytes)" \
    "$(db "SELECT fetch_status || ' ' || fetch_error FROM repos WHERE full_name = 'ok/parallel-reduce'")"
[ ! -e "$W/archives/ok/parallel-reduce.zip.part" ] && t_ok harvest_fetch__drops_the_part_of_a_refused_archive ||
    t_fail harvest_fetch__drops_the_part_of_a_refused_archive "part file left"

# ---- the per-host cap: 8 slow downloads with -j 8 --per-host 2 never overlap more than 2
for i in $(seq 1 8); do echo "slow/cap-$i"; cp "$SRV/cuda-saxpy.zip" "$SRV/cap-$i.zip"; done >"$T_TMP/cap"
H import "$T_TMP/cap"
t_expect harvest_fetch__runs_under_a_per_host_cap 0 H -j 8 fetch --method zip-only --per-host 2 \
    --archive-url "$URL/f/{owner}/{name}.zip"
peak=$(grep '/f/slow/cap-' "$T_TMP/requests" | awk 'BEGIN{m=0} {if ($6 > m) m = $6} END{print m}')
[ "$peak" -le 2 ] && [ "$peak" -ge 2 ] && t_ok harvest_fetch__keeps_to_the_per_host_cap ||
    t_fail harvest_fetch__keeps_to_the_per_host_cap "peak in flight $peak"

# ---- a stalled body times out and is retried on a later run
H import - <<<"stall/cuda-saxpy"
t_expect harvest_fetch__times_out_a_stalled_body 1 H fetch --method zip-only --repo stall/cuda-saxpy \
    --archive-url "$URL/f/{owner}/{name}.zip" --timeout 1 --attempts 1
check harvest_fetch__a_timed_out_repo_is_failed_not_gone failed "$(status_of stall/cuda-saxpy)"

# ---- the git route: a fallback when the zip fails, and --method git
mkdir -p "$T_TMP/git/500"
cp -r "$ROOT/sample/repos/fluidsim/stencil2d" "$T_TMP/git/500/gitonly"
( cd "$T_TMP/git/500/gitonly" && git init -q && git add . &&
  git -c user.name=t -c user.email=t@e commit -qm init ) || t_fail harvest_fetch__git_fixture "git failed"
H import - <<<"500/gitonly"
t_expect harvest_fetch__falls_back_to_git_when_the_zip_fails 0 H fetch --repo 500/gitonly \
    --archive-url "$URL/f/{owner}/{name}.zip" --attempts 1 --git-url "file://$T_TMP/git/{owner}/{name}"
check harvest_fetch__records_git_method_and_head "git $(git -C "$T_TMP/git/500/gitonly" rev-parse HEAD)" \
    "$(db "SELECT fetch_method || ' ' || commit_sha FROM repos WHERE full_name = '500/gitonly'")"
check harvest_fetch__git_tree_matches_the_zip_tree "$(cd "$W/trees/reset/stencil2d" && find . -type f | sort | tr '\n' ' ')" \
    "$(cd "$W/trees/500/gitonly" && find . -type f | sort | tr '\n' ' ')"

# ---- a git server that accepts the connection and never answers: the clone worker is killed
# after --git-timeout (libgit2 1.5 alone would wait forever), the repository is failed
H import - <<<"hang/gitstall"
t0=$(date +%s.%N)
t_expect harvest_fetch__times_out_a_git_clone_that_never_answers 1 H fetch --method git \
    --repo hang/gitstall --git-url "$URL/f/{owner}/{name}.git" --git-timeout 2
t1=$(date +%s.%N)
# at least the timeout; far less than the server's hour of silence
python3 -c 'import sys; sys.exit(0 if 1.9 <= float(sys.argv[2]) - float(sys.argv[1]) < 1800 else 1)' "$t0" "$t1" &&
    t_ok harvest_fetch__a_stalled_clone_ends_after_the_git_timeout ||
    t_fail harvest_fetch__a_stalled_clone_ends_after_the_git_timeout "fetch took $t0 .. $t1"
check harvest_fetch__a_stalled_clone_reached_the_server 1 \
    "$(grep -c '^GET /f/hang/gitstall.git/info/refs' "$T_TMP/requests")"
check harvest_fetch__records_the_git_timeout "failed git clone '$URL/f/hang/gitstall.git': not done after 2 s (timed out; the repository stays failed and is retried later)" \
    "$(db "SELECT fetch_status || ' ' || fetch_error FROM repos WHERE full_name = 'hang/gitstall'")"
[ ! -e "$W/trees/hang/gitstall" ] && [ -z "$(find "$W/trees" -maxdepth 1 -name '.*')" ] &&
    t_ok harvest_fetch__a_killed_clone_leaves_no_folder ||
    t_fail harvest_fetch__a_killed_clone_leaves_no_folder "$(find "$W/trees" -maxdepth 2 | head)"
# a fetch killed with SIGKILL mid-clone takes its clone worker with it
db "UPDATE repos SET next_attempt_at = NULL WHERE full_name = 'hang/gitstall'"
lscat harvest --work "$W" -q fetch --method git --repo hang/gitstall --git-url "$URL/f/{owner}/{name}.git" \
    --git-timeout 0 &
victim=$!
worker_up() { pgrep -f "git-clone-worker $URL/f/hang/" >/dev/null || ! kill -0 "$victim" 2>/dev/null; }
t_wait_until worker_up
kill -9 "$victim"
wait "$victim" 2>/dev/null
worker_gone() { ! pgrep -f "git-clone-worker $URL/f/hang/" >/dev/null; }
T_PATIENCE_S=60 t_wait_until worker_gone # it dies with the fetch (SIGKILL): at once
pgrep -f "git-clone-worker $URL/f/hang/" >/dev/null &&
    t_fail harvest_fetch__a_killed_fetch_leaves_no_clone_worker "$(pgrep -af "git-clone-worker $URL/f/hang/")" ||
    t_ok harvest_fetch__a_killed_fetch_leaves_no_clone_worker
# later fetches on $W must not try the hanging server again
db "UPDATE repos SET next_attempt_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '+1 day') WHERE full_name = 'hang/gitstall'"
# a clone answered 404 comes back from the worker as 'not found': the repository is gone
H import - <<<"404/nogit"
t_expect harvest_fetch__a_git_404_through_the_worker_is_not_a_failure 0 H fetch --method git \
    --repo 404/nogit --git-url "$URL/f/{owner}/{name}.git"
check harvest_fetch__records_a_git_404_as_gone "gone git clone '$URL/f/404/nogit.git': unexpected http status code: 404" \
    "$(db "SELECT fetch_status || ' ' || fetch_error FROM repos WHERE full_name = '404/nogit'")"

# ---- hours over HTTP: 500 then ok, truncated gzip, missing
t_expect harvest_scan__downloads_hours_over_http_with_retries 0 H scan --source "$URL/f/500x2/gha/{YYYY}-{MM}-{DD}-{H}.json.gz" \
    --from 2014-06-01T12 --to 2014-06-01T12 --backoff 0.1
H scan --source "$URL/f/truncgz/gha/{YYYY}-{MM}-{DD}-{H}.json.gz" --from 2016-03-10T09 --to 2016-03-10T09
H scan --source "$URL/gha/{YYYY}-{MM}-{DD}-{H}.json.gz" --from 2016-03-10T10 --to 2016-03-10T10
check harvest_scan__http_hours_done_bad_missing "2014-06-01T12:done 2016-03-10T09:bad 2016-03-10T10:missing" \
    "$(db "SELECT group_concat(hour || ':' || status, ' ') FROM (SELECT * FROM gha_hours ORDER BY hour)")"
[ -z "$(ls "$W/gharchive" 2>/dev/null)" ] && t_ok harvest_scan__removes_downloaded_hours_after_the_scan ||
    t_fail harvest_scan__removes_downloaded_hours_after_the_scan "$(ls "$W/gharchive")"

# ---- one fetch per work folder: a second one at the same time stops with a clear message
H import - <<<"stall/cap-1"
lscat harvest --work "$W" -q fetch --method zip-only --repo stall/cap-1 --archive-url "$URL/f/{owner}/{name}.zip" \
    --timeout 120 --attempts 1 &
first=$!
# the first one holds the lock once its request reached the server (however slow its start),
# and stalls on the body until it is killed
cap1_asked() { grep -q '^GET /f/stall/cap-1' "$T_TMP/requests"; }
t_wait_until cap1_asked
t_expect harvest_fetch__refuses_a_second_concurrent_fetch 3 H fetch --method zip-only --archive-url "$URL/f/{owner}/{name}.zip"
t_contains harvest_fetch__says_another_fetch_is_running "$T_ERR" "another 'lscat harvest fetch' is running"
kill -9 "$first" 2>/dev/null
wait "$first" 2>/dev/null

# ---- issue 13: what an archive holds never stops the run; an archive that cannot be read to
# its end (empty, half a body) is a failed fetch and leaves the whole tree it would replace;
# a .part file restarts from zero when the server ignores Range (repositories and hours)
W=$T_TMP/w13
python3 - "$SRV" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1] + "/longname.zip", "w") as z:
    z.writestr("longname-0123/ok.cu", "int ok;\n")
    z.writestr("longname-0123/" + "n" * 300 + ".cu", "int n;\n")
    z.writestr("longname-0123/" + "d/" * 70 + "deep.cu", "int d;\n")
open(sys.argv[1] + "/empty.zip", "wb").close()
PY
printf 'ok/longname\nok/cuda-saxpy\n' | H import -
t_expect harvest_fetch__an_overlong_name_in_an_archive_does_not_stop_the_run 0 H fetch --method zip-only \
    --archive-url "$URL/f/{owner}/{name}.zip"
check harvest_fetch__the_repos_after_an_overlong_name_are_fetched "fetched fetched" \
    "$(status_of ok/longname) $(status_of ok/cuda-saxpy)"
check harvest_fetch__records_overlong_and_too_deep_names "name_too_long too_deep 1" \
    "$(db "SELECT group_concat(reason, ' ') FROM (SELECT reason FROM refused_entries r JOIN repos p
           ON p.id = r.repo_id WHERE p.full_name = 'ok/longname' ORDER BY reason)") $(db "SELECT files_kept
           FROM repos WHERE full_name = 'ok/longname'")"
H import - <<<"ok/empty"
t_expect harvest_fetch__an_empty_archive_is_a_failed_fetch 1 H fetch --method zip-only --repo ok/empty \
    --archive-url "$URL/f/{owner}/{name}.zip"
check harvest_fetch__says_the_archive_is_empty "failed 1" \
    "$(db "SELECT fetch_status || ' ' || (fetch_error LIKE 'zip: empty archive %(0 bytes)') FROM repos WHERE full_name = 'ok/empty'")"
H import - <<<"half/stencil2d"
t_expect harvest_fetch__fetches_a_whole_archive_before_a_half_one 0 H fetch --method zip-only --repo half/stencil2d \
    --archive-url "$URL/{name}.zip"
tree_before=$(cd "$W/trees/half/stencil2d" && find . -type f | sort | xargs sha256sum | sha256sum)
db "UPDATE repos SET fetched_at = '2020-01-01T00:00:00Z', pushed_at = '2021-01-01T00:00:00Z' WHERE full_name = 'half/stencil2d'"
t_expect harvest_fetch__a_half_body_with_its_own_length_is_a_failed_fetch 1 H fetch --method zip-only \
    --repo half/stencil2d --archive-url "$URL/f/{owner}/{name}.zip" --refresh-older-than 30d
check harvest_fetch__records_the_truncated_zip_for_a_later_retry "failed 1 1" \
    "$(db "SELECT fetch_status || ' ' || (fetch_error LIKE '%truncated%') || ' ' ||
           (next_attempt_at > strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) FROM repos WHERE full_name = 'half/stencil2d'")"
check harvest_fetch__a_truncated_zip_leaves_the_whole_tree_and_rows "$tree_before 5" \
    "$(cd "$W/trees/half/stencil2d" && find . -type f | sort | xargs sha256sum | sha256sum) $(db "SELECT count(*)
       FROM files f JOIN repos p ON p.id = f.repo_id WHERE p.full_name = 'half/stencil2d'")"
H import - <<<"norange/tiled-matmul"
mkdir -p "$W/archives/norange"
head -c 1000 "$SRV/parallel-reduce.zip" >"$W/archives/norange/tiled-matmul.zip.part"
t_expect harvest_fetch__a_part_file_restarts_when_the_server_ignores_range 0 H fetch --method zip-only \
    --repo norange/tiled-matmul --archive-url "$URL/f/{owner}/{name}.zip" --attempts 2 --backoff 0.1
check harvest_fetch__an_archive_restarted_from_zero_is_whole "$(sha256sum <"$SRV/tiled-matmul.zip" | cut -d' ' -f1)" \
    "$(db "SELECT archive_sha256 FROM repos WHERE full_name = 'norange/tiled-matmul'")"
check harvest_fetch__the_restart_asked_for_the_missing_bytes_first "bytes=1000-" \
    "$(grep '^GET /f/norange/tiled-matmul.zip' "$T_TMP/requests" | head -1 | awk '{print $3}')"
mkdir -p "$W/gharchive"
head -c 500 "$SRV/gha/2025-11-02-3.json.gz" >"$W/gharchive/2025-11-02T03.json.gz.part"
t_expect harvest_scan__a_part_hour_restarts_when_the_server_ignores_range 0 H scan \
    --source "$URL/f/norange/gha/{YYYY}-{MM}-{DD}-{H}.json.gz" --from 2025-11-02T03 --to 2025-11-02T03 \
    --attempts 2 --backoff 0.1
: >"$SRV/gha/2016-03-10-11.json.gz"
H scan --source "$URL/gha/{YYYY}-{MM}-{DD}-{H}.json.gz" --from 2016-03-10T11 --to 2016-03-10T11
check harvest_scan__an_empty_hour_over_http_is_bad_not_a_rename_error "bad empty file (after 0 events)" \
    "$(db "SELECT status || ' ' || reason FROM gha_hours WHERE hour = '2016-03-10T11'")"
check harvest_scan__an_hour_restarted_from_zero_is_scanned_whole "done $(python3 "$ROOT/tests/harvest/support/gha_count.py" \
    "$SRV/gha/2025-11-02-3.json.gz" | tail -1 | awk '{print $2}')" \
    "$(db "SELECT status || ' ' || events FROM gha_hours WHERE hour = '2025-11-02T03'")"

# ---- SIGKILL in the middle of a fetch: the next run finishes, nothing lost or doubled
W=$T_TMP/wk
for i in $(seq 1 30); do echo "slow/cuda-saxpy-$i"; done >"$T_TMP/many"
for i in $(seq 1 30); do cp "$SRV/cuda-saxpy.zip" "$SRV/cuda-saxpy-$i.zip"; done
H import "$T_TMP/many"
lscat harvest --work "$W" -q -j 4 fetch --method zip-only --archive-url "$URL/f/{owner}/{name}.zip" &
victim=$!
fetched() { [ "$(db "SELECT count(*) FROM repos WHERE fetch_status = 'fetched'" 2>/dev/null || echo 0)" -ge "$1" ]; }
t_wait_until fetched 3 # kill once some are in: a point the run shows, not a time
kill -9 "$victim" 2>/dev/null
wait "$victim" 2>/dev/null
mid=$(db "SELECT count(*) FROM repos WHERE fetch_status = 'fetched'")
t_expect harvest_fetch__finishes_after_sigkill 0 H -j 4 fetch --method zip-only --archive-url "$URL/f/{owner}/{name}.zip"
check harvest_fetch__all_fetched_after_sigkill "30 60 0" "$(db "SELECT count(*) FROM repos WHERE fetch_status = 'fetched'") \
$(db "SELECT count(*) FROM files") $(find "$W/trees" -maxdepth 1 -name '.*' | wc -l)"
[ "$mid" -lt 30 ] && t_ok harvest_fetch__the_kill_hit_mid_run || t_skip harvest_fetch__the_kill_hit_mid_run "all $mid were done before the kill"
t_done
