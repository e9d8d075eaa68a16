# End-to-end: the real `lscat` dispatcher, global options, exit codes, init and status.
. "$(dirname "$0")/lib.sh"
W=$T_TMP/work

t_expect dispatcher__help_lists_every_stage 0 lscat --help &&
    t_contains dispatcher__help_documents_exit_codes "$T_OUT" "usage error"
for stage in harvest isolate execute tune dataset status init; do
    grep -q "^  $stage " "$T_OUT" || t_fail "dispatcher__help_lists_$stage" "missing from --help"
done

t_expect dispatcher__version_names_git_and_schema 0 lscat --version &&
    grep -Eq '^lscat [0-9]+\.[0-9]+\.[0-9]+ \(git .+, schema [0-9]+\)$' "$T_OUT" &&
    t_ok dispatcher__version_format_is_stable

t_expect dispatcher__unknown_stage_is_a_usage_error 2 lscat frobnicate &&
    t_contains dispatcher__unknown_stage_says_so "$T_ERR" "'frobnicate' is not an lscat stage"
t_expect dispatcher__no_stage_is_a_usage_error 2 lscat
t_expect dispatcher__unknown_global_option_is_a_usage_error 2 lscat --frob status &&
    t_contains dispatcher__usage_line_follows_the_error "$T_ERR" "usage: lscat"
t_expect dispatcher__missing_option_value_is_a_usage_error 2 lscat status --db
t_expect dispatcher__stage_unknown_option_is_a_usage_error 2 lscat status --nope &&
    [ "$(wc -l < "$T_ERR")" -le 3 ] && t_ok dispatcher__usage_error_is_short

# Global options are checked wherever they are given: before the stage name (the dispatcher,
# which passes them on in the environment), after it (the stage), or in the environment.
for bad in abc 0 -1 1.5; do
    t_expect "dispatcher__jobs_${bad//[^0-9a-z]/_}_before_the_stage_is_a_usage_error" 2 \
        lscat -j "$bad" --db "$W/none.db" status &&
        t_contains "dispatcher__jobs_${bad//[^0-9a-z]/_}_error_names_the_value" "$T_ERR" "$bad"
    t_expect "dispatcher__jobs_${bad//[^0-9a-z]/_}_after_the_stage_is_a_usage_error" 2 \
        lscat --db "$W/none.db" status -j "$bad"
done
t_expect dispatcher__attached_jobs_value_is_checked 2 lscat -j0 --db "$W/none.db" status
t_expect dispatcher__log_format_before_the_stage_is_checked 2 \
    lscat --log-format xml --db "$W/none.db" status &&
    t_contains dispatcher__log_format_error_names_the_choices "$T_ERR" "'xml' is not text or json"
t_expect dispatcher__log_format_after_the_stage_is_checked 2 \
    lscat --db "$W/none.db" status --log-format xml
t_expect dispatcher__bad_jobs_in_the_environment_is_a_usage_error 2 \
    env LSCAT_JOBS=abc lscat-status --db "$W/none.db" &&
    t_contains dispatcher__environment_error_names_the_variable "$T_ERR" "LSCAT_JOBS"
t_expect dispatcher__bad_log_format_in_the_environment_is_a_usage_error 2 \
    env LSCAT_LOG_FORMAT=xml lscat-status --db "$W/none.db"
t_expect dispatcher__an_option_after_the_stage_replaces_a_bad_environment_value 3 \
    env LSCAT_JOBS=abc lscat-status -j 2 --db "$W/none.db"

t_expect dispatcher__status_on_a_missing_store_is_fatal 3 lscat --db "$W/none.db" status &&
    t_contains dispatcher__missing_store_message_says_what_to_do "$T_ERR" "run a stage to create it"

t_expect dispatcher__init_creates_the_store 0 lscat --work "$W" init
[ -f "$W/lscat.db" ] && t_ok dispatcher__work_option_places_the_default_db || t_fail dispatcher__work_option_places_the_default_db "no $W/lscat.db"
t_expect dispatcher__init_is_idempotent 0 lscat --work "$W" init

t_expect dispatcher__status_prints_a_summary 0 lscat --work "$W" status &&
    t_contains dispatcher__status_shows_schema "$T_OUT" "(schema "
t_expect dispatcher__status_json 0 lscat status --json --db "$W/lscat.db" &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["store"]["schema_version"]>=1; assert "repos" in d["sections"]' "$T_OUT" &&
    t_ok dispatcher__status_json_is_valid_json

t_expect dispatcher__json_logs 0 lscat --log-format json --work "$W" init &&
    python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1]) if l.strip()]' "$T_ERR" &&
    grep -q '"level":"info"' "$T_ERR" && t_ok dispatcher__json_logs_are_json_lines
t_expect dispatcher__quiet_silences_info 0 lscat -q --work "$W" init &&
    [ ! -s "$T_ERR" ] && t_ok dispatcher__quiet_prints_nothing_on_success

printf 'not a database\n' > "$T_TMP/notes.txt"
t_expect dispatcher__refuses_a_foreign_file_as_store 3 lscat --db "$T_TMP/notes.txt" init &&
    [ "$(cat "$T_TMP/notes.txt")" = "not a database" ] && t_ok dispatcher__foreign_file_left_untouched

t_expect dispatcher__help_for_a_stage_through_help_command 0 lscat help status &&
    t_contains dispatcher__stage_help_has_exit_codes "$T_OUT" "Exit status"
t_done
