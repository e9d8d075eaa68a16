-- lscat store, schema v6: the output check and the kernel's indexing.
--
-- Every configuration tune measures now does the kernel's whole work or says it does not: per
-- matrix size the harness runs a reference block (the shape execute's probe ran clean: 256x1x1
-- for 1D kernels, 16x16x1 for 2D) twice on the size's inputs, runs each timed configuration
-- once more on the same inputs outside the timed region, and compares every buffer the kernel
-- may write with the reference's (exact for integers; floats within a documented tolerance;
-- docs/isolate.md "Output check"). Reports and every "best block" statistic use `match` rows
-- only (docs/dataset.md).

-- How the kernel indexes its threads, from the code it reaches (isolate/indexing.h): 'none'
-- (no thread index), '1d' (x only), 'grid_stride' (x only, a loop stepping by the grid's
-- size), '2d' (y), '3d' (z). tune plans block shapes and grids from it. NULL: isolated before
-- v6 (tune then reads params' is2d; the next `lscat isolate` fills it).
ALTER TABLE kernels ADD COLUMN indexing TEXT
    CHECK (indexing IN ('none', '1d', 'grid_stride', '2d', '3d'));

-- match: every written buffer equals the reference block's (integers exactly, floats within
-- tolerance); mismatch: some buffer differs beyond that (the configuration did not do the
-- kernel's work, or did other work); nondeterministic: the reference itself differs between two
-- runs (atomics, races, random numbers), then compared with tolerance, or not checkable
-- (output_check_why says which); not_checked: no check was made (why says why: the
-- configuration did not run ok, the kernel writes no buffer, measured before v6, ...).
ALTER TABLE measurements ADD COLUMN output_check TEXT NOT NULL DEFAULT 'not_checked'
    CHECK (output_check IN ('match', 'mismatch', 'nondeterministic', 'not_checked'));
ALTER TABLE measurements ADD COLUMN output_check_why TEXT;
-- What the check cost for this row (its extra run and comparisons, plus the reference's two
-- runs when this row's size started with it), in nanoseconds; NULL when no check ran.
ALTER TABLE measurements ADD COLUMN check_ns INTEGER;

UPDATE measurements SET output_check_why =
    'measured before the output check (schema v6): lscat tune --remeasure checks it';
