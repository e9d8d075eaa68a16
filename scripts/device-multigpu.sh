#!/usr/bin/env bash
# Issue #20 on a lent machine with several GPUs of one host: scaling of `lscat tune`, `lscat
# sweep` and the MPI dispatch over 1 and G GPUs, side by side in one call per step, and what a
# killed worker costs. The summary (summary.txt in OUT_DIR, printed last) is what docs/tune.md
# quotes. With more than 7 files in OUT, all but summary.txt are packed into OUT/all.tgz (a
# device call returns at most 8 files).
#
# Steps (MG_STEPS, default "execute tune"; each resumes from the files an earlier step left in
# the work folder, so steps may go to separate calls on one warm machine, or the store can be
# carried with MG_STORE):
#   execute  unpack the real-code archive (scripts/realcode-prepare.sh pack-work), then `lscat
#            execute -j <all cores>` on GPU 0: builds, repairs, probes; the store comes back as
#            OUT/executed.db.gz (with MG_STORE=F.db.gz, an earlier call's store as it came back,
#            the harnesses are rebuilt under the same keys and their probes and verdicts stand)
#   tune     the same MG_KERNELS runnable kernels (the first by id: ids are hashes, so the set is
#            unbiased in cost) on 1 GPU, then on G GPUs, each from a fresh copy of the executed
#            store: configurations measured, wall, speed-up, parallel efficiency, and each GPU's
#            first and last measurement (the tail), and how far G GPUs' medians are from 1 GPU's
#            (MG_TUNE_GPUS="2 4": each count against 1 GPU); OUT/kernels.tsv: each kernel's GPU, rows,
#            first and last row, probe seconds
#   mpi      the same kernels through `mpirun -np G+1 lscat tune --mpi` (one worker rank per GPU,
#            rank 0 serves) right after the tune step's plain G-GPU run; without the tune step,
#            plain and MPI in the order plain, mpi, mpi, plain
#   sweep    the matmul example (examples/matmul, 15 records) and a larger space (BLOCK_SIZE 8,16,32
#            x N 256..8192 step 256, 96 records, GPU-bound) with builds cached: 1 GPU, G GPUs
#            (`--gpus 0,..`), `mpirun -np 2` (one worker) and `-np G+1` (G workers)
#   xgpu     scripts/device-fault-stall.sh xgpu: does a fault on GPU 0 stall work and new contexts
#            on GPU 1 (no lscat; ~90 s)
#   fixtune  the fault-free control: the fixture kernel `ok` x MG_FIX_KERNELS (120) tuned on 1 GPU
#            and on each count of MG_TUNE_GPUS (build/tests/tune/fixtures carried)
#   kill     kills on the fixture kernel `ok` x MG_KILL_KERNELS (16; build/tests/tune/fixtures carried): a worker's
#            lscat-tune child killed mid-run under --mpi (its chunk is handed out again), a worker
#            rank killed (Open MPI ends the job; the rerun resumes), one GPU's lscat-runner
#            killed in a plain G-GPU run; what each lost and the wall it cost
# Usage: scripts/device-multigpu.sh OUT_DIR   (from the source root; build/bin, build/tests and .dev-carry
#        carried). Environment (defaults): MG_ARCHIVE=.dev-carry/rc20.tar.xz, MG_WORK=.dev/rc20/work,
#        MG_KERNELS=60, MG_SIZES=240, MG_TUNE_ARGS="--timeout 5 --max-failures 2",
#        MG_GPUS=<all the machine has>, MG_BUDGET_S=560 (steps not started past it are skipped),
#        MG_SWEEP_MODES="g1 gG mpi1 mpiG" (also g2, mpi2; NAME-before runs MG_BEFORE_BIN's lscat,
#        NAME-nopre sets LSCAT_SWEEP_PRESTART=0, NAME-nolead LSCAT_SWEEP_PRESTART_LEAD_S=0,
#        NAME-g0 LSCAT_TUNE_CONTEXT_GATE=0; e.g. gG-nolead-g0: as before sessions 28 and 29),
#        MG_SWEEP_NMAX=8192 (the larger space's largest N), MG_KILL_KERNELS=16, MG_TESTS=0 (1: the GPU tests after the steps; MG_TEST_ONLY=GLOB a part),
#        MG_TUNE_GPUS=G, MG_FIX_KERNELS=120, MG_TUNE_G1=1 (0: no 1-GPU run), MG_KERNEL_IDS (id prefixes: the tune set instead of
#        the first MG_KERNELS), MG_FIX_BEFORE=1 (fixtune on G GPUs with MG_BEFORE_BIN too), MG_FIX_MPI=1
#        (and `mpirun -np G+1 lscat tune --mpi`), MG_FIX_RUNS (the fixtune runs: see the step), MG_SWEEP_SPACES="matmul large", MG_TRACE=0,
#        MG_MPI_ENV (variables for the mpi step's MPI runs, e.g. LSCAT_MPI_SERVE=0), MG_MPI_ORDER
#        ("pA mA mB pB"), MG_MPI_RUN_S (60: no run starts with less budget left than this).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:?usage: scripts/device-multigpu.sh OUT_DIR}
mkdir -p "$OUT"
STEPS=${MG_STEPS:-execute tune}
NK=${MG_KERNELS:-60}
SIZES=${MG_SIZES:-240}
TARGS=${MG_TUNE_ARGS:---timeout 5 --max-failures 2}
W=$ROOT/${MG_WORK:-.dev/rc20/work}
mkdir -p "$W"
G=${MG_GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
T_END=$(( $(date +%s) + ${MG_BUDGET_S:-560} ))
export LSCAT_BIN=$ROOT/build/bin LSCAT_SHARE_DIR=$ROOT PATH="$ROOT/build/bin:$PATH" LSCAT_NO_PROGRESS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR=${TMPDIR:-/tmp}
# Sources were isolated under /work/main on the CPU machine: keep those absolute paths valid.
[ -e /work/main ] || { mkdir -p /work && ln -s "$ROOT" /work/main; }
S=$OUT/summary.txt
touch "$S"
note() { echo "$*" >>"$S"; echo "[mg $(date +%H:%M:%S)] $*"; }
now() { date +%s.%N; }
secs() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$@"; }
calc() { python3 -c "print($*)"; }
sql() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0] or 0)" "$@"; }
copydb() { python3 -c 'import sqlite3, sys
s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d); d.close()' "$1" "$2"; }
left() { echo $(( T_END - $(date +%s) )); }
gpulist() { seq -s, 0 $(( $1 - 1 )); }
# MG_TRACE=1: each tune, fixtune and sweep run writes LSCAT_TUNE_TRACE and LSCAT_RUNNER_TRACE
# files (docs/tune.md "Where a configuration's time goes") to OUT/traces.tgz
tr() {
    [ "${MG_TRACE:-0}" = 1 ] || return 0
    mkdir -p "$OUT/traces"
    export LSCAT_TUNE_TRACE=$OUT/traces/$1.tune LSCAT_RUNNER_TRACE=$OUT/traces/$1.runner
}
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
# MG_TRACE=1 also samples the lscat processes every 0.5 s to OUT/traces/ps.txt: /proc/uptime
# (the clock of the trace files' first column, up to suspend time), then pid, state (D: in the
# driver, Z: not reaped), kernel wait channel, command; to see a killed runner's teardown.
# At the end scripts/fault-timeline.py reads them: OUT/fault-timeline.txt, its head in the summary
if [ "${MG_TRACE:-0}" = 1 ]; then
    mkdir -p "$OUT/traces"
    ( while sleep 0.5; do
        echo "@ $(cut -d' ' -f1 /proc/uptime)"
        ps -eo pid=,ppid=,stat=,wchan:24=,comm= | grep -E 'lscat|harness' | grep -v grep
    done >"$OUT/traces/ps.txt" 2>/dev/null ) &
    PS_SAMPLER=$!
    trap 'kill $PS_SAMPLER 2>/dev/null' EXIT
