-- Seer: what gathering the row-length features costs when it is enqueued asynchronously right
-- after the caller uploads the matrix (seer_gather_async()) and seer_select() later reads the
-- result: the exposed cost in the flow documented in docs/seer.md ("Session 8"), per precision
-- (the caller's x upload it hides behind is cols x 4 or 8 bytes). NULL = not measured (tables
-- measured before session 8, imported CSVs without the column).
ALTER TABLE seer_feature_costs ADD COLUMN async_float_ns REAL;
ALTER TABLE seer_feature_costs ADD COLUMN async_double_ns REAL;
