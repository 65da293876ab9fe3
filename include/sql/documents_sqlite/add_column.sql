ALTER TABLE {table} ADD COLUMN {column};