fi
note "== $(date -u +%FT%TZ) steps: $STEPS; $G x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(nproc) cores; lscat $(git rev-parse --short HEAD 2>/dev/null)"

# ---- execute
if has execute; then
    if [ ! -f "$W/lscat.db" ]; then
        tar xJf "${MG_ARCHIVE:-.dev-carry/rc20.tar.xz}" -C /work/main --skip-old-files || { note "cannot unpack"; exit 3; }
    fi
    if [ -n "${MG_STORE:-}" ] && [ ! -f "$W/.seeded" ]; then
        rm -f "$W/lscat.db-wal" "$W/lscat.db-shm"
        gzip -dc "$MG_STORE" >"$W/lscat.db" && touch "$W/.seeded"
        # the builds did not travel: execute rebuilds each (the same cache key, its binary gone)
        # and keeps its probes and verdict (execute/record.c record_build)
    fi
    t0=$(now)
    CUDA_VISIBLE_DEVICES=0 timeout -k 60 "$(( $(left) - 200 ))" lscat --work "$W" -j "$(nproc)" execute >"$OUT/execute.log" 2>&1
    rc=$?
    note "execute: exit $rc in $(secs "$t0" "$(now)") s; kernels by status: $(sqlite3 "$W/lscat.db" "select group_concat(s || ' ' || n, ', ') from (select status s, count(*) n from kernels group by 1)" 2>/dev/null || sql "$W/lscat.db" "select group_concat(s || ' ' || n, ', ') from (select status s, count(*) n from kernels group by 1)")"
    copydb "$W/lscat.db" "$OUT/executed.db" && gzip -f "$OUT/executed.db"
fi

# The measurement set: the first NK runnable kernels by id; the others stop being runnable in
# the copies the runs measure (never in the executed store).
SET=$W/tune-set${MG_KERNEL_IDS:+-$(echo "$MG_KERNEL_IDS" | md5sum | cut -c1-8)}.db
if { has tune || has mpi; } && [ ! -f "$SET" ]; then
    copydb "$W/lscat.db" "$SET"
    python3 - "$SET" "$NK" "${MG_KERNEL_IDS:-}" <<'PY'
