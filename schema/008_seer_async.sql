-- Seer: what gathering the row-length features costs when seer_gather_async() enqueues it and
-- seer_select() later reads the result: the exposed cost (the caller's flow with gathering minus
-- the same flow without), per precision of the caller's values and x, in two defined flows
-- (docs/seer.md, "Session 8"):
--   async_*:    the caller uploads the CSR from host memory: row_ptr, then gathering, then the
--               column indices, the values and x; select; SpMV.
--   resident_*: the matrix is already on the GPU: gathering, then the x upload; select; SpMV.
--   sync_upload_*: the flow of async_* with no early gathering: seer_select() gathers itself
--               (launch + stream synchronisation) after the x upload; the same cost as
--               feature_ns, but measured inside the caller's flow.
-- NULL = not measured (tables measured before session 8, imported CSVs without the columns).
ALTER TABLE seer_feature_costs ADD COLUMN async_float_ns REAL;
ALTER TABLE seer_feature_costs ADD COLUMN async_double_ns REAL;
ALTER TABLE seer_feature_costs ADD COLUMN resident_float_ns REAL;
ALTER TABLE seer_feature_costs ADD COLUMN resident_double_ns REAL;
ALTER TABLE seer_feature_costs ADD COLUMN sync_upload_float_ns REAL;
ALTER TABLE seer_feature_costs ADD COLUMN sync_upload_double_ns REAL;
