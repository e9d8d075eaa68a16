#!/usr/bin/env bash
# GPU test of generated harnesses (make test-gpu): builds the golden isolated kernels of
# tests/isolate/fixtures/harness-golden with the documented nvcc command and runs them on the
# device: JSON header, timed and --probe lines, invalid_config for impossible blocks and for a
# block size without a template instantiation, dynamic shared memory, and exit status 4 after
# a sticky error (illegal address). Skips without nvcc or a CUDA device.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
G=$ROOT/tests/isolate/fixtures/harness-golden
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
names="gpu_isolate__harness_builds gpu_isolate__timed_line_is_ok gpu_isolate__probe_line_is_ok gpu_isolate__too_many_threads_is_invalid_config gpu_isolate__block_template_dispatches gpu_isolate__missing_instantiation_is_invalid_config gpu_isolate__two_d_grid_covers_w_by_h gpu_isolate__dynamic_shared_kernel_runs gpu_isolate__sticky_error_exits_4"
skip_all() { for n in $names; do t_skip "$n" "$1"; done; t_done; }
[ -x "$NVCC" ] || skip_all "nvcc not found ($NVCC)"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    skip_all "no CUDA device"
fi
B=$T_TMP/b; mkdir -p "$B"
"$NVCC" -std=c++17 -arch=sm_90 -I"$ROOT" -c "$ROOT/tune/timing.cu" -o "$B/timing.o" 2>"$B/timing.log"
"$NVCC" -I"$ROOT" -c "$ROOT/tune/stats.c" -o "$B/stats.o" 2>"$B/stats.log"
"$NVCC" -std=c++17 -arch=sm_90 -I"$ROOT" -c "$ROOT/isolate/harness_core.cu" -o "$B/harness_core.o" 2>"$B/harness_core.log"
ok=1
for k in block_sum faulty gather_shared saxpy transpose; do
    (cd "$G/$k" && "$NVCC" -std=c++17 -arch=sm_90 -I. -I"$ROOT" harness.cu "$B/harness_core.o" "$B/timing.o" "$B/stats.o" \
        -o "$B/$k" >"$B/$k.log" 2>&1) || { ok=0; echo "$k: $(grep -m2 error "$B/$k.log")" >&2; }
done
[ $ok = 1 ] && t_ok gpu_isolate__harness_builds || { t_fail gpu_isolate__harness_builds "see above"; t_done; }
FAST="--warmup 1 --samples 3 --min-sample-ms 0.2"
run() { # name, config lines; output in $B/<name>.jsonl, exit status in $rc
    local k=$1; shift
    printf '%s\n' "$@" | timeout 120 "$B/$k" $FAST --results "$B/$k.jsonl" >"$B/$k.stdout" 2>"$B/$k.stderr"
    rc=$?
}
line() { sed -n "$2p" "$B/$1.jsonl"; }
run saxpy "# comment" "" "256 256 256 1 1" "256 256 2048 1 1"
case "$(line saxpy 1)" in '{"harness":1,"kernel":"saxpy",'*'"cc":"'*) ;; *) echo "header: $(line saxpy 1)" >&2 ;; esac
case "$(line saxpy 2)" in *'"status":"ok","median_ns":'*'"samples":3'*) t_ok gpu_isolate__timed_line_is_ok ;;
    *) t_fail gpu_isolate__timed_line_is_ok "$(line saxpy 2) (rc $rc)" ;; esac
case "$(line saxpy 3)" in *'"status":"invalid_config"'*) t_ok gpu_isolate__too_many_threads_is_invalid_config ;;
    *) t_fail gpu_isolate__too_many_threads_is_invalid_config "$(line saxpy 3)" ;; esac
printf '256 256 128 1 1\n' | timeout 60 "$B/saxpy" --probe >"$B/probe.jsonl" 2>/dev/null
# the probe line carries the launch's own time (kernel_ns) and, first at a size, the set-up's
case "$(sed -n 2p "$B/probe.jsonl")" in '{"w":256,"h":256,"block":[128,1,1],"grid":[512,1,1],"status":"ok","kernel_ns":'[1-9]*',"setup_ns":'[1-9]*'}') t_ok gpu_isolate__probe_line_is_ok ;;
    *) t_fail gpu_isolate__probe_line_is_ok "$(sed -n 2p "$B/probe.jsonl")" ;; esac
run block_sum "240 240 256 1 1" "240 240 192 1 1"
case "$(line block_sum 2)" in *'"status":"ok"'*) t_ok gpu_isolate__block_template_dispatches ;;
    *) t_fail gpu_isolate__block_template_dispatches "$(line block_sum 2)" ;; esac
case "$(line block_sum 3)" in *'"status":"invalid_config","error":"no template instantiation'*) t_ok gpu_isolate__missing_instantiation_is_invalid_config ;;
    *) t_fail gpu_isolate__missing_instantiation_is_invalid_config "$(line block_sum 3)" ;; esac
run transpose "496 240 16 16 1"
case "$(line transpose 2)" in '{"w":496,"h":240,"block":[16,16,1],"grid":[31,15,1],"status":"ok"'*) t_ok gpu_isolate__two_d_grid_covers_w_by_h ;;
    *) t_fail gpu_isolate__two_d_grid_covers_w_by_h "$(line transpose 2)" ;; esac
run gather_shared "784 784 512 1 1"
case "$(line gather_shared 2)" in *'"status":"ok"'*) t_ok gpu_isolate__dynamic_shared_kernel_runs ;;
    *) t_fail gpu_isolate__dynamic_shared_kernel_runs "$(line gather_shared 2)" ;; esac
run faulty "256 256 128 1 1" "256 256 256 1 1"
if [ "$rc" = 4 ] && [ "$(wc -l < "$B/faulty.jsonl")" = 2 ] && grep -q '"status":"cuda_error"' "$B/faulty.jsonl"; then
    t_ok gpu_isolate__sticky_error_exits_4
else t_fail gpu_isolate__sticky_error_exits_4 "rc $rc: $(tail -1 "$B/faulty.jsonl")"; fi
t_done
