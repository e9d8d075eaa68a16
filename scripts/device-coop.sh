#!/usr/bin/env bash
# Issue #14, P7 (cooperative and graph launches), P9 (hangs at the small sizes) and the
# Gaussian-elimination regression, in one device call: the GPU test build/tests/execute/gpu_coop
# (a grid-sync reduction probes ok and tune gets the right sum on co-resident grids), then the
# real kernels of those patterns (/work/notes/s11/nonrunnable.tsv), isolated here at
# ISOLATE_VERSION 11 and packed by `prepare`, are built and probed by execute and the runnable
# ones tuned at 240 and 1016. Prints per kernel: pattern, session 10's verdict (before), the probe
# verdict now with its detail, tune rows ok / all, and a count per pattern last.
#
# Usage: scripts/device-coop.sh prepare [REPOS]   (here: isolate the folders -> .dev/coop12/pack.tar.xz)
#        scripts/device-coop.sh bundle DIR        (here: DIR = pack.tar.xz, stripped bin/, tests/gpu_coop,
#                                                   golden/ of the GPU test, this script, device.sh)
#        scripts/device-coop.sh OUT_DIR [PACK_DIR]  (on the device; PACK_DIR as bundle made it,
#                                                   default .dev/coop12)
# Environment: CO_BUDGET_S=420 (everything), ONLY="key ..." (prepare: only those folders again),
#              CO_PROBE_TIMEOUT=10, CO_JOBS=(cores).
set -uo pipefail
cd "${CO_ROOT:-$(dirname "$0")/..}" || exit 3 # CO_ROOT: the repository root (a bundle's copy runs elsewhere)
ROOT=$PWD
PY=$(command -v /usr/bin/python3 || command -v python3)
# key|repository|folder inside it: each folder is isolated alone (paths relative to it)
FOLDERS="cgraph|NVIDIA+cuda-samples|Samples/3_CUDA_Features/graphConditionalNodes
cgmb|NVIDIA+cuda-samples|Samples/4_CUDA_Libraries/conjugateGradientMultiBlockCG
cgmd|NVIDIA+cuda-samples|Samples/4_CUDA_Libraries/conjugateGradientMultiDeviceCG
awb|NVIDIA+cuda-samples|Samples/0_Introduction/simpleAWBarrier
rmb|NVIDIA+cuda-samples|Samples/2_Concepts_and_Techniques/reductionMultiBlockCG
fptr|NVIDIA+cuda-samples|Samples/2_Concepts_and_Techniques/FunctionPointers
segt|NVIDIA+cuda-samples|Samples/2_Concepts_and_Techniques/segmentationTreeThrust
ump|NVIDIA+cuda-samples|Samples/6_Performance/UnifiedMemoryPerf
hw9|olcf+cuda-training-series|exercises/hw9
gcg|PacktPublishing+Learn-CUDA-Programming|Chapter04/04_kernel_execution/07_grid_level_cg
gauss|PacktPublishing+Learn-CUDA-Programming|Chapter06/06_multigpu
mutex|eegkno+CUDA_by_practice|10_Atomics/Source_code/03mutex
llmc|karpathy+llm.c|.
cudpp|cudpp+cudpp|.
soa|Tony-Tan+CUDA_Freshman|20_SoA"

if [ "${1:-}" = prepare ]; then
    REPOS=${2:-/work/main/.dev/realcode/repos}
    P=.dev/coop12
    [ -n "${ONLY:-}" ] || rm -rf "$P/w" # ONLY="key ...": isolate those folders again, keep the rest
    rm -rf "$P/pack" && mkdir -p "$P/w" "$P/pack" || exit 3
    echo "$FOLDERS" | while IFS='|' read -r key repo folder; do
        case " ${ONLY:-$key} " in *" $key "*) ;; *) continue ;; esac
        rm -rf "${P:?}/w/$key"
        t0=$(date +%s)
        nice build/bin/lscat -q -j "${JOBS:-2}" --work "$P/w/$key" isolate --path "$REPOS/$repo/$folder" \
            >> "$P/isolate.log" 2>&1 || [ $? = 1 ] || echo "device-coop: isolate failed on $key" >&2
        echo "isolated $key ($repo/$folder): $(( $(date +%s) - t0 )) s"
    done
    "$PY" - "$P" "$FOLDERS" <<'PYEOF' || exit 3
import os, shutil, sqlite3, sys
p, folders = sys.argv[1], [l.split("|") for l in sys.argv[2].splitlines()]
before = sqlite3.connect("/work/notes/s11/s10final.db")
want = []  # pattern, name, key, path in the folder, before
for line in open("/work/notes/s11/nonrunnable.tsv"):
    f = line.rstrip("\n").split("\t")
    if len(f) < 3 or f[0] not in ("P7", "P9"):
        continue
    want.append((f[0], f[1], f[2]))
