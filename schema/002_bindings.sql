-- lscat store, schema v2: role bindings. A harness gives scalar parameters values by role, and a
-- "binding" says which values (docs/isolate.md "Bindings": 'area' = a size is W*H elements, the
-- v1 behaviour and the default; 'side' = a size is a square matrix's side). execute's probe
-- tries the bindings in order and keeps the first that runs clean (docs/execute.md "Probe plan");
-- tune launches each harness with its kernel's binding and records it with every measurement.
-- Rows written before v2 were all measured and probed with 'area'.

-- The binding execute chose for the kernel; NULL: none ran clean, or never probed with bindings
-- (tune then uses the default, 'area').
ALTER TABLE kernels ADD COLUMN binding TEXT;

-- The binding whose run this row's outcome describes: the chosen one, or the default when none
-- ran clean. NULL for probes of v1 (which ran 'area').
ALTER TABLE probes ADD COLUMN binding TEXT;
-- Every binding tried, in order: JSON array of {"binding", "outcome", "detail", "sanitizer",
-- "sanitizer_detail"} (NULL for probes of v1).
ALTER TABLE probes ADD COLUMN bindings TEXT;

-- The binding the harness ran with for this measurement (v1 rows: 'area').
ALTER TABLE measurements ADD COLUMN binding TEXT NOT NULL DEFAULT 'area';
