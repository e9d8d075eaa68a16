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
# isolate exits 1 when it recorded failures (bad files of the sample): the pipeline goes on.
step isolate || [ $? -eq 1 ]
step status
