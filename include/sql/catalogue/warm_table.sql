-- Without pg_prewarm: one sequential pass warms a table's heap (not its indexes).
SELECT count(*) FROM {table}
