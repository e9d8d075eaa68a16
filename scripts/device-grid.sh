#!/usr/bin/env bash
# Issue #14, kernels written for their source's grid (session 12, grid12): in one device call,
# the GPU test build/tests/execute/gpu_tiles (a tiled GEMM without bounds checks probes ok only
# under the tiles binding: the source's grid, sizes rounded to its tiles), then the real
# kernels of cuda_hgemm, SGEMM_CUDA and two Learn-CUDA-Programming chapters, isolated here at
# ISOLATE_VERSION 11 (params.json "grid_expr"), are built and probed by execute, and tune
# measures those session 10 could not run (sizes 240,1016). Prints per kernel: session 10's
# verdict, the probe's verdict now (binding, block), the source's launch, the sizes a tiles
# line runs at 240 and 1016, tune rows ok/all; the counts last.
#
# Usage: scripts/device-grid.sh pack BUNDLE   (here: BUNDLE = /work/main/.dev/s12-grid12)
#        bash BUNDLE/device.sh OUT            (on the device, from any folder)
# The bundle: bin/ and tests/ (stripped), src.tar.xz (this branch's tracked tree: the harness
# sources, tune/timing.cu, the golden fixtures), work.tar.xz (.dev/grid/w), before.tsv.
# Environment: GR_BUDGET_S=330 (everything), GR_JOBS=(cores), GR_PROBE_TIMEOUT=10.
set -uo pipefail
if [ "${1:-}" = pack ]; then
    cd "$(dirname "$0")/.."
    P=${2:?usage: scripts/device-grid.sh pack BUNDLE}
    rm -rf "$P" && mkdir -p "$P/tests/execute" || exit 3
    cp -r build/bin "$P/bin" && cp build/tests/execute/gpu_tiles "$P/tests/execute/"
    find "$P" -type f -perm -u+x -exec sh -c 'file -b "$1" | grep -q ELF && strip --strip-debug "$1"' _ {} \;
    git archive HEAD | xz -T2 > "$P/src.tar.xz"
    tar cJf "$P/work.tar.xz" -C .dev/grid w
    cp .dev/grid/before.tsv "$P/" && cp "$0" "$P/device.sh"
    du -sh "$P"
    exit 0
fi
OUT=${1:?usage: bash BUNDLE/device.sh OUT}
B=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
PY=$(command -v python3)
T_END=$(( $(date +%s) + ${GR_BUDGET_S:-330} ))
left() { echo $(( T_END - $(date +%s) )); }
log() { echo "[grid $(date +%H:%M:%S) $(left)s left] $*" | tee -a "$OUT/grid.log"; }
T=$(mktemp -d /tmp/grid12.XXXXXX)
mkdir -p "$T/root" && tar xJf "$B/src.tar.xz" -C "$T/root" && tar xJf "$B/work.tar.xz" -C "$T" ||
    { log "cannot unpack the bundle"; exit 3; }
export PATH=$B/bin:$PATH LSCAT_SHARE_DIR=$T/root LSCAT_ROOT=$T/root LSCAT_BIN=$B/bin \
    LSCAT_TEST_BIN=$B/tests LSCAT_NO_PROGRESS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
