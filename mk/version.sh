#!/bin/sh
# Write OUT (a header with `git describe`) only when it changed, so a new commit rebuilds the
# dispatcher and nothing else.
set -eu
out=$1
desc=$(git describe --always --dirty --tags 2>/dev/null || echo unknown)
new="#define LSCAT_GIT_DESCRIBE \"$desc\""
mkdir -p "$(dirname "$out")"
if [ ! -f "$out" ] || [ "$(cat "$out")" != "$new" ]; then
    printf '%s\n' "$new" > "$out"
fi