import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
ids = [r[0] for r in d.execute("SELECT DISTINCT k.id FROM kernels k JOIN builds b ON b.kernel_id = k.id "
                               "WHERE k.status = 'runnable' AND b.status = 'ok' ORDER BY 1")]
keep = ids[:int(sys.argv[2])]
if sys.argv[3].split():  # MG_KERNEL_IDS: these kernels (id prefixes) instead
    keep = [i for i in ids if any(i.startswith(p) for p in sys.argv[3].split())]
d.execute("CREATE TEMP TABLE keep(id TEXT PRIMARY KEY)")
d.executemany("INSERT INTO keep VALUES (?)", [(i,) for i in keep])
d.execute("UPDATE kernels SET status = 'built' WHERE status = 'runnable' AND id NOT IN (SELECT id FROM keep)")
d.commit()
print("measurement set: %d of %d runnable kernels" % (len(keep), len(ids)))
PY
fi

# One tune run on a fresh copy of the set: NAME GPUS MODE(plain|mpi)
declare -A WALL ROWS
tune_run() {
    local name=$1 ng=$2 mode=$3 db=$W/run-$1.db t0 rc w n
    rm -f "$db" "$db-wal" "$db-shm"; copydb "$SET" "$db"
    tr "tune-$name"; t0=$(now)
    if [ "$mode" = plain ]; then
        env ${RUN_ENV:-} lscat --work "$W" --db "$db" tune --gpus "$(gpulist "$ng")" \
            --sizes "$SIZES" $TARGS >"$OUT/tune-$name.log" 2>&1
    else
        env ${MG_MPI_ENV:-} ${RUN_ENV:-} CUDA_VISIBLE_DEVICES=$(gpulist "$ng") mpirun -np $(( ng + 1 )) lscat --work "$W" \
            --db "$db" tune --mpi --sizes "$SIZES" $TARGS >"$OUT/tune-$name.log" 2>&1
    fi
    rc=$?
    w=$(secs "$t0" "$(now)")
    n=$(sql "$db" "select count(*) from measurements where superseded = 0")
    WALL[$name]=$w ROWS[$name]=$n
    note "tune $name ($ng GPU, $mode): exit $rc, $n configurations ($(sql "$db" "select count(*) from measurements where status = 'ok'") ok) of $(sql "$db" "select count(distinct kernel_id) from measurements") kernels in $w s = $(calc "round($n / $w, 2)")/s"
    # each GPU: configurations, first and last measurement (seconds after the run's start)
    python3 - "$db" "$t0" <<'PY' >>"$S"
import sqlite3, sys, datetime
d = sqlite3.connect(sys.argv[1]); t0 = float(sys.argv[2])
def ts(s):
    s = s.replace("Z", "+00:00")
    return datetime.datetime.fromisoformat(s).timestamp()
rows = d.execute("SELECT g.uuid, m.measured_at FROM measurements m JOIN gpus g ON g.id = m.gpu_id "
                 "WHERE m.superseded = 0").fetchall()
by = {}
for u, at in rows:
    by.setdefault(u, []).append(ts(at) - t0)
for u, t in sorted(by.items()):
    print("    gpu %s: %d rows, first %.1f s, last %.1f s" % (u[-8:], len(t), min(t), max(t)))
PY
    grep -h "mpi: time rank 0\|configurations in\|^tune: " "$OUT/tune-$name.log" | tail -3 | cut -c1-600 | sed 's/^/    /' >>"$S"
    # each kernel: its GPU, rows, first and last row (s after the start), its probe's seconds:
    python3 - "$db" "$t0" "$name" <<'PY' >>"$OUT/kernels.tsv"
import sqlite3, sys, datetime
d = sqlite3.connect(sys.argv[1]); t0 = float(sys.argv[2])
ts = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() - t0
for k, g, n, a, b, p in d.execute(
        "SELECT m.kernel_id, g.uuid, count(*), min(m.measured_at), max(m.measured_at), "
        "(SELECT max(probe_s) FROM probes p WHERE p.kernel_id = m.kernel_id) FROM measurements m "
        "JOIN gpus g ON g.id = m.gpu_id WHERE m.superseded = 0 GROUP BY 1, 2"):
    print("%s\t%s\t%s\t%d\t%.2f\t%.2f\t%s" % (sys.argv[3], k[:12], g[-8:], n, ts(a), ts(b), p))
PY
}

