SELECT avg(pg_column_size(payload))::float8 FROM {table}
