#!/usr/bin/env bash
# The CPU half of a real-code run (issues #14 and #21): export the repositories of
# scripts/realcode-repos.txt (fetched with the fetch tool into $MIRROR, never committed) keeping
# only source files, isolate them into a work folder, count their `__global__` lines, and pack what
# the GPU half (scripts/realcode-gpu.sh) needs into one compressed archive for the device's carry.
#
# Usage: scripts/realcode-prepare.sh [all]          export + isolate (this tree's build/bin) + pack
#        scripts/realcode-prepare.sh export          repositories into $DEST/repos/<owner>+<name>
#        scripts/realcode-prepare.sh isolate WORK BIN [REPO...]  isolate the exported
#                                                    repositories (these, in this order; default
#                                                    all) into $DEST/WORK with the lscat of BIN
#        scripts/realcode-prepare.sh pack ARCHIVE PATH...  tar.xz of PATHs (relative to $ROOT)
#        scripts/realcode-prepare.sh pack-work WORK ARCHIVE [PATH...]  $DEST/WORK, the
#                                                    repositories it isolated, and PATHs
#        scripts/realcode-prepare.sh before [COMMIT]  the "before" half: lscat at COMMIT (default
#                                                    549e6e1, the last commit before session 4's
#                                                    yield work) built in $ROOT/.dev/realcode-old,
#                                                    its isolate into $DEST/work-before, packed with
#                                                    its binaries and sources (LSCAT_SHARE_DIR);
#                                                    the repositories of $DEST/work, in its order
# Environment: DEST (default /work/main/.dev/realcode), ROOT (/work/main: the device's repository
# root, where realcode-gpu.sh links /work/main, so the absolute paths isolate recorded stay valid),
# MIRROR (/work/.mirror), JOBS (2), REPOS (scripts/realcode-repos.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
ROOT=${ROOT:-/work/main}
DEST=${DEST:-$ROOT/.dev/realcode}
MIRROR=${MIRROR:-/work/.mirror}
JOBS=${JOBS:-2}
REPOS=${REPOS:-$SRC/scripts/realcode-repos.txt}
# What builds and isolate read; everything else (data, images, notebooks, binaries) stays out.
KEEP='.*\.(cu|cuh|h|hpp|hh|hxx|inl|inc|c|cc|cpp|cxx|tcc|cuinc)'

repos() { grep -v '^#' "$REPOS" | grep -v '^[[:space:]]*$'; }

do_export() {
    mkdir -p "$DEST/repos"
    local name commit dir out
    while read -r name commit; do
        dir="$MIRROR/${name/\//+}/repo"
        out="$DEST/repos/${name/\//+}"
        if [ ! -d "$dir" ]; then
            echo "realcode-prepare: $name is not fetched ($dir missing): fetch github:$name first" >&2
            exit 3
        fi
        if [ "$(cat "$out.commit" 2>/dev/null)" = "$commit" ]; then continue; fi
        rm -rf "$out" && mkdir -p "$out"
        # Source files only, blob by blob: a snapshot may lack some blobs (its largest files);
        # those are listed in $out.missing.
        /usr/bin/python3 - "$dir" "$commit" "$out" "$KEEP" <<'PY'
import os, re, subprocess, sys
gd, commit, out, keep = sys.argv[1:5]
pat = re.compile("^" + keep + "$", re.I)
ls = subprocess.run(["git", "--git-dir", gd, "ls-tree", "-r", "-z", commit], check=True,
                    capture_output=True).stdout.split(b"\0")
files = []
for e in ls:
    if not e:
        continue
    meta, path = e.split(b"\t", 1)
    mode, typ, oid = meta.split()
    if typ == b"blob" and mode != b"120000" and pat.match(path.decode("utf-8", "replace")):
        files.append((oid, path))
cat = subprocess.Popen(["git", "--git-dir", gd, "cat-file", "--batch"], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE)
missing = []
for oid, path in files:
    cat.stdin.write(oid + b"\n")
    cat.stdin.flush()
    head = cat.stdout.readline().split()
    if len(head) < 3:
        missing.append(path)
        continue
    data = cat.stdout.read(int(head[2]))
    cat.stdout.read(1)
    dst = os.path.join(out.encode(), path)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "wb") as f:
        f.write(data)
cat.stdin.close()
cat.wait()
with open(out + ".missing", "wb") as f:
    f.write(b"".join(p + b"\n" for p in missing))
PY
        echo "$commit" > "$out.commit"
    done < <(repos)
    count_globals > "$DEST/globals.tsv"
    echo "exported $(repos | wc -l) repositories: $(du -sh "$DEST/repos" | cut -f1);" \
         "__global__ lines: $(awk '{s += $2} END {print s}' "$DEST/globals.tsv")"
}

