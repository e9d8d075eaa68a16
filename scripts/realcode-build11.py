#!/usr/bin/env python3
# Issue #14, session 11 (build11): keep in a copy of an isolate work folder's store only the
# kernels of the 69 B4/B5 groups (build failures: template arguments and the other classes) of an
# earlier store, plus every kernel whose isolated source changed against an earlier isolation,
# and write before.tsv beside it (for scripts/device-build11.sh). Kernels are matched by
# (repository, file, name): a change of ISOLATE_VERSION changes a kernel's id (its source).
#
# Usage: realcode-build11.py WORK_DB BEFORE_STORE NONRUNNABLE_TSV BEFORE_ISOLATION_DB
#   WORK_DB: the copy to prune (the folders under kernels/ beside it of the kernels left out go)
#   BEFORE_STORE: session 10's store (statuses, classes; e.g. /work/notes/s11/s10final.db)
#   NONRUNNABLE_TSV: scripts/realcode-nonrunnable.py --list (pattern, name, id prefix)
#   BEFORE_ISOLATION_DB: the isolation that store built (.dev/realcode/work9/lscat.db)
import os, shutil, sqlite3, sys


def groups(db):
    """kernel id -> its (repository, file, name) groups (a header's kernel has several files)."""
    g = {}
    for kid, name, root, path in db.execute(
            """SELECT k.id, k.name, s.root, o.path FROM kernels k JOIN kernel_occurrences o
               ON o.kernel_id = k.id JOIN sources s ON s.id = o.source_id"""):
        g.setdefault(kid, set()).add((os.path.basename(root), path, name))
    return g


def main():
    work_p, store_p, tsv, iso_p = sys.argv[1:5]
    store = sqlite3.connect(store_p)
    sg = groups(store)
    pattern = {}
    for line in open(tsv):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 3 and f[0] in ("B4", "B5"):
            pattern.update({kid: f[0] for kid in sg if kid.startswith(f[2])})
    by_group = {}
    for kid, gs in sg.items():
        for g in gs:
            by_group.setdefault(g, []).append(kid)
    target = {g: p for k, p in pattern.items() for g in sg[k]}
    old = {r[0] for r in sqlite3.connect(iso_p).execute("SELECT id FROM kernels")}
    status = {k: (s, c or "") for k, s, c in store.execute(
        "SELECT k.id, k.status, b.error_class FROM kernels k LEFT JOIN builds b ON b.kernel_id = k.id")}
    work = sqlite3.connect(work_p)
    work.execute("PRAGMA foreign_keys = ON")
    wg = groups(work)
    out = []
    for kid, gs in wg.items():
        hit = [g for g in gs if g in target]
        if not hit and kid in old:
            work.execute("DELETE FROM kernels WHERE id = ?", (kid,))
            continue
        cands = [c for g in gs for c in by_group.get(g, [])]
        before = ([c for c in cands if c == kid] + [c for c in cands if c in pattern] + cands + [None])[0]
        s, c = status.get(before, ("missing", ""))
        name = sorted(gs)[0][2]
        out.append("\t".join([kid, name, s, c, target[hit[0]] if hit else "changed"]))
    work.commit()
    # the folders of the kernels left out go too (the device carries the work folder)
    root = os.path.dirname(os.path.abspath(work_p))
    keep = {os.path.normpath(os.path.join(root, r[0])) for r in work.execute("SELECT dir FROM kernels")}
    kdir = os.path.join(root, "kernels")
    for top in (os.listdir(kdir) if os.path.isdir(kdir) else []):
        for k in os.listdir(os.path.join(kdir, top)):
            p = os.path.join(kdir, top, k)
            if os.path.normpath(p) not in keep:
                shutil.rmtree(p, ignore_errors=True)
    work.execute("VACUUM")
    with open(os.path.join(os.path.dirname(os.path.abspath(work_p)), "before.tsv"), "w") as f:
        f.write("".join(l + "\n" for l in out))
    found = {g for gs in wg.values() for g in gs if g in target}
    print("%s: kept %d kernels (%d of the %d target groups, %d changed sources)" % (
        work_p, len(out), len(found), len(target), sum(l.endswith("\tchanged") for l in out)))


if __name__ == "__main__":
    main()
