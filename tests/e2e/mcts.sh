#!/usr/bin/env bash
# lscat mcts end to end: enumerate the shipped SpMV DAG, a malformed DAG refused, a whole replay
# search on the authors' file, the same search killed (SIGKILL) again and again until it
# finishes, which must write the same results as the uninterrupted one, and the strategies.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
DAG=$ROOT/mcts/dags/spmv.dag
DATA=""
for d in "$ROOT/tests/data/tenzing" "$ROOT/../shared/data/tenzing" "$ROOT/../../shared/data/tenzing"; do
    [ -f "$d/spmv_coverage_1n_4r_150000.csv" ] && DATA=$d/spmv_coverage_1n_4r_150000.csv && break
done

t_expect "mcts_enumerate__counts_2036_spmv_implementations_on_two_streams" 0 \
    lscat mcts enumerate "$DAG" --streams 2 --count
[ "$(tail -n1 "$T_OUT")" = 2036 ] || t_fail "mcts_enumerate__last_line_is_the_count" "$(cat "$T_OUT")"
lscat mcts enumerate "$DAG" --streams 2 >"$T_TMP/all.txt"
[ "$(wc -l <"$T_TMP/all.txt")" = 2037 ] && [ "$(sort -u "$T_TMP/all.txt" | wc -l)" = 2037 ] \
    && t_ok "mcts_enumerate__lists_2036_different_implementations" \
    || t_fail "mcts_enumerate__lists_2036_different_implementations" "$(wc -l <"$T_TMP/all.txt")"

printf 'cpu a\ncpu b\na -> b\nb -> a\nb -> end\n' >"$T_TMP/bad.dag"
t_expect "mcts_enumerate__refuses_a_cyclic_dag_as_a_usage_error" 2 \
    lscat mcts enumerate "$T_TMP/bad.dag" --streams 2 && \
    t_contains "mcts_enumerate__names_the_line_of_the_cycle" "$T_ERR" "bad.dag:4: edge 'b -> a' closes a cycle"

if [ -z "$DATA" ]; then
    t_skip "mcts_search__replay" "the authors' file is not in tests/data or ../shared/data"
    t_done
fi
search() { # DB OUT [options]
    local db=$1 out=$2; shift 2
    lscat --db "$db" mcts search --dag "$DAG" --streams 2 --backend replay --replay "$DATA" \
        --out "$out" "$@"
}
t_expect "mcts_search__replays_all_2036_implementations" 0 search "$T_TMP/a.db" "$T_TMP/a.csv"
[ "$(wc -l <"$T_TMP/a.csv")" = 2036 ] && [ "$(cut -d'|' -f8- "$T_TMP/a.csv" | sort -u | wc -l)" = 2036 ] \
    && t_ok "mcts_search__measures_each_implementation_once" \
    || t_fail "mcts_search__measures_each_implementation_once" "$(wc -l <"$T_TMP/a.csv") rows"
t_contains "mcts_search__writes_the_authors_format" "$T_TMP/a.csv" \
    '0|5.59104e-05|5.70349e-05|5.71077e-05|5.72117e-05|5.7389e-05|3.29145e-07|{"name":"start"}|'

# Kill it again and again until a run finishes; nothing may be lost or repeated. Each run goes
# in 10 ms slices, stopped (SIGSTOP) while the test reads the store, and is killed at the first
# slice that added rows: a point the store shows, part way on any machine, never a guess at
# how long the search takes. Each killed run adds rows, so the loop ends.
iterations() { sqlite3 "$T_TMP/k.db" "SELECT count(*) FROM mcts_iterations" 2>/dev/null | grep . || echo 0; }
kills=0 partial=0 rc=1
while [ "$kills" -le 2036 ]; do
    before=$(iterations)
    lscat --db "$T_TMP/k.db" mcts search --dag "$DAG" --streams 2 --backend replay \
        --replay "$DATA" --out "$T_TMP/k.csv" >/dev/null 2>&1 &
    pid=$!
    while kill -STOP "$pid" 2>/dev/null; do
        now=$(iterations)
        [ "$now" -gt "$before" ] && break
        kill -CONT "$pid"
        sleep 0.01
    done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=$?
    [ "$rc" = 0 ] && break
    kills=$((kills + 1))
    [ "$now" -gt 0 ] && [ "$now" -lt 2036 ] && partial=$((partial + 1))
done
if [ "$rc" = 0 ] && [ "$partial" -gt 0 ] && cmp -s "$T_TMP/a.csv" "$T_TMP/k.csv"; then
    t_ok "mcts_search__killed_${kills}_times_resumes_to_the_same_results"