# Per repository: lines with `__global__` in its source files (the issue's "__global__ lines").
count_globals() {
    local d
    for d in "$DEST"/repos/*/; do
        printf '%s\t%s\n' "$(basename "$d")" \
            "$(grep -rI --include='*.cu' --include='*.cuh' --include='*.h' --include='*.hpp' \
               --include='*.inl' --include='*.cpp' --include='*.cc' -h '__global__' "$d" | wc -l)"
    done
}

# Repositories in the order given (folder names owner+name), else all of them.
do_isolate() {
    local work=$DEST/${1:?usage: isolate WORK BIN [REPO...]} bin=${2:?usage: isolate WORK BIN} d t0
    shift 2
    local list=("$@")
    [ "${#list[@]}" -gt 0 ] || list=($(cd "$DEST/repos" && ls -d */ | tr -d /))
    mkdir -p "$work"
    t0=$(date +%s)
    for d in "${list[@]}"; do
        # exit 1 = finished with recorded failures (missing headers...): expected on real code.
        nice "$bin/lscat" -q -j "$JOBS" --work "$work" isolate --path "$DEST/repos/$d" \
            >> "$work/isolate.log" 2>&1 || [ $? = 1 ] ||
            echo "realcode-prepare: isolate failed on $d (see $work/isolate.log)" >&2
        echo "isolated $d: $(( $(date +%s) - t0 )) s" >> "$work/isolate.log"
    done
    globals_of "$work"
    echo "isolate into $work: $(( $(date +%s) - t0 )) s" | tee -a "$work/isolate.log"
}

# The `__global__` lines of the repositories this work folder isolated (the summary's baseline).
globals_of() {
    local work=$1 name
    : > "$work/realcode-globals.tsv"
    for name in $(sqlite3 "$work/lscat.db" "SELECT root FROM sources" | xargs -r -n1 basename); do
        grep -P "^\Q$name\E\t" "$DEST/globals.tsv" >> "$work/realcode-globals.tsv"
    done
}

do_pack() {
    local archive=${1:?usage: pack ARCHIVE PATH...}
    shift
    mkdir -p "$(dirname "$archive")"
    local db
    for db in $(cd "$ROOT" && find "${@##--*}" -name '*.db' 2> /dev/null); do  # whole, no WAL
        sqlite3 "$ROOT/$db" 'PRAGMA wal_checkpoint(TRUNCATE);' > /dev/null
    done
    tar c -C "$ROOT" --exclude='*.commit' --exclude='*.missing' --exclude='*.db-wal' \
        --exclude='*.db-shm' "$@" | nice xz -T"$JOBS" -6 > "$archive.tmp"
    mv "$archive.tmp" "$archive"
    echo "packed $archive: $(du -h "$archive" | cut -f1)"
}

# A work folder and the repositories it isolated (the others stay out of the archive).
do_pack_work() {
    local work=${1:?} archive=${2:?} rel=${DEST#"$ROOT"/} r
    shift 2
    local repos=()
    for r in $(sqlite3 "$DEST/$work/lscat.db" "SELECT root FROM sources ORDER BY id"); do
        repos+=("$rel/repos/$(basename "$r")")
    done
    globals_of "$DEST/$work"
    do_pack "$archive" "${repos[@]}" "$rel/$work" "$@"
}

# lscat at an older commit: sources exported (git archive), built once, isolate run with it.
do_before() {
    local commit=${1:-549e6e1} old=$ROOT/.dev/realcode-old
    if [ ! -x "$old/src/build/bin/lscat-isolate" ]; then
        rm -rf "$old/src" && mkdir -p "$old/src"
        git -C "$SRC" archive "$commit" | tar x -C "$old/src"
        (cd "$old/src" && nice make -j"$JOBS" > ../build.log 2>&1) ||
            { echo "realcode-prepare: cannot build lscat $commit (see $old/build.log)" >&2; exit 3; }
    fi
    rm -rf "$old/bin" && cp -a "$old/src/build/bin" "$old/bin"
    # the repositories the "after" work folder isolated, in its order (files parsed are skipped)
    do_isolate work-before "$old/bin" $(sqlite3 "$DEST/work/lscat.db" \
        "SELECT root FROM sources ORDER BY id" | xargs -r -n1 basename)
    do_pack_work work-before "$ROOT/.dev/realcode-before.tar.xz" .dev/realcode-old/bin \
        --exclude=.dev/realcode-old/src/build --exclude=.dev/realcode-old/src/tests \
        --exclude=.dev/realcode-old/src/bench --exclude=.dev/realcode-old/src/docs \
        .dev/realcode-old/src
}

case "${1:-all}" in
    export) do_export ;;
    isolate) shift; do_isolate "$@" ;;
    globals) globals_of "$DEST/${2:-work}" ;;
    pack) shift; do_pack "$@" ;;
    pack-work) shift; do_pack_work "$@" ;;
    before) shift; do_before "$@" ;;
    all)
        do_export
        do_isolate work "$SRC/build/bin"
        do_pack_work work "$ROOT/.dev/realcode.tar.xz" ;;
    *) echo "usage: scripts/realcode-prepare.sh [all|export|isolate WORK BIN|pack ARCHIVE PATH...]" >&2
       exit 2 ;;
esac
