-- lscat store, schema v4: 'skipped' measurements. When a block shape fails with a sticky CUDA
-- error (an illegal address; the harness exits 4) at one matrix size, tune does not run that
-- shape at the kernel's larger sizes: it records those configurations with status 'skipped' and
-- an error naming the shape and the size where it failed ("block 256x1x1 failed with a sticky
-- CUDA error at 240x240: an illegal memory access was encountered"; docs/tune.md "Skipped
-- shapes"). A 2D kernel's fixed shared tiles overflow with every 1D block at every size.
--
-- SQLite cannot change a CHECK constraint in place, so the table is rebuilt with the same
-- columns (v1's, v2's binding, v3's graph_nodes) and every row, ids included; nothing references it.

CREATE TABLE measurements_v4 (
    id             INTEGER PRIMARY KEY,
    kernel_id      TEXT NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
    gpu_id         INTEGER NOT NULL REFERENCES gpus(id),
    width          INTEGER NOT NULL,       -- matrix size
    height         INTEGER NOT NULL,
    block_x        INTEGER NOT NULL,
    block_y        INTEGER NOT NULL,
    block_z        INTEGER NOT NULL DEFAULT 1,
    grid_x         INTEGER,
    grid_y         INTEGER,
    grid_z         INTEGER,
    status         TEXT NOT NULL CHECK (status IN ('ok', 'cuda_error', 'crashed', 'timeout',
                                                   'invalid_config', 'skipped')),
    error          TEXT,
    median_ns      REAL,
    min_ns         REAL,
    max_ns         REAL,
    mean_ns        REAL,
    stddev_ns      REAL,
    mad_ns         REAL,
    p10_ns         REAL,
    p90_ns         REAL,
    samples        INTEGER,
    launches_per_sample INTEGER,
    sm_clock_mhz_before  INTEGER,
    sm_clock_mhz_after   INTEGER,
    mem_clock_mhz        INTEGER,
    temp_c_before        INTEGER,
    temp_c_after         INTEGER,
    clocks_locked  INTEGER NOT NULL DEFAULT 0,
    l2_flush       INTEGER NOT NULL DEFAULT 0,
    superseded     INTEGER NOT NULL DEFAULT 0,
    measured_at    TEXT NOT NULL,
    run_id         INTEGER REFERENCES stage_runs(id),
    binding        TEXT NOT NULL DEFAULT 'area',
    graph_nodes    INTEGER
);

INSERT INTO measurements_v4(id, kernel_id, gpu_id, width, height, block_x, block_y, block_z,
    grid_x, grid_y, grid_z, status, error, median_ns, min_ns, max_ns, mean_ns, stddev_ns, mad_ns,
    p10_ns, p90_ns, samples, launches_per_sample, sm_clock_mhz_before, sm_clock_mhz_after,
    mem_clock_mhz, temp_c_before, temp_c_after, clocks_locked, l2_flush, superseded, measured_at,
    run_id, binding, graph_nodes)
SELECT id, kernel_id, gpu_id, width, height, block_x, block_y, block_z, grid_x, grid_y, grid_z,
    status, error, median_ns, min_ns, max_ns, mean_ns, stddev_ns, mad_ns, p10_ns, p90_ns, samples,
    launches_per_sample, sm_clock_mhz_before, sm_clock_mhz_after, mem_clock_mhz, temp_c_before,
    temp_c_after, clocks_locked, l2_flush, superseded, measured_at, run_id, binding, graph_nodes
FROM measurements;

DROP TABLE measurements;
ALTER TABLE measurements_v4 RENAME TO measurements;
CREATE UNIQUE INDEX measurements_current
    ON measurements(kernel_id, gpu_id, width, height, block_x, block_y, block_z)
    WHERE superseded = 0;
