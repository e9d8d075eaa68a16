#!/usr/bin/env bash
# Build the SYNTHETIC test store (tests/dataset/fixtures/synthetic.sql) at DB, with the
# kernels' sources under WORK/kernels: a plain one, one with a comma in a string, one that is
# not valid UTF-8 (Latin-1 bytes), none for the "missing" kernel, and a 3 MB one.
# Usage: synth-store.sh DB WORK   (needs lscat-init on PATH and sqlite3)
set -euo pipefail
db=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
lscat-init --db "$db" --work "$work" -q
sqlite3 "$db" < "$here/../fixtures/synthetic.sql"
k() { mkdir -p "$work/kernels/$1"; cat > "$work/kernels/$1/kernel.cu"; }
printf '__global__ void saxpy(int n, float a, const float *x, float *y)\n{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n' |
    k 11/1111111111111111111111111111111111111111111111111111111111111111
printf 'template <typename T, int B>\n__global__ void gemm(const T *a, const T *b, T *c, int n) { /* "quoted", commas, é ✓ */ }\n' |
    k 22/2222222222222222222222222222222222222222222222222222222222222222
printf '// caf\xe9 \xff\xfe na\xefve\r\n__global__ void latin1_kernel(int *p) { *p = 1; }\n\x00tail' |
    k 33/3333333333333333333333333333333333333333333333333333333333333333
head -c 3000000 /dev/zero | tr '\0' 'x' | k 55/5555555555555555555555555555555555555555555555555555555555555555
