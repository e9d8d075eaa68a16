-- lscat store: `lscat mcts search` (docs/mcts.md). A search is identified by what decides its
-- course: the DAG's text, the stream count, the back end and its input (the replay file's
-- content, or the SpMV problem), the strategy and the seed. Running the same search again
-- resumes it: the tree is rebuilt from the recorded iterations (their paths and times) and
-- the random generator continues from the state recorded with the last one, so a search
-- killed at any moment loses at most the iteration in flight.

CREATE TABLE mcts_searches (
    id             INTEGER PRIMARY KEY,
    dag_path       TEXT NOT NULL,
    dag_sha256     TEXT NOT NULL,          -- of the DAG's text
    streams        INTEGER NOT NULL,
    backend        TEXT NOT NULL CHECK (backend IN ('replay', 'spmv')),
    backend_input  TEXT NOT NULL,          -- replay: sha256 of the file; spmv: the problem
    strategy       TEXT NOT NULL CHECK (strategy IN ('coverage', 'fastest', 'random')),
    seed           INTEGER NOT NULL,
    created_at     TEXT NOT NULL,
    run_id         INTEGER REFERENCES stage_runs(id),
    UNIQUE (dag_sha256, streams, backend, backend_input, strategy, seed)
);

-- One measured implementation per iteration, in the order the search proposed them.
CREATE TABLE mcts_iterations (
    search_id      INTEGER NOT NULL REFERENCES mcts_searches(id) ON DELETE CASCADE,
    iteration      INTEGER NOT NULL,       -- 0, 1, ...
    sequence       TEXT NOT NULL,          -- the steps as the authors write them, '|'-joined JSON
    path           TEXT NOT NULL,          -- child index taken at each step of the tree ('3,0,1')
    p01_s          REAL NOT NULL,          -- percentiles of the measurements, seconds
    p10_s          REAL NOT NULL,
    p50_s          REAL NOT NULL,
    p90_s          REAL NOT NULL,
    p99_s          REAL NOT NULL,
    stddev_s       REAL NOT NULL,
    rng_state      INTEGER NOT NULL,       -- the generator after this iteration (64 bits)
    measured_at    TEXT NOT NULL,
    run_id         INTEGER REFERENCES stage_runs(id),
    PRIMARY KEY (search_id, iteration)
);