# Do G GPUs measure what 1 GPU measured? Over the configurations ok in both runs: the median
# and the 5th/95th percentiles of median_ns(G GPUs) / median_ns(1 GPU), and the share off by 10%.
agree() {
    python3 - "$W/run-$1.db" "$W/run-$2.db" <<'PY'
import sqlite3, sys
def load(f):
    q = ("SELECT kernel_id, width, height, block_x, block_y, block_z, median_ns FROM measurements "
         "WHERE status = 'ok' AND superseded = 0 AND median_ns > 0")
    return {r[:6]: r[6] for r in sqlite3.connect(f).execute(q)}
a, b = load(sys.argv[1]), load(sys.argv[2])
r = sorted(b[k] / a[k] for k in a.keys() & b.keys())
if not r:
    print("no configuration ok in both"); sys.exit()
pick = lambda q: r[min(len(r) - 1, int(q * len(r)))]
off = sum(1 for x in r if x > 1.1 or x < 1 / 1.1) / len(r)
print("%d configurations ok in both: median ratio %.3f (p5 %.3f, p95 %.3f), %.1f%% off by more than 10%%"
      % (len(r), pick(0.5), pick(0.05), pick(0.95), 100 * off))
PY
}

# ---- tune: 1 GPU against each count of MG_TUNE_GPUS (default "G"), one fresh store copy each
if has tune && [ "$(left)" -gt 120 ]; then
    [ "${MG_TUNE_G1:-1}" = 1 ] && tune_run g1 1 plain
    for ng in ${MG_TUNE_GPUS:-$G}; do  # N, or Nb: N GPUs with MG_BEFORE_BIN's binaries
        [ "${ng%b}" -gt 1 ] && [ "$(left)" -gt 60 ] || continue
        tbin=$ROOT/build/bin; [ "${ng%b}" = "$ng" ] || tbin=$ROOT/${MG_BEFORE_BIN:?}
        LSCAT_BIN=$tbin PATH=$tbin:$PATH tune_run "g$ng" "${ng%b}" plain
        [ -n "${WALL[g1]:-}" ] || continue
        note "== tune speed-up on $ng GPUs: $(calc "round(${WALL[g1]} / ${WALL[g$ng]}, 3)")x, efficiency $(calc "round(${WALL[g1]} / ${WALL[g$ng]} / ${ng%b}, 3)") (rows ${ROWS[g$ng]} against ${ROWS[g1]}; aim >= 0.95); timing against 1 GPU: $(agree g1 "g$ng")"
    done
fi

# ---- tune: plain G GPUs against mpirun -np G+1 --mpi, ABBA
if has mpi && has tune && [ -n "${WALL[g$G]:-}" ] && [ "$(left)" -gt 60 ]; then
    tune_run mpi-m "$G" mpi
    note "== tune mpi/plain rate on $G GPUs: $(calc "round(${WALL[g$G]} / ${WALL[mpi-m]}, 4)") (plain ${WALL[g$G]} s just before; aim >= 0.97)"
elif has mpi && [ "$(left)" -gt 120 ]; then
    for r in ${MG_MPI_ORDER:-pA mA mB pB}; do # MG_MPI_ORDER: e.g. "mB pB", the second half in a call of its own
        [ "$(left)" -gt "${MG_MPI_RUN_S:-60}" ] || { note "tune $r: skipped, the budget is spent"; continue; }
        # a -g0 suffix: LSCAT_TUNE_CONTEXT_GATE=0 for that run (e.g. "mA mB-g0")
        RUN_ENV=; case $r in *-g0) RUN_ENV=LSCAT_TUNE_CONTEXT_GATE=0 ;; esac
        case $r in p*) tune_run "mpi-$r" "$G" plain ;; m*) tune_run "mpi-$r" "$G" mpi ;; esac
        RUN_ENV=
    done
    p=$(calc "${WALL[mpi-pA]:-0} + ${WALL[mpi-pB]:-0}") m=$(calc "${WALL[mpi-mA]:-0} + ${WALL[mpi-mB]:-0}")
    note "== tune mpi/plain rate on $G GPUs: $(calc "round(($p) / ($m), 4) if $m else 0") (plain $p s, mpi $m s over two runs each; aim >= 0.97)"
fi

# ---- xgpu: does a fault on GPU 0 stall GPU 1? (scripts/device-fault-stall.sh, no lscat)
if has xgpu && [ "$G" -ge 2 ] && [ "$(left)" -gt 150 ]; then
    bash scripts/device-fault-stall.sh "$OUT/xgpu" xgpu >"$OUT/xgpu.log" 2>&1
    note "xgpu: exit $?"; grep -E "^(xgpu|same-GPU)" "$OUT/xgpu.log" | sed 's/^/    /' >>"$S"
fi

