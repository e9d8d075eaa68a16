#!/usr/bin/env bash
# Issue #14, kernels with hard-coded problem sizes (docs/isolate.md "Fixed sizes"), in one device
# call: the GPU test (gpu_fixed: two fixture kernels with fixed sizes probe ok under the fixed
# binding and tune measures one size of each), then cuda-samples' 9 tensor-core GEMMs
# (compute_*gemm*, all probe_failed in session 10's store: illegal address at 1024x1), isolated at
# ISOLATE_VERSION 11 (params.json "fixed": their cudaMalloc sizes and SM-count grid), are built
# and probed by execute and measured by tune. Prints per kernel: before (session 10), the probe
# now (binding, detail), the buffers/grid used, tune rows ok/total with size and output check.
#
# Also the microbenchmark kernels with a fixed record (latency kernels chasing pointers, which
# the fixed binding does not make run: they fall back to the other bindings).
#
# Usage: scripts/device-fixed.sh OUT_DIR               (on the device; the bundle layout below)
#        scripts/device-fixed.sh pack BUNDLE WORK...   (here: isolated work folders, each with a
#                                                       before.tsv: name, outcome, detail)
# Bundle: BUNDLE/{bin, tests/gpu_fixed, root/ (share: tune's timing core, the fixed goldens,
# tests/execute/fixtures), work.tar.xz (w0, w1, ...), device.sh}. Environment: FX_BUDGET_S=420.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PY=$(command -v python3)
if [ "${1:-}" = pack ]; then
    B=${2:?usage: device-fixed.sh pack BUNDLE WORK...}
    shift 2
    ROOT=$(cd "$HERE/.." && pwd)
    rm -rf "$B" && mkdir -p "$B/tests" "$B/root/tune" "$B/root/tests/isolate/fixtures/harness-golden" \
        "$B/root/tests/execute"
    cp -r "$ROOT/build/bin" "$B/bin" && cp "$ROOT/build/tests/execute/gpu_fixed" "$B/tests/"
    find "$B/bin" "$B/tests" -type f -perm -u+x -exec sh -c 'file -b "$1" | grep -q ELF && strip --strip-debug "$1"' _ {} \;
    cp "$ROOT"/tune/timing.h "$ROOT"/tune/timing.cu "$ROOT"/tune/stats.c "$ROOT"/tune/nvml_dl.h "$B/root/tune/"
    cp -r "$ROOT/tests/execute/fixtures" "$B/root/tests/execute/"
    for k in fixed_scale fixed_add sized_scale; do
        cp -r "$ROOT/tests/isolate/fixtures/harness-golden/$k" "$B/root/tests/isolate/fixtures/harness-golden/"
    done
    P=$(mktemp -d) i=0
    for WK in "$@"; do
        mkdir -p "$P/w$i" && cp -r "$WK/lscat.db" "$WK/kernels" "$WK/before.tsv" "$P/w$i/"
        i=$((i + 1))
    done
    tar cJf "$B/work.tar.xz" -C "$P" . && rm -rf "$P"
    cp "$HERE/device-fixed.sh" "$B/device.sh"
    du -sh "$B"
    exit 0
fi
OUT=${1:?usage: device-fixed.sh OUT_DIR}
B=$HERE
mkdir -p "$OUT"
T_END=$(( $(date +%s) + ${FX_BUDGET_S:-420} ))
left() { echo $(( T_END - $(date +%s) )); }
log() { echo "[fixed $(date +%H:%M:%S) $(left)s left] $*" | tee -a "$OUT/fixed.log"; }
export PATH=$B/bin:$PATH LSCAT_BIN=$B/bin LSCAT_SHARE_DIR=$B/root LSCAT_ROOT=$B/root \
    LSCAT_NO_PROGRESS=1 LSCAT_TEST_BIN=$B/tests
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
log "gpu: $(head -1 "$OUT/gpu.txt")"
timeout 200 "$B/tests/gpu_fixed" > "$OUT/gpu_fixed.txt" 2>&1
log "gpu_fixed exit $?: $(grep -c '^ok' "$OUT/gpu_fixed.txt") ok, $(grep -c '^not ok\|^FAIL\|^fail' "$OUT/gpu_fixed.txt") failed"
W=$B/run # inside the bundle: the sandbox (private /tmp) reaches it as it reaches the tree
rm -rf "$W" && mkdir -p "$W" && tar xJf "$B/work.tar.xz" -C "$W" || { log "cannot unpack"; exit 3; }
chmod -R o+rX "$W"
for w in "$W"/w*/; do
    n=$(basename "$w")
    timeout -k 10 $(( $(left) - 100 )) lscat --work "$w" -j "$(nproc)" execute --probe-jobs 2 \
        --probe-timeout 60 > "$OUT/execute-$n.log" 2>&1
    log "$n: execute exit $?: $(grep -o 'execute: [0-9]* kernels.*' "$OUT/execute-$n.log" | tail -1 | cut -c1-160)"
    timeout -k 10 $(( $(left) - 30 )) lscat --work "$w" tune --samples 3 --min-sample-ms 0.2 \
        > "$OUT/tune-$n.log" 2>&1
    log "$n: tune exit $?"
done
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls execute-*.log tune-*.log) 2>/dev/null &&
    rm -f "$OUT"/execute-*.log "$OUT"/tune-*.log
"$PY" - "$W" <<'PYEOF' 2>&1 | tee "$OUT/summary.txt" | tail -n 80
import glob, json, os, sqlite3, sys
n = ok = rows_ok = 0
for w in sorted(glob.glob(os.path.join(sys.argv[1], "w*"))):
    d = sqlite3.connect(os.path.join(w, "lscat.db"))
    before = {}
    for l in open(os.path.join(w, "before.tsv")):
        f = l.rstrip("\n").split("\t")
        before[f[0]] = f[1] + (": " + f[2][:50] if len(f) > 2 and f[2] else "")
    for kid, name, status, binding, params in d.execute(
            "SELECT id, name, status, binding, params FROM kernels ORDER BY name"):
        n += 1
        fx = json.loads(params).get("fixed", {})
        pr = d.execute("SELECT outcome, detail FROM probes WHERE kernel_id = ?", (kid,)).fetchone()
        m = d.execute("""SELECT count(*), sum(status = 'ok'), group_concat(DISTINCT width || 'x' ||
            height), group_concat(DISTINCT block_x || 'x' || block_y || 'x' || block_z),
            group_concat(DISTINCT output_check), group_concat(DISTINCT binding), min(median_ns),
            min(error) FROM measurements WHERE kernel_id = ?""", (kid,)).fetchone()
        ok += status == "runnable"
        rows_ok += 1 if (m[1] or 0) > 0 else 0
        print("%-28s before %-50.50s | now %s (%s) binding=%s" % (name, before.get(name, "-"),
              pr[0] if pr else "-", status, binding))
        print("    fixed size=%s bytes=%s grid=%s | probe: %s" % (fx.get("size"), fx.get("bytes"),
              fx.get("grid"), ((pr[1] if pr else "") or "")[:140].replace("\n", " ")))
        print("    tune rows ok %s/%s size %s block %s check %s binding %s median_ns %s%s" % (
              m[1] or 0, m[0], m[2], m[3], m[4], m[5], m[6],
              (" error " + (m[7] or "")[:90]) if m[7] else ""))
print("SUMMARY kernels with a fixed record: %d, runnable now %d, with ok tune rows %d" %
      (n, ok, rows_ok))
PYEOF
