-- {type} is one of the twin's types, bound as an identifier by its pg_type name (int8, bool, numeric,
-- date, timestamptz, text, jsonb).
ALTER TABLE {table} ADD COLUMN {column} {type};
