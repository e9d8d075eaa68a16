#!/usr/bin/env python3
# Issue #14's before/after on part of the corpus (session 11): the kernels an earlier whole-corpus
# store left not runnable, plus a sample of the runnable ones to catch regressions, taken from a
# newer isolation of the same repositories. Kernels are matched by (repository, file, name): an
# isolate version can change a kernel's id (its source) and the number of its instantiations.
#
# Usage:
#   realcode-subset.py prune BEFORE.db NONRUNNABLE.tsv WORK [--sample-every K]
#       keeps in WORK (a copy of an isolate work folder: lscat.db + kernels/) only the kernels
#       of the target groups: every group with a not-runnable kernel in NONRUNNABLE.tsv
#       (scripts/realcode-nonrunnable.py --list: pattern, name, kernel id prefix) and every K-th
#       group (default 5) whose kernels all ran in BEFORE.db; writes WORK/targets.tsv
#   realcode-subset.py compare BEFORE.db AFTER.db TARGETS.tsv
#       per pattern (R = the runnable sample): groups, kernels and runnable before and after,
#       built after, and each group whose runnable count changed
import collections, os, shutil, sqlite3, sys

RUNNABLE = "status IN ('runnable', 'given_up')"  # given_up: probed ok, then tune gave it up


def groups(db):
    """(repo, path, name) -> set of kernel ids."""
    g = collections.defaultdict(set)
    for kid, name, root, path in db.execute(
            """SELECT k.id, k.name, s.root, o.path FROM kernels k JOIN kernel_occurrences o ON
               o.kernel_id = k.id JOIN sources s ON s.id = o.source_id"""):
        g[(os.path.basename(root), path, name)].add(kid)
    return g


def runnable(db):
    ok = {r[0] for r in db.execute("SELECT kernel_id FROM probes WHERE outcome = 'ok'")}
    return ok | {r[0] for r in db.execute("SELECT id FROM kernels WHERE " + RUNNABLE)}


def prune(before_p, tsv, work, every):
    before = sqlite3.connect(before_p)
    bg = groups(before)
    by_id = {kid: key for key, ids in bg.items() for kid in ids}
    pat = {}
    for line in open(tsv):
        f = line.rstrip("\n").split("\t")
        if len(f) < 3 or not f[0][:1] in "BP":
            continue
        for kid, key in by_id.items():
            if kid.startswith(f[2]):
                pat.setdefault(key, f[0])
    ok = runnable(before)
    clean = sorted(k for k, ids in bg.items() if k not in pat and ids <= ok)
    for i, key in enumerate(clean):
        if i % every == 0:
            pat[key] = "R"
    db = sqlite3.connect(os.path.join(work, "lscat.db"))
    db.execute("PRAGMA foreign_keys = ON")
    keep = set()
    for key, ids in groups(db).items():
        if key in pat:
            keep |= ids
    dirs = dict(db.execute("SELECT id, dir FROM kernels"))
    for kid, d in dirs.items():
        if kid not in keep:
            db.execute("DELETE FROM kernel_occurrences WHERE kernel_id = ?", (kid,))
            db.execute("DELETE FROM kernels WHERE id = ?", (kid,))
            shutil.rmtree(os.path.join(work, d), ignore_errors=True)
    db.commit()
    db.execute("VACUUM")
    with open(os.path.join(work, "targets.tsv"), "w") as out:
        for key, p in sorted(pat.items()):
            out.write("%s\t%s\t%s\t%s\n" % (p, key[0], key[1], key[2]))
    n = collections.Counter(pat.values())
    print("kept %d kernels of %d groups (%s); %d groups of BEFORE were not isolated again" % (
        len(keep), len(pat), " ".join("%s %d" % kv for kv in sorted(n.items())),
        sum(1 for key in pat if key not in groups(db))))


def compare(before_p, after_p, tsv):
    before, after = sqlite3.connect(before_p), sqlite3.connect(after_p)
    bg, ag = groups(before), groups(after)
    bok, aok = runnable(before), runnable(after)
    built = {r[0] for r in after.execute("SELECT kernel_id FROM builds WHERE status = 'ok'")}
    probed = {r[0] for r in after.execute("SELECT kernel_id FROM probes")}
    rows = collections.defaultdict(lambda: [0] * 7)
    changed = []
    for line in open(tsv):
        p, repo, path, name = line.rstrip("\n").split("\t")
        key = (repo, path, name)
        b, a = bg.get(key, set()), ag.get(key, set())
        r = rows[p]
        vals = [1, len(b), len(b & bok), len(a), len(a & (built | probed)), len(a & probed),
                len(a & aok)]
        for i, v in enumerate(vals):
            r[i] += v
        if len(b & bok) != len(a & aok):
            changed.append((p, repo, path, name, len(b & bok), len(b), len(a & aok), len(a)))
    hdr = ("pattern", "groups", "kernels before", "runnable before", "kernels after",
           "built after", "probed after", "runnable after")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    tot = [0] * 7
    for p in sorted(rows):
        print("| %s | %s |" % (p, " | ".join(str(v) for v in rows[p])))
        tot = [x + y for x, y in zip(tot, rows[p])]
    print("| all | %s |" % " | ".join(str(v) for v in tot))
    print("\nchanged (pattern, repository, file, name: runnable/kernels before -> after):")
    for c in sorted(changed):
        print("  %s %s %s %s: %d/%d -> %d/%d" % c)


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) >= 4 and a[0] == "prune":
        every = int(a[a.index("--sample-every") + 1]) if "--sample-every" in a else 5
        prune(a[1], a[2], a[3], every)
    elif len(a) == 4 and a[0] == "compare":
        compare(a[1], a[2], a[3])
    else:
        sys.exit(__doc__ if __doc__ else "usage: see the head of scripts/realcode-subset.py")
