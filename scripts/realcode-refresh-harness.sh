#!/usr/bin/env bash
# Give every isolated kernel of a real-code work folder the current harness body without
# isolating again (libclang over 21 repositories takes 12-20 minutes here). A generated
# harness.cu is a kernel-specific prefix followed by a fixed body that is the same for every
# kernel (isolate/harness.h); when only the body changed (same ISOLATE_VERSION number: the
# output check, the main loop), the body from the marker line on is replaced with the one this
# tree generates, taken from a golden harness (tests/isolate/fixtures/harness-golden, which
# tests/e2e/isolate.sh keeps current). execute's build key covers the harness text, so the
# next execute rebuilds and probes every kernel with it. Dev tool for scripts/realcode-gpu.sh runs.
#   usage: scripts/realcode-refresh-harness.sh WORK   (e.g. .dev/realcode/work)
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:?usage: scripts/realcode-refresh-harness.sh WORK}
MARK='// ---- lscat harness, the kernel'"'"'s part (isolate/harness_kernel.cu.in): the same for every kernel ----'
# Harnesses of lscat before the harness core (session 17) had their whole body from this line on.
OLD_MARK='// ---- lscat harness body (isolate/harness_body.cu.in): the same for every kernel ----'
# The body may use what a newer prefix defines (ISOLATE_VERSION 9's lscat_member for struct
# arguments): across versions the harnesses would not build (session 9: 258 of 258 failed with
# "identifier lscat_member is undefined" on a version-6 corpus). Refuse unless told otherwise.
want=$(sed -n 's/^#define ISOLATE_VERSION "\([0-9]*\)".*/\1/p' isolate/isolate_impl.h)
have=$(python3 -c 'import sqlite3, sys
v = {r[0].split("+")[0] for r in sqlite3.connect(sys.argv[1]).execute(
    "SELECT DISTINCT isolate_version FROM parses WHERE isolate_version IS NOT NULL")}
print(" ".join(sorted(v)))' "$W/lscat.db" 2>/dev/null || true)
if [ -n "$have" ] && [ "$have" != "$want" ] && [ "${REFRESH_ACROSS_VERSIONS:-0}" != 1 ]; then
    echo "$W was isolated at ISOLATE_VERSION $have, this tree is $want: isolate it again" \
         "(scripts/realcode-prepare.sh isolate), or REFRESH_ACROSS_VERSIONS=1 if the prefix is" \
         "known to be compatible" >&2
    exit 3
fi
G=tests/isolate/fixtures/harness-golden/saxpy/harness.cu
BODY=$(mktemp); trap 'rm -f "$BODY"' EXIT
awk -v m="$MARK" 'index($0, m) == 1 { on = 1 } on' "$G" > "$BODY"
[ -s "$BODY" ] || { echo "no harness body marker in $G" >&2; exit 3; }
n=0 same=0 bad=0
while IFS= read -r -d '' h; do
    if grep -qxF "$MARK" "$h"; then m=$MARK
    elif grep -qxF "$OLD_MARK" "$h"; then m=$OLD_MARK
    else bad=$((bad + 1)); echo "no body marker: $h" >&2; continue; fi
    new=$h.new
    awk -v m="$m" 'index($0, m) == 1 { exit } { print }' "$h" > "$new"
    cat "$BODY" >> "$new"
    if cmp -s "$h" "$new"; then same=$((same + 1)); rm -f "$new"; else mv "$new" "$h"; n=$((n + 1)); fi
done < <(find "$W" -name harness.cu -print0)
echo "harness bodies refreshed: $n, already current: $same, without a marker: $bad"
