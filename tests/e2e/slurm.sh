#!/usr/bin/env bash
# Slurm array shards on a real Slurm: the test starts munged, slurmctld and slurmd (Debian's
# slurm-wlm 22.05) on 127.0.0.1 with a generated slurm.conf in a temporary folder, submits
# examples/slurm/submit.sh (the shard array of tune-array.sbatch + merge.sbatch depending on it)
# over real build work (lscat execute runs nvcc on fixture kernels; no GPU: tune measures
# nothing, probes are skipped), waits, and checks that the merged store equals a single-process
# run: the same kernels and builds, none doubled. Needs root (the daemons), slurm-wlm and munge.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
NAMES="slurm__array_and_merge_jobs_ran slurm__each_shard_built_only_its_kernels slurm__merged_store_equals_a_single_process_run slurm__merge_doubles_nothing"
skip_all() { for n in $NAMES; do t_skip "$n" "$1"; done; t_done; }
for p in slurmctld slurmd munged sbatch squeue; do
    command -v $p >/dev/null || skip_all "$p not installed (slurm-wlm, munge: mk/deps.sh)"
done
[ "$(id -u)" = 0 ] || skip_all "the Slurm daemons need root"
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || skip_all "nvcc not found"

# ---- a private Slurm: munge key and socket, state, spool, ports, all under $T_TMP
S=$T_TMP/slurm
mkdir -p "$S/state" "$S/spool" "$S/munge"
chmod 700 "$S/munge"
head -c 1024 /dev/urandom >"$S/munge/key"
chmod 600 "$S/munge/key"
host=$(hostname -s)
port=$((20000 + $$ % 9000 * 2))
cat >"$S/slurm.conf" <<EOF
ClusterName=lscat-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge/sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
PlugStackConfig=/dev/null
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$S/slurm.conf
stop_daemons() {
    for f in slurmd.pid slurmctld.pid munge/pid; do
        [ -f "$S/$f" ] && kill "$(cat "$S/$f")" 2>/dev/null
    done
    sleep 0.5
}
trap 'stop_daemons; [ "$T_FAILED" = 0 ] && rm -rf "$T_TMP"' EXIT
munged -f --socket="$S/munge/sock" --key-file="$S/munge/key" --log-file="$S/munge/log" \
    --pid-file="$S/munge/pid" --seed-file="$S/munge/seed" 2>"$T_ERR" ||
    skip_all "munged did not start: $(head -c 200 "$T_ERR")"
slurmctld -c -f "$S/slurm.conf" 2>"$T_ERR" || skip_all "slurmctld did not start: $(head -c 200 "$T_ERR")"
slurmd -f "$S/slurm.conf" 2>"$T_ERR" || skip_all "slurmd did not start: $(head -c 200 "$T_ERR")"
node_idle() { sinfo -h -o %t 2>/dev/null | grep -q idle; }
t_wait_until node_idle
sinfo -h -o %t 2>/dev/null | grep -q idle ||
    skip_all "the local Slurm node did not come up: $(tail -n 3 "$S/slurmctld.log" | tr '\n' ' ')"

# ---- real build work: a store with 5 fixture kernels; a single-process run for reference
W=$T_TMP/work
export LSCAT_WORK=$W LSCAT_DB=$W/lscat.db
lscat init >/dev/null 2>&1
for i in 1 2 3 4 5; do
    id=$(printf 'slurm-%d' "$i" | sha256sum | cut -c1-64)
    kd=$W/kernels/${id:0:2}/$id
    mkdir -p "$kd/include"
    sed "s/2.0f \* x\[i\]/$i.5f * x[i]/" "$ROOT/tests/execute/fixtures/kernels/ok/kernel.cu" >"$kd/kernel.cu"
    cp "$ROOT/tests/execute/fixtures/harness.cu" "$kd/"
    cp "$ROOT/tests/execute/fixtures/harness_main.h" "$kd/include/"
    sqlite3 "$LSCAT_DB" "INSERT INTO kernels(id, name, dir, params, param_count, created_at)
        VALUES ('$id', 'k$i', 'kernels/${id:0:2}/$id', '[]', 2, '2026-11-21T00:00:00Z')"
done
cp -r "$W" "$T_TMP/single"
LSCAT_WORK=$T_TMP/single LSCAT_DB=$T_TMP/single/lscat.db \
    lscat execute --arch sm_90 -j 1 --no-probe >/dev/null 2>&1

# ---- the example scripts under Slurm: 3 array tasks, then the merge job (afterok)
export LSCAT_EXECUTE_ARGS="--arch sm_90 --no-probe"
# from $T_TMP: the merge job's slurm-<id>.out lands there, not in the source tree
out=$(cd "$T_TMP" && bash "$ROOT/examples/slurm/submit.sh" --array=0-2 --gres=none \
      --cpus-per-task=1 -o "$T_TMP/task-%a.log" 2>&1)
echo "# $out" >&2
for _ in $(seq 1 3000); do
    [ -z "$(squeue -h 2>/dev/null)" ] && break
    sleep 0.2
done
if [ -f "$W/merged.db" ] && ls "$W"/shards/shard-{0,1,2}.db >/dev/null 2>&1; then
    t_ok slurm__array_and_merge_jobs_ran
else
    t_fail slurm__array_and_merge_jobs_ran "$(ls "$W" "$W/shards" 2>&1 | tr '\n' ' ') $(cat "$T_TMP"/task-*.log 2>/dev/null | tail -n 5)"
fi
q() { sqlite3 "$1" "$2" 2>/dev/null; }
per=""; total=0
for i in 0 1 2; do
    n=$(q "$W/shards/shard-$i.db" "SELECT count(*) FROM builds")
    per="$per $n"; total=$((total + ${n:-0}))
done
if [ "$total" = 5 ]; then t_ok slurm__each_shard_built_only_its_kernels
else t_fail slurm__each_shard_built_only_its_kernels "builds per shard:$per"; fi
view="SELECT k.id, k.status, b.arch, b.status, b.cache_key FROM kernels k LEFT JOIN builds b
      ON b.kernel_id = k.id ORDER BY 1, 3"
if [ -n "$(q "$T_TMP/single/lscat.db" "$view")" ] &&
    [ "$(q "$W/merged.db" "$view")" = "$(q "$T_TMP/single/lscat.db" "$view")" ]; then
    t_ok slurm__merged_store_equals_a_single_process_run
else
    t_fail slurm__merged_store_equals_a_single_process_run "merged: $(q "$W/merged.db" "$view" | head -c 400)"
fi
if [ "$(q "$W/merged.db" "SELECT count(*) FROM builds")" = 5 ] &&
    [ "$(q "$W/merged.db" "SELECT count(*) FROM kernels")" = 5 ]; then
    t_ok slurm__merge_doubles_nothing
else t_fail slurm__merge_doubles_nothing "$(q "$W/merged.db" "SELECT count(*) FROM builds")"; fi
t_done
