#!/usr/bin/env bash
# `make bench`: runs every benchmark script bench/*.sh (each stage adds its own) and collects
# their result lines. Benchmarks report ratios measured side by side in one run; they never
# fail the build on a missed target, they print it (TARGET MISSED) so the note can say so.
set -u
cd "$(dirname "$0")/.."
export LSCAT_BIN=$(cd "${LSCAT_BIN:-build/bin}" && pwd)
export LSCAT_ROOT=$PWD
n=0
for b in bench/*.sh; do
    [ "$(basename "$b")" = run.sh ] && continue
    [ -e "$b" ] || continue
    echo "== $b"
    bash "$b"
    n=$((n + 1))
done
echo "$n benchmark scripts run"
