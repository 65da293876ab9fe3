-- read_doc.sql timed by the server (no client round trip; TIMING OFF: no per-row clock reads).
EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON)
SELECT count(doc #>> %(path)s::text[]), sum(length(doc #>> %(path)s::text[]))
FROM {table}
