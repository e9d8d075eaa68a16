#!/usr/bin/env bash
# The real data shipped for the tests (tests/data): every file is the copy its README names
# (checksums in tests/data/SHA256SUMS, one line per file), the README lists each file, and the
# folder stays under the 10 MB the repository allows it.
. "$(dirname "$0")/lib.sh"
ROOT=${LSCAT_ROOT:-$PWD}
D=$ROOT/tests/data
(cd "$D" && sha256sum -c --quiet SHA256SUMS) >"$T_OUT" 2>"$T_ERR" &&
    t_ok test_data__every_file_matches_its_recorded_checksum ||
    t_fail test_data__every_file_matches_its_recorded_checksum "$(head -c 300 "$T_OUT")"
files=$(cd "$D" && find . -type f ! -name README.md ! -name SHA256SUMS | sed 's#^\./##' | sort)
sums=$(awk '{print $2}' "$D/SHA256SUMS" | sort)
[ "$files" = "$sums" ] && t_ok test_data__every_file_has_a_checksum ||
    t_fail test_data__every_file_has_a_checksum "files and SHA256SUMS differ: $(diff <(echo "$files") <(echo "$sums") | head -4 | tr '\n' ' ')"
missing=""
for f in $files; do grep -qF "\`$(basename "$f")\`" "$D/README.md" || missing="$missing $f"; done
[ -z "$missing" ] && t_ok test_data__the_readme_names_every_file ||
    t_fail test_data__the_readme_names_every_file "not in tests/data/README.md:$missing"
bytes=$(du -sb "$D" | cut -f1)
[ "$bytes" -lt 10000000 ] && t_ok test_data__stays_under_10_mb ||
    t_fail test_data__stays_under_10_mb "$bytes bytes"
t_done
