#!/usr/bin/env bash
# The GPU half of a real-code run (issues #14 and #21), on a lent GPU machine: unpack the archive
# scripts/realcode-prepare.sh made (repositories + the work folder where isolate ran), then, within
# one call's time budget, execute (build on every core + probe), tune with the output check over
# LS-CAT's space on the runnable kernels until RC_TUNE_KERNELS are measured, the report twice
# (match rows only, and --all-checks: every ok row, the "before" table) and
# scripts/realcode-summary.py's tables. Every stage resumes, so the next call (same warm machine:
# the unpacked folder stays) continues where this one stopped; the summary is printed every call.
#
# Usage: scripts/realcode-gpu.sh OUT_DIR
# Environment (defaults):
#   RC_BUDGET_S=500        seconds this call may take in all (the device's limit is 600)
#   RC_GPUS=1              GPUs to use: N > 1 splits the kernels into N shards (execute --shard,
#                          one store per shard, CUDA_VISIBLE_DEVICES=i), merged for the report
#   RC_TUNE_KERNELS=1000   runnable kernels to measure in all (over the shards; kernels whose
#                          every configuration fails count too: session 7 stopped at 320 with
#                          298 of them measured ok)
#   RC_SIZES=240,1016      tune --sizes;  RC_TUNE_ARGS="--space lscat"  more tune options
#   RC_ARCHIVE=.dev/realcode.tar.xz (a list: each unpacked, existing files kept)
#   RC_WORK=.dev/realcode/work   RC_BIN=build/bin
#   RC_SHARE=.            LSCAT_SHARE_DIR (where tune/timing.cu lives), relative to the root
#   RC_REPORT=1            0: no `dataset report` (an lscat without --all-checks, e.g. "before")
#   RC_SHARD_BY=hash       prefix: shards by kernel id prefix (--kernel; an lscat without --shard)
#   RC_MERGE_BIN=build/bin the lscat whose `dataset merge` joins the shard stores
#   RC_SHARD=i/N           one GPU: execute and tune only shard i of N (--shard), so that one
#                          call finishes both for its part; the next call takes i+1 with
#   RC_FOLLOW=0            1: tune --follow runs beside execute (one GPU), ending 60 s early
#   RC_STORE=F.db.gz       the store of an earlier call (its OUT/real.db.gz) to continue: it
#                          replaces the archive's store once (the builds of earlier calls are
#                          not carried, so tune only measures the kernels this call executed)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:?usage: scripts/realcode-gpu.sh OUT_DIR}
mkdir -p "$OUT"
BUDGET=${RC_BUDGET_S:-500}
NG=${RC_GPUS:-1}
TUNE_K=${RC_TUNE_KERNELS:-1000}
SIZES=${RC_SIZES:-240,1016}
TUNE_ARGS=${RC_TUNE_ARGS---space lscat}  # set but empty: the default (fit) space
ARCHIVE=${RC_ARCHIVE:-.dev/realcode.tar.xz}
W=$ROOT/${RC_WORK:-.dev/realcode/work}
PY=$(command -v python3)
T_END=$(( $(date +%s) + BUDGET ))
left() { echo $(( T_END - $(date +%s) )); }
log() { echo "[realcode $(date +%H:%M:%S) $(left)s left] $*" | tee -a "$OUT/realcode.log"; }

BIN=$ROOT/${RC_BIN:-build/bin}
# Sources were isolated under /work/main on the CPU machine: keep those absolute paths valid.
[ -e /work/main ] || { mkdir -p /work && ln -s "$ROOT" /work/main; }
SHARE=$ROOT/${RC_SHARE:-.}
export PATH=$BIN:$PATH LSCAT_SHARE_DIR=$SHARE LSCAT_NO_PROGRESS=1 LSCAT_BIN=$BIN
nvidia-smi --query-gpu=index,name --format=csv,noheader > "$OUT/gpu.txt" 2>&1

if [ ! -f "$W/lscat.db" ]; then
    for a in $ARCHIVE; do  # what is there already (another run's progress) is kept
        log "unpacking $a"
        if command -v xz > /dev/null; then
            tar xJf "$a" -C "$ROOT" --skip-old-files
        else
            "$PY" -c 'import os, sys, tarfile
t = tarfile.open(sys.argv[1])
t.extractall(sys.argv[2], [m for m in t if not os.path.lexists(os.path.join(sys.argv[2], m.name))])' \
                "$a" "$ROOT"
        fi || { log "cannot unpack $a"; exit 3; }
    done
