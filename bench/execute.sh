#!/usr/bin/env bash
# execute's speed targets, measured side by side in one run:
#   1. build throughput on N cores against 1 core on the same K kernels (target >= 0.8*N);
#   2. a second, fully cached run over C kernels (target < 1 s per 1000 kernels).
# K real kernels (the fixture kernel with a different constant each); C kernels that fail fast
# (#error: one short nvcc run each) so that 1000 of them are cheap to record once.
# Env: BENCH_JOBS (default nproc), BENCH_KERNELS (default max(8, 4*N)), BENCH_CACHED (1000).
set -eu
cd "$(dirname "$0")/.."
export PATH="${LSCAT_BIN:-$PWD/build/bin}:$PATH"
N=${BENCH_JOBS:-$(nproc)}
K=${BENCH_KERNELS:-$(( 4 * N > 8 ? 4 * N : 8 ))} # 4 whole rounds of N: no half-empty last round
C=${BENCH_CACHED:-1000}
T=$(mktemp -d "${TMPDIR:-/tmp}/lscat-bench-XXXXXX")
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
export LSCAT_WORK=$T/work LSCAT_DB=$T/work/lscat.db LSCAT_NO_PROGRESS=1
lscat init -q

add_kernels() { # prefix count body-maker
    local prefix=$1 count=$2 i id d sql=$T/insert.sql
    : >"$sql"
    echo "BEGIN;" >>"$sql"
    for i in $(seq 1 "$count"); do
        id=$(printf "%s-%d" "$prefix" "$i" | sha256sum | cut -c1-64)
        d=$LSCAT_WORK/kernels/${id:0:2}/$id
        mkdir -p "$d/include"
        "$3" "$i" >"$d/kernel.cu"
        cp tests/execute/fixtures/harness.cu "$d/"
        cp tests/execute/fixtures/harness_main.h "$d/include/"
        echo "INSERT INTO kernels(id, name, dir, params, param_count, created_at) VALUES ('$id', '$prefix$i', 'kernels/${id:0:2}/$id', '[]', 2, '2026-01-01T00:00:00Z');" >>"$sql"
    done
    echo "COMMIT;" >>"$sql"
    sql "$LSCAT_DB" <"$sql"
}
real_kernel() { sed "s/2.0f \* x\[i\]/$1.0f * x[i]/" tests/execute/fixtures/kernels/ok/kernel.cu; }
warm_kernel() { real_kernel 999; }
failing_kernel() { printf '#error generated kernel %d needs a missing configuration\n' "$1"; }
now() { date +%s.%N; }
# sqlite3's command-line tool is not everywhere (the GPU machines lack it): Python's module is.
sql() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA foreign_keys = ON")
r = c.executescript(sys.stdin.read()) if len(sys.argv) < 3 else c.execute(sys.argv[2]).fetchall()
c.commit()
print(r[0][0]) if len(sys.argv) > 2 else None' "$@"; }
forget_builds() {
    sql "$LSCAT_DB" <<<"DELETE FROM builds; DELETE FROM failures; UPDATE kernels SET status = 'isolated';"
    find "$LSCAT_WORK/builds" -mindepth 1 -maxdepth 1 -not -name 'core-*' -exec rm -rf {} +
}

# Warm-up: the timing core is compiled once per architecture list, outside the timings.
add_kernels warm 1 warm_kernel
lscat execute -q --no-probe --arch sm_90 -j 1 || true
add_kernels bench "$((K - 1))" real_kernel # with the warm-up one: K, a multiple of N
forget_builds
t0=$(now); lscat execute -q --no-probe --arch sm_90 -j 1 || true; t1=$(now)
forget_builds
t2=$(now); lscat execute -q --no-probe --arch sm_90 -j "$N" || true; t3=$(now)
awk -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" -v n="$N" -v k="$K" 'BEGIN {
    one = t1 - t0; many = t3 - t2; s = one / many; target = 0.8 * n
    printf "execute build throughput: %d kernels in %.2f s on 1 core, %.2f s on %d: speed-up %.2f (target >= %.2f) %s\n", k, one, many, n, s, target, (s >= target ? "met" : "TARGET MISSED") }'

add_kernels fail "$C" failing_kernel
t4=$(now); lscat execute -q --no-probe --arch sm_90 -j "$N" || true; t5=$(now)
total=$(sql "$LSCAT_DB" "SELECT count(*) FROM kernels")
t6=$(now); lscat execute -q --no-probe --arch sm_90 -j "$N" || true; t7=$(now)
awk -v t4="$t4" -v t5="$t5" -v t6="$t6" -v t7="$t7" -v total="$total" -v c="$C" 'BEGIN {
    cached = t7 - t6; per = cached * 1000 / total
    printf "execute cached run: %d kernels in %.3f s = %.3f s per 1000 kernels (target < 1 s) %s; recording %d failing kernels first took %.2f s\n", total, cached, per, (per < 1 ? "met" : "TARGET MISSED"), c, t5 - t4 }'
