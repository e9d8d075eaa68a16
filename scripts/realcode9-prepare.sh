#!/usr/bin/env bash
# Issue #14 (session 9): the corpus of scripts/device-runnable9.sh. Isolates the folders of the
# real-code repositories that hold session 7's P5 (struct arguments), B4 (template arguments not
# inferred) and P8 (tile values left at 1) kernels twice, with main's lscat (BEFORE_BIN) and with
# this tree's (AFTER_BIN), keeps in each store only those kernels (matched by name and path) and
# packs both stores, their kernel folders and the pattern list into one archive (< 1 MB).
# Runs on the CPU machine (the repositories are there, not on the device).
#
# Usage: scripts/realcode9-prepare.sh BEFORE_BIN AFTER_BIN [ARCHIVE]
#   BEFORE_BIN  main's build/bin (e.g. /work/main/build/bin), AFTER_BIN this tree's build/bin
#   ARCHIVE     default .dev/realcode9.tar.xz
# Environment: RC_REPOS (default /work/main/.dev/realcode/repos), RC_S7 (session 7's store,
#   gzip; default /work/notes/rc-s7/call7/rc/real.db.gz), BEFORE_SHARE (main's tree, for its
#   compat headers; default the parent of BEFORE_BIN's build/), RC_JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BEFORE_BIN=$(cd "${1:?usage: realcode9-prepare.sh BEFORE_BIN AFTER_BIN [ARCHIVE]}" && pwd)
AFTER_BIN=$(cd "${2:?usage: realcode9-prepare.sh BEFORE_BIN AFTER_BIN [ARCHIVE]}" && pwd)
ARCHIVE=${3:-.dev/realcode9.tar.xz}
REPOS=${RC_REPOS:-/work/main/.dev/realcode/repos}
S7=${RC_S7:-/work/notes/rc-s7/call7/rc/real.db.gz}
BEFORE_SHARE=${BEFORE_SHARE:-$(cd "$BEFORE_BIN/../.." && pwd)}
PY=/usr/bin/python3
T=$ROOT/.dev/rc9
rm -rf "$T" && mkdir -p "$T"
gzip -dc "$S7" > "$T/s7.db"
# The folders isolated: whole small repositories, the sample folders of large ones.
DIRS="vetter+shoc NVIDIA-developer-blog+code-samples BBuf+how-to-optim-algorithm-in-cuda
siboehm+SGEMM_CUDA olcf+cuda-training-series/exercises/hw12
CodedK+CUDA-by-Example-source-code-for-the-book-s-examples-
NVIDIA+cuda-samples/Samples/3_CUDA_Features/cdpBezierTessellation
NVIDIA+cuda-samples/Samples/3_CUDA_Features/newdelete
PacktPublishing+Learn-CUDA-Programming/Chapter06/06_multigpu"
"$PY" scripts/realcode-nonrunnable.py --list --work=/work/main/.dev/realcode/work "$T/s7.db" \
    | awk -F'\t' '$1 == "P5" || $1 == "B4" || $1 == "P8"' > "$T/ids.tsv"
# pattern, name, repository, path (as session 7 recorded it), 1 when it was a template
"$PY" - "$T/s7.db" "$T/ids.tsv" "$T/patterns.tsv" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
with open(sys.argv[3], "w") as out:
    for line in open(sys.argv[2]):
        pat, name, short = line.rstrip("\n").split("\t")[:3]
        for root, path, tmpl in db.execute("""SELECT s.root, o.path, k.template_args IS NOT NULL
                FROM kernel_occurrences o JOIN sources s ON s.id = o.source_id JOIN kernels k ON
                k.id = o.kernel_id WHERE o.kernel_id LIKE ? LIMIT 1""", (short + "%",)):
            out.write("%s\t%s\t%s\t%s\t%d\n" % (pat, name, root.rsplit("/", 1)[-1], path, tmpl))
EOF
echo "targets: $(wc -l < "$T/patterns.tsv") kernels ($(cut -f1 "$T/patterns.tsv" | sort | uniq -c | tr '\n' ' '))"
for side in before after; do
    bin=$BEFORE_BIN share=$BEFORE_SHARE
    [ $side = after ] && bin=$AFTER_BIN share=$ROOT
    for d in $DIRS; do
        LSCAT_SHARE_DIR=$share LSCAT_NO_PROGRESS=1 nice "$bin/lscat" --db "$T/$side/lscat.db" \
            --work "$T/$side" isolate --path "$REPOS/$d" -j "${RC_JOBS:-2}" -q || true
    done
done
# Keep the targets only: a kernel whose name matches and whose occurrence path ends the
# session-7 path (the folders above are relative to a sample folder).
for side in before after; do
    "$PY" - "$T/$side/lscat.db" "$T/patterns.tsv" "$T/$side" <<'EOF'
import os, shutil, sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute("PRAGMA foreign_keys = ON")
want = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
keep = set()
for kid, name, path in db.execute("""SELECT k.id, k.name, o.path FROM kernels k JOIN
        kernel_occurrences o ON o.kernel_id = k.id"""):
    if any(name == n and p.endswith(path) for _, n, _, p, _ in want):
        keep.add(kid)
dirs = dict(db.execute("SELECT id, dir FROM kernels"))
for kid, d in dirs.items():
    if kid not in keep:
        db.execute("DELETE FROM kernel_occurrences WHERE kernel_id = ?", (kid,))
        db.execute("DELETE FROM kernels WHERE id = ?", (kid,))
        shutil.rmtree(os.path.join(sys.argv[3], d), ignore_errors=True)
db.commit(); db.execute("VACUUM")
print(os.path.basename(sys.argv[3]), "kept", len(keep), "kernels")
EOF
done
rm -f "$T/s7.db" "$T/ids.tsv"
tar cJf "$ARCHIVE" -C "$ROOT" .dev/rc9
echo "packed $ARCHIVE: $(du -h "$ARCHIVE" | cut -f1)"
