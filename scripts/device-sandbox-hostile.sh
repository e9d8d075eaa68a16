#!/usr/bin/env bash
# The hostile-program set (tests/execute/sandbox_hostile.c) through the sandbox without
# bubblewrap, as GPU nodes have it: connect to 127.0.0.1 and to another address, write outside
# the scratch folder, fork 10,000 processes, print 1 GiB, a double-forked daemon sleeping
# forever, read the store, read GITHUB_TOKEN; each as a probe (no Landlock file rules: CUDA
# fails under them) and as an nvcc build. Run twice: with the scratch folder under /tmp (the
# private-/tmp code path that re-binds it), under this tree (build/, as a work folder here) and
# inside a 0700 folder (mktemp -d: the work folder bound back past it for the slot uids,
# docs/execute.md "Folders the sandbox cannot enter").
# Prints one line per attack: "<use> <attack>: blocked|open - <detail>"; exit 0 when every
# attack is contained in all three runs, 1 when one is open, 2 when the test program is missing.
# Usage (from the source root, build/tests carried or built): scripts/device-sandbox-hostile.sh
set -uo pipefail
cd "$(dirname "$0")/.."
TB=${LSCAT_TEST_BIN:-build/tests}
prog=$TB/execute/sandbox_hostile_fallback
[ -x "$prog" ] || { echo "missing $prog: run 'make' first (or carry build/tests)"; exit 2; }
status=0
closed=$(mktemp -d) # 0700
for base in /tmp "$PWD/build/hostile-tmp" "$closed"; do
    mkdir -p "$base"
    echo "== scratch under $base ($(id -un), kernel $(uname -r))"
    out=$(TMPDIR=$base "$prog" 2>&1)
    rc=$?
    printf '%s\n' "$out" | sed -n 's/^# //p'
    printf '%s\n' "$out" | grep -E '^(not ok|skip) ' || true
    open=$(printf '%s\n' "$out" | sed -n 's/^# \([0-9]*\) attack(s) open$/\1/p')
    if [ "${open:-x}" = 0 ] && [ "$rc" = 0 ]; then echo "== all contained"
    else echo "== NOT all contained (${open:-?} open, test exit $rc)"; status=1; fi
done
rm -rf "$PWD/build/hostile-tmp" "$closed"
exit $status
