#!/usr/bin/env bash
# Usage: scripts/realcode-prefix.sh OUT PREFIX... (from the repository root on the device; carry build/bin,
# .dev/realcode11full.tar.xz). One device call: execute (build + probe) the v11 corpus's kernels whose id starts with each of
# the prefixes given, in order, within RCP_BUDGET_S; the store and logs go to OUT.
set -uo pipefail
OUT=$1; shift
ROOT=$PWD; [ -e /work/main ] || { mkdir -p /work && ln -s "$ROOT" /work/main; }
export PATH=$ROOT/build/bin:$PATH LSCAT_SHARE_DIR=$ROOT LSCAT_NO_PROGRESS=1 LSCAT_BIN=$ROOT/build/bin
W=$ROOT/.dev/realcode/work11
[ -f "$W/lscat.db" ] || tar xJf .dev/realcode11full.tar.xz -C "$ROOT" --skip-old-files
T_END=$(( $(date +%s) + ${RCP_BUDGET_S:-480} ))
for p in "$@"; do
    t=$(( T_END - $(date +%s) )); [ "$t" -ge 30 ] || break
    t0=$(date +%s)
    timeout -k 60 "$t" lscat --work "$W" -j "$(nproc)" execute --kernel "$p" >> "$OUT/execute.log" 2>&1
    echo "prefix $p: exit $? in $(( $(date +%s) - t0 )) s: $(tail -n 1 "$OUT/execute.log" | cut -c1-300)"
done
python3 -c 'import gzip, shutil, sqlite3, sys
s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d); d.close()
shutil.copyfileobj(open(sys.argv[2], "rb"), gzip.open(sys.argv[2] + ".gz", "wb", 6))' "$W/lscat.db" "$OUT/real.db" && rm -f "$OUT/real.db"
gzip -9 "$OUT/execute.log"
