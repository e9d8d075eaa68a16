#!/usr/bin/env bash
# execute and tune on one GPU node, side by side in one run on the same K kernels:
#   sequential: `lscat execute` (build on every core, probe), then `lscat tune`;
#   overlapped: `lscat tune --follow &` beside `lscat execute`: the GPU measures while the CPU
#   cores build the next kernels.
# Reports both wall times and their ratio. Needs a CUDA device and nvcc; otherwise skips.
# execute probes each kernel as soon as it is built, beside the next builds, with at most
# PIPE_ROUND built kernels waiting for a probe (--build-ahead, default 16), in both modes; the
# overlap is tune measuring runnable kernels while the next ones build and probe.
# Env: PIPE_KERNELS (default 48), PIPE_ROUND, PIPE_SIZES / PIPE_BLOCKS (the tune space), BENCH_JOBS.
set -u
cd "$(dirname "$0")/.."
BIN=${LSCAT_BIN:-build/bin}
BIN=$(cd "$BIN" && pwd)
export PATH="$BIN:$PATH" LSCAT_NO_PROGRESS=1
K=${PIPE_KERNELS:-48}
R=${PIPE_ROUND:-16}
J=${BENCH_JOBS:-$(nproc)}
SIZES=${PIPE_SIZES:-256,1024,4096}
BLOCKS=${PIPE_BLOCKS:-16x16,32x32,128,256,1024}
if [ -z "$("$BIN/lscat-gpuinfo" 2>/dev/null)" ]; then
    echo "pipeline (execute beside tune --follow): skipped (no CUDA device)"
    exit 0
fi
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
export LSCAT_LOCK_DIR=$tmp/locks
seed() { # work folder: K kernels (execute's fixture `ok`, a different constant each)
    export LSCAT_WORK=$1 LSCAT_DB=$1/lscat.db
    lscat init -q
    {
        echo "BEGIN;"
        for i in $(seq 1 "$K"); do
            id=$(printf "pipe-%d" "$i" | sha256sum | cut -c1-64)
            d=$LSCAT_WORK/kernels/${id:0:2}/$id
            mkdir -p "$d/include"
            sed "s/2.0f \* x\[i\]/$i.0f * x[i]/" tests/execute/fixtures/kernels/ok/kernel.cu >"$d/kernel.cu"
            cp tests/execute/fixtures/harness.cu "$d/"
            cp tests/execute/fixtures/harness_main.h "$d/include/"
            echo "INSERT INTO kernels(id, name, dir, params, param_count, created_at) VALUES ('$id', 'pipe$i', 'kernels/${id:0:2}/$id', '[]', 2, '2026-01-01T00:00:00Z');"
        done
        echo "COMMIT;"
    } | python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.stdin.read()); c.commit()' "$LSCAT_DB"
}
count() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM measurements WHERE status = '"'ok'"'").fetchone()[0])' "$LSCAT_DB"; }
now() { date +%s.%N; }
# Warm-up outside the timings: the timing core is compiled once per architecture list.
seed "$tmp/warm"; lscat execute -q --no-probe -j "$J" >/dev/null 2>&1

seed "$tmp/seq"
t0=$(now)
lscat execute -q -j "$J" --build-ahead "$R" >/dev/null 2>&1
t1=$(now)
lscat tune -q --gpus 0 --sizes "$SIZES" --blocks "$BLOCKS" >/dev/null 2>&1
t2=$(now)
seq_ok=$(count)

seed "$tmp/ovl"
t3=$(now)
lscat tune -q --follow --gpus 0 --sizes "$SIZES" --blocks "$BLOCKS" >/dev/null 2>&1 &
tpid=$!
lscat execute -q -j "$J" --build-ahead "$R" >/dev/null 2>&1
wait "$tpid"
t4=$(now)
ovl_ok=$(count)
awk -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" -v t4="$t4" -v k="$K" -v j="$J" -v a="$seq_ok" -v b="$ovl_ok" 'BEGIN {
    seq = t2 - t0; ovl = t4 - t3
    printf "pipeline: %d kernels, -j %d, --build-ahead '"$R"': sequential %.2f s (execute %.2f + tune %.2f), overlapped (tune --follow beside execute) %.2f s: %.2fx faster; ok measurements %d vs %d\n", k, j, seq, t1 - t0, t2 - t1, ovl, seq / ovl, a, b }'
