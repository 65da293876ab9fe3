-- Average stored size of a document (after TOAST compression, if any) and the share compressed.
SELECT avg(pg_column_size(doc))::float8,
       avg((pg_column_compression(doc) IS NOT NULL)::int)::float8
FROM {table}
