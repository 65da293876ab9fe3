-- Seed 004's design for one key: the key in its own column "_key" (added by add_column.sql), the
-- document without it in "_doc".
DROP TABLE IF EXISTS {table};
CREATE TABLE {table} (
    "_row_id" bigint PRIMARY KEY,
    "_doc"    jsonb  NOT NULL
) WITH (autovacuum_enabled = off);
