#!/usr/bin/env bash
# A secret in lscat's environment (GITHUB_TOKEN, issue 13 defect 4) never reaches the programs
# that run untrusted code, nor anything they write: a build (an nvcc wrapper that prints its
# environment into the build log), a probe (a harness that prints the token as its last stderr
# line, which becomes the probe's detail and a failure row), tune's harness processes and
# lscat-runner (the stand-in harness records its environment), the store, and CSV and Parquet
# exports. Each place is also checked to hold the dump (PATH=), so the test sees the path a
# leak would take.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
TB=${LSCAT_TEST_BIN:-$ROOT/build/tests}
case "$TB" in /*) ;; *) TB=$ROOT/$TB ;; esac
W=$T_TMP/work
export LSCAT_WORK=$W LSCAT_DB=$W/lscat.db LSCAT_LOCK_DIR=$T_TMP/locks
CANARY=canary-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
export GITHUB_TOKEN=$CANARY AWS_SECRET_ACCESS_KEY=$CANARY
chmod 755 "$T_TMP"
lscat init -q >/dev/null 2>&1 || t_fail canary__init "lscat init failed"
leaks() { grep -rlaF -- "$CANARY" "$@" 2>/dev/null; }
no_leak() { # name, paths...
    local name=$1; shift
    local found
    found=$(leaks "$@")
    [ -z "$found" ] && t_ok "$name" || t_fail "$name" "the canary is in: $found"
}

# ---- tune: harness processes (--no-runner) and lscat-runner (harness.so), stand-in GPUs
export LSCAT_GPUINFO=$ROOT/tests/tune/support/fake_gpuinfo.sh FAKE_GPUS=1 LSCAT_RUNNER_NO_CUDA=1
export LSCAT_TEST_DUMP_ENV=1
for k in p r; do
    mkdir -p "$W/builds/$k"
    cp "$TB/tune/support/fake_harness" "$W/builds/$k/harness"
done
cp "$TB/tune/support/fake_harness.so" "$W/builds/r/harness.so"
python3 "$ROOT/tests/tune/support/seed_store.py" "$LSCAT_DB" p=builds/p/harness r=builds/r/harness
t_expect canary__tune_runs_a_harness_process 0 lscat tune --no-runner --kernel p --sizes 64 --blocks 64
t_expect canary__tune_runs_the_runner 0 lscat tune --kernel r --sizes 64 --blocks 64
for k in p r; do
    t_contains "canary__tune_${k}_recorded_its_environment" "$W/builds/$k/harness.log" "PATH="
done
no_leak canary__tune_harness_processes_and_the_runner_never_see_it "$W/builds"
unset LSCAT_GPUINFO FAKE_GPUS LSCAT_RUNNER_NO_CUDA LSCAT_TEST_DUMP_ENV

# ---- execute: a build through an nvcc that prints its environment, a probe that prints it
NVCC_REAL=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [ ! -x "$NVCC_REAL" ]; then
    t_skip canary__builds_and_probes_never_see_it "nvcc not found"
else
    mkdir -p "$W/bin" # in the work folder: the sandbox sees it, not the rest of /tmp
    cat >"$W/bin/nvcc" <<SH
#!/bin/sh
echo "nvcc-env: \$(env | tr '\n' ' ')" >&2
exec "$NVCC_REAL" "\$@"
SH
    chmod 755 "$W/bin/nvcc"
    id=$(printf 'canary-env' | sha256sum | cut -c1-64)
    kd=$W/kernels/${id:0:2}/$id
    mkdir -p "$kd/include"
    cp "$ROOT/tests/execute/fixtures/kernels/ok/kernel.cu" "$kd/"
    cp "$ROOT/tests/execute/fixtures/harness_main.h" "$kd/include/"
    cat >"$kd/harness.cu" <<'CU'
// Host code that prints what it can find of a token as its last stderr line (the probe's
// detail, which the store keeps and the export publishes).
#include "kernel.cu"
#include "tune/timing.h"
#include <cstdio>
#include <cstdlib>
int main()
{
    const char *t = getenv("GITHUB_TOKEN"), *a = getenv("AWS_SECRET_ACCESS_KEY");
    fprintf(stderr, "PATH=%s GITHUB_TOKEN=%s AWS_SECRET_ACCESS_KEY=%s\n", getenv("PATH"),
            t ? t : "(unset)", a ? a : "(unset)");
    return 3;
}
CU
    sqlite3 "$LSCAT_DB" "INSERT INTO kernels(id, name, dir, params, param_count, created_at)
        VALUES ('$id', 'canary_env', 'kernels/${id:0:2}/$id', '[]', 2, '2026-11-21T00:00:00Z')"
    t_expect canary__execute_builds_and_probes 1 lscat execute --arch sm_90 -j 1 --probe-anyway --nvcc "$W/bin/nvcc" --kernel "${id:0:16}"
    logs=$(ls "$W"/builds/*/build-1.log 2>/dev/null | head -1)
    [ -n "$logs" ] && t_contains canary__the_build_log_holds_nvccs_environment "$logs" "nvcc-env: " ||
        t_fail canary__the_build_log_holds_nvccs_environment "no build log"
    detail=$(sqlite3 "$LSCAT_DB" "SELECT detail FROM probes WHERE kernel_id = '$id'")
    case "$detail" in *PATH=*) t_ok canary__the_probe_detail_holds_the_harness_environment ;;
        *) t_fail canary__the_probe_detail_holds_the_harness_environment "detail: $detail" ;; esac
    no_leak canary__builds_and_probes_never_see_it "$W/builds" "$W/kernels"
fi

# ---- the store and the exports
t_expect canary__exports_csv 0 lscat dataset export --format csv --out "$T_TMP/csv"
t_expect canary__exports_parquet 0 lscat dataset export --out "$T_TMP/pq"
if [ -x "$NVCC_REAL" ]; then
    t_contains canary__failures_csv_holds_the_probe_detail "$T_TMP/csv/failures.csv" "PATH="
fi
no_leak canary__the_store_never_holds_it "$W"/lscat.db*
no_leak canary__no_export_holds_it "$T_TMP/csv" "$T_TMP/pq"
no_leak canary__nothing_in_the_work_folder_holds_it "$W"
t_done