# ---- fixtune: the fault-free control: the fixture kernel `ok` x MG_FIX_KERNELS (120) tuned on
# 1 GPU and on each count of MG_TUNE_GPUS (build/tests/tune/fixtures carried). MG_FIX_RUNS lists
# the runs instead, in order (a run may repeat, for ABBA): N (plain, N GPUs), Nb (MG_BEFORE_BIN's
# lscat), Nm (mpirun -np N+1 lscat tune --mpi), Nmb (MPI, MG_BEFORE_BIN), each with optional
# variants: -s0 (LSCAT_TUNE_SPARE_RUNNER=0), -s1 (=1), -i1 (--inflight 1), -cK (--chunk K),
# -gc (GPU discovery from a file after its first run: LSCAT_GPUINFO), -p0 (LSCAT_MPI_SERVE=0: an
# MPI chunk is an lscat-tune of its own, as before session 28), -g0 (LSCAT_TUNE_CONTEXT_GATE=0:
# the runners make their contexts all at once, as before session 28).
# Rates are against the first plain run of the same N; fixmed.txt compares the stored medians.
if has fixtune && [ "$(left)" -gt 90 ]; then
    FIX=$ROOT/build/tests/tune/fixtures
    declare -A FW=() FN=()
    runs=${MG_FIX_RUNS:-1 ${MG_TUNE_GPUS:-$G} ${MG_FIX_BEFORE:+${G}b} ${MG_FIX_MPI:+${G}m}}
    # -gc: GPU discovery answered from a file per CUDA_VISIBLE_DEVICES (each MPI chunk's
    # lscat-tune runs lscat-gpuinfo, a cuInit, beside the chunk that measures)
    gcache=$W/gpuinfo-cached.sh
    printf '#!/bin/sh\nf=%s/gpuinfo.$CUDA_VISIBLE_DEVICES\n[ -s "$f" ] || "%s/lscat-gpuinfo" >"$f"\ncat "$f"\n' "$W" "$ROOT/build/bin" >"$gcache"
    chmod +x "$gcache"; rm -f "$W"/gpuinfo.*
    i=0
    for run in $runs; do
        i=$(( i + 1 ))
        [ "$(left)" -gt 40 ] || { note "fixtune $run: skipped, the budget is spent"; continue; }
        base=${run%%-*} var=; [ "$base" = "$run" ] || var=-${run#*-}
        ng=${base%%[bm]*} fb=$ROOT/build/bin; case $base in *b) fb=$ROOT/${MG_BEFORE_BIN:?} ;; esac
        env=() margs=()
        for v in ${var//-/ }; do
            case $v in s0) env+=(LSCAT_TUNE_SPARE_RUNNER=0) ;; s1) env+=(LSCAT_TUNE_SPARE_RUNNER=1) ;;
                i1) margs+=(--inflight 1) ;; c*) margs+=(--chunk "${v#c}") ;;
                gc) env+=(LSCAT_GPUINFO="$gcache") ;; p0) env+=(LSCAT_MPI_SERVE=0) ;;
                g0) env+=(LSCAT_TUNE_CONTEXT_GATE=0) ;; esac
        done
        db=$W/fix-$i-$run.db; rm -f "$db" "$db-wal" "$db-shm"
        lscat init --db "$db" >/dev/null 2>&1
        a=(); for k in $(seq 1 "${MG_FIX_KERNELS:-120}"); do a+=("ok$k=$FIX/ok/harness"); done
        python3 tests/tune/support/seed_store.py "$db" "${a[@]}" >/dev/null
        t0=$(now)
        tr "fix-$i-$run"
        case $base in
            *m*) env "${env[@]}" LSCAT_BIN=$fb PATH=$fb:$PATH CUDA_VISIBLE_DEVICES=$(gpulist "$ng") LSCAT_DB=$db \
                     mpirun -np $(( ng + 1 )) "$fb/lscat" tune --mpi "${margs[@]}" >"$OUT/fixtune-$i-$run.log" 2>&1 ;;
            *) env "${env[@]}" LSCAT_BIN=$fb PATH=$fb:$PATH LSCAT_DB=$db "$fb/lscat" tune --gpus "$(gpulist "$ng")" >"$OUT/fixtune-$i-$run.log" 2>&1 ;;
        esac; rc=$?
        w=$(secs "$t0" "$(now)")
        FN[$run]=$(( ${FN[$run]:-0} + 1 )); FW[$run]=$(calc "${FW[$run]:-0} + $w")
        [ -n "${FW[p$ng]:-}" ] || { case $base in "$ng") FW[p$ng]=$w ;; esac; }
        ref=${FW[p$ng]:-}; one=${FW[p1]:-}
        note "fixtune $run: exit $rc, $(sql "$db" "select count(*) from measurements where status = 'ok'") ok of $(sql "$db" "select count(*) from measurements") in $w s$([ -n "$one" ] && [ "$ng" != 1 ] && echo "; $(calc "round($one / $w, 3)")x of 1 GPU, efficiency $(calc "round($one / $w / $ng, 3)")")$([ -n "$ref" ] && [ "$base" != "$ng" ] && echo "; rate $(calc "round($ref / $w, 4)") of plain $ng")"
    done
    for run in "${!FN[@]}"; do
        [ "${FN[$run]}" -gt 1 ] && note "== fixtune $run: mean of ${FN[$run]} runs $(calc "round(${FW[$run]} / ${FN[$run]}, 2)") s"
    done
    # The stored medians of each run against the first run's, per configuration shape: does a
    # run's way of working (MPI, spares, chunking) move what it measures?
    python3 - "$W" >"$OUT/fixmed.txt" 2>&1 <<'PY'
