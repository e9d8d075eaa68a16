#!/bin/sh
# A stand-in for lscat-gpuinfo on machines without a GPU: $FAKE_GPUS devices (default 2),
# all of one model unless FAKE_GPU_MODELS=2 (then odd indices are another model).
n=${FAKE_GPUS:-2}
i=0
while [ "$i" -lt "$n" ]; do
    name="Fake GPU"
    if [ "${FAKE_GPU_MODELS:-1}" = 2 ] && [ $((i % 2)) = 1 ]; then name="Other Fake GPU"; fi
    printf '{"index":%d,"gpu":"%s","uuid":"GPU-fake-%d","cc":"9.0","driver":"999.fake","cuda_driver":13000,"cuda_runtime":13000,"memory_bytes":85899345920,"sm_count":132,"max_sm_mhz":1980,"l2_bytes":52428800}\n' "$i" "$name" "$i"
    i=$((i + 1))
done
