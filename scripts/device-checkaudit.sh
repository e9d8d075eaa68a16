#!/usr/bin/env bash
# The output-check audit on a GPU (issue #21, docs/tune.md "Output check audit"): the real
# kernels that session 5 tuned with the check (a store such as notes/rc-s5/call1/rc/real.db)
# rebuilt with TODAY's harness body (the isolated kernel.cu and the harness's kernel-specific
# prefix are kept; the body comes from tests/isolate/fixtures/harness-golden) and run over
# LS-CAT's 20 shapes at 240 and 1016, as `lscat tune --space lscat` ran them. Prints per kernel
# the rows that match / mismatch / are nondeterministic / not checked, and one why of each.
#   here:        scripts/device-checkaudit.sh prepare STORE WORK   (writes .dev/checkaudit)
#   on the GPU:  scripts/device-checkaudit.sh run OUT_DIR          (carry .dev/checkaudit)
# Needs nvcc and python3 on the device, not build/. About 2 minutes on an H200 for 11 kernels.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
D=$ROOT/.dev/checkaudit
BODY=$ROOT/tests/isolate/fixtures/harness-golden/saxpy/harness.cu
MARK='// ---- lscat harness body'
case "${1:-}" in
prepare)
    STORE=${2:?usage: $0 prepare STORE WORK}; WORK=${3:?usage: $0 prepare STORE WORK}
    rm -rf "$D" && mkdir -p "$D" || exit 3
    sqlite3 -separator ' ' "$STORE" "SELECT DISTINCT k.name, k.dir, coalesce(k.binding, 'area')
        FROM kernels k JOIN measurements m ON m.kernel_id = k.id WHERE m.output_check != 'not_checked'
        ORDER BY k.name" > "$D/kernels.txt" || exit 3
    while read -r name dir bind; do
        mkdir -p "$D/$name" && cp "$WORK/$dir/kernel.cu" "$WORK/$dir/harness.cu" "$D/$name/" || exit 3
        echo "$bind" > "$D/$name/binding"
    done < "$D/kernels.txt"
    echo "prepared $(wc -l < "$D/kernels.txt") kernels in $D"
    exit 0 ;;
run) OUT=${2:?usage: $0 run OUT_DIR} ;;
*) echo "usage: $0 prepare STORE WORK | run OUT_DIR" >&2; exit 2 ;;
esac
[ -s "$D/kernels.txt" ] || { echo "$0: run '$0 prepare' first (no $D/kernels.txt)" >&2; exit 2; }
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
mkdir -p "$OUT/b"
"$NVCC" -std=c++17 -arch=sm_90 -I"$ROOT" -c tune/timing.cu -o "$OUT/b/timing.o" &&
    "$NVCC" -I"$ROOT" -c tune/stats.c -o "$OUT/b/stats.o" || exit 3
build() { # name: today's body after the kernel's own prefix
    local k=$1 s=$OUT/b/$1.src
    mkdir -p "$s" && cp "$D/$k/kernel.cu" "$s/"
    { sed "/^${MARK//\//\\/}/,\$d" "$D/$k/harness.cu"; sed -n "/^${MARK//\//\\/}/,\$p" "$BODY"; } > "$s/harness.cu"
    (cd "$s" && { "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" harness.cu "$OUT/b/timing.o" \
        "$OUT/b/stats.o" -o "$OUT/b/$k" || "$NVCC" -std=c++17 -arch=sm_90 -DLSCAT_BLOCK_MAX=256 \
        -I. -I"$ROOT" harness.cu "$OUT/b/timing.o" "$OUT/b/stats.o" -o "$OUT/b/$k"; } \
        > "$OUT/b/$k.log" 2>&1) || echo "$k: build failed: $(grep -m1 error "$OUT/b/$k.log")"
}
while read -r name _ _; do build "$name" & done < "$D/kernels.txt"
wait
cfgs=$OUT/b/configs.txt; : > "$cfgs"
for n in 240 1016; do
    for x in $(seq 64 64 1024); do echo "$n $n $x 1 1" >> "$cfgs"; done
    for x in 8 16 24 32; do echo "$n $n $x $x 1" >> "$cfgs"; done
done
python3 - "$D" "$OUT" "$cfgs" <<'PY' | tee "$OUT/summary.txt"
# Each harness over every configuration; after a sticky error (exit 4) a fresh process goes on
# with the next configuration, as lscat-runner does. One line per kernel, then its whys.
import json, os, subprocess, sys
d, out, cfgs = sys.argv[1], sys.argv[2], open(sys.argv[3]).read().splitlines()
fast = ["--warmup", "1", "--samples", "3", "--min-sample-ms", "0.2"]
total = {}
for line in open(os.path.join(d, "kernels.txt")):
    name, _, bind = line.split()
    exe = os.path.join(out, "b", name)
    rows, i = [], 0
    while os.path.exists(exe) and i < len(cfgs):
        res = os.path.join(out, "b", "%s.%d.jsonl" % (name, i))
        try:
            rc = subprocess.run([exe, "--bind", bind, "--results", res] + fast, timeout=120,
                                input="\n".join(cfgs[i:]) + "\n", text=True,
                                capture_output=True).returncode
        except subprocess.TimeoutExpired:
            rc = 124
        got = [json.loads(l) for l in open(res) if l.startswith('{"w"')] if os.path.exists(res) else []
        rows += got
        i += max(len(got), 1)
        if rc == 3:  # no device: nothing will run
            break
    counts, whys = {}, {}
    for r in rows:
        v = r.get("check") or r.get("status")
        counts[v] = counts.get(v, 0) + 1
        total[v] = total.get(v, 0) + 1
        whys.setdefault(v, "%dx%d %dx%d: %s" % (r["w"], r["h"], r["block"][0], r["block"][1],
                                               (r.get("check_why") or r.get("error") or "")[:230]))
    print("%-28s %s" % (name, " ".join("%s %d" % kv for kv in sorted(counts.items())) or "no rows (no device, or the build failed: see b/NAME.log)"))
    for v, w in sorted(whys.items()):
        print("    %-16s %s" % (v, w))
print("TOTAL", " ".join("%s %d" % kv for kv in sorted(total.items())))
PY
