# Helpers for end-to-end test scripts: they run the real programs in $LSCAT_BIN and print the
# runner's result lines. Source it, call the checks, end with `t_done`.
#   t_ok NAME | t_fail NAME WHY | t_skip NAME WHY
#   t_expect NAME WANT_EXIT CMD...      run CMD, check its exit status; output in $T_OUT/$T_ERR
#   t_contains NAME FILE TEXT           FILE contains TEXT (fixed string)
#   t_wait_until CMD...                 poll CMD until it succeeds (see "Tests and time" below)
# Tests and time (README): wait for a state the program shows (a row count, a log line, a
# file), never for a fixed time; a timeout is tested with work that never ends; nothing
# asserts that ordinary work ends within N seconds.
set -u
: "${LSCAT_BIN:?run through tests/run.sh or set LSCAT_BIN}"
export PATH="$LSCAT_BIN:$PATH"
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/lscat-e2e-XXXXXX")
T_OUT=$T_TMP/stdout
T_ERR=$T_TMP/stderr
T_FAILED=0
trap '[ "$T_FAILED" = 0 ] && rm -rf "$T_TMP"' EXIT

t_ok() { echo "ok - $1"; }
t_skip() { echo "skip - $1: $2"; }
t_fail() {
    echo "not ok - $1: $2"
    T_FAILED=1
    if [ -s "$T_ERR" ]; then sed 's/^/    | /' "$T_ERR" | tail -n 15 >&2; fi
}

t_expect() {
    local name=$1 want=$2; shift 2
    "$@" >"$T_OUT" 2>"$T_ERR"
    local rc=$?
    if [ "$rc" = "$want" ]; then t_ok "$name"; return 0; fi
    t_fail "$name" "'$*' exited $rc, expected $want; its output ends: $(tail -c 400 "$T_OUT" | tr '\n' ' ') $(tail -c 400 "$T_ERR" | tr '\n' ' ')"
    return 1
}

t_contains() {
    local name=$1 file=$2 text=$3
    if grep -qF -- "$text" "$file"; then t_ok "$name"; return 0; fi
    t_fail "$name" "$(basename "$file") lacks '$text': $(head -c 300 "$file" | tr '\n' ' ')"
    return 1
}

# Polls CMD every 0.1 s until it succeeds (0) or $T_PATIENCE_S (600) pass (1): a guard against
# a hang, far beyond what a busy machine takes.
t_wait_until() {
    local until=$((SECONDS + ${T_PATIENCE_S:-600}))
    until "$@"; do
        [ "$SECONDS" -ge "$until" ] && return 1
        sleep "${T_POLL_S:-0.1}"
    done
}

t_done() { exit 0; }
# t_need_gpu "NAMES": sets GPU_UUID to the first GPU lscat-gpuinfo lists; without a CUDA device
# every check of NAMES reports skip and the script ends.
t_need_gpu() {
    GPU_UUID=$("$LSCAT_BIN/lscat-gpuinfo" 2>/dev/null | head -1 | sed -n 's/.*"uuid":"\([^"]*\)".*/\1/p')
    [ -n "$GPU_UUID" ] && return 0
    local n
    for n in $1; do t_skip "$n" "no CUDA device"; done
    t_done
}
