#!/usr/bin/env bash
# lscat execute as root when a folder only its owner can enter (0700, as `mktemp -d` makes)
# lies on the way to what the sandbox's unprivileged uids need (docs/execute.md "Folders the
# sandbox cannot enter"): lscat's own files there (the timing core's headers, lscat-runner) are
# copied where the uids reach them and the build and the probe run; a work folder there is
# bound back for the uids in each child's mount namespace, and without that the stage refuses
# where nothing would keep untrusted code running as root from the store; an nvcc there is
# refused.
# Real programs, the real nvcc, bubblewrap and the fallback sandbox.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
if [ "$(id -u)" != 0 ]; then
    t_skip sandbox_reach__a_0700_folder_on_the_way "not root: the sandbox switches uids only as root"
    t_done
fi
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [ ! -x "$NVCC" ]; then
    t_skip sandbox_reach__a_0700_folder_on_the_way "nvcc not found"
    t_done
fi
chmod 755 "$T_TMP"
CLOSED=$T_TMP/closed
mkdir -p "$CLOSED/share/tune" "$CLOSED/share/isolate" "$CLOSED/bin"
chmod 700 "$CLOSED"
for f in timing.h timing.cu stats.c nvml_dl.h; do cp "$ROOT/tune/$f" "$CLOSED/share/tune/"; done
cp "$ROOT/isolate/harness_core.h" "$ROOT/isolate/harness_core.cu" "$CLOSED/share/isolate/"
cp "$LSCAT_BIN/lscat-runner" "$CLOSED/bin/"
export LSCAT_SHARE_DIR=$CLOSED/share LSCAT_RUNNER=$CLOSED/bin/lscat-runner LSCAT_RUNNER_NO_CUDA=1
export LSCAT_LOCK_DIR=$T_TMP/locks

add_kernel() { # work folder [name]
    local id kd
    id=$(printf 'reach-%s' "${2:-ok}" | sha256sum | cut -c1-64)
    kd=$1/kernels/${id:0:2}/$id
    mkdir -p "$kd/include"
    cp "$ROOT/tests/execute/fixtures/kernels/ok/kernel.cu" "$ROOT/tests/execute/fixtures/harness.cu" "$kd/"
    cp "$ROOT/tests/execute/fixtures/harness_main.h" "$kd/include/"
    [ -n "${2:-}" ] && sed -i "s/2.0f \* x\[i\]/3.5f * x[i]/" "$kd/kernel.cu"
    sqlite3 "$1/lscat.db" "INSERT INTO kernels(id, name, dir, params, param_count, created_at)
        VALUES ('$id', 'k${2:-}', 'kernels/${id:0:2}/$id', '[]', 2, '2026-11-24T00:00:00Z')"
}
counts() { sqlite3 "$1/lscat.db" "SELECT counts FROM stage_runs WHERE stage = 'execute' ORDER BY id DESC LIMIT 1"; }

# The timing core's headers and lscat-runner inside the 0700 folder, the work folder outside:
# the per-slot uids build and probe (host-only runner: no GPU here; its CUDA calls fail, so the
# probe is recorded as failed, exit 1, but it ran in the runner).
for mode in bwrap fallback; do
    W=$T_TMP/work-$mode
    export LSCAT_WORK=$W LSCAT_DB=$W/lscat.db
    [ "$mode" = fallback ] && export LSCAT_SANDBOX=fallback
    lscat init -q >/dev/null 2>&1 || t_fail "sandbox_reach__${mode}_init" "lscat init failed"
    add_kernel "$W"
    t_expect "sandbox_reach__${mode}_builds_and_probes_with_lscat_files_in_a_0700_folder" 1 \
        lscat execute --arch sm_90 -j 1 --probe-jobs 1 --probe-anyway
    t_contains "sandbox_reach__${mode}_children_run_as_a_slot_uid" "$T_ERR" "unprivileged per-slot uid"
    t_contains "sandbox_reach__${mode}_says_the_headers_are_read_from_a_copy" "$T_ERR" \
        "the timing core's headers are read from '$W/builds/sandbox-"
    t_contains "sandbox_reach__${mode}_names_the_folder_that_blocks_them" "$T_ERR" "'$CLOSED' is not searchable by others"
    t_contains "sandbox_reach__${mode}_says_the_runner_is_a_copy" "$T_ERR" "they run a copy, '$W/builds/sandbox-"
    case "$(counts "$W")" in *'"built_first_try":1,'*'"probed":1,'*'"runner_probe_runs":1,'*)
        t_ok "sandbox_reach__${mode}_the_kernel_is_built_and_probed_in_the_runner" ;;
        *) t_fail "sandbox_reach__${mode}_the_kernel_is_built_and_probed_in_the_runner" "counts $(counts "$W")" ;; esac
    # what the slot uids get: lscat's files only, root's, read-only for them
    bad=$(find "$W"/builds/sandbox-* \( ! -user root -o -perm /022 \) -print | head -3)
    [ -z "$bad" ] && t_ok "sandbox_reach__${mode}_the_copies_are_roots_and_read_only_for_others" ||
        t_fail "sandbox_reach__${mode}_the_copies_are_roots_and_read_only_for_others" "$bad"
    unset LSCAT_SANDBOX
done

