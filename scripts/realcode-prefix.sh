#!/usr/bin/env bash
# Usage: scripts/realcode-prefix.sh OUT PREFIX... (from the repository root on the device; carry
# build/bin and the archive). One device call: execute (build + probe) the corpus's kernels whose
# id starts with each of the prefixes given, in order, within RCP_BUDGET_S; the store, the logs
# and the CPU time by command (scripts/cpu-by-command.py) go to OUT. The store is copied to OUT
# after every prefix, so a call killed at its limit loses at most the prefix in flight (session
# 14 lost a whole call's store: its last prefix ran past the call's limit before the one copy at
# the end). RCP_BUDGET_S is the whole script's: the last prefix is stopped 40 s before it.
# Environment: RCP_WORK (the work folder, relative to the root; default .dev/realcode/work11),
# RCP_ARCHIVE (what holds it, from `scripts/realcode-prepare.sh pack-work`; default
# .dev/realcode11full.tar.xz; unpacked only when the work folder has no store yet, so a warm
# machine's second call goes on from the first's), RCP_BUDGET_S (480), RCP_SPLIT_FIRST=1 (the
# first prefix is built with --no-probe first, then probed: builds/s and probes/s apart).
set -uo pipefail
OUT=$1; shift
ROOT=$PWD; [ -e /work/main ] || { mkdir -p /work && ln -s "$ROOT" /work/main; }
export PATH=$ROOT/build/bin:$PATH LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1 LSCAT_BIN=$ROOT/build/bin
W=$ROOT/${RCP_WORK:-.dev/realcode/work11}
[ -f "$W/lscat.db" ] || tar xJf "${RCP_ARCHIVE:-.dev/realcode11full.tar.xz}" -C "$ROOT" --skip-old-files
T_END=$(( $(date +%s) + ${RCP_BUDGET_S:-480} - 40 ))
python3 "$ROOT/scripts/cpu-by-command.py" "$OUT/cpu.tsv" & sampler=$!
save() {  # the store as it is now, whole, to OUT/real.db.gz
    python3 "$ROOT/scripts/store-snapshot.py" "$W/lscat.db" "$OUT/real.db.gz"
}
run() {  # run LABEL PREFIX [execute options]
    local label=$1 p=$2 t t0 rc; shift 2
    t=$(( T_END - $(date +%s) )); [ "$t" -ge 30 ] || return 1
    t0=$(date +%s)
    # SIGTERM first: execute stops its builds and probes and says what is missing
    timeout -k 15 "$t" lscat --work "$W" -j "$(nproc)" execute --kernel "$p" "$@" >> "$OUT/execute.log" 2>&1
    rc=$?
    echo "$label $p: exit $rc in $(( $(date +%s) - t0 )) s: $(grep -E '^lscat-execute: (build|probe):' "$OUT/execute.log" | tail -n 2 | tr '\n' ' ' | cut -c1-200)"
    save
}
first=1
for p in "$@"; do
    if [ "$first" = 1 ] && [ "${RCP_SPLIT_FIRST:-0}" = 1 ]; then
        run "build only" "$p" --no-probe || break
        run "probe only" "$p" || break
    else
        run prefix "$p" || break
    fi
    first=0
done
kill "$sampler"; wait "$sampler"
gzip -9f "$OUT/execute.log"