import glob, os, sqlite3, statistics as st, sys
dbs = sorted(glob.glob(os.path.join(sys.argv[1], "fix-*.db")), key=lambda p: int(os.path.basename(p).split("-")[1]))
def shapes(p):
    d = {}
    for bx, by, m in sqlite3.connect(p).execute("select block_x, block_y, median_ns from measurements where status = 'ok' and superseded = 0"):
        d.setdefault((bx, by), []).append(m)
    return d
if dbs:
    ref = shapes(dbs[0])
    print("run: median over shapes of (run's median over kernels / first run's), of p90s, max; and each run's own p90/p50 over kernels")
    for p in dbs:
        d = shapes(p)
        r50 = [st.median(d[k]) / st.median(ref[k]) for k in d if k in ref]
        r90 = [st.quantiles(d[k], n=10)[-1] / st.quantiles(ref[k], n=10)[-1] for k in d if k in ref and len(d[k]) > 2 and len(ref[k]) > 2]
        spread = [st.quantiles(v, n=10)[-1] / st.median(v) for v in d.values() if len(v) > 2]
        print("%-24s p50 %.4f  p90 %.4f  max p50 %.4f  spread p90/p50 %.4f" % (os.path.basename(p)[:-3], st.median(r50), st.median(r90) if r90 else 0, max(r50), st.median(spread) if spread else 0))
PY
    sed 's/^/    /' "$OUT/fixmed.txt" >>"$S"
fi

# ---- sweep: 1 GPU, G GPUs, MPI with 1 and G workers (MG_SWEEP_MODES; a mode ending in -before
# runs the lscat of MG_BEFORE_BIN, for a side-by-side of a change)
if has sweep && [ "$(left)" -gt 150 ]; then
    EX=$ROOT/examples/matmul
    { printf 'BLOCK_SIZE,N\nInteger,Integer\nCompile,Runtime\n'
      for b in 8 16 32; do for n in $(seq 256 256 "${MG_SWEEP_NMAX:-8192}"); do echo "$b,$n"; done; done; } >"$OUT/space-large.csv"
    for sp in ${MG_SWEEP_SPACES:-matmul large}; do
        f=$EX/space.csv; [ $sp = large ] && f=$OUT/space-large.csv
        SW=(--work "$W/sweep-work" --kernel "$EX/matmul.cu" --driver "$EX/driver.c" --space "$f")
        lscat sweep "${SW[@]}" --compile-only --out "$OUT/compile-$sp.csv" >/dev/null 2>&1
        declare -A SWT=() SWN=()
        for mode in ${MG_SWEEP_MODES:-g1 gG mpi1 mpiG}; do
            [ "$(left)" -gt 30 ] || { note "sweep $sp $mode: skipped, the budget is spent"; continue; }
            o=$OUT/sweep-$sp-$mode.csv; rm -f "$o"
            bin=$ROOT/build/bin; case $mode in *-before) bin=$ROOT/${MG_BEFORE_BIN:?} ;; esac
            pre=; case $mode in *-nopre*) pre=0 ;; esac # LSCAT_SWEEP_PRESTART=0: no host started ahead
            export LSCAT_SWEEP_PRESTART=${pre:-1}
            # -nolead: prestart only at a worker's last take of a tuple (session 27's rule)
            case $mode in *-nolead*) export LSCAT_SWEEP_PRESTART_LEAD_S=0 ;; *) unset LSCAT_SWEEP_PRESTART_LEAD_S ;; esac
            # -g0: the hosts make their contexts all at once (no context gate, before session 29)
            case $mode in *-g0*) export LSCAT_TUNE_CONTEXT_GATE=0 ;; *) unset LSCAT_TUNE_CONTEXT_GATE ;; esac
            tr "sweep-$sp-$mode"; t0=$(now)
            case $mode in
                g1*) PATH=$bin:$PATH lscat sweep "${SW[@]}" --gpus 0 --out "$o" ;;
                g2*) PATH=$bin:$PATH lscat sweep "${SW[@]}" --gpus 0,1 --out "$o" ;;
                gG*) PATH=$bin:$PATH lscat sweep "${SW[@]}" --gpus "$(gpulist "$G")" --out "$o" ;;
                mpi2*) CUDA_VISIBLE_DEVICES=0,1 PATH=$bin:$PATH mpirun -np 3 "$bin/lscat" sweep --mpi "${SW[@]}" --out "$o" ;;
                mpi1*) CUDA_VISIBLE_DEVICES=0 PATH=$bin:$PATH mpirun -np 2 "$bin/lscat" sweep --mpi "${SW[@]}" --out "$o" ;;
                mpiG*) CUDA_VISIBLE_DEVICES=$(gpulist "$G") PATH=$bin:$PATH mpirun -np $(( G + 1 )) "$bin/lscat" sweep --mpi "${SW[@]}" --out "$o" ;;
            esac >"$OUT/sweep-$sp-$mode.log" 2>&1
            rc=$?
            w=$(secs "$t0" "$(now)")
            SWT[$mode]=$(calc "${SWT[$mode]:-0} + $w"); SWN[$mode]=$(( ${SWN[$mode]:-0} + 1 ))
            note "sweep $sp $mode: exit $rc, $(( $(wc -l <"$o") - 1 )) rows ($(grep -c ',Success,' "$o") Success) in $w s; $(grep -ho 'mpi: [0-9]* chunks of at most [0-9]* records' "$OUT/sweep-$sp-$mode.log" | head -1)"
        done
        unset LSCAT_TUNE_CONTEXT_GATE LSCAT_SWEEP_PRESTART_LEAD_S
        for m in "${!SWT[@]}"; do
            case $m in g1) continue ;; esac
            k=1; case $m in gG*|mpiG*) k=$G ;; g2*|mpi2*) k=2 ;; esac
            n=${SWN[$m]}
            note "== sweep $sp $m: $(calc "round(${SWT[g1]:-0} / (${SWT[$m]} / $n), 3)")x of plain 1 GPU, efficiency $(calc "round(${SWT[g1]:-0} / (${SWT[$m]} / $n) / $k, 3)") (mean of $n run(s))"
        done
    done
    tar czf "$OUT/sweep.tgz" -C "$OUT" $(cd "$OUT" && ls sweep-*.csv sweep-*.log space-large.csv)
    rm -f "$OUT"/sweep-*.csv "$OUT"/sweep-*.log "$OUT"/compile-*.csv
