#!/bin/sh
# A stand-in for lscat-gpuinfo on machines without a GPU: $FAKE_GPUS devices (default 2),
# all of one model unless FAKE_GPU_MODELS=2 (then odd indices are another model). As the real
# one, it honours CUDA_VISIBLE_DEVICES given as device indices ("1", "0,1"; each worker rank of
# lscat --mpi gets one so): those devices only, numbered from 0, with their own UUIDs.
n=${FAKE_GPUS:-2}
case "${CUDA_VISIBLE_DEVICES:-x}" in
*[!0-9,]* | "") devs=$(seq 0 $((n - 1))) ;;
*) devs=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' ' ') ;;
esac
i=0
for d in $devs; do
    [ "$d" -lt "$n" ] || continue
    name="Fake GPU"
    if [ "${FAKE_GPU_MODELS:-1}" = 2 ] && [ $((d % 2)) = 1 ]; then name="Other Fake GPU"; fi
    printf '{"index":%d,"gpu":"%s","uuid":"GPU-fake-%d","cc":"9.0","driver":"999.fake","cuda_driver":13000,"cuda_runtime":13000,"memory_bytes":85899345920,"sm_count":132,"max_sm_mhz":1980,"l2_bytes":52428800}\n' "$i" "$name" "$d"
    i=$((i + 1))
done
