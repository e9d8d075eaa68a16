#!/usr/bin/env python3
"""Independent implementation of harvest's selection rule, for the tests: read GH Archive
hours (gzip or plain JSON lines) with Python's gzip and json modules, parse EVERY line (no
pre-filter), and print one line per repository: "owner/name<TAB>kinds<TAB>events", sorted
case-insensitively, then a final "#events N candidates N bad N" line."""
import gzip
import json
import sys


def has_cuda(s):
    return isinstance(s, str) and "cuda" in s.lower()


def is_cuda_lang(v):
    return isinstance(v, str) and v.lower() == "cuda"


def scan_event(e, found):
    items = {}

    def add(name, kind):
        if not isinstance(name, str) or "/" not in name or not name:
            return
        items.setdefault(name.lower(), [name, set()])[1].add(kind)

    def repo_obj(r, lang_kind):
        if not isinstance(r, dict):
            return
        name = r.get("full_name")
        if is_cuda_lang(r.get("language")):
            add(name, lang_kind)
        if has_cuda(name):
            add(name, "name_keyword")
        if has_cuda(r.get("description")):
            add(name, "description_keyword")

    old = e.get("repository")
    if isinstance(old, dict) and isinstance(old.get("owner"), str) and isinstance(old.get("name"), str):
        name = old["owner"] + "/" + old["name"]
        if is_cuda_lang(old.get("language")):
            add(name, "language")
        if has_cuda(name):
            add(name, "name_keyword")
        if has_cuda(old.get("description")):
            add(name, "description_keyword")
    repo = e.get("repo")
    if isinstance(repo, dict):
        name = repo.get("name")
        payload = e.get("payload")
        if has_cuda(name):
            add(name, "name_keyword")
        if e.get("type") == "CreateEvent" and isinstance(payload, dict) and has_cuda(payload.get("description")):
            add(name, "description_keyword")
        if isinstance(payload, dict):
            pr = payload.get("pull_request")
            if isinstance(pr, dict):
                for side, kind in (("base", "pr_base_language"), ("head", "pr_head_language")):
                    s = pr.get(side)
                    if isinstance(s, dict):
                        repo_obj(s.get("repo"), kind)
            repo_obj(payload.get("forkee"), "forkee_language")
            repo_obj(payload.get("repository"), "payload_repo_language")
    for key, (name, kinds) in items.items():
        f = found.setdefault(key, [name, set(), 0])
        f[1] |= kinds
        f[2] += 1
    return len(items) > 0


def main():
    found, events, candidates, bad = {}, 0, 0, 0
    for path in sys.argv[1:]:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            for line in f:
                if not line.strip():
                    continue
                events += 1
                try:
                    e = json.loads(line)
                except ValueError:
                    bad += 1
                    continue
                if not isinstance(e, dict):
                    bad += 1
                    continue
                if scan_event(e, found):
                    candidates += 1
    for key in sorted(found):
        name, kinds, n = found[key]
        print("%s\t%s\t%d" % (key, ",".join(sorted(kinds)), n))
    print("#events %d candidates %d bad %d" % (events, candidates, bad))


main()