timeout 200 "$B/tests/execute/gpu_tiles" > "$OUT/gpu_tiles.txt" 2>&1
log "gpu_tiles exit $?: $(grep -c '^ok' "$OUT/gpu_tiles.txt") ok, $(grep -c '^not ok' "$OUT/gpu_tiles.txt") failed"
grep '^not ok\|^# ' "$OUT/gpu_tiles.txt" | cut -c1-600
# tune only the kernels session 10 could not run (the others keep their status)
targets=$(awk -F'\t' '$3 != "runnable" { printf "%s'"'"'%s'"'"'", (n++ ? "," : ""), $1 }' "$B/before.tsv")
for d in "$T"/w/*/; do
    [ "$(left)" -gt 60 ] || { log "budget: stopped before $(basename "$d")"; break; }
    r=$(basename "$d")
    timeout -k 10 $(( $(left) - 50 )) lscat --work "$d" -j "${GR_JOBS:-$(nproc)}" execute \
        --probe-jobs 4 --probe-timeout "${GR_PROBE_TIMEOUT:-10}" > "$OUT/execute-${r//+/_}.log" 2>&1
    log "$r: execute exit $?: $(grep -o 'execute: [0-9]* kernels.*' "$OUT/execute-${r//+/_}.log" | tail -1 | cut -c1-160)"
    n=$("$PY" - "$d/lscat.db" "$targets" <<'PYEOF'
import sqlite3, sys
d = sqlite3.connect(sys.argv[1]); t = [x.strip("'") for x in sys.argv[2].split(",")]
q = ",".join("?" * len(t))
d.execute("CREATE TABLE IF NOT EXISTS grid_held(id TEXT)")
d.execute("INSERT INTO grid_held SELECT id FROM kernels WHERE status = 'runnable' AND name NOT IN (%s)" % q, t)
d.execute("UPDATE kernels SET status = 'built' WHERE id IN (SELECT id FROM grid_held)")
d.commit()
print(d.execute("SELECT count(*) FROM kernels WHERE status = 'runnable'").fetchone()[0])
PYEOF
)
    if [ "$(left)" -gt 60 ] && [ "${n:-0}" -gt 0 ]; then
        timeout -k 10 $(( $(left) - 40 )) lscat --work "$d" tune --sizes 240,1016 --samples 3 \
            --min-sample-ms 0.2 > "$OUT/tune-${r//+/_}.log" 2>&1
        log "$r: tune exit $? ($n kernels)"
    fi
done
"$PY" - "$T/w" "$B/before.tsv" <<'PYEOF' 2>&1 | tee "$OUT/summary.txt" | tail -n 70
import json, os, sqlite3, subprocess, sys
w, before = sys.argv[1], {}
for l in open(sys.argv[2]):
    f = l.rstrip("\n").split("\t")
    before[f[0]] = f[2] if f[2] == "runnable" else "%s:%s" % (f[2], f[3])
n_all, n_before, n_now, new, lost = 0, 0, 0, [], []
for repo in sorted(os.listdir(w)):
    d = sqlite3.connect(os.path.join(w, repo, "lscat.db"))
    held = set()
    try:
        held = {r[0] for r in d.execute("SELECT id FROM grid_held")}
    except sqlite3.Error:
        pass
    for kid, name, params, status, binding in d.execute(
            "SELECT id, name, params, status, binding FROM kernels ORDER BY name"):
        p = d.execute("SELECT outcome, detail FROM probes WHERE kernel_id = ? ORDER BY rowid DESC",
                      (kid,)).fetchone()
        runnable = status == "runnable" or kid in held
        launch = json.loads(params).get("launch", {})
        src = "x".join(map(str, launch.get("block", []))) or "-"
        ge = ";".join(launch.get("grid_expr", [])) or "-"
        sizes = ""
        bp = d.execute("SELECT binary_path FROM builds WHERE kernel_id = ? AND status = 'ok'",
                       (kid,)).fetchone()
        if binding == "tiles" and bp and bp[0]:
            for s in (240, 1016):
                try:
                    o = subprocess.run([os.path.join(w, repo, bp[0]), "--bind", "tiles", "--show-args", str(s), str(s)],
                                       capture_output=True, text=True, timeout=20).stdout
                    j = json.loads(o)
                    vals = [a["value"] for a in j["args"] if a.get("role") in ("size", "width", "height")]
                    sizes += "%d:%s g%s " % (s, "/".join("%g" % v for v in vals),
                                            "x".join(map(str, j.get("grid") or [])))
                except Exception as e:
                    sizes += "%d:? " % s
        ok, tot = d.execute("SELECT sum(status = 'ok'), count(*) FROM measurements WHERE "
                            "kernel_id = ?", (kid,)).fetchone()
        b = before.get(name, "?")
        n_all += 1
        n_before += b == "runnable"
        n_now += runnable
        if runnable and b != "runnable":
            new.append(name)
        if not runnable and b == "runnable":
            lost.append(name)
        det = (p[1] or "") if p else ""
        print("%-26.26s before %-24.24s now %-15s %-7s src %-8s grid %-34.34s %s tune %s/%s | %s" % (
            name, b, (p[0] if p else status) + ("" if status != "built" or kid not in held else "*"),
            binding or "-", src, ge, sizes, ok or 0, tot or 0, det.replace("\n", " ")[:110]))
        if p and p[0] == "ok" and tot and (ok or 0) < tot and binding == "tiles":
            for st, blk, c, err in d.execute(
                    "SELECT status, block_x || 'x' || block_y || 'x' || block_z, count(*), "
                    "min(error) FROM measurements WHERE kernel_id = ? AND status != 'ok' "
                    "GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 2", (kid,)):
                print("    tune %s %s x%d: %s" % (st, blk, c, (err or "")[:90]))
print("(* = runnable, held out of tune: session 10 ran it already)")
print("newly runnable: %s" % (" ".join(new) or "none"))
print("lost: %s" % (" ".join(lost) or "none"))
print("GRID12 SUMMARY: %d kernels (%d in session 10's store); runnable in session 10: %d; "
      "runnable now: %d (+%d, -%d)" % (n_all, len(before), n_before, n_now, len(new), len(lost)))
PYEOF
tar czf "$OUT/logs.tgz" -C "$OUT" --exclude logs.tgz . 2>/dev/null
rm -rf "$T"
