#!/usr/bin/env bash
# `make run`: the whole pipeline on the bundled sample, stage by stage, in a fresh work folder
# (./lscat-work by default; LSCAT_WORK overrides). Each stage that has landed adds its step
# here; a stage that cannot run on this machine (tune without a GPU) says so and the pipeline
# goes on.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(cd "${LSCAT_BIN:-build/bin}" && pwd)
export PATH="$BIN:$PATH"
export LSCAT_WORK=${LSCAT_WORK:-$PWD/lscat-work}
export LSCAT_DB=${LSCAT_DB:-$LSCAT_WORK/lscat.db}

step() { echo; echo "== lscat $*"; lscat "$@"; }

step init
# harvest: the bundled sample's hours and repositories, served from files the way GH Archive
# and GitHub serve them (sample/make-sample.py builds the .json.gz hours and the zipballs).
python3 sample/make-sample.py "$LSCAT_WORK/sample"
for hour in 2014-06-01T12 2016-03-10T09 2025-11-02T03; do
    step harvest scan --source "file://$LSCAT_WORK/sample/gharchive" --from "$hour" --to "$hour"
done
step harvest fetch --archive-url "file://$LSCAT_WORK/sample/archives/{owner}/{name}.zip"
# isolate exits 1 when it recorded failures (bad files of the sample): the pipeline goes on.
step isolate || [ $? -eq 1 ]
# execute: builds (and, with a GPU, probes) what isolate produced; exit 1 = failures recorded.
step execute || [ $? -eq 1 ]
# tune: without a CUDA device it says so, measures nothing and exits 0; with one, exit 1 means
# it recorded failures (a kernel given up), and the export goes on.
step tune || [ $? -eq 1 ]
step dataset export --format parquet --out "$LSCAT_WORK/export"
step dataset export --format csv --gzip --out "$LSCAT_WORK/export-csv"
step dataset report --out "$LSCAT_WORK/report"
# sweep: a user's own kernel in the BONSAI format (examples/matmul: 15 records in 5
# compile-time tuples; BLOCK_SIZE 128 does not build, by design: its 3 rows say Compile). With a
# GPU it measures the rest; without one it builds the tuples and leaves their 12 records for a
# GPU machine, where the same command resumes (docs/tune.md "lscat sweep").
mkdir -p "$LSCAT_WORK/sweep"
SW=(sweep --kernel examples/matmul/matmul.cu --driver examples/matmul/driver.c
    --space examples/matmul/space.csv --out "$LSCAT_WORK/sweep/matmul.csv")
if nvidia-smi -L >/dev/null 2>&1; then
    step "${SW[@]}" || [ $? -eq 1 ]
else
    step "${SW[@]}" --compile-only || [ $? -eq 1 ]
    echo "sweep: no CUDA device here: the tuples are built, their records left for a GPU machine"
fi
# mcts: a replay search over the Tenzing authors' 2,036 measured SpMV implementations, then the
# design rules learned from it (docs/mcts.md).
tenzing=""
for d in tests/data/tenzing ../shared/data/tenzing ../../shared/data/tenzing; do
    [ -f "$d/spmv_coverage_1n_4r_150000.csv" ] && tenzing=$d/spmv_coverage_1n_4r_150000.csv && break
done
if [ -n "$tenzing" ]; then
    step mcts search --dag mcts/dags/spmv.dag --streams 2 --backend replay --replay "$tenzing" \
        --out "$LSCAT_WORK/mcts/spmv.csv"
    if [ -x "$BIN/lscat-mcts" ] && lscat mcts --help | grep -q '^  rules      classes'; then
        step mcts rules "$LSCAT_WORK/mcts/spmv.csv" --out "$LSCAT_WORK/mcts/rules"
    fi
else
    echo; echo "== lscat mcts: skipped (the authors' SpMV measurements are not in tests/data/tenzing)"
fi
# seer: train and evaluate kernel selectors from a stored bench table. A table measured on a GPU
# (tests/data/seer/bench-*.csv) is used when one is shipped; otherwise the CI fixture, whose
# times come from a documented COST MODEL and are not measurements (docs/seer.md).
table=
for f in tests/data/seer/bench-*.csv; do [ -f "$f" ] && table=$f && break; done
if [ -z "$table" ]; then
    table=tests/data/seer/costmodel.csv
    echo "seer: no measured bench table is shipped: using $table (cost model, not measurements)"
fi
step seer import "$table"
step seer train --out "$LSCAT_WORK/seer"
step seer eval --out "$LSCAT_WORK/seer"
# nightly: the same pipeline as one incremental command (here nothing is new: the sample's last
# hour is done), ending with a dated release under $LSCAT_WORK/releases (docs/nightly.md)
step nightly --to 2025-11-02T03 --source "file://$LSCAT_WORK/sample/gharchive" \
    --archive-url "file://$LSCAT_WORK/sample/archives/{owner}/{name}.zip"
step status
