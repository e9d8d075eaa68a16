#!/usr/bin/env bash
# Usage: scripts/device-harness-core.sh OUT PREFIX... (on the device, from the repository root;
# carry build/bin and the archive). The harness core (session 17, docs/isolate.md "Harness
# core") measured side by side on real kernels, in one call:
#   A: the work folder as isolated before the split: every harness.cu whole (built alone);
#   B: the same folder after scripts/realcode-refresh-harness.sh: the kernel's part only,
#      linked with the harness core (compiled once per run, like the timing core).
# 1. Builds: each prefix is built (`execute --kernel P --no-probe -j nproc`) in A and in B, the
#    order alternating per prefix (A B, then B A, ...) so the machine's drift falls on both.
#    Prints per prefix and side: kernels built, wall, builds/s; then which kernels built on one
#    side only (a regression if any).
# 2. Runs: every kernel built on both sides runs both harness executables on the same
#    configurations (HC_CFG; timed with the output check, HC_SAMPLES samples), HC_JOBS at a
#    time, each under `timeout HC_RUN_S` with its output capped; per configuration line the
#    status, the output check's verdict and the error are compared (times are not). Prints the
#    counts and every difference.
# Environment: HC_WORK (.dev/realcode/w13), HC_ARCHIVE (.dev/realcode13.tar.xz), HC_BUDGET_S
# (540: the whole script; no build is started with under 60 s left, the runs stop at the end).
set -uo pipefail
OUT=$1; shift
ROOT=$PWD; [ -e /work/main ] || { mkdir -p /work && ln -s "$ROOT" /work/main; }
export PATH=$ROOT/build/bin:$PATH LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1 LSCAT_BIN=$ROOT/build/bin
W=$ROOT/${HC_WORK:-.dev/realcode/w13}
T_END=$(( $(date +%s) + ${HC_BUDGET_S:-540} ))
[ -f "$W/lscat.db" ] || tar xJf "${HC_ARCHIVE:-.dev/realcode13.tar.xz}" -C "$ROOT" --skip-old-files
rm -rf "$W.A" "$W.B"; cp -a "$W" "$W.A"; cp -a "$W" "$W.B"
# B: the kernel's part in every harness.cu (the refresh script works on the folder in place)
mv "$W" "$W.orig"; mv "$W.B" "$W"
REFRESH_ACROSS_VERSIONS=0 scripts/realcode-refresh-harness.sh "$W" | tee -a "$OUT/hc.txt"
mv "$W" "$W.B"; mv "$W.orig" "$W"

one() {  # one SIDE PREFIX: build the prefix in that side's copy (moved to W: isolate's paths)
    local m=$1 p=$2 t t0
    t=$(( T_END - $(date +%s) )); [ "$t" -ge 60 ] || return 1
    rm -rf "$W" && mv "$W.$m" "$W"
    local sel=(--kernel "$p"); case $p in shard:*) sel=(--shard "${p#shard:}") ;; esac
    # wall and the CPU seconds of every process of the run (nvcc, gcc, cicc, ptxas, the sandbox)
    python3 - "$W/lscat.db" "$p" "$m" "$t" "$OUT/build-$m.log" lscat --work "$W" -j "$(nproc)" \
        execute "${sel[@]}" --no-probe <<'PY' | tee -a "$OUT/hc.txt"
import resource, sqlite3, subprocess, sys, time
db, p, m, t, log = sys.argv[1:6]
t0 = time.monotonic()
with open(log, "a") as f:
    try:
        rc = subprocess.run(sys.argv[6:], stdout=f, stderr=f, timeout=float(t)).returncode
    except subprocess.TimeoutExpired:
        rc = 124
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru.ru_utime + ru.ru_stime
c = sqlite3.connect(db)
ok, failed = c.execute("SELECT sum(status = 'ok'), sum(status = 'failed') FROM builds").fetchone()
n = (ok or 0) + (failed or 0)
print(f"{m} {p}: exit {rc}, {n} builds ({ok} ok) in {wall:.1f} s = {n / wall:.2f}/s, "
      f"{cpu:.0f} CPU-s = {cpu / max(n, 1):.2f} CPU-s a build")
PY
    mv "$W" "$W.$m"
}
i=0
for p in "$@"; do
    if [ $((i % 2)) = 0 ]; then one A "$p" && one B "$p"; else one B "$p" && one A "$p"; fi || break
    i=$((i + 1))
done
python3 - "$W.A/lscat.db" "$W.B/lscat.db" "$OUT" <<'PY' | tee -a "$OUT/hc.txt"
import sqlite3, sys
a, b, out = sys.argv[1:]
def ok(db):
    return {k: p for k, p in sqlite3.connect(db).execute(
        "SELECT kernel_id, binary_path FROM builds WHERE status = 'ok'")}
