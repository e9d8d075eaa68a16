#!/usr/bin/env python3
"""Grow a store to the size of a real one for lscat-mpi's overhead measurements:
big_store.py DB KERNELS SIZES BLOCKS [GPU_NAME [STATUS]]. Adds KERNELS runnable kernels (ids old-NNNNN) with ok builds,
already measured on a GPU (uuid GPU-old-0, named GPU_NAME, default "Fake GPU": the stand-in's)
over every size x block given (comma lists as tune's --sizes/--blocks: 64,128 and 16x16,64),
each configuration twice (one superseded row, one current), and STATUS (done, default, or
given_up: skipped on any space) in tune_kernels: work a resumed tune skips, which a chunk's
store copy and merge nevertheless carried before."""
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
n = int(sys.argv[2])
sizes = [int(s) for s in sys.argv[3].split(",")]
name = sys.argv[5] if len(sys.argv) > 5 else "Fake GPU"
status = sys.argv[6] if len(sys.argv) > 6 else "done"
blocks = []
for b in sys.argv[4].split(","):
    x, _, y = b.partition("x")
    blocks.append((int(x), int(y or 1)))
db.execute("INSERT OR IGNORE INTO gpus(uuid, name, compute_cap, memory_bytes, sm_count, "
           "driver_version, cuda_version, host, first_seen) VALUES ('GPU-old-0', ?, "
           "'9.0', 85899345920, 132, '999.fake', '13.0', 'bench', '2026-11-21T00:00:00Z')", (name,))
gpu = db.execute("SELECT id FROM gpus WHERE uuid = 'GPU-old-0'").fetchone()[0]
for k in range(n):
    kid = "old-%05d" % k
    db.execute("INSERT INTO kernels(id, name, dir, params, param_count, status, created_at) "
               "VALUES (?, ?, ?, '[]', 0, 'runnable', '2026-11-21T00:00:00Z')", (kid, kid, kid))
    db.execute("INSERT INTO builds(kernel_id, arch, cache_key, status, attempts, binary_path, "
               "built_at) VALUES (?, 'sm_90', ?, 'ok', 1, '/nonexistent/harness', "
               "'2026-11-21T00:00:00Z')", (kid, kid))
    db.execute("INSERT INTO tune_kernels(kernel_id, gpu_id, status, updated_at) VALUES "
               "(?, ?, ?, '2026-11-21T00:00:00Z')", (kid, gpu, status))
    for w in sizes:
        for bx, by in blocks:
            for sup, at in ((1, "2026-11-20T00:00:00Z"), (0, "2026-11-21T00:00:00Z")):
                db.execute("INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, "
                           "block_y, block_z, grid_x, grid_y, grid_z, status, median_ns, "
                           "samples, superseded, measured_at) VALUES (?, ?, ?, ?, ?, ?, 1, 1, "
                           "1, 1, 'ok', 1000, 10, ?, ?)", (kid, gpu, w, w, bx, by, sup, at))
db.commit()
