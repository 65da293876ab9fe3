-- Seed 000's column design for the user's documents: a row id and the rest of the document (what no
-- typed column holds: objects, arrays, keys of mixed types); add_column.sql adds one typed column per
-- top-level scalar key, named as the key.
DROP TABLE IF EXISTS {table};
CREATE TABLE {table} (
    "_row_id" bigint PRIMARY KEY,
    "_rest"   jsonb  NOT NULL
) WITH (autovacuum_enabled = off);