fi

# ---- kill: what a killed worker costs (fixture kernels: deterministic work)
if has kill && [ "$(left)" -gt 90 ]; then
    FIX=$ROOT/build/tests/tune/fixtures
    seed() {
        rm -f "$1" "$1-wal" "$1-shm"
        lscat init --db "$1" >/dev/null 2>&1
        local a=(); for i in $(seq 1 "${MG_KILL_KERNELS:-16}"); do a+=("ok$i=$FIX/ok/harness"); done
        python3 tests/tune/support/seed_store.py "$1" "${a[@]}" >/dev/null
    }
    doubled() { sql "$1" "select count(*) from (select 1 from measurements where superseded = 0 group by kernel_id, gpu_id, width, height, block_x, block_y, block_z having count(*) > 1)"; }
    okrows() { sql "$1" "select count(*) from measurements where status = 'ok' and superseded = 0"; }
    export CUDA_VISIBLE_DEVICES=$(gpulist "$G")
    k=$OUT/kill; mkdir -p "$k"
    # undisturbed reference
    db=$k/ref.db; seed "$db"; t0=$(now)
    LSCAT_DB=$db mpirun -np $(( G + 1 )) lscat tune --mpi --chunk 2 >"$k/ref.log" 2>&1; rc=$?
    ref=$(secs "$t0" "$(now)"); total=$(okrows "$db")
    note "kill: undisturbed mpi -np $(( G + 1 )): exit $rc, $total ok in $ref s"
    # (a) a worker's lscat-tune child killed once a third of the rows are in
    db=$k/child.db; seed "$db"; t0=$(now)
    LSCAT_DB=$db mpirun -np $(( G + 1 )) lscat tune --mpi --chunk 2 >"$k/child.log" 2>&1 & mp=$!
    while kill -0 $mp 2>/dev/null && [ "$(okrows "$db")" -lt $(( total / 3 )) ]; do sleep 0.2; done
    v=$(pgrep -x lscat-tune | head -1); at=$(okrows "$db"); [ -n "$v" ] && kill -9 "$v"
    wait $mp; rc=$?
    note "kill (a) a worker's lscat-tune killed at $at rows: exit $rc, $(okrows "$db") of $total ok, $(doubled "$db") doubled, wall $(secs "$t0" "$(now)") s against $ref s; $(grep -c 'handed out again' "$k/child.log") chunk(s) handed out again"
    # (b) a worker rank killed: Open MPI ends the job; the rerun resumes
    db=$k/rank.db; seed "$db"; t0=$(now)
    LSCAT_DB=$db mpirun -np $(( G + 1 )) lscat tune --mpi --chunk 2 >"$k/rank.log" 2>&1 & mp=$!
    while kill -0 $mp 2>/dev/null && [ "$(okrows "$db")" -lt $(( total / 3 )) ]; do sleep 0.2; done
    at=$(okrows "$db")
    # the last worker rank's lscat-mpi (by its OMPI_COMM_WORLD_RANK)
    v=; for p in $(pgrep -x lscat-mpi); do grep -qxz "OMPI_COMM_WORLD_RANK=$G" "/proc/$p/environ" 2>/dev/null && v=$p; done
    [ -n "$v" ] && kill -9 "$v"
    wait $mp; rc=$?; w1=$(secs "$t0" "$(now)"); kept=$(okrows "$db"); t1=$(now)
    LSCAT_DB=$db mpirun -np $(( G + 1 )) lscat tune --mpi --chunk 2 >"$k/rank-rerun.log" 2>&1; rc2=$?
    note "kill (b) a worker rank killed at $at rows: exit $rc after $w1 s, $kept rows kept; rerun: exit $rc2 in $(secs "$t1" "$(now)") s, $(okrows "$db") of $total ok, $(doubled "$db") doubled; $(grep -c 'handed out again\|chunk' "$k/rank.log") chunk lines"
    # (c) plain G-GPU run: one GPU's lscat-runner killed
    db=$k/plain-ref.db; seed "$db"; t0=$(now)
    LSCAT_DB=$db lscat tune --gpus "$(gpulist "$G")" >"$k/plain-ref.log" 2>&1; rc=$?
    pref=$(secs "$t0" "$(now)")
    db=$k/plain.db; seed "$db"; t0=$(now)
    LSCAT_DB=$db lscat tune --gpus "$(gpulist "$G")" >"$k/plain.log" 2>&1 & tp=$!
    while kill -0 $tp 2>/dev/null && [ "$(okrows "$db")" -lt $(( total / 3 )) ]; do sleep 0.2; done
    at=$(okrows "$db"); v=$(pgrep -x lscat-runner | tail -1); [ -n "$v" ] && kill -9 "$v"
    wait $tp; rc=$?
    note "kill (c) plain $G-GPU tune, one lscat-runner killed at $at rows: exit $rc, $(okrows "$db") of $total ok, $(sql "$db" "select count(*) from measurements where status != 'ok'") other rows ($(sql "$db" "select group_concat(status || ':' || coalesce(error, ''), ' | ') from measurements where status != 'ok'" | cut -c1-200)), wall $(secs "$t0" "$(now)") s against $pref s undisturbed"
    unset CUDA_VISIBLE_DEVICES
