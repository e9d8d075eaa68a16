#!/usr/bin/env bash
# Probe throughput on real code, main's lscat against this tree's, side by side in one device
# call (issue #14 item 4; docs/execute.md "Probe budget"). The real corpus (.dev/realcode7.tar.xz:
# 1,102 isolated kernels of 30 repositories) is unpacked, cut to the kernels whose id starts with
# one of PB_PREFIXES (about 1/16 each; the default five hold 238 of session 7's 759 probes and
# 2.3 of its 2.4 mean probe-seconds), its harness bodies refreshed to this tree's (probe lines
# with the kernel's own time, scripts/realcode-refresh-harness.sh), and built once with each
# lscat (--no-probe; the second build is cached when both compute the same build key). Then each
# mode probes a copy of that built store:
#   before:N  main's binaries (.dev/probe-before/bin), N probe workers: session 6's budget from
#             the line interval (they ignore the lines' kernel_ns)
#   after:N   this tree's binaries (build/bin): the budget from the kernel's own time
#   after:NsS the same with S spare runners per worker (--probe-spares S)
#   after:NfF the same with a fault budget of F per kernel (--probe-faults F; NsSfF both)
#   after:NcC the same with --probe-connections C (binaries without that option: with
#             CUDA_DEVICE_MAX_CONNECTIONS=C in execute's environment, which reaches the runners
#             and harnesses: CUDA_* is allow-listed); a suffix rK only names a repeated pass
#             (after:4r2, after:4c1r2: ABBA orders); n before it: --shared-spares
#             (after:4c1n, after:4c1nr2; session 19 measured it with n meaning the opposite,
#             --no-shared-spares, when sharing was the default); bS before it: --probe-budget S
#             (after:4c1b1.5); g before it: --no-probe-guard (after:4c1g: session 20's guard off); m before it:
#             --probe-memcheck auto (after:4c1m, after:4c1mr2: session 21), o: --probe-memcheck
#             off (auto is the default since session 22); e before rK: builds too, from a copy of
#             the store made before any build (nothing cached: a real run's builders beside the
#             probes, session 24), with -j nproc as every pass, or jN after it: -j N (after:4c1ej12)
#             xS after those: --probe-budget-max S (after:4x5); kNAME after that: the pass probes
#             only the kernels listed in PB_SUBSETS' file for NAME (PB_SUBSETS="clean:FILE
#             dirty:FILE", files of kernel ids relative to the root; session 31: after:4kclean)
# Both run the same harnesses, so the difference is execute's rule (the harness's event pair is
# the only harness change). Each mode prints kernels/s (probed over the execute run's wall and
# over the span of its probes), probe-seconds by outcome and bucket, runnable, too_slow, the
# runners' counts; then every after mode is compared with the first before mode on the kernels
# both probed: runnable before and not after (with after's tries), verdicts that changed, and
# what the after lines measured (kernel time against line interval at 64x64, the 2024x2024
# configurations' time besides their kernel: the allowance).
#   on the GPU:  scripts/device-probe8.sh OUT_DIR
#   carry:       build/bin .dev/probe-before .dev/realcode7.tar.xz (+ build/tests: then
#                tests/execute/gpu_probe_budget runs last, when over 100 s are left)
#   .dev/probe-before/bin: main's build/bin (the lead: cp -a /work/main/build/bin .dev/probe-before/)
# Environment: PB_BUDGET_S (470: the whole call), PB_PREFIXES ("0 1 2 3 4"), PB_MODES ("before:4
# after:4 after:8 after:16"; a mode is skipped when under 30 s are left), PB_CAP_S (170: SIGTERM
# cap of one probe pass; the probes in flight finish and the rate is over what was probed),
# PB_EXTRA (more execute options; a dry run without a GPU takes --probe-anyway), PB_ARCHIVE
# (.dev/realcode7.tar.xz), PB_SETTLE (1: before and after each pass, note the processes left under
# the sandbox's uids and the GPU's compute apps, kill them and wait for an idle GPU; session 9's
# first scaling call ran the passes back to back and 8 workers measured 0.51/s, 16 failed with
# CUDA error 100), PB_CTX ("1 4 8 16 32": scripts/device-ctx-scale.py first; "" = not),
# PB_IDS (a file of kernel ids, one a line, relative to the root: those kernels instead of
# PB_PREFIXES), PB_WORK (.dev/realcode/work: the archive's work folder; .dev/realcode/work9 for
# .dev/realcode9full.tar.xz, the corpus isolated at ISOLATE_VERSION 9).
# PB_TRACE=1: each pass runs with -v --log-format json (per-run probe_run events: the wait for a
# runner, the run's wall) and leaves probes-<mode>.json.gz (every probe's tries) beside its log.
#   mcs:N     no probe: scripts/device-memcheck-search.py (N workers) over the built kernels whose
#             stored probe (PB_MCS_BEFORE, default .dev/rc10-final.db.gz) faulted at the small
#             sizes; mcs:Na runs every stored try
# Modes without "before" need no .dev/probe-before. Needs python3, no sqlite3 CLI.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
ROOT=$PWD
OUT=${1:?usage: scripts/device-probe8.sh OUT_DIR}
mkdir -p "$OUT"
T_END=$(( $(date +%s) + ${PB_BUDGET_S:-470} ))
PREFIXES=${PB_PREFIXES:-0 1 2 3 4}
MODES=${PB_MODES:-before:4 after:4 after:8 after:16}
CAP=${PB_CAP_S:-170}
ARCHIVE=${PB_ARCHIVE:-.dev/realcode7.tar.xz}
WORK=$ROOT/${PB_WORK:-.dev/realcode/work}
export LSCAT_NO_PROGRESS=1 LSCAT_SHARE_DIR=$ROOT
unset LSCAT_RUNNER # each lscat finds its own lscat-runner (LSCAT_BIN, set per run)
JOBS=$(nproc)
S=$OUT/summary.txt
: > "$S"
note() { echo "$*" | tee -a "$S"; }
left() { echo $(( T_END - $(date +%s) )); }
bin_of() { case $1 in before) echo "$ROOT/.dev/probe-before/bin" ;; *) echo "$ROOT/build/bin" ;; esac; }
BASE=$(mktemp -d /tmp/lscat-probe8.XXXXXX)
chmod 755 "$BASE"
trap 'rm -rf "$BASE"' EXIT
note "== gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $JOBS cores; modes $MODES; prefixes $PREFIXES"
for b in $(for m in $MODES; do echo "${m%%:*}"; done | sort -u); do
    [ -x "$(bin_of $b)/lscat" ] || { note "== no $(bin_of $b)/lscat"; exit 3; }
