#!/usr/bin/env bash
# Issue #14, session 11 (args11): the P2 (transformer dims) and P5 (struct arguments) kernels of
# session 10's whole-corpus store, isolated again with this tree (ISOLATE_VERSION 10), probed
# harness by harness on the GPU: each kernel's harness is built with nvcc and run with --probe
# under every binding on the probe's configurations (1D: 1024x1 256, 64x64 16x16, 2024x2024 256;
# 2D: 64x64 16x16, 2024x2024 16x16), then with the block retry's shapes where all of those
# faulted (bindings as the probe picks them: side where a size role is, tokens where two
# transformer dims are named). Prints one line per kernel (the first binding and shape that ran clean, else each
# binding's outcome) and a summary last. No store and no libclang needed on the device.
#
# Usage: scripts/device-args.sh KDIR [OUT]
#   KDIR  a folder of kernel folders <id>/{kernel.cu,harness.cu,params.json} (made on the CPU
#         machine by `scripts/device-args.sh --pack KDIR` from .dev/rc10's work folders)
#   OUT   results folder (default $OUT or .dev/device-args)
# Environment: NVCC (default /usr/local/cuda/bin/nvcc), DA_TIMEOUT (seconds per run, 30).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
if [ "${1:-}" = "--pack" ]; then # CPU machine: copy the P2/P5 kernels' folders into KDIR
    K=${2:?usage: device-args.sh --pack KDIR}; mkdir -p "$K"
    grep -P '^P[25]\t' "${DA_LIST:-/work/notes/s11/nonrunnable.tsv}" | while IFS=$'\t' read -r p n id _; do
        d=$(ls -d .dev/rc10/*/kernels/"${id:0:2}"/"$id"* 2>/dev/null | head -1)
        [ -n "$d" ] || { echo "not isolated: $p $n $id" >&2; continue; }
        mkdir -p "$K/$p-$id" && cp "$d"/kernel.cu "$d"/harness.cu "$d"/params.json "$K/$p-$id/"
    done
    ls "$K" | wc -l; exit 0
fi
K=$(cd "${1:?usage: device-args.sh KDIR [OUT]}" && pwd)
O=${2:-${OUT:-.dev/device-args}}; mkdir -p "$O" && O=$(cd "$O" && pwd)
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
TO=${DA_TIMEOUT:-30}
"$NVCC" -std=c++17 -arch=sm_90 -I"$ROOT" -c tune/timing.cu -o "$O/timing.o" || exit 3
"$NVCC" -I"$ROOT" -c tune/stats.c -o "$O/stats.o" || exit 3
ls "$K" | xargs -P 8 -I{} sh -c "cd '$K/{}' && '$NVCC' -std=c++17 -arch=sm_90 -I. -I'$ROOT' \
    harness.cu '$O/timing.o' '$O/stats.o' -o '$O/{}.bin' > '$O/{}.build.log' 2>&1 || echo 'build failed: {}'"
run() { # kernel, binding, configuration lines; prints the outcomes of the result lines
    printf '%b' "$3" | timeout "$TO" "$O/$1.bin" --probe --bind "$2" --results "$O/r.jsonl" \
        > "$O/$1.$2.out" 2>&1
    local rc=$?
    tail -n +2 "$O/r.jsonl" 2>/dev/null | sed -n 's/.*"status":"\([a-z_]*\)".*/\1/p' | tr '\n' ' '
    [ $rc = 124 ] && echo timeout # the configurations before it still count
    rm -f "$O/r.jsonl"
}
verdict_of() { # statuses, count expected, count of small configurations
    local st=($1) n=0 x
    for x in "${st[@]}"; do [ "$x" = ok ] && n=$((n + 1)); done
    if [ ${#st[@]} = "$2" ] && [ $n = "$2" ]; then echo ok
    elif [ ${#st[@]} -ge "$3" ] && [ "$(echo "${st[@]:0:$3}" | tr ' ' '\n' | grep -vc '^ok$')" = 0 ]; then
        echo small-only
    fi
}
for k in $(ls "$K"); do
    [ -x "$O/$k.bin" ] || { echo "$k build_failed"; continue; }
    if grep -q '"is2d":true' "$K/$k/params.json"; then
        shapes="16 16 1|8 8 1|32 8 1|32 32 1" nsmall=1 ncfg=2
        cfg() { printf '64 64 %s\n2024 2024 %s\n' "$1" "$1"; }
    else
        shapes="256 1 1|128 1 1|64 1 1|32 1 1|1024 1 1" nsmall=2 ncfg=3
        cfg() { if [ "$1" = "256 1 1" ]; then printf '1024 1 256 1 1\n64 64 16 16 1\n2024 2024 256 1 1\n'
                else printf '1024 1 %s\n64 64 %s\n2024 2024 %s\n' "$1" "$1" "$1"; fi; }
    fi
    binds=area # as the probe: side where a size role is, tokens where two dims are named
    grep -q '"role":"size"' "$K/$k/params.json" && binds="$binds side"
    [ "$(grep -oE '"name":"(B|T|N|C|OC|NH|V|Vp|P)","type":"[^"]*","canonical":"[^"]*","kind":"scalar"' \
        "$K/$k/params.json" | wc -l)" -ge 2 ] && binds="$binds tokens"
    verdict="" tries=""
    IFS='|' read -ra S <<< "$shapes"
    for s in "${S[@]}"; do
        for b in $binds; do
            got=$(run "$k" "$b" "$(cfg "$s")")
            tries="$tries $b@${s// /x}:[${got% }]"
            v=$(verdict_of "$got" $ncfg $nsmall)
            if [ "$v" = ok ]; then verdict="ok $b ${s// /x}"; break 2; fi
            [ -z "$verdict" ] && [ "$v" = small-only ] && verdict="small-only $b ${s// /x}"
        done
        [ -n "$verdict" ] && break
    done
    echo "$k ${verdict:-not_runnable} |$tries" | cut -c1-300
done | tee "$O/verdicts.txt"
echo "summary: $(grep -c ' ok ' "$O/verdicts.txt") clean, $(grep -c ' small-only ' "$O/verdicts.txt") clean at the small sizes only, of $(wc -l < "$O/verdicts.txt") kernels"
