EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON)
SELECT count({column}), sum(length({column}::text))
FROM {table}
