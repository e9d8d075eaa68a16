#!/usr/bin/env python3
"""Build the bundled sample's downloadable forms into a work folder, the way GitHub and GH
Archive serve them, so `make run` exercises the real code paths without the internet:
  OUT/gharchive/YYYY-MM-DD-H.json.gz   gzip of sample/gharchive/*.json
  OUT/archives/OWNER/NAME.zip          sample/repos/OWNER/NAME as GitHub's zipball: one top
                                       folder NAME-<sha>/, the commit id as the zip comment
Usage: sample/make-sample.py OUT"""
import gzip
import hashlib
import os
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def hours(out):
    src = os.path.join(HERE, "gharchive")
    os.makedirs(os.path.join(out, "gharchive"), exist_ok=True)
    for name in sorted(os.listdir(src)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(src, name), "rb") as f:
            data = f.read()
        with open(os.path.join(out, "gharchive", name + ".gz"), "wb") as f:
            # mtime=0: the same bytes every run
            f.write(gzip.compress(data, compresslevel=6, mtime=0))


def repo_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            p = os.path.join(dirpath, fn)
            yield os.path.relpath(p, root), p


def archive(out, owner, name):
    root = os.path.join(HERE, "repos", owner, name)
    files = list(repo_files(root))
    h = hashlib.sha1()
    for rel, p in files:
        h.update(rel.encode() + b"\0")
        with open(p, "rb") as f:
            h.update(f.read())
    sha = h.hexdigest()
    top = "%s-%s/" % (name, sha)
    dest = os.path.join(out, "archives", owner, name + ".zip")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        z.comment = sha.encode()
        z.writestr(zipfile.ZipInfo(top, (2016, 3, 10, 9, 0, 0)), b"")
        for rel, p in files:
            info = zipfile.ZipInfo(top + rel, (2016, 3, 10, 9, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            with open(p, "rb") as f:
                z.writestr(info, f.read())
        if name == "parallel-reduce":
            # a symlink as GitHub stores them; extraction must skip and record it
            link = zipfile.ZipInfo(top + "latest.cu", (2016, 3, 10, 9, 0, 0))
            link.create_system = 3
            link.external_attr = 0o120777 << 16
            z.writestr(link, b"reduce.cu")
    return dest


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    hours(out)
    repos = os.path.join(HERE, "repos")
    n = 0
    for owner in sorted(os.listdir(repos)):
        for name in sorted(os.listdir(os.path.join(repos, owner))):
            archive(out, owner, name)
            n += 1
    print("sample: %d hours, %d archives under %s" % (
        len(os.listdir(os.path.join(out, "gharchive"))), n, out))


main()
