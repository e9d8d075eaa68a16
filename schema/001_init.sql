-- lscat store, schema v1: every stage's tables.
-- Conventions: times are UTC ISO-8601 text ('2026-11-21T18:00:00Z'); durations carry their unit
-- in the name (_s, _ns); sizes in bytes (_bytes); JSON columns hold compact JSON text;
-- status columns have CHECK constraints listing every value. run_id links a row to the
-- stage_runs row of the invocation that wrote it.

-- Every invocation of every stage: what ran, with which arguments, how it ended.
CREATE TABLE stage_runs (
    id            INTEGER PRIMARY KEY,
    stage         TEXT NOT NULL,           -- 'harvest', 'isolate', ... (program without 'lscat-')
    args          TEXT NOT NULL,           -- JSON array of the arguments (secrets never come on argv)
    host          TEXT,
    pid           INTEGER,
    lscat_version TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    ended_at      TEXT,                    -- NULL: still running, or killed
    exit_status   INTEGER,                 -- 0 ok, 1 recorded failures, 2 usage, 3+ fatal
    counts        TEXT                     -- JSON object of stage-specific counts
);
CREATE INDEX stage_runs_stage ON stage_runs(stage, started_at);

-- ---------------------------------------------------------------- harvest
-- One GH Archive hour. An hour that is 'done' is never scanned again.
CREATE TABLE gha_hours (
    hour             TEXT PRIMARY KEY,     -- 'YYYY-MM-DDTHH' (UTC)
    status           TEXT NOT NULL CHECK (status IN ('done', 'bad', 'missing')),
    reason           TEXT,                 -- why bad/missing
    source_url       TEXT NOT NULL,
    bytes_compressed INTEGER,
    bytes_raw        INTEGER,
    events           INTEGER,
    bad_lines        INTEGER,
    candidates       INTEGER,              -- events with CUDA evidence
    scan_s           REAL,
    scanned_at       TEXT NOT NULL,
    run_id           INTEGER REFERENCES stage_runs(id)
);

-- A repository with CUDA evidence, from GH Archive, an imported list or GitHub search.
CREATE TABLE repos (
    id              INTEGER PRIMARY KEY,
    github_id       INTEGER UNIQUE,        -- GitHub's numeric id when known
    full_name       TEXT NOT NULL UNIQUE COLLATE NOCASE,  -- 'owner/name'
    description     TEXT,
    language        TEXT,                  -- last language seen
    evidence        TEXT NOT NULL DEFAULT '',  -- comma-separated evidence kinds (harvest --help)
    first_seen      TEXT,
    last_seen       TEXT,
    event_count     INTEGER NOT NULL DEFAULT 0,
    pushed_at       TEXT,                  -- last push seen (events or search)
    source          TEXT NOT NULL DEFAULT 'gharchive' CHECK (source IN ('gharchive', 'import', 'search', 'local')),
    fetch_status    TEXT NOT NULL DEFAULT 'pending'
                    CHECK (fetch_status IN ('pending', 'fetched', 'failed', 'gone')),
    fetch_method    TEXT CHECK (fetch_method IN ('zip', 'git')),
    fetch_attempts  INTEGER NOT NULL DEFAULT 0,
    fetch_error     TEXT,
    http_status     INTEGER,
    next_attempt_at TEXT,                  -- failed fetches wait until then
    commit_sha      TEXT,
    default_branch  TEXT,
    fetched_at      TEXT,
    license_spdx    TEXT,
    archive_sha256  TEXT,
    archive_bytes   INTEGER,
    files_kept      INTEGER,
    files_refused   INTEGER
);
CREATE INDEX repos_fetch_status ON repos(fetch_status);

-- Content-addressed storage: one row per distinct file content, stored under
-- <work>/blobs/<sha256[0:2]>/<sha256>.
CREATE TABLE blobs (
    sha256     TEXT PRIMARY KEY,
    size_bytes INTEGER NOT NULL
);

