-- The status lives inside the jsonb document.
DROP TABLE IF EXISTS {table};
CREATE TABLE {table} (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    payload jsonb NOT NULL
) WITH (fillfactor = 70, autovacuum_enabled = off);