# A second run reuses the copies (content-addressed), making none.
W=$T_TMP/work-bwrap
export LSCAT_WORK=$W LSCAT_DB=$W/lscat.db
before=$(ls -d "$W"/builds/sandbox-* | sort | tr '\n' ' ')
t_expect sandbox_reach__a_second_run_succeeds 0 lscat execute --arch sm_90 -j 1 --no-probe
after=$(ls -d "$W"/builds/sandbox-* | sort | tr '\n' ' ')
[ "$before" = "$after" ] && t_ok sandbox_reach__a_second_run_reuses_the_copies ||
    t_fail sandbox_reach__a_second_run_reuses_the_copies "before: $before after: $after"

# An nvcc inside the 0700 folder: refused at the start (exit 3), naming the folder and the fix.
printf '#!/bin/sh\nexec %s "$@"\n' "$NVCC" >"$CLOSED/bin/nvcc"
chmod 755 "$CLOSED/bin/nvcc"
t_expect sandbox_reach__an_nvcc_out_of_reach_is_refused 3 lscat execute --arch sm_90 --no-probe --nvcc "$CLOSED/bin/nvcc"
t_contains sandbox_reach__the_refusal_says_what_to_do "$T_ERR" "cannot enter '$CLOSED' (no search permission for others); run 'chmod o+x $CLOSED'"

# The work folder itself inside the 0700 folder: each child's mount namespace shows it past
# the closed folder (an empty tmpfs there, the work folder bound back at its path), so the slot
# uids build and probe; bubblewrap, which could only run as root there, is passed over.
W=$CLOSED/work
export LSCAT_WORK=$W LSCAT_DB=$W/lscat.db
lscat init -q >/dev/null 2>&1 || t_fail sandbox_reach__closed_work_init "lscat init failed"
add_kernel "$W"
t_expect sandbox_reach__a_work_folder_in_a_0700_folder_builds 0 lscat execute --arch sm_90 -j 1 --no-probe
t_contains sandbox_reach__the_sandbox_line_says_it_is_bound_back "$T_ERR" "the work folder bound back past '$CLOSED'"
t_contains sandbox_reach__and_that_the_slot_uids_run_the_builds "$T_ERR" "unprivileged per-slot uid"
t_expect sandbox_reach__a_work_folder_in_a_0700_folder_is_probed 1 lscat execute --arch sm_90 -j 1 --probe-anyway
case "$(counts "$W")" in *'"cached":1,'*'"probed":1,'*'"runner_probe_runs":1,'*)
    t_ok sandbox_reach__the_bound_back_kernel_is_probed_in_the_runner ;;
    *) t_fail sandbox_reach__the_bound_back_kernel_is_probed_in_the_runner "counts $(counts "$W")" ;; esac

# An nvcc inside the bound-back work folder is within the uids' reach: it builds.
mkdir -p "$W/bin"
printf '#!/bin/sh\nexec %s "$@"\n' "$NVCC" >"$W/bin/nvcc"
chmod 755 "$W/bin/nvcc"
add_kernel "$W" two
t_expect sandbox_reach__an_nvcc_in_the_bound_back_work_folder_builds 0 lscat execute --arch sm_90 -j 1 --no-probe --nvcc "$W/bin/nvcc"
case "$(counts "$W")" in *'"built_first_try":1,'*) t_ok sandbox_reach__the_new_kernel_is_built_through_it ;;
    *) t_fail sandbox_reach__the_new_kernel_is_built_through_it "counts $(counts "$W")" ;; esac

# Without that (no mount namespace), nothing would keep probes running as root from the store:
# refused at the start (exit 3), nothing probed or recorded for the kernel.
sqlite3 "$LSCAT_DB" "DELETE FROM probes"
export LSCAT_SANDBOX_DISABLE=mntns
t_expect sandbox_reach__without_a_mount_namespace_probes_as_root_are_refused 3 lscat execute --arch sm_90 -j 1 --probe-anyway
t_contains sandbox_reach__the_refusal_names_the_folder_and_the_fix "$T_ERR" \
    "cannot enter '$CLOSED' (no search permission for others) on the way to the work folder '$W', and without bubblewrap probes would run as root, free to write the store; run 'chmod o+x $CLOSED'"
n=$(sqlite3 "$LSCAT_DB" "SELECT (SELECT count(*) FROM probes) + (SELECT count(*) FROM builds WHERE status != 'ok')")
[ "$n" = 0 ] && t_ok sandbox_reach__the_refused_run_records_nothing_for_the_kernel ||
    t_fail sandbox_reach__the_refused_run_records_nothing_for_the_kernel "$n probe or build rows"
# Builds alone go on where Landlock confines their writes (refused where not), with a warning
# that names the folder and the fix.
lscat execute --arch sm_90 -j 1 --no-probe >"$T_OUT" 2>"$T_ERR"
rc=$?
if grep -qF "build writes confined by Landlock" "$T_ERR"; then want=0; else want=3; fi
[ "$rc" = "$want" ] && t_ok sandbox_reach__without_a_mount_namespace_builds_run_only_under_landlock ||
    t_fail sandbox_reach__without_a_mount_namespace_builds_run_only_under_landlock "exit $rc, expected $want"
[ "$want" = 0 ] && t_contains sandbox_reach__the_warning_names_the_folder_and_the_fix "$T_ERR" \
    "cannot enter '$CLOSED' (no search permission for others) on the way to the work folder, so untrusted code runs as root (run 'chmod o+x $CLOSED'"
unset LSCAT_SANDBOX_DISABLE
t_done
