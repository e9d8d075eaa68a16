# Isolate before and after on the same repositories (issue #14's "before and after", CPU half):
# per store, over the repositories both isolated, `__global__` lines, kernel occurrences found,
# distinct kernels, files parsed (status), isolate failures by class and missing headers by name.
# Usage: python3 scripts/realcode-isolate-compare.py BEFORE.db AFTER.db GLOBALS.tsv [ONLY.txt]
#   ONLY.txt: repository folders (owner+name) to compare, e.g. those both isolated completely
import collections, os, re, sqlite3, sys

before, after = (sqlite3.connect(p) for p in sys.argv[1:3])
globs = dict((l.split("\t")[0], int(l.split("\t")[1])) for l in open(sys.argv[3]) if "\t" in l)
roots = lambda db: {os.path.basename(r[0]) for r in db.execute("SELECT root FROM sources")}
common = roots(before) & roots(after)
if len(sys.argv) > 4:
    common &= set(open(sys.argv[4]).read().split())
common = sorted(common)
print("repositories isolated by both: %d (%s)" % (len(common), ", ".join(common)))
glob_lines = sum(globs.get(r, 0) for r in common)


def numbers(db):
    ids = [r[0] for r in db.execute("SELECT id, root FROM sources")
           if os.path.basename(r[1]) in common]
    ph = ",".join("?" * len(ids))
    one = lambda sql: db.execute(sql % ph, ids).fetchone()[0]
    out = {
        "found": one("SELECT count(*) FROM kernel_occurrences WHERE source_id IN (%s)"),
        "distinct": one("SELECT count(DISTINCT kernel_id) FROM kernel_occurrences WHERE "
                        "source_id IN (%s)"),
        "files": one("SELECT count(*) FROM parses WHERE source_id IN (%s)"),
    }
    out["parse status"] = dict(db.execute("SELECT status, count(*) FROM parses WHERE source_id "
                                          "IN (%s) GROUP BY 1 ORDER BY 2 DESC" % ph, ids).fetchall())
    # failures name their file relative to a root; keep those of the common repositories
    fails = collections.Counter()
    hdr = collections.Counter()
    files_mh = set()
    for cls, subj, msg in db.execute("SELECT class, subject, message FROM failures WHERE "
                                     "stage = 'isolate'"):
        if not any(("/" + r + "/") in (subj or "") or (subj or "").startswith(r) for r in common):
            continue
        fails[cls] += 1
        if cls == "missing_header":
            m = re.search(r"'([^']+)' file not found", msg or "")
            hdr[os.path.basename(m.group(1)) if m else "?"] += 1
            files_mh.add(subj)
    out["failures"] = dict(fails.most_common())
    out["files with missing_header"] = len(files_mh)
    out["missing headers (rows)"] = dict(hdr.most_common(14))
    return out


b, a = numbers(before), numbers(after)
print("__global__ lines: %d" % glob_lines)
for k in ("found", "distinct", "files"):
    print("%-26s before %6d  after %6d" % (k, b[k], a[k]))
print("found / __global__ lines    before %.1f%%  after %.1f%%"
      % (100.0 * b["found"] / max(glob_lines, 1), 100.0 * a["found"] / max(glob_lines, 1)))
for k in ("parse status", "failures", "files with missing_header", "missing headers (rows)"):
    print("%s:\n  before %s\n  after  %s" % (k, b[k], a[k]))