-- A kept file of a repository (C/C++/CUDA source or header, or a build file).
CREATE TABLE files (
    id         INTEGER PRIMARY KEY,
    repo_id    INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
    path       TEXT NOT NULL,              -- relative to the repository root
    sha256     TEXT NOT NULL REFERENCES blobs(sha256),
    size_bytes INTEGER NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('cuda', 'c', 'cpp', 'header', 'build')),
    UNIQUE (repo_id, path)
);
CREATE INDEX files_sha256 ON files(sha256);

-- Archive entries that extraction refused (path traversal, links, devices, bombs, ...).
CREATE TABLE refused_entries (
    id      INTEGER PRIMARY KEY,
    repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
    path    TEXT NOT NULL,
    reason  TEXT NOT NULL
);
CREATE INDEX refused_entries_repo ON refused_entries(repo_id);

-- ---------------------------------------------------------------- isolate
-- A source tree isolate worked on: a fetched repository or a --path folder.
CREATE TABLE sources (
    id        INTEGER PRIMARY KEY,
    repo_id   INTEGER UNIQUE REFERENCES repos(id) ON DELETE CASCADE,  -- NULL for --path
    root      TEXT NOT NULL UNIQUE,        -- folder isolate parsed
    isolated_at TEXT,
    run_id    INTEGER REFERENCES stage_runs(id)
);

-- One parse of one translation unit.
CREATE TABLE parses (
    id        INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    path      TEXT NOT NULL,               -- relative to the source root
    sha256    TEXT,                        -- of the file's content
    status    TEXT NOT NULL CHECK (status IN ('ok', 'errors', 'failed', 'timeout', 'skipped')),
    reason    TEXT,
    kernels   INTEGER NOT NULL DEFAULT 0,
    parse_s   REAL,
    max_rss_kb INTEGER,                    -- peak memory of the parse worker
    UNIQUE (source_id, path)
);

-- An isolated kernel (one template instantiation), named by the hash of its normalised
-- isolated source; the same kernel in many forks is one row with many occurrences.
CREATE TABLE kernels (
    id             TEXT PRIMARY KEY,       -- sha256 of the normalised isolated source
    name           TEXT NOT NULL,          -- qualified name, e.g. 'ns::saxpy'
    template_args  TEXT,                   -- e.g. '<float, 256>', NULL if not a template
    dir            TEXT NOT NULL,          -- folder under <work>/kernels
    params         TEXT NOT NULL,          -- JSON parameter model (isolate --help)
    param_count    INTEGER NOT NULL,
    roles_known    INTEGER NOT NULL DEFAULT 0,  -- parameters whose role was recognised
    source_bytes   INTEGER,
    status         TEXT NOT NULL DEFAULT 'isolated'
                   CHECK (status IN ('isolated', 'built', 'build_failed', 'runnable', 'probe_failed', 'given_up')),
    created_at     TEXT NOT NULL,
    run_id         INTEGER REFERENCES stage_runs(id)
);
CREATE INDEX kernels_status ON kernels(status);

CREATE TABLE kernel_occurrences (
    kernel_id TEXT NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    path      TEXT NOT NULL,
    line      INTEGER NOT NULL,
    PRIMARY KEY (kernel_id, source_id, path, line)
);

-- ---------------------------------------------------------------- execute
-- The current build of a kernel for one architecture list.
CREATE TABLE builds (
    id             INTEGER PRIMARY KEY,
    kernel_id      TEXT NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
    arch           TEXT NOT NULL,          -- e.g. 'sm_90' or 'sm_80,sm_90'
    cache_key      TEXT NOT NULL,          -- sha256 of sources, harness, nvcc version, flags
    status         TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    attempts       INTEGER NOT NULL,
    fixes          TEXT,                   -- JSON array of repairs applied, in order
    binary_path    TEXT,
    nvcc_version   TEXT,
    flags          TEXT,
    registers      INTEGER,                -- from ptxas -v
    shared_bytes   INTEGER,
    stack_bytes    INTEGER,
    spill_store_bytes INTEGER,
    spill_load_bytes  INTEGER,
    const_bytes    INTEGER,
    barriers       INTEGER,
    ptxas          TEXT,                   -- JSON array: every entry x architecture ptxas -v reported
    error_class    TEXT,                   -- the last attempt's class when status = 'failed'
    build_s        REAL,
    built_at       TEXT NOT NULL,
    run_id         INTEGER REFERENCES stage_runs(id),
    UNIQUE (kernel_id, arch)
);

