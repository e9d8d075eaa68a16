#!/usr/bin/env bash
# The output-check audit on a GPU (issue #21, docs/tune.md "Audit of those verdicts"): the real
# kernels that session 5 tuned with the check (a store such as notes/rc-s5/call1/rc/real.db)
# rebuilt with TODAY's harness body (the isolated kernel.cu and the harness's kernel-specific
# prefix are kept; the body comes from tests/isolate/fixtures/harness-golden) and run over
# LS-CAT's 20 shapes at 240 and 1016, as `lscat tune --space lscat` ran them. Prints per kernel
# the rows that match / mismatch / are nondeterministic / not checked (the store's verdicts for
# the same sizes beside them), and one why of each.
#   here:        scripts/device-checkaudit.sh prepare STORE WORK   (writes .dev/checkaudit)
#   on the GPU:  scripts/device-checkaudit.sh run OUT_DIR          (carry .dev/checkaudit)
# CA_DIR (default .dev/checkaudit, relative to the repository), SIZES (default "240 1016"),
# BUDGET_S (default 360: kernels not started by then are listed as not run), HARNESS_TIMEOUT_S
# (default 30 per harness process). Needs nvcc and python3 on the device, not build/. About 2
# minutes on an H200 for session 5's 11 kernels.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
D=$ROOT/${CA_DIR:-.dev/checkaudit}
BODY=$ROOT/tests/isolate/fixtures/harness-golden/saxpy/harness.cu
MARK='// ---- lscat harness body'
case "${1:-}" in
prepare)
    STORE=${2:?usage: $0 prepare STORE WORK}; WORK=${3:?usage: $0 prepare STORE WORK}
    rm -rf "$D" && mkdir -p "$D" || exit 3
    # one folder per kernel: its name (:: as _) and the first 8 digits of its id
    sqlite3 -separator ' ' "$STORE" "SELECT replace(k.name, ':', '_') || '-' || substr(k.id, 1, 8),
        k.dir, coalesce(k.binding, 'area') FROM kernels k WHERE EXISTS (SELECT 1 FROM measurements
        m WHERE m.kernel_id = k.id AND m.status = 'ok') ORDER BY 1" > "$D/kernels.txt" || exit 3
    while read -r name dir bind; do
        mkdir -p "$D/$name" && cp "$WORK/$dir/kernel.cu" "$WORK/$dir/harness.cu" "$D/$name/" || exit 3
        sqlite3 "$STORE" "SELECT group_concat(c || ' ' || n, ' ') FROM (SELECT m.output_check c,
            count(*) n FROM measurements m WHERE m.status = 'ok' AND m.superseded = 0 AND
            substr(m.kernel_id, 1, 8) = '${name##*-}' GROUP BY 1 ORDER BY 1)" > "$D/$name/old"
    done < "$D/kernels.txt"
    echo "prepared $(wc -l < "$D/kernels.txt") kernels in $D"
    exit 0 ;;
run) OUT=${2:?usage: $0 run OUT_DIR} ;;
*) echo "usage: $0 prepare STORE WORK | run OUT_DIR" >&2; exit 2 ;;
esac
[ -s "$D/kernels.txt" ] || { echo "$0: run '$0 prepare' first (no $D/kernels.txt)" >&2; exit 2; }
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
# builds and raw results outside OUT (only the summary and each kernel's rows come back)
mkdir -p "$OUT/rows" && B=$(mktemp -d) || exit 3
trap 'rm -rf "$B"' EXIT
"$NVCC" -std=c++17 -arch=sm_90 -I"$ROOT" -c tune/timing.cu -o "$B/timing.o" &&
    "$NVCC" -I"$ROOT" -c tune/stats.c -o "$B/stats.o" || exit 3