A, B = ok(a), ok(b)
both = sorted(set(A) & set(B))
print(f"built: A {len(A)}, B {len(B)}, both {len(both)}, A only {len(set(A) - set(B))}, "
      f"B only {len(set(B) - set(A))}")
for k in sorted(set(A) ^ set(B)):
    print(f"  built on one side only: {k} ({'A' if k in A else 'B'})")
with open(f"{out}/pairs.tsv", "w") as f:
    for k in both:
        f.write(f"{k}\t{A[k]}\t{B[k]}\n")
PY
# 2. the same configurations through both executables
printf '%b' "${HC_CFG:-1024 1 256 1 1\n64 64 16 16 1\n512 512 16 16 1\n512 512 128 1 1\n}" > "$OUT/cfg.txt"
run() {  # run SIDE KERNEL BINARY
    local d=$OUT/runs/$2; mkdir -p "$d"
    local left=$(( T_END - $(date +%s) )); [ "$left" -ge 5 ] || { echo skipped > "$d/$1.rc"; return; }
    local bin=$3; case $bin in /*) ;; *) bin=$W.${1:0:1}/$bin ;; esac
    (cd "$d" && timeout -k 5 "${HC_RUN_S:-20}" "$bin" --results "$1.jsonl" --warmup 1 \
        --samples "${HC_SAMPLES:-3}" < "$OUT/cfg.txt" 2>&1 | head -c 20000 > "$1.err"
     echo "${PIPESTATUS[0]}" > "$1.rc")
    head -c 200000 "$d/$1.jsonl" > "$d/$1.j" 2>/dev/null; rm -f "$d/$1.jsonl"
}
export -f run; export OUT W T_END
# binary_path is relative to the work folder: each side's copy keeps its own
# HC_IDS: only those kernels, each run HC_REPEAT times a side (how much a kernel's own outcome
# varies from run to run: runs 1 of A and B are compared as above, the others say whether A or B
# alone differs between its runs)
REP=${HC_REPEAT:-1}
while IFS=$'\t' read -r k pa pb; do
    if [ -n "${HC_IDS:-}" ] && ! grep -qx "$k" "$HC_IDS"; then continue; fi
    for r in $(seq 1 "$REP"); do s=; [ "$r" = 1 ] || s=.$r; printf '%s\n' "A$s $k $pa" "B$s $k $pb"; done
done < "$OUT/pairs.tsv" |
    xargs -P "${HC_JOBS:-8}" -L 1 bash -c 'run "$0" "$1" "$2"'
python3 - "$OUT" <<'PY' | tee -a "$OUT/hc.txt"
import json, os, sys, collections
out = sys.argv[1]
C = collections.Counter()
diffs = []
def lines(path):
    r = []
    try:
        for l in open(path):
            try:
                j = json.loads(l)
            except ValueError:
                continue
            if "w" in j:
                r.append((j.get("w"), j.get("h"), tuple(j.get("block", [])), j.get("status"),
                          j.get("check"), (j.get("error") or "")[:120]))
    except OSError:
        pass
    return r
for k in sorted(os.listdir(f"{out}/runs")):
    d = f"{out}/runs/{k}"
    rc = [open(f"{d}/{s}.rc").read().strip() if os.path.exists(f"{d}/{s}.rc") else "?" for s in "AB"]
    if "skipped" in rc:
        C["skipped (time)"] += 1
        continue
    a, b = lines(f"{d}/A.j"), lines(f"{d}/B.j")
    for r in range(2, 10):  # repeated runs (HC_REPEAT): does each side agree with itself?
        for s in "AB":
            if os.path.exists(f"{d}/{s}.{r}.j"):
                C[f"{s} run {r} differs from its run 1"] += lines(f"{d}/{s}.{r}.j") != (a if s == "A" else b)
    C["kernels"] += 1
    C["lines"] += len(a)
    C[f"exit {rc[0]}"] += 1
    if a == b and rc[0] == rc[1]:
        C["same"] += 1
        for x in a:
            C[f"status {x[3]} check {x[4]}"] += 1
    else:
        C["different"] += 1
        diffs.append((k, rc, a, b))
for key, n in sorted(C.items()):
    print(f"{key}: {n}")
for k, rc, a, b in diffs:
    print(f"DIFF {k} exit A {rc[0]} B {rc[1]}")
    for x, y in zip(a + [None] * (len(b) - len(a)), b + [None] * (len(a) - len(b))):
        if x != y:
            print(f"  A {x}\n  B {y}")
PY
