#!/usr/bin/env bash
# Sweep efficiency on one GPU: time spent inside timed kernel executions (sum over ok
# measurements of samples x launches_per_sample x mean_ns) over the wall time of `lscat tune`
# sweeping K short kernels x the default 140 configurations. Target >= 0.8. Side by side in
# one run: in lscat-runner (default: harness.so loaded into one long-lived process per GPU,
# samples of short kernels launched as CUDA graphs), the same with launches one by one
# (LSCAT_TIMING_GRAPH=0, the timing of lscat before graphs), --no-runner (a harness process per
# kernel, prestarted) and --no-runner --no-prestart; the per-configuration medians are compared
# to show what each way changes in the times. Needs a
# CUDA device and the fixture harnesses (built where nvcc exists); otherwise says why and skips.
set -u
cd "$(dirname "$0")/.."
BIN=${LSCAT_BIN:-build/bin}
BIN=$(cd "$BIN" && pwd)
TB=${LSCAT_TEST_BIN:-$(dirname "$BIN")/tests}
export PATH="$BIN:$PATH"
K=${TUNE_BENCH_KERNELS:-10}
if [ ! -x "$BIN/lscat-gpuinfo" ] || [ -z "$("$BIN/lscat-gpuinfo" 2>/dev/null)" ] || [ ! -x "$TB/tune/fixtures/ok/harness" ]; then
    echo "tune efficiency: skipped (no CUDA device or fixture harnesses)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LSCAT_WORK=$tmp
# Each kernel gets its own copy of the fixture (executable + harness.so), as real kernels do:
# the runner loads K distinct shared objects.
mkspecs() { # prefix, count
    specs=()
    for i in $(seq 1 "$2"); do
        mkdir -p "$tmp/bin/$1$i"
        cp "$TB/tune/fixtures/ok/harness" "$TB/tune/fixtures/ok/harness.so" "$tmp/bin/$1$i/"
        specs+=("$1$i=$tmp/bin/$1$i/harness")
    done
}
mkspecs bench "$K"
sweep() { # name, extra options...
    local name=$1; shift
    export LSCAT_DB=$tmp/$name.db
    lscat init >/dev/null 2>&1
    python3 tests/tune/support/seed_store.py "$LSCAT_DB" "${specs[@]}"
    local t0 t1
    t0=$(date +%s.%N)
    lscat tune --gpus "${TUNE_BENCH_GPUS:-0}" -q "$@" >/dev/null
    t1=$(date +%s.%N)
    echo "$t0 $t1" >"$tmp/$name.time"
}
# An untimed sweep first: on a machine that was idle the first sweep also pays for the GPU's
# clocks ramping up (measured: the first of four sweeps 3% slower per configuration).
specs_all=("${specs[@]}"); specs=("${specs_all[@]:0:2}")
sweep warmup
specs=("${specs_all[@]}")
# TUNE_BENCH_SCALING_ONLY=1: only the multi-GPU scaling (for a short call on a multi-GPU node).
if [ "${TUNE_BENCH_SCALING_ONLY:-0}" != 1 ]; then
LSCAT_RUNNER_TRACE=$tmp/runner-trace.txt sweep runner
LSCAT_TIMING_GRAPH=0 sweep runner_one_by_one
sweep norunner --no-runner
sweep norunner_noprestart --no-runner --no-prestart
fi
# Multi-GPU scaling, where there are several GPUs: 30 kernels per GPU on GPU 0 alone, then on all.
NG=$("$BIN/lscat-gpuinfo" 2>/dev/null | wc -l)
if [ "$NG" -ge 2 ]; then
    # 30 kernels per GPU: start-up (lscat-gpuinfo opens every GPU: 1.2 s on 4 H200s) and the
    # last kernel's tail are per run; a nightly sweep is hours long. With 10 per GPU the same
    # 4 H200s gave 3.02x, with 30 per GPU 3.63x.
    mkspecs scale "${TUNE_BENCH_SCALE_KERNELS:-$((30 * NG))}"
    TUNE_BENCH_GPUS=0 sweep one_gpu
    TUNE_BENCH_GPUS=all sweep all_gpus
fi
# The harness alone on one kernel's 140 configurations (no sweep engine), with and without
# NVML readings, to show where per-configuration time goes.
cfgs=$(for s in 240 496 784 1016 1232 1680 2024; do for b in 8 16 24 32; do echo "$s $s $b $b 1"; done; for x in $(seq 64 64 1024); do echo "$s $s $x 1 1"; done; done)
for mode in nvml no_nvml; do
    [ "${TUNE_BENCH_SCALING_ONLY:-0}" = 1 ] && break
    t0=$(date +%s.%N)
    if [ $mode = nvml ]; then echo "$cfgs" | "$TB/tune/fixtures/ok/harness" --results "$tmp/$mode.jsonl"
    else echo "$cfgs" | LSCAT_NVML_LIB=/nonexistent "$TB/tune/fixtures/ok/harness" --results "$tmp/$mode.jsonl"; fi
    t1=$(date +%s.%N)
    python3 - "$tmp/$mode.jsonl" "$t0" "$t1" "$mode" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"status":"ok"' in l]