for name in ("extractPivotRow", "findPivotRowAndMultipliers", "rowElimination"):
    for d in ("01_gaussian_single_gpu", "02_gaussian_multi_gpu", "04_gaussian_multi_node"):
        want.append(("REG", name, "Chapter06/06_multigpu/%s/gpuSolverFunctions.cu" % d))
rows = []
for pat, name, ref in want:
    if pat == "REG":
        r = before.execute("""SELECT k.status, o.path, COALESCE(p.outcome, ''), s.root FROM kernels k
            JOIN kernel_occurrences o ON o.kernel_id = k.id JOIN sources s ON s.id = o.source_id
            LEFT JOIN probes p ON p.kernel_id = k.id WHERE k.name = ? AND o.path = ?""",
            (name, ref)).fetchone()
    else:
        r = before.execute("""SELECT k.status, o.path, COALESCE(p.outcome, ''), s.root FROM kernels k
            JOIN kernel_occurrences o ON o.kernel_id = k.id JOIN sources s ON s.id = o.source_id
            LEFT JOIN probes p ON p.kernel_id = k.id WHERE k.id LIKE ? || '%' LIMIT 1""",
            (ref,)).fetchone()
    if not r:
        print("not in session 10's store:", pat, name, ref); continue
    repo = os.path.basename(r[3])
    for key, frepo, folder in folders:
        pre = "" if folder == "." else folder + "/"
        if frepo == repo and r[1].startswith(pre):
            rows.append((pat, name, key, r[1][len(pre):], "%s/%s" % (r[0], r[2] or "-")))
            break
    else:
        print("no folder for", pat, name, repo, r[1])
for key in sorted(set(r[2] for r in rows)):
    src = os.path.join(p, "w", key, "lscat.db")
    dst = os.path.join(p, "pack", key)
    os.makedirs(dst)
    s = sqlite3.connect(src); d = sqlite3.connect(os.path.join(dst, "lscat.db")); s.backup(d)
    keep = []
    for pat, name, k, path, _ in rows:
        if k != key:
            continue
        for kid, kdir in d.execute("""SELECT k.id, k.dir FROM kernels k JOIN kernel_occurrences o
                ON o.kernel_id = k.id WHERE k.name = ? AND o.path = ?""", (name, path)):
            if kid not in keep:
                keep.append(kid)
                shutil.copytree(os.path.join(p, "w", key, kdir), os.path.join(dst, kdir))
    d.execute("PRAGMA foreign_keys = ON")
    d.execute("DELETE FROM kernels WHERE id NOT IN (%s)" % ",".join("?" * len(keep)), keep)
    d.commit(); d.execute("VACUUM"); d.close()
with open(os.path.join(p, "pack", "kernels.tsv"), "w") as f:
    for r in rows:
        f.write("\t".join(r) + "\n")
print("kernels: %d of %d in the pack" % (len(rows), len(want)))
PYEOF
    tar cJf "$P/pack.tar.xz" -C "$P" pack && ls -la "$P/pack.tar.xz"
    exit 0
fi

if [ "${1:-}" = bundle ]; then # a self-contained folder under a copy of main's tree (.dev/NAME)
    D=${2:?usage: scripts/device-coop.sh bundle DIR}
    rm -rf "$D" && mkdir -p "$D/tests" "$D/golden" || exit 3
    cp -r build/bin "$D/bin" && cp build/tests/execute/gpu_coop "$D/tests/" || exit 3
    find "$D/bin" "$D/tests" -type f -perm -u+x -exec sh -c 'file -b "$1" | grep -q ELF && strip --strip-debug "$1"' _ {} \;
    for g in grid_sum bucket_sums; do cp -r "tests/isolate/fixtures/harness-golden/$g" "$D/golden/"; done
    cp .dev/coop12/pack.tar.xz scripts/device-coop.sh "$D/" || exit 3
    n=$(basename "$D")
    printf '#!/usr/bin/env bash\n# %s: run from the repository root of a copy of main'"'"'s tree; $1 = output dir\ncd "$(dirname "$0")/../.." || exit 3\nCO_ROOT=$PWD exec bash .dev/%s/device-coop.sh "${1:?usage: device.sh OUT}" .dev/%s\n' "$n" "$n" "$n" > "$D/device.sh"
    chmod +x "$D/device.sh"
    du -sh "$D"
    exit 0
fi

