-- Average input text length, average datum size of the same text as json and as jsonb before any
-- TOAST compression (built in memory, never stored), and the share of datums larger than the TOAST
-- threshold (a row larger than it is compressed, then moved out of line).
SELECT avg(octet_length(body))::float8,
       avg(pg_column_size(body::json))::float8,
       avg(pg_column_size(body::jsonb))::float8,
       avg((pg_column_size(body::json) > %(threshold)s)::int)::float8,
       avg((pg_column_size(body::jsonb) > %(threshold)s)::int)::float8,
       count(*)
FROM {source}