wall = float(sys.argv[3]) - float(sys.argv[2])
timed = sum(r["samples"] * r["launches_per_sample"] * r["mean_ns"] for r in rows) / 1e9
print(f"harness alone ({sys.argv[4]}): {len(rows)} configurations in {wall:.2f} s (process start "
      f"included), {timed:.2f} s timed: {timed / wall:.3f}")
PY
done
python3 - "$tmp" "$K" <<'PY'
import sqlite3, sys, statistics
tmp, k = sys.argv[1], sys.argv[2]
med = {}
names = ("runner", "runner_one_by_one", "norunner", "norunner_noprestart")
import os
names = tuple(n for n in names if os.path.exists(f"{tmp}/{n}.time"))
for name in names:
    db = sqlite3.connect(f"{tmp}/{name}.db")
    t0, t1 = map(float, open(f"{tmp}/{name}.time").read().split())
    wall = t1 - t0
    n, timed_ns, graphs = db.execute("select count(*), sum(samples * launches_per_sample * "
                                     "mean_ns), sum(graph_nodes > 0) from measurements "
                                     "where status = 'ok'").fetchone()
    eff = timed_ns / 1e9 / wall
    counts = db.execute("select counts from stage_runs where stage = 'tune' order by id desc "
                        "limit 1").fetchone()[0]
    import json
    c = json.loads(counts)
    print(f"tune efficiency ({name}): {eff:.3f} (target >= 0.8{'' if eff >= 0.8 else ', TARGET MISSED'}): "
          f"{n} configurations of {k} kernels in {wall:.2f} s wall, {timed_ns / 1e9:.2f} s inside "
          f"timed kernels, {wall / max(n, 1) * 1e3:.2f} ms per configuration; "
          f"{c.get('processes')} processes, {c.get('runner_kernels')} kernels in the runner, "
          f"{c.get('crashed')} crashed, {c.get('timeout')} timeouts; {graphs} through graphs")
    med[name] = {r[:5]: r[5] for r in db.execute(
        "select kernel_id, width, block_x, block_y, block_z, median_ns from measurements where status = 'ok'")}
import os
if os.path.exists(f"{tmp}/all_gpus.time"):
    rate = {}
    for name in ("one_gpu", "all_gpus"):
        t0, t1 = map(float, open(f"{tmp}/{name}.time").read().split())
        n = sqlite3.connect(f"{tmp}/{name}.db").execute(
            "select count(*) from measurements where status = 'ok'").fetchone()[0]
        gpus = sqlite3.connect(f"{tmp}/{name}.db").execute(
            "select count(distinct gpu_id) from measurements").fetchone()[0]
        rate[name] = (n / (t1 - t0), gpus)
    g = rate["all_gpus"][1]
    sc = rate["all_gpus"][0] / rate["one_gpu"][0]
    print(f"tune multi-GPU scaling: {g} GPUs {rate['all_gpus'][0]:.1f} configurations/s, 1 GPU "
          f"{rate['one_gpu'][0]:.1f}/s: {sc:.2f}x (target >= {0.9 * g:.1f}x"
          f"{'' if sc >= 0.9 * g else ', TARGET MISSED'})")
import os
trace = f"{tmp}/runner-trace.txt"
if os.path.exists(trace):
    rows = [list(map(float, l.split()[:3])) for l in open(trace)]
    t0, t1 = map(float, open(f"{tmp}/runner.time").read().split())
    mains = sum(r[1] for r in rows) / 1e3
    print(f"tune runner per kernel (medians of {len(rows)}): dlopen {statistics.median(r[0] for r in rows):.1f} ms, "
          f"harness {statistics.median(r[1] for r in rows):.1f} ms, dlclose {statistics.median(r[2] for r in rows):.1f} ms; "
          f"harness mains cover {mains / (t1 - t0):.3f} of the sweep's wall time")
base = "norunner_noprestart" # the strictest isolation: one process per kernel, nothing overlapped
pairs = [(n, base) for n in (names[:-1] if base in names else ())]
if "runner" in med and "runner_one_by_one" in med:
    pairs.append(("runner", "runner_one_by_one")) # what graphs change in the times
for name, base in pairs:
    ratios = [med[name][c] / med[base][c] for c in med[name] if c in med[base]]
    if len(ratios) < 2:
        continue
    q = statistics.quantiles(ratios, n=100, method="inclusive")
    by_w = {}
    for c in med[name]:
        if c in med[base]:
            by_w.setdefault(c[1], []).append(med[name][c] / med[base][c])
    print(f"tune {name} vs {base}, same configurations: median time ratio "
          f"{statistics.median(ratios):.4f}, p1 {q[0]:.4f}, p99 {q[98]:.4f} over {len(ratios)} "
          f"configurations; by matrix side: " + ", ".join(
              f"{w}: {statistics.median(v):.3f}" for w, v in sorted(by_w.items())))
PY
