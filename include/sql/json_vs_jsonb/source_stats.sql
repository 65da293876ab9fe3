-- Average input text length and average datum size of the same text as json and as jsonb, before
-- any TOAST compression (the values are built in memory, never stored).
SELECT avg(octet_length({layout}))::float8,
       avg(pg_column_size({layout}::json))::float8,
       avg(pg_column_size({layout}::jsonb))::float8
FROM {source}