else
    t_fail "mcts_search__killed_and_resumed_resumes_to_the_same_results" \
        "rc $rc after $kills kills, $partial of them part way"
fi

t_expect "mcts_search__stops_after_the_iterations_asked" 0 \
    search "$T_TMP/f.db" "$T_TMP/f100.csv" --strategy fastest --iterations 100 --seed 7
[ "$(wc -l <"$T_TMP/f100.csv")" = 100 ] && t_ok "mcts_search__writes_100_rows" \
    || t_fail "mcts_search__writes_100_rows" "$(wc -l <"$T_TMP/f100.csv")"
search "$T_TMP/f.db" "$T_TMP/f200.csv" --strategy fastest --iterations 200 --seed 7 2>"$T_ERR"
head -n 100 "$T_TMP/f200.csv" | cmp -s - "$T_TMP/f100.csv" && grep -qF "100 resumed" "$T_ERR" \
    && t_ok "mcts_search__continues_a_shorter_search" \
    || t_fail "mcts_search__continues_a_shorter_search" "$(cat "$T_ERR")"
t_expect "mcts_search__random_strategy_runs" 0 \
    search "$T_TMP/r.db" "$T_TMP/r.csv" --strategy random --iterations 50 --seed 3
printf 'gpu a\ncpu b\na -> b\nb -> end\n' >"$T_TMP/other.dag"
t_expect "mcts_search__refuses_a_replay_file_of_another_dag" 3 \
    lscat --db "$T_TMP/x.db" mcts search --dag "$T_TMP/other.dag" --streams 2 --backend replay \
    --replay "$DATA" --out "$T_TMP/x.csv"
t_expect "mcts_search__needs_the_replay_file" 2 \
    lscat --db "$T_TMP/x.db" mcts search --dag "$DAG" --streams 2 --backend replay --out "$T_TMP/x.csv"
printf 'cpu a\ncpu a\na -> end\n' >"$T_TMP/dup.dag"
t_expect "mcts_search__refuses_a_malformed_dag_as_a_usage_error" 2 \
    lscat --db "$T_TMP/y.db" mcts search --dag "$T_TMP/dup.dag" --streams 2 --backend replay \
    --replay "$DATA" --out "$T_TMP/y.csv" && \
    [ ! -e "$T_TMP/y.csv" ] && [ ! -e "$T_TMP/y.db" ] && t_ok "mcts_search__writes_nothing_for_a_malformed_dag"

# rules (need learn/): classes, rules as sentences, DOT, PNG where Graphviz is installed, and
# the paper's Table V check on the authors' file
if ! lscat mcts --help | grep -q '^  rules      classes'; then
    t_skip "mcts_rules" "lscat-mcts built without learn/"; t_done
fi
t_expect "mcts_rules__learns_from_a_whole_search" 0 lscat mcts rules "$T_TMP/a.csv" --out "$T_TMP/rules"
t_contains "mcts_rules__finds_three_classes_in_the_authors_times" "$T_TMP/rules/rules.txt" "2036 implementations, 3 classes"
t_contains "mcts_rules__fits_the_training_rows" "$T_TMP/rules/rules.txt" "training accuracy 1.000"
grep -qE '^  (yl|Pack) (not before|before|same stream as|different stream than) (yl|Pack)$' "$T_TMP/rules/rules.txt" \
    && t_ok "mcts_rules__writes_pack_and_yl_rules_as_sentences" \
    || t_fail "mcts_rules__writes_pack_and_yl_rules_as_sentences" "$(head -c 400 "$T_TMP/rules/rules.txt")"
t_contains "mcts_rules__writes_the_tree_as_dot" "$T_TMP/rules/tree.dot" "digraph Tree"
if command -v dot >/dev/null; then
    [ -s "$T_TMP/rules/tree.png" ] && t_ok "mcts_rules__draws_the_tree_with_dot" \
        || t_fail "mcts_rules__draws_the_tree_with_dot" "no tree.png"
fi
lscat mcts rules "$T_TMP/a.csv" --first 400 --evaluate "$T_TMP/a.csv" --out "$T_TMP/r400" >"$T_OUT" 2>"$T_ERR"
share=$(sed -n 's/^evaluate: .* classify \([0-9.]*\) .*/\1/p' "$T_OUT")
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 0.85 else 1)" "${share:-0}" \
    && t_ok "mcts_rules__from_400_coverage_iterations_classify_most_of_2036" \
    || t_fail "mcts_rules__from_400_coverage_iterations_classify_most_of_2036" "share ${share:-none}"
t_expect "mcts_rules__refuses_an_unknown_criterion" 2 lscat mcts rules "$T_TMP/a.csv" --out "$T_TMP/x" --criterion best
t_done
