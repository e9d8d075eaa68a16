# Which `__global__` lines of a real-code run isolate did not find, and why (issue #14): every
# line the run's baseline counts (realcode-prepare.sh count_globals: *.cu *.cuh *.h *.hpp *.inl
# *.cpp *.cc containing `__global__`) joined with the isolate store's occurrences, failure rows
# and parses, each line given one cause.
# Usage: python3 scripts/realcode-globals.py STORE.db [--list CAUSE] [--repo NAME]
#   causes: found; not_definition (comment, macro, string, or a prototype ending in `;`);
#   variant_of_found (a kernel of the same name was found in the file: another #if branch);
#   a failure class whose message names the line (kernel_missing_header, unsupported_template,
#   kernel_without_body, ...); file_<class> (a file-level failure row of the file: missing_header,
#   include_refused, file_skipped); not_parsed (no parse of the file: a .cpp/.cc file, or a
#   header no parsed unit includes); parse_<status> (parsed, no row: lost silently; before
#   ISOLATE_VERSION 8 a kernel in a skipped preprocessor branch, now kernel_inactive_branch).
import collections, os, re, sqlite3, sys

EXT = (".cu", ".cuh", ".h", ".hpp", ".inl", ".cpp", ".cc")
args = sys.argv[1:]
db = sqlite3.connect(args[0])
lst = args[args.index("--list") + 1] if "--list" in args else None
only = args[args.index("--repo") + 1] if "--repo" in args else None
q = lambda sql, *a: db.execute(sql, a).fetchall()


def strip_comments(text):
    """The text with comments and string literals blanked (newlines kept, offsets unchanged)."""
    out, i, n = list(text), 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def definition_name(code, lines, ln):
    """The kernel's name when the `__global__` at line ln (1-based) of comment-free code opens
    a function body (the identifier before the last parenthesised group), else None."""
    line = lines[ln - 1]
    if "__global__" not in line or line.lstrip().startswith("#"):
        return None
    start = sum(len(x) + 1 for x in lines[:ln - 1]) + line.index("__global__")
    depth, name = 0, None
    for i in range(start + 10, min(len(code), start + 4000)):
        ch = code[i]
        if ch == "(":
            if depth == 0:
                m = re.search(r"([A-Za-z_]\w*)\s*$", code[start + 10:i])
                name = m.group(1) if m else name
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and ch == ";":
            return None
        elif depth == 0 and ch == "{":
            return name or "?"
    return None


sources = q("SELECT id, root FROM sources ORDER BY id")
occ = collections.defaultdict(list)
occ_names = collections.defaultdict(set)
for sid, path, line, name in q("SELECT o.source_id, o.path, o.line, k.name FROM "
                               "kernel_occurrences o JOIN kernels k ON k.id = o.kernel_id"):
    occ[(sid, path)].append(line)
    occ_names[(sid, path)].add(name.split("::")[-1])
rows = collections.defaultdict(list)     # (sid, path) -> [(line, class)]
filerows = collections.defaultdict(list)  # (sid, path) -> [class]
root_of = {r: s for s, r in sources}
for subj, cls, msg in q("SELECT subject, class, coalesce(message,'') FROM failures "
                        "WHERE stage='isolate'"):
    m = re.match(r"(?:kernel-decl:)?([^:]+):(\d+): kernel ", msg)
    sid = None
    if subj.startswith("file:"):
        for r, s in root_of.items():
            if subj[5:].startswith(r.rstrip("/") + "/"):
                sid = s
                fpath = subj[5 + len(r.rstrip("/")) + 1:]
    if m:
        # the file the kernel is in (may differ from the parsed file of the subject)
        for s in ([sid] if sid else list(root_of.values())):
            rows[(s, m.group(1))].append((int(m.group(2)), cls))
    elif sid:
        filerows[(sid, fpath)].append(cls)
parses = {(s, p): st for s, p, st in q("SELECT source_id, path, status FROM parses")}

causes = collections.Counter()
per_repo = collections.defaultdict(collections.Counter)
listing = []
for sid, root in sources:
    repo = os.path.basename(root.rstrip("/"))
    if only and repo != only:
        continue
    for d, _, files in os.walk(root, followlinks=True):
        for f in files:
            if not f.endswith(EXT):
                continue
            full = os.path.join(d, f)
            rel = os.path.relpath(full, root)
            try:
                text = open(full, encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            if "__global__" not in text:
                continue
            raw = text.split("\n")
            code = strip_comments(text)
            lines = code.split("\n")
            glines = [i + 1 for i, t in enumerate(raw) if "__global__" in t]
            names = {ln: definition_name(code, lines, ln) for ln in glines}
            defs = [ln for ln in glines if names[ln]]
            found = set()
            for ol in occ.get((sid, rel), []):
                near = [ln for ln in defs if ln <= ol and ol - ln <= 8]
                found.add(max(near) if near else ol)
            for ln in glines:
                if ln not in defs:
                    cause = "not_definition"
                elif ln in found:
                    cause = "found"
                else:
                    hit = [c for l2, c in rows.get((sid, rel), []) if 0 <= l2 - ln <= 8]
                    if names[ln] in occ_names.get((sid, rel), ()):
                        cause = "variant_of_found"  # the other #if/#else branch of a kernel found
                    elif hit:
                        cause = hit[0]
                    elif filerows.get((sid, rel)):
                        cause = "file_" + sorted(set(filerows[(sid, rel)]))[0]
                    elif (sid, rel) not in parses:
                        cause = "not_parsed"
                    else:
                        cause = "parse_" + parses[(sid, rel)]
                causes[cause] += 1
                per_repo[repo][cause] += 1
                if lst and cause == lst:
                    listing.append("%s\t%s:%d\t%s" % (repo, rel, ln, raw[ln - 1].strip()[:100]))

tot = sum(causes.values())
defs_n = tot - causes["not_definition"]
print("__global__ lines: %d; definitions: %d; found: %d (%.1f%% of lines, %.1f%% of definitions)"
      % (tot, defs_n, causes["found"], 100.0 * causes["found"] / max(tot, 1),
         100.0 * causes["found"] / max(defs_n, 1)))
print("by cause:", dict(causes.most_common()))
# What a tree alone can give: definitions less those in branches no parse takes and those that
# need a header the tree does not ship (cute/cutlass, torch, oneflow: never fetched nor shipped).
var = causes["variant_of_found"]
print("distinct definitions (less %d other-branch variants of a kernel found in the same file): "
      "%d; found: %.1f%%" % (var, defs_n - var, 100.0 * causes["found"] / max(defs_n - var, 1)))
own = defs_n - var - causes["kernel_inactive_branch"] - causes["kernel_missing_header"]
print("of them in active code needing nothing outside the tree: %d; found: %d (%.1f%%)"
      % (own, causes["found"], 100.0 * causes["found"] / max(own, 1)))
print("%-44s %6s %6s %6s  %s" % ("repository", "lines", "defs", "found", "not found, by cause"))
for repo in sorted(per_repo):
    c = per_repo[repo]
    n = sum(c.values())
    rest = {k: v for k, v in c.most_common() if k not in ("found", "not_definition")}
    print("%-44.44s %6d %6d %6d  %s" % (repo, n, n - c["not_definition"], c["found"], rest or ""))
for line in listing:
    print(line)