fi
[ -f "$W/lscat.db" ] || { log "no store in $W after unpacking $ARCHIVE"; exit 3; }
if [ -n "${RC_STORE:-}" ] && [ ! -f "$W/.seeded" ]; then
    log "continuing the store of $RC_STORE"
    rm -f "$W/lscat.db-wal" "$W/lscat.db-shm"
    gzip -dc "$RC_STORE" > "$W/lscat.db" && touch "$W/.seeded" || { log "cannot unpack $RC_STORE"; exit 3; }
fi
SHARD=${RC_SHARD:-}

# One store per shard (a copy of the isolated store; the shard's execute fills it).
db_of() { if [ "$NG" = 1 ]; then echo "$W/lscat.db"; else echo "$W/shard-$1-of-$NG.db"; fi; }
for ((i = 0; i < NG; i++)); do
    d=$(db_of $i)
    [ -f "$d" ] || "$PY" -c 'import sqlite3, sys
s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d)' "$W/lscat.db" "$d"
done
q() { "$PY" -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0] or 0)' "$@"; }
runs() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >> "$W/realcode-runs.tsv"; }

# RC_FOLLOW=1 (one GPU): tune --follow measures kernels as execute makes them runnable, so the
# GPU measures while the cores build (docs/tune.md "--follow"); it ends 60 s before the budget.
FOLLOW_PID=
if [ "${RC_FOLLOW:-0}" = 1 ] && [ "$NG" = 1 ] && [ "$TUNE_K" -gt 0 ]; then
    fsel=(); [ -n "$SHARD" ] && fsel=(--shard "$SHARD")
    flim=$(( $(left) - 60 ))
    tf0=$(date +%s)
    # shellcheck disable=SC2086
    timeout -k 30 "$flim" lscat --work "$W" --db "$(db_of 0)" tune --follow "${fsel[@]}" \
        --sizes "$SIZES" $TUNE_ARGS > "$OUT/tune-0.log" 2>&1 &
    FOLLOW_PID=$!
    log "tune --follow beside execute: limit ${flim}s, sizes $SIZES, $TUNE_ARGS"
fi

# execute: each shard until its run ends by itself (exit 0 or 1; 124 = stopped by the limit).
todo=()
for ((i = 0; i < NG; i++)); do
    [ -f "$W/execute-done-$i-of-$NG" ] || [ -f "$W/execute-done-$i-of-$NG-shard-${SHARD/\//-of-}" ] ||
        todo+=("$i")
done
if [ "${#todo[@]}" -gt 0 ] && [ "$(left)" -gt 200 ]; then
    lim=$(( $(left) - 150 ))  # SIGTERM then: builds and probes in flight finish (-k 90)
    jobs=$(( $(nproc) / NG ))
    log "execute: shard(s) ${todo[*]} of $NG, -j $jobs each, limit ${lim}s"
    t0=$(date +%s)
    pids=()
    for i in "${todo[@]}"; do
        ( export CUDA_VISIBLE_DEVICES=$i
          if [ "$NG" = 1 ] && [ -n "$SHARD" ]; then parts=("--one-shard");
          elif [ "$NG" = 1 ]; then parts=(""); elif [ "${RC_SHARD_BY:-hash}" = prefix ]; then
              # an lscat without --shard: shard i is the kernel ids starting with i, i+N, ...
              parts=(); for ((h = i; h < 16; h += NG)); do parts+=("$(printf %x $h)"); done
          else parts=("--shard"); fi
          rc=0
          for part in "${parts[@]}"; do
              case "$part" in
                  "") sel=() ;;
                  --shard) sel=(--shard "$i/$NG") ;;
                  --one-shard) sel=(--shard "$SHARD"); part="-shard-${SHARD/\//-of-}" ;;
                  *) sel=(--kernel "$part") ;;
              esac
              [ -f "$W/execute-done-$i-of-$NG$part" ] && continue
              t=$(( T_END - 150 - $(date +%s) ))
              [ "$t" -ge 30 ] || { rc=124; break; }
              timeout -k 90 "$t" lscat --work "$W" \
                  --db "$(db_of $i)" -j "$jobs" execute "${sel[@]}" >> "$OUT/execute-$i.log" 2>&1
              rc=$?
              [ "$rc" -le 1 ] || break
              touch "$W/execute-done-$i-of-$NG$part"
          done
          exit "$rc" ) &
        pids+=($!)
    done
    rcs=""; for p in "${pids[@]}"; do wait "$p"; rcs="$rcs $?"; done
    runs execute "$t0" "$(( $(date +%s) - t0 ))" "${#todo[@]}" "${rcs# }"
    log "execute exits:$rcs in $(( $(date +%s) - t0 )) s"
    tail -n 3 "$OUT"/execute-*.log