OUT=${1:?usage: scripts/device-coop.sh OUT_DIR [PACK_DIR]}
PK=${2:-.dev/coop12}
mkdir -p "$OUT"
T_END=$(( $(date +%s) + ${CO_BUDGET_S:-420} ))
left() { echo $(( T_END - $(date +%s) )); }
log() { echo "[coop $(date +%H:%M:%S) $(left)s left] $*" | tee -a "$OUT/coop.log"; }
BIN=$ROOT/$PK/bin
export PATH=$BIN:$PATH LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1 LSCAT_BIN=$BIN LSCAT_ROOT=$ROOT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
# the GPU test's golden fixture (not in main's tree yet)
for g in "$PK"/golden/*/; do [ -d "$g" ] && cp -r "$g" tests/isolate/fixtures/harness-golden/; done
timeout 200 "$PK/tests/gpu_coop" > "$OUT/gpu_coop.txt" 2>&1
log "gpu_coop exit $?: $(grep -c '^ok' "$OUT/gpu_coop.txt") ok, $(grep -c '^not ok' "$OUT/gpu_coop.txt") failed"
W=$ROOT/$PK/run
rm -rf "$W" && mkdir -p "$W" && tar xJf "$PK/pack.tar.xz" -C "$W" || { log "cannot unpack"; exit 3; }
for d in "$W"/pack/*/; do
    [ "$(left)" -gt 50 ] || { log "budget: stopped before $(basename "$d")"; break; }
    r=$(basename "$d")
    timeout -k 10 $(( $(left) - 40 )) lscat --work "$d" -j "${CO_JOBS:-$(nproc)}" execute \
        --probe-jobs 4 --probe-timeout "${CO_PROBE_TIMEOUT:-10}" > "$OUT/execute-$r.log" 2>&1
    log "$r: execute exit $?: $(grep -o 'execute: [0-9]* kernels.*' "$OUT/execute-$r.log" | tail -1 | cut -c1-140)"
done
for d in "$W"/pack/*/; do # tune after every probe: the probes' verdicts come first
    r=$(basename "$d")
    n=$("$PY" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(
        "SELECT count(*) FROM kernels WHERE status = ?", ("runnable",)).fetchone()[0])' "$d/lscat.db")
    [ "${n:-0}" -gt 0 ] || continue
    [ "$(left)" -gt 40 ] || { log "budget: no tune for $r"; continue; }
    timeout -k 10 $(( $(left) - 30 > 90 ? 90 : $(left) - 30 )) lscat --work "$d" tune --sizes 240,1016 \
        --samples 3 --min-sample-ms 0.2 > "$OUT/tune-$r.log" 2>&1
    log "$r: tune exit $?"
done
tail -c 3000 "$OUT"/execute-*.log > "$OUT/execute-tails.txt" 2>/dev/null
(cd "$OUT" && logs=$(ls execute-*.log tune-*.log 2>/dev/null) && tar czf logs.tgz $logs && rm -f $logs)
"$PY" - "$W/pack" <<'PYEOF' 2>&1 | tee "$OUT/summary.txt" | tail -n 70
import collections, os, sqlite3, sys
p = sys.argv[1]
tot = collections.Counter(); run = collections.Counter(); was = collections.Counter()
for l in open(os.path.join(p, "kernels.tsv")):
    pat, name, key, path, before = l.rstrip("\n").split("\t")
    d = sqlite3.connect(os.path.join(p, key, "lscat.db"))
    r = d.execute("""SELECT p.outcome, p.detail, (SELECT count(*) FROM measurements m WHERE
        m.kernel_id = k.id AND m.status = 'ok'), (SELECT count(*) FROM measurements m WHERE
        m.kernel_id = k.id), k.status, COALESCE(json_extract(k.params, '$.cooperative'), 0),
        (SELECT max(m.grid_x * m.grid_y) FROM measurements m WHERE m.kernel_id = k.id AND
        m.status = 'ok') FROM kernels k JOIN kernel_occurrences o ON o.kernel_id = k.id LEFT JOIN
        probes p ON p.kernel_id = k.id WHERE k.name = ? AND o.path = ? LIMIT 1""",
        (name, path)).fetchone()
    tot[pat] += 1
    was[pat] += before.startswith("runnable")
    if not r:
        print("%-3s %-28.28s before %-22s now: not isolated" % (pat, name, before)); continue
    run[pat] += r[0] == "ok"
    print("%-3s %-28.28s before %-22s now %-15s%s tune %d/%d maxgrid %s | %s" % (pat, name, before,
          r[0] or r[4], " coop" if r[5] else "", r[2], r[3], r[6], (r[1] or "").replace("\n", " ")[:150]))
    if r[0] == "ok" and r[2] < r[3]:
        for st, b, w, cnt, err in d.execute("""SELECT m.status, m.block_x || 'x' || m.block_y, m.width,
                count(*), min(COALESCE(m.error, m.output_check_why)) FROM measurements m JOIN kernels k
                ON k.id = m.kernel_id JOIN kernel_occurrences o ON o.kernel_id = k.id WHERE k.name = ?
                AND o.path = ? AND m.status != 'ok' GROUP BY 1, 2, 3 ORDER BY 4 DESC LIMIT 3""",
                (name, path)):
            print("      tune %s %s@%s x%d: %s" % (st, b, w, cnt, (err or "")[:110]))
for pat in sorted(tot):
    print("%s: %d kernels, runnable before %d, runnable now %d" % (pat, tot[pat], was[pat], run[pat]))
PYEOF
