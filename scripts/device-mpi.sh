#!/usr/bin/env bash
# The MPI dispatch overhead on one GPU, side by side in one call (< 8 min on one H200), for
# issues #17 and #20: the same work plain and through `mpirun -np 2 ... --mpi` (rank 0 serves
# only, rank 1 works on the GPU: one GPU, one measuring process, as the plain run), twice each
# in the order plain, mpi, plain, mpi:
#   0. the bare launcher: `mpirun -np 2 true` (a fixed cost of every MPI run, outside lscat);
#   1. lscat tune: 40 copies of the fixture kernel `ok` x the default space (140 configurations),
#      MPI with the default two chunks in flight per worker; then 20 of them in a store the
#      size of a real one (3000 kernels given up on this GPU model with 54000 measurement rows,
#      tests/tune/support/big_store.py), plain and MPI once each: the chunk stores and merges
#      must not scale with the store;
#   2. lscat sweep: the matmul kernel over BLOCK_SIZE 8,16,32 x 20 sizes (60 records), builds
#      cached beforehand (the same --work), so the rate is the run stage's; then a larger space
#      (BLOCK_SIZE 8,16,32 x the 20 sizes 4 times: 240 records, one round), where the
#      launcher's fixed start weighs less;
#   3. a worker's lscat-tune killed 8 s into the MPI tune: what was lost and the wall it cost.
# MPI_SWEEP_ONLY=1: steps 0 and 2 (the sweeps, the 240-record one twice, also with --inflight 1).
# MPI_QUICK=1: steps 0 and 1's two small rounds only (round 2 with LSCAT_TUNE_TRACE: the gaps
# between results, plain and MPI). lscat-mpi's breakdown ("mpi: time" lines: store cuts, children, results, shipping, idle waits,
# rank 0's merges) follows each MPI run. Then the gpu_mpi test. Usage: scripts/device-mpi.sh OUT_DIR (from the source root, with
# build/bin and build/tests carried along). The summary is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/device-mpi.sh OUT_DIR}
mkdir -p "$OUT"
export LSCAT_BIN=$PWD/build/bin LSCAT_SHARE_DIR=$PWD PATH="$PWD/build/bin:$PATH" TMPDIR=$OUT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
FIX=$PWD/build/tests/tune/fixtures
EX=$PWD/examples/matmul
S=$OUT/summary.txt
: >"$S"
note() { echo "$*" >>"$S"; }
now() { date +%s.%N; }
secs() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$@"; }
sql() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$@"; }
note "== gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
note "== mpirun: $(mpirun --version 2>&1 | head -1)"
t0=$(now); mpirun -np 2 true; t1=$(now); mpirun -np 2 true; t2=$(now)
note "== bare launcher: mpirun -np 2 true: $(secs "$t0" "$t1") s, $(secs "$t1" "$t2") s"

if [ "${MPI_SWEEP_ONLY:-0}" != 1 ]; then  # MPI_SWEEP_ONLY=1: steps 2 and 3 only
# 1. tune
seed() {
    lscat init --db "$1" >/dev/null 2>&1 || LSCAT_DB=$1 lscat init >/dev/null 2>&1
    args=(); for i in $(seq 1 "${2:-40}"); do args+=("ok$i=$FIX/ok/harness"); done
    python3 tests/tune/support/seed_store.py "$1" "${args[@]}"
}
export LSCAT_WORK=$OUT/work
declare -A tune_s tune_n
for round in 1 2; do
    for mode in plain mpi; do
        db=$OUT/work/tune-$mode-$round.db; seed "$db"
        t0=$(now)
        tr=(); [ $round = 2 ] && tr=(LSCAT_TUNE_TRACE="$OUT/trace-$mode.txt") # where the seconds go
        if [ $mode = plain ]; then env "${tr[@]}" LSCAT_DB=$db lscat tune --gpus 0 >"$OUT/tune-$mode-$round.log" 2>&1
        else env "${tr[@]}" LSCAT_DB=$db mpirun -np 2 lscat tune --mpi --chunk 8 >"$OUT/tune-$mode-$round.log" 2>&1; fi
        w=$(secs "$t0" "$(now)"); n=$(sql "$db" "select count(*) from measurements where status = 'ok'")
        note "tune $mode round $round: $n ok configurations in $w s ($(python3 -c "print(round($n / $w, 1))")/s)"
        grep -h "mpi: time" "$OUT/tune-$mode-$round.log" | sed 's/^/    /' >>"$S"
        tune_s[$mode]=$(python3 -c "print(${tune_s[$mode]:-0} + $w)"); tune_n[$mode]=$(( ${tune_n[$mode]:-0} + n ))
    done