done
# The driver's own scaling of context creation, without lscat (PB_CTX="": not run).
if [ -n "${PB_CTX-1 4 8 16 32}" ]; then
    note "== contexts created at once (scripts/device-ctx-scale.py, as root, no sandbox):"
    # shellcheck disable=SC2086
    timeout 120 python3 scripts/device-ctx-scale.py ${PB_CTX-1 4 8 16 32} 2>&1 | tail -8 | sed 's/^/   /' | tee -a "$S"
fi

# The corpus, unpacked where it was isolated (its sources' roots are absolute: /work/main).
[ -e /work/main ] || { mkdir -p /work && ln -s "$ROOT" /work/main; }
if [ ! -f "$WORK/lscat.db" ]; then
    python3 -c 'import os, sys, tarfile
t = tarfile.open(sys.argv[1])
t.extractall(sys.argv[2], [m for m in t if not os.path.lexists(os.path.join(sys.argv[2], m.name))])' \
        "$ROOT/$ARCHIVE" "$ROOT" || { note "cannot unpack $ARCHIVE"; exit 3; }
fi
mkdir -p "$BASE/w"
cp -a "$WORK" "$BASE/w/after"
# keep_kernels STORE COND LABEL: every kernel of the store but those matching COND deleted
keep_kernels() {
    python3 - "$@" <<'PY' | tee -a "$S"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA foreign_keys = ON")
db.execute("DELETE FROM kernels WHERE NOT (%s)" % sys.argv[2])
db.commit()
print("%s: %d kernels" % (sys.argv[3], db.execute("SELECT count(*) FROM kernels").fetchone()[0]))
PY
}
ids_cond() { echo "id IN ($(grep . "$1" | sed "s/.*/'&'/" | paste -sd,))"; } # a file of ids
cond=$(for p in $PREFIXES; do printf "id LIKE '%s%%' OR " "$p"; done)
cond=${cond% OR }
[ -n "${PB_IDS:-}" ] && cond=$(ids_cond "$ROOT/$PB_IDS") # a list of kernel ids instead of prefixes
keep_kernels "$BASE/w/after/lscat.db" "$cond" "== real ($(cut -c1-200 <<< "$cond"))"
note "== $(scripts/realcode-refresh-harness.sh "$BASE/w/after" 2>&1 | tail -1)"

