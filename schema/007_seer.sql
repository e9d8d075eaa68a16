-- lscat store: Seer (docs/seer.md). The matrices lscat seer bench measured (from Matrix Market
-- files or seeded generators), their row-length features, and per GPU model x matrix x kernel x
-- precision the preprocessing time and the per-iteration time; per GPU x matrix the
-- cost of gathering the features on the GPU. `lscat seer train` and `eval` read these.

CREATE TABLE seer_matrices (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,     -- file name without .mtx, or the canonical generator spec
    source      TEXT NOT NULL CHECK (source IN ('file', 'generated', 'imported')),
    path        TEXT,                     -- the file read ('file'); NULL otherwise
    spec        TEXT,                     -- canonical generator spec ('generated')
    rows        INTEGER NOT NULL,
    cols        INTEGER NOT NULL,
    nnz         INTEGER NOT NULL,         -- after mirroring symmetric files and summing duplicates
    row_max     REAL NOT NULL,            -- row-length features (docs/seer.md "Features")
    row_min     REAL NOT NULL,
    row_mean    REAL NOT NULL,
    row_var     REAL NOT NULL,            -- population variance (divides by rows)
    added_at    TEXT NOT NULL
);

CREATE TABLE seer_results (
    matrix_id     INTEGER NOT NULL REFERENCES seer_matrices(id) ON DELETE CASCADE,
    gpu_id        INTEGER NOT NULL REFERENCES gpus(id),
    kernel        TEXT NOT NULL,          -- seer/kernels.h names: csr_thread, ..., cusparse_default
    precision     TEXT NOT NULL CHECK (precision IN ('float', 'double')),
    status        TEXT NOT NULL CHECK (status IN ('ok', 'fault', 'wrong', 'unsupported')),
    error         TEXT,                   -- why, when status is not 'ok'
    preprocess_ns REAL,                   -- one-time cost: conversion, binning, buffers
    iter_ns       REAL,                   -- per-iteration median (timing core, launch shape)
    iter_min_ns   REAL,
    iter_mad_ns   REAL,
    samples       INTEGER,
    launches_per_sample INTEGER,
    max_rel_err   REAL,                   -- against the double CPU reference (docs/seer.md)
    measured_at   TEXT NOT NULL,
    run_id        INTEGER REFERENCES stage_runs(id),
    PRIMARY KEY (matrix_id, gpu_id, kernel, precision)
);

CREATE TABLE seer_feature_costs (
    matrix_id   INTEGER NOT NULL REFERENCES seer_matrices(id) ON DELETE CASCADE,
    gpu_id      INTEGER NOT NULL REFERENCES gpus(id),
    feature_ns  REAL NOT NULL,            -- GPU feature kernels + copy back, host-clock median
    agrees      INTEGER NOT NULL,         -- 1 when the GPU features equal the CPU features
    measured_at TEXT NOT NULL,
    PRIMARY KEY (matrix_id, gpu_id)
);
