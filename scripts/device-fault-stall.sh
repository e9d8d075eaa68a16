#!/usr/bin/env bash
# Issue #14: does a GPU fault stall the other probe workers' contexts? One device call, ~2 min.
# Usage: scripts/device-fault-stall.sh OUT [sizes|sanitizer|env|envq|knobs|xgpu]   (on the device machine;
# needs nvcc and python3; "sizes": only the fault's time against the number of faulting threads;
# "sanitizer": faults caught by compute-sanitizer memcheck in one process instead of the GPU's
# MMU; "env": a fault and a new context with CUDA_DEVICE_MAX_CONNECTIONS=1 against the default,
# with idle contexts held by other processes, and recovery in the same process; "envq": only
# the first of those, ~30 s, to run before and after a long probe run; "knobs": what a
# faulting process controls, and whether a second context of it survives the fault, ~70 s;
# "xgpu": (2 GPUs or more) whether a fault on GPU 0 stalls work and new contexts on GPU 1, ~90 s;
# "xgpu ops": whether NVML reads, graph instantiation or cudaMalloc on GPU 1 wait while GPU 0
# makes contexts or faults, ~20 s)
export PATH=$PATH:/usr/local/cuda/bin
set -euo pipefail
out=${1:?usage: device-fault-stall.sh OUT}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d)
nvcc -O2 -I"$here/.." -o "$w/faultstall" "$here/device-fault-stall.cu" -lcuda -ldl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
timeout 400 python3 "$here/device-fault-stall.py" "$w/faultstall" "$w/run" ${2:-} ${3:-} 2>&1 | tee "$out/fault-stall.txt"
nvidia-smi -q | grep -i "recovery action" | tee -a "$out/fault-stall.txt" || true
rm -rf "$w"
