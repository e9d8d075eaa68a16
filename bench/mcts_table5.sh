#!/usr/bin/env bash
# The paper's Table V on the authors' SpMV file, by replay: rules learned from the first 50,
# 100, 200, 400 and all 2,036 iterations of a search, each used to classify all 2,036
# implementations; the share whose p10 time falls in the predicted class's range. For the
# coverage, fastest-first and random strategies over seeds 1..10 (mean, min, max).
# Usage: bench/mcts_table5.sh [AUTHORS_FILE]   (LSCAT_BIN: the programs, default build/bin)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(cd "${LSCAT_BIN:-build/bin}" && pwd):$PATH"
DATA=${1:-}
for d in tests/data/tenzing ../shared/data/tenzing ../../shared/data/tenzing; do
    [ -z "$DATA" ] && [ -f "$d/spmv_coverage_1n_4r_150000.csv" ] && DATA=$d/spmv_coverage_1n_4r_150000.csv
done
[ -n "$DATA" ] || { echo "mcts_table5: the authors' file is not in tests/data/tenzing" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# every implementation with the authors' times, named as ours are (Pack, not their Scatter)
lscat --db "$tmp/all.db" -q mcts search --dag mcts/dags/spmv.dag --streams 2 --backend replay \
    --replay "$DATA" --out "$tmp/all.csv"
printf '%-9s' strategy; for n in 50 100 200 400 2036; do printf ' %22s' "$n"; done; echo
for strategy in coverage fastest random; do
    for seed in 1 2 3 4 5 6 7 8 9 10; do
        lscat --db "$tmp/s.db" -q mcts search --dag mcts/dags/spmv.dag --streams 2 \
            --backend replay --replay "$DATA" --strategy "$strategy" --seed "$seed" \
            --out "$tmp/$strategy-$seed.csv"
        for n in 50 100 200 400 2036; do
            lscat mcts rules "$tmp/$strategy-$seed.csv" --first "$n" --evaluate "$tmp/all.csv" \
                --out "$tmp/r" | sed -n 's/^evaluate: .* classify \([0-9.]*\) .*/\1/p' \
                >>"$tmp/$strategy-$n"
        done
    done
    printf '%-9s' "$strategy"
    for n in 50 100 200 400 2036; do
        python3 -c "import sys; v=[float(x) for x in open(sys.argv[1])]; print(' %6.3f [%5.3f-%5.3f]' % (sum(v)/len(v), min(v), max(v)), end='')" "$tmp/$strategy-$n"
    done
    echo
done
echo "(mean [min-max] over seeds 1-10; paper, coverage: 0.75 0.83 0.96 0.99 1.0)"
