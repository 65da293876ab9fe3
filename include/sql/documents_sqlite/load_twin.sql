INSERT INTO {table} ("_row_id", "_rest") SELECT id, doc FROM {source} ORDER BY id;
