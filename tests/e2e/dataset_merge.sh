#!/usr/bin/env bash
# lscat dataset merge end to end: the SYNTHETIC store merged (twice) into an empty one exports
# the same tables as the original, and the second merge adds nothing.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
S=$T_TMP/syn
"$ROOT/tests/dataset/support/synth-store.sh" "$S/lscat.db" "$S/work" >"$T_OUT" 2>"$T_ERR" ||
    t_fail dataset_merge__synthetic_store_builds "$(cat "$T_ERR")"
t_expect dataset_merge__merges_a_shard 0 lscat-dataset merge "$S/lscat.db" --db "$S/all.db" -q
t_expect dataset_merge__merges_it_again 0 lscat-dataset merge "$S/lscat.db" --db "$S/all.db"
t_contains dataset_merge__second_merge_adds_nothing "$T_ERR" '"kernels":0,'
lscat-dataset --db "$S/lscat.db" --work "$S/work" -q export --format csv --out "$S/a"
lscat-dataset --db "$S/all.db" --work "$S/work" -q export --format csv --out "$S/b"
for t in kernels occurrences repositories measurements failures gpus; do
    if cmp -s "$S/a/$t.csv" "$S/b/$t.csv"; then t_ok "dataset_merge__${t}_survive_unchanged"
    else t_fail "dataset_merge__${t}_survive_unchanged" "$(diff "$S/a/$t.csv" "$S/b/$t.csv" | head -5)"; fi
done
t_expect dataset_merge__needs_a_shard 2 lscat-dataset merge --db "$S/all.db"
t_expect dataset_merge__missing_shard_is_fatal 3 lscat-dataset merge "$S/none.db" --db "$S/all.db"
t_done