q1() { python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$@"; }
build() { # which (before|after): builds into $BASE/w/<which>, no probes
    local t0=$SECONDS w=$BASE/w/$1 bin; bin=$(bin_of "$1")
    LSCAT_BIN=$bin timeout $(( $(left) > 200 ? 180 : $(left) - 20 )) "$bin/lscat" --work "$w" execute --no-probe \
        -j "$JOBS" --arch sm_90 > "$OUT/build-$1.log" 2>&1
    note "== build $1: exit $? in $(( SECONDS - t0 )) s: $(tail -1 "$OUT/build-$1.log" | cut -c1-300)"
}
# e modes (after:4c1e) build from scratch beside their probes: a copy of the store before any build
[[ " $MODES" =~ :[0-9][^\ ]*e ]] && cp -a "$BASE/w/after" "$BASE/w/fresh"
build after
if [[ " $MODES" == *" before:"* ]]; then
    cp -a "$BASE/w/after" "$BASE/w/before" # the same builds: cached where main's key is the same
    build before
fi

# What a pass left behind (its probes' processes under the sandbox's uids, GPU contexts): noted,
# then killed and waited for, so that the next pass starts on an idle GPU (PB_SETTLE=0: not).
settle() {
    [ "${PB_SETTLE:-1}" = 1 ] || return 0
    local left_procs apps i
    left_procs=$(ps -eo uid=,pid=,etimes=,comm= | awk '$1 >= 61000 && $1 < 62000')
    apps=$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader 2>/dev/null)
    note "   $1: $(printf '%s' "$left_procs" | grep -c .) sandbox-uid processes, $(printf '%s' "$apps" | grep -c .) GPU compute apps"
    [ -n "$left_procs" ] && printf '%s\n' "$left_procs" | head -5 | sed 's/^/     /' | tee -a "$S"
    printf '%s\n' "$left_procs" | awk 'NF { print $2 }' | xargs -r kill -9 2>/dev/null
    local most=$(( $(left) - 30 < 60 ? $(left) - 30 : 60 )) # a dead GPU never gets idle
    for ((i = 0; i < most; i++)); do
        [ -z "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null)" ] && break
        sleep 1
    done
    [ "$i" -gt 0 ] && note "   waited ${i} s for the GPU to have no compute apps"
    return 0
}
probe() { # mode: before:N / after:N / after:NsS
    local mode=$1 which=${1%%:*} spec=${1#*:} args=() bin; bin=$(bin_of "$which")
    [[ $spec =~ ^([0-9]+)(s([0-3]))?(f([0-9]+))?(c([0-9]+))?(n)?(b([0-9.]+))?(g)?(m|o)?(e)?(j([0-9]+))?(x([0-9.]+))?(k([a-z]+))?(r[0-9]+)?$ ]] || { note "== bad mode $mode"; return; }
    args=(--probe-jobs "${BASH_REMATCH[1]}")
    [ -n "${BASH_REMATCH[3]}" ] && args+=(--probe-spares "${BASH_REMATCH[3]}")
    [ -n "${BASH_REMATCH[5]}" ] && args+=(--probe-faults "${BASH_REMATCH[5]}")
    [ -n "${BASH_REMATCH[8]}" ] && args+=(--shared-spares)
    [ -n "${BASH_REMATCH[10]}" ] && args+=(--probe-budget "${BASH_REMATCH[10]}")
    [ -n "${BASH_REMATCH[11]}" ] && args+=(--no-probe-guard)
    [ "${BASH_REMATCH[12]}" = m ] && args+=(--probe-memcheck auto)
    [ "${BASH_REMATCH[12]}" = o ] && args+=(--probe-memcheck off)
    [ -n "${BASH_REMATCH[17]}" ] && args+=(--probe-budget-max "${BASH_REMATCH[17]}")
    local subset=${BASH_REMATCH[19]}
    local envs=()
    if [ -n "${BASH_REMATCH[7]}" ]; then # --probe-connections where the binaries know it
        if "$bin/lscat" execute --help 2>&1 | grep -q -- --probe-connections; then
            args+=(--probe-connections "${BASH_REMATCH[7]}")
        else
            envs+=(CUDA_DEVICE_MAX_CONNECTIONS="${BASH_REMATCH[7]}")
        fi
    fi
    [ "$(left)" -gt 30 ] || { note "== $mode: skipped, $(left) s left"; return; }
    # the pass, its kill's grace (-k 60) and the settle after it fit in what is left (session
    # 19: a GPU that went away mid-call made every pass run to its cap, and the call overran)
    local cap=$(( $(left) - 90 < CAP ? $(left) - 90 : CAP )) w=$BASE/p/${mode//:/-}
    [ "$cap" -gt 20 ] || { note "== $mode: skipped, $(left) s left"; return; }
    mkdir -p "$BASE/p"
    local from=$which
    [ -n "${BASH_REMATCH[13]}" ] && from=fresh # builds too: nothing cached (the e modes)
    local jobs=${BASH_REMATCH[15]:-$JOBS}
    cp -a "$BASE/w/$from" "$w"
    if [ -n "$subset" ]; then # kNAME: only the kernels of PB_SUBSETS' NAME file in this pass's copy
        local f; f=$(tr ' ' '\n' <<< "${PB_SUBSETS:-}" | sed -n "s/^$subset://p")
        [ -f "$ROOT/$f" ] || { note "== $mode: no subset file for $subset in PB_SUBSETS"; return; }
        keep_kernels "$w/lscat.db" "$(ids_cond "$ROOT/$f")" "   subset $subset"
    fi
    settle "before $mode"
    local t1; t1=$(date +%s.%N)
    # shellcheck disable=SC2086
    local trace=()
    [ "${PB_TRACE:-0}" = 1 ] && trace=(-v --log-format json)
    env "${envs[@]}" LSCAT_BIN="$bin" timeout -s TERM -k 60 "$cap" "$bin/lscat" "${trace[@]}" --work "$w" execute -j "$jobs" --arch sm_90 "${args[@]}" \
        ${PB_EXTRA:-} > "$OUT/execute-${mode//:/-}.log" 2>&1
    local rc=$? wall; wall=$(python3 -c "import sys; print('%.2f' % ($(date +%s.%N) - $t1))")
    settle "after $mode (exit $rc)"
    python3 scripts/device-probe8.py mode "$w/lscat.db" "$mode" "$wall" "$rc" "$cap" "${envs[*]} ${args[*]}" | tee -a "$S"
    if [ "${PB_TRACE:-0}" = 1 ]; then # the probes and the debug log, for a timeline read elsewhere
        python3 scripts/device-probe8.py dump "$w/lscat.db" | gzip > "$OUT/probes-${mode//:/-}.json.gz"
        gzip -f "$OUT/execute-${mode//:/-}.log"
    fi
}
# mcs:N (mcs:Na: every stored try): scripts/device-memcheck-search.py over the built kernels with N
# workers, their tries taken from PB_MCS_BEFORE (a store of the same kernels, gzip).
mcs() {
    local spec=${1#mcs:} all=()
    [[ $spec == *a ]] && { all=(--all); spec=${spec%a}; }
    [ "$(left)" -gt 45 ] || { note "== $1: skipped, $(left) s left"; return; }
    [ -f "$BASE/before.db" ] || gzip -dc "$ROOT/${PB_MCS_BEFORE:-.dev/rc10-final.db.gz}" > "$BASE/before.db"
    chmod -R o+rX "$BASE/w/after"
    settle "before $1"
    [ "$(left)" -gt 30 ] || { note "== $1: skipped, $(left) s left"; return; }
    note "== $1:"
    timeout -k 10 $(( $(left) - 15 )) python3 scripts/device-memcheck-search.py "$BASE/w/after" "$BASE/before.db" \
        "$spec" "$OUT/${1//:/-}.json" "${all[@]}" 2>&1 | tail -30 | sed 's/^/   /' | tee -a "$S"
    settle "after $1"
}
for m in $MODES; do
    case $m in mcs:*) mcs "$m" ;; *) probe "$m" ;; esac
done
# shellcheck disable=SC2086 # the modes are words
python3 scripts/device-probe8.py compare "$BASE/p" $(for m in $MODES; do [[ $m == mcs:* ]] || echo "$m"; done) | tee -a "$S"
# The GPU test of the harness's probe lines and the budget, when build/tests came and time is left.
G=$ROOT/build/tests/execute/gpu_probe_budget
if [ -x "$G" ] && [ "$(left)" -gt 100 ]; then
    LSCAT_BIN=$ROOT/build/bin LSCAT_ROOT=$ROOT timeout $(( $(left) - 10 )) "$G" > "$OUT/gpu_probe_budget.log" 2>&1
    note "== gpu_probe_budget: exit $?: $(grep -c '^ok' "$OUT/gpu_probe_budget.log") ok, $(grep -c '^not ok' "$OUT/gpu_probe_budget.log") not ok, $(grep -c '^skip' "$OUT/gpu_probe_budget.log") skipped"
    grep '^not ok' "$OUT/gpu_probe_budget.log" | head -3 | tee -a "$S"
else
    note "== gpu_probe_budget: not run ($( [ -x "$G" ] && echo "$(left) s left" || echo "no build/tests"))"
fi
if [ "${PB_TRACE:-0}" = 1 ]; then # one file: a call brings back only a few
    (cd "$OUT" && tar czf trace.tgz probes-*.json.gz execute-*.log.gz && rm -f probes-*.json.gz execute-*.log.gz)
fi
for f in "$OUT"/*.log; do # keep what comes back small
    [ "$(wc -c < "$f")" -gt 200000 ] && { tail -c 200000 "$f" > "$f.tail" && mv "$f.tail" "$f"; }
done
echo
echo "==== summary ($OUT/summary.txt)"
cat "$S"
