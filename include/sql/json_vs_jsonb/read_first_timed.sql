-- The read of read_first.sql, timed by the server: its Execution Time excludes the client round
-- trip and the planning, which at the smoke scale would otherwise be most of what is measured.
-- TIMING OFF: no per-row clock reads, so the instrumentation costs nothing per document.
EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON)
SELECT sum(length(doc->>'first'))
FROM {table}