build() { # name: today's body after the kernel's own prefix
    local k=$1 s=$B/$1.src
    mkdir -p "$s" && cp "$D/$k/kernel.cu" "$s/"
    { sed "/^${MARK//\//\\/}/,\$d" "$D/$k/harness.cu"; sed -n "/^${MARK//\//\\/}/,\$p" "$BODY"; } > "$s/harness.cu"
    (cd "$s" && { "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" harness.cu "$B/timing.o" \
        "$B/stats.o" -o "$B/$k" || "$NVCC" -std=c++17 -arch=sm_90 -DLSCAT_BLOCK_MAX=256 \
        -I. -I"$ROOT" harness.cu "$B/timing.o" "$B/stats.o" -o "$B/$k"; } \
        > "$B/$k.log" 2>&1) || echo "$k: build failed: $(grep -m1 error "$B/$k.log")"
}
while read -r name _ _; do
    build "$name" &
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done
done < "$D/kernels.txt"
wait
cfgs=$B/configs.txt; : > "$cfgs"
for n in ${SIZES:-240 1016}; do
    for x in $(seq 64 64 1024); do echo "$n $n $x 1 1" >> "$cfgs"; done
    for x in 8 16 24 32; do echo "$n $n $x $x 1" >> "$cfgs"; done
done
BUDGET_S=${BUDGET_S:-360} HARNESS_TIMEOUT_S=${HARNESS_TIMEOUT_S:-30} \
    python3 - "$D" "$B" "$cfgs" "$OUT/rows" <<'PY' | tee "$OUT/summary.txt"
# Each harness over every configuration; after a sticky error (exit 4) a fresh process goes on
# with the next configuration, as lscat-runner does. One line per kernel, then its whys.
import json, os, subprocess, sys, time
d, out, cfgs, rows_dir = sys.argv[1], sys.argv[2], open(sys.argv[3]).read().splitlines(), sys.argv[4]
fast = ["--warmup", "1", "--samples", "3", "--min-sample-ms", "0.2"]
end, hto = time.time() + float(os.environ["BUDGET_S"]), float(os.environ["HARNESS_TIMEOUT_S"])
total, old_total, not_run = {}, {}, []
for line in open(os.path.join(d, "kernels.txt")):
    name, _, bind = line.split()
    if time.time() > end:
        not_run.append(name)
        continue
    old = open(os.path.join(d, name, "old")).read().split()
    for k, v in zip(old[::2], old[1::2]):
        old_total[k] = old_total.get(k, 0) + int(v)
    exe = os.path.join(out, name)
    rows, i = [], 0
    while os.path.exists(exe) and i < len(cfgs):
        res = os.path.join(out, "%s.%d.jsonl" % (name, i))
        try:
            rc = subprocess.run([exe, "--bind", bind, "--results", res] + fast, timeout=hto,
                                input="\n".join(cfgs[i:]) + "\n", text=True,
                                capture_output=True).returncode
        except subprocess.TimeoutExpired:
            rc = 124
        got = [json.loads(l) for l in open(res) if l.startswith('{"w"')] if os.path.exists(res) else []
        rows += got
        i += max(len(got), 1)
        if rc == 3:  # no device: nothing will run
            break
    with open(os.path.join(rows_dir, name + ".jsonl"), "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    counts, whys = {}, {}
    for r in rows:
        v = r.get("check") or r.get("status")
        counts[v] = counts.get(v, 0) + 1
        total[v] = total.get(v, 0) + 1
        whys.setdefault(v, "%dx%d %dx%d: %s" % (r["w"], r["h"], r["block"][0], r["block"][1],
                                               (r.get("check_why") or r.get("error") or "")[:230]))
    print("%-40s now: %s | store: %s" % (name, " ".join("%s %d" % kv for kv in sorted(counts.items()))
          or "no rows (no device, or the build failed)", " ".join(old) or "-"))
    for v, w in sorted(whys.items()):
        print("    %-16s %s" % (v, w))
if not_run:
    print("not run (BUDGET_S spent): %d kernels: %s" % (len(not_run), " ".join(not_run)))
print("TOTAL now:", " ".join("%s %d" % kv for kv in sorted(total.items())))
print("TOTAL in the store (all its sizes, these kernels):", " ".join("%s %d" % kv for kv in sorted(old_total.items())))
PY
