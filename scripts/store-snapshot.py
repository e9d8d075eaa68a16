#!/usr/bin/env python3
"""A whole copy of a live lscat store (SQLite's online backup: consistent while a run writes
it), gzipped, written to OUT.gz via a temporary name so a kill leaves the last good copy.
Used by the device scripts (realcode-prefix.sh, device-nice-ab.sh) to bring stores back; the
device machines have python3 but no sqlite3 CLI.

Usage: scripts/store-snapshot.py STORE.db OUT.gz
"""
import gzip
import os
import shutil
import sqlite3
import sys

src, out = sys.argv[1], sys.argv[2]
plain = out + ".db.tmp"
s = sqlite3.connect(src)
d = sqlite3.connect(plain)
s.backup(d)
d.close()
s.close()
with open(plain, "rb") as i, gzip.open(out + ".tmp", "wb", 6) as o:
    shutil.copyfileobj(i, o)
os.replace(out + ".tmp", out)
os.remove(plain)
