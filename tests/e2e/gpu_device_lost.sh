#!/usr/bin/env bash
# A device that is unusable while execute probes, on a machine with a GPU (make test-gpu;
# docs/execute.md "A device that goes"): nvidia-smi lists the GPU, so execute probes, but
# CUDA_VISIBLE_DEVICES= hides it from the CUDA runtime the probe runner and the harness use:
# the real driver says `no CUDA-capable device is detected`. Probing stops, nothing is
# recorded, exit 3; the next run, with the GPU visible, probes the same kernel and keeps it
# runnable. The kernel is isolate's golden saxpy (the GPU machines have no libclang). Without a
# CUDA device every check reports skip.
. "$(dirname "$0")/lib.sh"
chmod 755 "$T_TMP" # the sandbox's uids reach the work folder
ROOT=${LSCAT_ROOT:-$PWD}
NAMES="gpu_device_lost__a_hidden_device_stops_the_run_with_exit_3 gpu_device_lost__it_says_the_device_is_unusable gpu_device_lost__nothing_is_recorded gpu_device_lost__the_next_run_probes_it gpu_device_lost__and_keeps_it_runnable"
t_need_gpu "$NAMES"
export LSCAT_WORK=$T_TMP/work LSCAT_DB=$T_TMP/work/lscat.db LSCAT_LOCK_DIR=$T_TMP/locks
sql() { python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
r = c.execute(sys.argv[2]).fetchone()
c.commit()
print(r[0] if r else "")' "$LSCAT_DB" "$@"; }
lscat init -q
G=$ROOT/tests/isolate/fixtures/harness-golden/saxpy
id=$(printf 'device-lost-saxpy' | sha256sum | cut -c1-64)
d=$LSCAT_WORK/kernels/${id:0:2}/$id
mkdir -p "$d"
cp "$G/kernel.cu" "$G/harness.cu" "$G/params.json" "$d/"
python3 - "$LSCAT_DB" "$id" "kernels/${id:0:2}/$id" "$d/params.json" <<'PY'
import json, sqlite3, sys
db, kid, rel, pj = sys.argv[1:]
p = open(pj).read()
c = sqlite3.connect(db)
c.execute("INSERT INTO kernels(id, name, dir, params, param_count, created_at) "
          "VALUES (?, 'saxpy', ?, ?, ?, '2026-11-25T00:00:00Z')",
          (kid, rel, p, len(json.loads(p).get("params", []))))
c.commit()
PY
t_expect gpu_device_lost__a_hidden_device_stops_the_run_with_exit_3 3 env CUDA_VISIBLE_DEVICES= \
    lscat execute --arch sm_90 -j 1 --probe-jobs 1
t_contains gpu_device_lost__it_says_the_device_is_unusable "$T_ERR" \
    "device 0 is unusable (exit 3, 0 configurations ran: harness: device 0: no CUDA-capable device is detected)"
got="$(sql "SELECT count(*) FROM probes") $(sql "SELECT status FROM kernels")"
[ "$got" = "0 built" ] && t_ok gpu_device_lost__nothing_is_recorded ||
    t_fail gpu_device_lost__nothing_is_recorded "probes, status: $got"
t_expect gpu_device_lost__the_next_run_probes_it 0 lscat execute --arch sm_90 -j 1 --probe-jobs 1
got="$(sql "SELECT outcome FROM probes") $(sql "SELECT status FROM kernels")"
[ "$got" = "ok runnable" ] && t_ok gpu_device_lost__and_keeps_it_runnable ||
    t_fail gpu_device_lost__and_keeps_it_runnable "probe, status: $got"
t_done