done
note "== tune rate mpi/plain: $(python3 -c "print(round((${tune_n[mpi]} / ${tune_s[mpi]}) / (${tune_n[plain]} / ${tune_s[plain]}), 4))") (aim >= 0.97)"
# round 2's traces (LSCAT_TUNE_TRACE): the gaps between one kernel's last result and the next
# kernel's first, over 0.2 s, and what came between (the MPI run's chunk turns)
for mode in plain mpi; do
    python3 - "$OUT/trace-$mode.txt" <<'PY' >>"$S" 2>&1
import sys
ev = [l.strip().split(None, 2) for l in open(sys.argv[1]) if l.count(" ") >= 2]
ev.sort(key=lambda e: float(e[0]))
gaps, prev = [], None
for e in ev:
    if prev is not None and e[2].startswith("result") and float(e[0]) - prev[0] > 0.2:
        gaps.append((float(e[0]) - prev[0], prev[1][:60], e[2][:60]))
    if e[2].startswith("result"):
        prev = (float(e[0]), e[2])
print("  trace %s: %d events, %.1f s from first to last, %d gaps > 0.2 s between results summing %.1f s"
      % (sys.argv[1].rsplit("/", 1)[-1], len(ev), float(ev[-1][0]) - float(ev[0][0]) if ev else 0,
         len(gaps), sum(g[0] for g in gaps)))
for g in sorted(gaps, reverse=True)[:8]:
    print("    %.2f s after %s before %s" % g)
PY
done
if [ "${MPI_QUICK:-0}" = 1 ]; then  # the tune rounds only (about 3 minutes)
    tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.txt 2>/dev/null)
    cat "$S"; exit 0
fi
model=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
big=$OUT/work/tune-big-base.db; seed "$big" 20
python3 tests/tune/support/big_store.py "$big" 3000 128,256,512,1024 16x16,32x8,64,128,256 "$model" given_up
declare -A big_s big_n
for mode in plain mpi; do
    db=$OUT/work/tune-big-$mode.db; cp "$big" "$db"
    t0=$(now)
    if [ $mode = plain ]; then LSCAT_DB=$db timeout 240 lscat tune --gpus 0 >"$OUT/tune-big-$mode.log" 2>&1
    else LSCAT_DB=$db timeout 240 mpirun -np 2 lscat tune --mpi --chunk 8 >"$OUT/tune-big-$mode.log" 2>&1; fi
    w=$(secs "$t0" "$(now)"); n=$(sql "$db" "select count(*) from measurements where status = 'ok' and kernel_id like 'ok%'")
    note "tune big store $mode: $n ok configurations in $w s ($(python3 -c "print(round($n / $w, 1))")/s; $(sql "$db" "select count(*) from measurements") rows in the store)"
    grep -h "mpi: time\|kernels to look at" "$OUT/tune-big-$mode.log" | sed 's/^/    /' >>"$S"
    big_s[$mode]=$w big_n[$mode]=$n
done
note "== tune big store rate mpi/plain: $(python3 -c "print(round((${big_n[mpi]} / ${big_s[mpi]}) / (${big_n[plain]} / ${big_s[plain]}), 4))") (aim >= 0.97)"

fi

# 2. sweep (builds cached first)
{ printf 'BLOCK_SIZE,N\nInteger,Integer\nCompile,Runtime\n'
  for b in 8 16 32; do for i in $(seq 1 20); do echo "$b,$((128 * i))"; done; done; } >"$OUT/space.csv"