CREATE TABLE build_attempts (
    build_id    INTEGER NOT NULL REFERENCES builds(id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,          -- 1, 2, ...
    status      TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    error_class TEXT,                      -- execute --help lists the classes
    first_error TEXT,                      -- capped
    fix         TEXT,                      -- repair applied before the next attempt
    log_path    TEXT,                      -- full nvcc log under the work folder
    wall_s      REAL,
    PRIMARY KEY (build_id, attempt)
);

-- ---------------------------------------------------------------- GPUs, probes, tune
CREATE TABLE gpus (
    id             INTEGER PRIMARY KEY,
    uuid           TEXT NOT NULL UNIQUE,
    name           TEXT NOT NULL,          -- e.g. 'NVIDIA H100 80GB HBM3'
    compute_cap    TEXT,                   -- e.g. '9.0'
    memory_bytes   INTEGER,
    sm_count       INTEGER,
    driver_version TEXT,
    cuda_version   TEXT,
    host           TEXT,
    first_seen     TEXT NOT NULL
);

CREATE TABLE probes (
    kernel_id  TEXT NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
    gpu_id     INTEGER NOT NULL REFERENCES gpus(id),
    outcome    TEXT NOT NULL CHECK (outcome IN ('ok', 'launch_failure', 'illegal_address',
                                                 'cuda_error', 'crash', 'timeout')),
    detail     TEXT,
    sanitizer  TEXT,                       -- compute-sanitizer verdict when --sanitize:
                                           -- 'clean', 'out_of_bounds', 'errors', 'unavailable', 'timeout'
    sanitizer_detail TEXT,                 -- its first report line
    cache_key  TEXT,                       -- the probe key of the harness probed: the build
                                           -- key's inputs but the timing core (docs/execute.md
                                           -- "Probe key"); older lscat stored the build key
    probe_s    REAL,
    probed_at  TEXT NOT NULL,
    run_id     INTEGER REFERENCES stage_runs(id),
    PRIMARY KEY (kernel_id, gpu_id)
);

-- Per kernel and GPU: the state of its sweep.
CREATE TABLE tune_kernels (
    kernel_id        TEXT NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
    gpu_id           INTEGER NOT NULL REFERENCES gpus(id),
    status           TEXT NOT NULL CHECK (status IN ('running', 'done', 'given_up')),
    reason           TEXT,
    occupancy_block  INTEGER,              -- cudaOccupancyMaxPotentialBlockSize's suggestion
    occupancy_grid   INTEGER,
    updated_at       TEXT NOT NULL,
    PRIMARY KEY (kernel_id, gpu_id)
);

-- One measured configuration. --remeasure adds a new row and marks the old one superseded, so
-- nothing measured is ever lost.
CREATE TABLE measurements (
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
    status         TEXT NOT NULL CHECK (status IN ('ok', 'cuda_error', 'crashed', 'timeout', 'invalid_config')),
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
    run_id         INTEGER REFERENCES stage_runs(id)
);
CREATE UNIQUE INDEX measurements_current
    ON measurements(kernel_id, gpu_id, width, height, block_x, block_y, block_z)
    WHERE superseded = 0;

-- ---------------------------------------------------------------- failures of any stage
-- Every failure that a stage recorded, with a class from that stage's documented list.
CREATE TABLE failures (
    id         INTEGER PRIMARY KEY,
    stage      TEXT NOT NULL,
    subject    TEXT NOT NULL,              -- what failed: 'hour:2015-01-01T05', 'repo:owner/name',
                                           -- 'file:<path>', 'kernel:<id>'
    kernel_id  TEXT REFERENCES kernels(id) ON DELETE CASCADE,
    class      TEXT NOT NULL,
    message    TEXT,
    created_at TEXT NOT NULL,
    run_id     INTEGER REFERENCES stage_runs(id)
);
CREATE INDEX failures_stage ON failures(stage, class);
