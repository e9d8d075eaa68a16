#!/usr/bin/env python3
"""Seed a store with runnable kernels for tune tests: seed_store.py DB NAME=BINARY ...
Each NAME becomes kernel id NAME with an ok build whose binary_path is BINARY (absolute, or
relative to the work folder). Uses Python's sqlite3 so it runs where the sqlite3 CLI does not
(the GPU machines)."""
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
for spec in sys.argv[2:]:
    name, binary = spec.split("=", 1)
    db.execute("INSERT OR IGNORE INTO kernels(id, name, dir, params, param_count, status, "
               "created_at) VALUES (?, ?, ?, '[]', 0, 'runnable', '2026-11-21T00:00:00Z')",
               (name, name, name))
    db.execute("INSERT OR IGNORE INTO builds(kernel_id, arch, cache_key, status, attempts, "
               "binary_path, built_at) VALUES (?, 'sm_90', ?, 'ok', 1, ?, "
               "'2026-11-21T00:00:00Z')", (name, name, binary))
db.commit()