fi

if [ -n "$FOLLOW_PID" ]; then
    wait "$FOLLOW_PID"; frc=$?
    runs tune "$tf0" "$(( $(date +%s) - tf0 ))" 1 "$frc"
    log "tune --follow exits: $frc in $(( $(date +%s) - tf0 )) s"
    tail -n 3 "$OUT/tune-0.log"
fi

# tune: LS-CAT's space with the output check, until TUNE_K kernels are measured in all.
if [ "$TUNE_K" -gt 0 ] && [ "$(left)" -gt 90 ]; then
    lim=$(( $(left) - 60 ))
    t0=$(date +%s)
    pids=()
    for ((i = 0; i < NG; i++)); do
        d=$(db_of $i)
        have=$(q "$d" "SELECT count(DISTINCT kernel_id) FROM measurements WHERE superseded = 0")
        need=$(( (TUNE_K + NG - 1) / NG - have ))
        [ "$need" -gt 0 ] || continue
        # shellcheck disable=SC2086
        tsel=(); [ "$NG" = 1 ] && [ -n "$SHARD" ] && tsel=(--shard "$SHARD")
        CUDA_VISIBLE_DEVICES=$i timeout -k 30 "$lim" lscat --work "$W" --db "$d" tune \
            "${tsel[@]}" --sizes "$SIZES" $TUNE_ARGS --limit "$need" > "$OUT/tune-$i.log" 2>&1 &
        pids+=($!)
    done
    if [ "${#pids[@]}" -gt 0 ]; then
        log "tune: ${#pids[@]} GPU(s), limit ${lim}s, sizes $SIZES, $TUNE_ARGS"
        rcs=""; for p in "${pids[@]}"; do wait "$p"; rcs="$rcs $?"; done
        runs tune "$t0" "$(( $(date +%s) - t0 ))" "${#pids[@]}" "${rcs# }"
        log "tune exits:$rcs in $(( $(date +%s) - t0 )) s"
        tail -n 3 "$OUT"/tune-*.log
    fi
fi

# One store for the tables: the shards merged (a fresh merge every call).
M=$W/lscat.db
if [ "$NG" != 1 ]; then
    M=$W/merged.db
    rm -f "$M" "$M-wal" "$M-shm"
    MB=$ROOT/${RC_MERGE_BIN:-build/bin}/lscat
    shards=()
    for ((i = 0; i < NG; i++)); do  # copies, migrated to the merging lscat's schema
        d=$W/merge-in-$i.db
        "$PY" -c 'import sqlite3, sys
s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d)' "$(db_of $i)" "$d"
        "$MB" init --db "$d" -q >> "$OUT/merge.log" 2>&1
        shards+=("$d")
    done
    "$MB" dataset merge "${shards[@]}" --db "$M" >> "$OUT/merge.log" 2>&1 ||
        log "merge failed: $(tail -n 2 "$OUT/merge.log")"
fi
if [ "${RC_REPORT:-1}" = 1 ]; then
    timeout 120 lscat --db "$M" dataset report --out "$OUT/report-match" \
        > "$OUT/report-match.txt" 2>&1
    timeout 120 lscat --db "$M" dataset report --all-checks --out "$OUT/report-all" \
        > "$OUT/report-all.txt" 2>&1
fi
"$PY" scripts/realcode-summary.py "$M" "$W/realcode-runs.tsv" "$W/realcode-globals.tsv" \
    > "$OUT/summary.txt" 2>&1
"$PY" -c 'import gzip, shutil, sqlite3, sys
s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d); d.close()
shutil.copyfileobj(open(sys.argv[2], "rb"), gzip.open(sys.argv[2] + ".gz", "wb", 6))' \
    "$M" "$OUT/real.db" && rm -f "$OUT/real.db"
cp "$W/realcode-runs.tsv" "$OUT/" 2>/dev/null
log "done"
echo "== report, match rows only =="; head -c 2500 "$OUT/report-match.txt" 2>/dev/null
echo "== report, all ok rows (--all-checks) =="; head -c 2500 "$OUT/report-all.txt" 2>/dev/null
echo "== summary =="; head -c 6000 "$OUT/summary.txt"