fi

# ---- GPU tests (MG_TESTS=1): what `make test-gpu` runs
if [ "${MG_TESTS:-0}" = 1 ] && [ "$(left)" -gt 120 ]; then
    # build/tests travels packed (scripts/gpu-session.sh says how) or as it is; a carried
    # build/tests/tune/fixtures alone is not the test programs (session 27 ran 75 of the GPU
    # tests so: the C ones were missing)
    [ ! -f .dev-carry/tests.tar.xz ] || [ -x build/tests/tune/gpu_timing ] || tar xJf .dev-carry/tests.tar.xz
    unset LSCAT_TUNE_TRACE LSCAT_RUNNER_TRACE
    # the whole GPU suite takes about 500 s on the x4 machine (session 27): MG_TEST_ONLY=GLOB
    # runs part of it (tests/run.sh's LSCAT_TEST_ONLY), e.g. 'gpu_[a-l]*' then 'gpu_[m-z]*'
    LSCAT_TEST_ONLY=${MG_TEST_ONLY:-} LSCAT_GPU_ONLY=1 LSCAT_TEST_BIN=$ROOT/build/tests timeout "$(( $(left) - 20 ))" tests/run.sh 2>&1 | head -c 3000000 >"$OUT/test-gpu.log"
    note "== test-gpu: $(tail -n 1 "$OUT/test-gpu.log")"
    grep -E '^not ok' "$OUT/test-gpu.log" | head -20 >>"$S"
fi

[ -n "${PS_SAMPLER:-}" ] && kill "$PS_SAMPLER" 2>/dev/null && sleep 0.6
# the traced tune runs' fault costs, gate and spare waits, longest gaps and D-state processes
if [ -n "$(ls "$OUT"/traces/*.tune 2>/dev/null)" ]; then
    python3 scripts/fault-timeline.py "$OUT/traces" >"$OUT/fault-timeline.txt" 2>&1
    { echo "== fault-timeline (scripts/fault-timeline.py; whole in fault-timeline.txt):"
      grep -E '^==|results|a fault to|gate:|spare takeovers|lock waits|state D|    gap |^  [0-9]' "$OUT/fault-timeline.txt" | cut -c1-300 | head -80; } >>"$S"
fi
[ -d "$OUT/traces" ] && tar czf "$OUT/traces.tgz" -C "$OUT" traces && rm -rf "$OUT/traces"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls ./*.log kill/*.log 2>/dev/null) 2>/dev/null
[ -n "$(ls "$W"/run-*.db 2>/dev/null)" ] && tar czf "$OUT/runs.tgz" -C "$W" $(cd "$W" && ls run-*.db)
note "== done, $(left) s of the budget left"
# Only 8 files come back from a device call's OUT (the rest are left out and lost with the
# machine): with more, everything but summary.txt goes into one archive, all.tgz.
if [ "$(find "$OUT" -type f | wc -l)" -gt 7 ]; then
    (cd "$OUT" && find . -type f ! -name summary.txt ! -name all.tgz | tar czf all.tgz -T - &&
        find . -mindepth 1 ! -name summary.txt ! -name all.tgz -delete)
fi
cat "$S"