SW=(--work "$OUT/sweep-work" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" --space "$OUT/space.csv")
lscat sweep "${SW[@]}" --compile-only --out "$OUT/compile.csv" >/dev/null 2>&1
declare -A sw_s
for round in 1 2; do
    for mode in plain mpi; do
        o=$OUT/sweep-$mode-$round.csv
        t0=$(now)
        if [ $mode = plain ]; then lscat sweep "${SW[@]}" --out "$o" >"$OUT/sweep-$mode-$round.log" 2>&1
        else mpirun -np 2 lscat sweep --mpi "${SW[@]}" --out "$o" >"$OUT/sweep-$mode-$round.log" 2>&1; fi
        w=$(secs "$t0" "$(now)")
        note "sweep $mode round $round: $(($(wc -l <"$o") - 1)) records ($(grep -c ',Success,' "$o") Success) in $w s"
        grep -h "mpi: time" "$OUT/sweep-$mode-$round.log" | sed 's/^/    /' >>"$S"
        sw_s[$mode]=$(python3 -c "print(${sw_s[$mode]:-0} + $w)")
    done
done
note "== sweep rate mpi/plain: $(python3 -c "print(round(${sw_s[plain]} / ${sw_s[mpi]}, 4))") (same records; aim >= 0.97)"
{ printf 'BLOCK_SIZE,N\nInteger,Integer\nCompile,Runtime\n'
  for b in 8 16 32; do for r in 1 2 3 4; do for i in $(seq 1 20); do echo "$b,$((128 * i))"; done; done; done; } >"$OUT/space240.csv"
SW2=(--work "$OUT/sweep-work" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" --space "$OUT/space240.csv")
declare -A sw2_s
for round in 1 2; do
    for mode in plain mpi mpi1; do  # mpi1: one chunk at a time (--inflight 1, before session 8)
        o=$OUT/sweep240-$mode-$round.csv
        t0=$(now)
        if [ $mode = plain ]; then lscat sweep "${SW2[@]}" --out "$o" >"$OUT/sweep240-$mode-$round.log" 2>&1
        elif [ $mode = mpi1 ]; then mpirun -np 2 lscat sweep --mpi --inflight 1 "${SW2[@]}" --out "$o" >"$OUT/sweep240-$mode-$round.log" 2>&1
        else mpirun -np 2 lscat sweep --mpi "${SW2[@]}" --out "$o" >"$OUT/sweep240-$mode-$round.log" 2>&1; fi
        w=$(secs "$t0" "$(now)")
        note "sweep240 $mode round $round: $(($(wc -l <"$o") - 1)) records ($(grep -c ',Success,' "$o") Success) in $w s"
        sw2_s[$mode]=$(python3 -c "print(${sw2_s[$mode]:-0} + $w)")
    done
done
note "== sweep240 rate mpi/plain: $(python3 -c "print(round(${sw2_s[plain]} / ${sw2_s[mpi]}, 4))") (same records; aim >= 0.97); with --inflight 1: $(python3 -c "print(round(${sw2_s[plain]} / ${sw2_s[mpi1]}, 4))")"

if [ "${MPI_SWEEP_ONLY:-0}" != 1 ]; then
# 3. a killed worker process: lost work and the wall it cost
db=$OUT/work/tune-kill.db; seed "$db"
t0=$(now)
LSCAT_DB=$db mpirun -np 2 lscat tune --mpi --chunk 8 >"$OUT/tune-kill.log" 2>&1 &
mpid=$!
sleep 8
victim=$(ps -e -o pid=,comm= | awk '$2 == "lscat-tune" { print $1 }' | head -1)
[ -n "$victim" ] && kill -9 "$victim"
wait $mpid; rc=$?
w=$(secs "$t0" "$(now)")
n=$(sql "$db" "select count(*) from measurements where status = 'ok'")
d=$(sql "$db" "select count(*) from (select 1 from measurements group by kernel_id, width, height, block_x, block_y, block_z having count(*) > 1)")
note "== killed worker: exit $rc, $n ok configurations (plain: ${tune_n[plain]} in two runs), $d doubled, wall $w s against $(python3 -c "print(round(${tune_s[mpi]} / 2, 2))") s undisturbed; $(grep -c 'handed out again' "$OUT/tune-kill.log") chunk(s) handed out again"

fi
LSCAT_ROOT=$PWD timeout 150 bash tests/e2e/gpu_mpi.sh >"$OUT/gpu_mpi.log" 2>&1
note "== gpu_mpi: $(grep -c '^ok' "$OUT/gpu_mpi.log") ok, $(grep -c '^not ok' "$OUT/gpu_mpi.log") not ok"
grep '^not ok' "$OUT/gpu_mpi.log" >>"$S"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.txt 2>/dev/null)  # 8 files come back
cat "$S"
