-- The status lives in its own column, next to the document.
-- autovacuum is off for the table so that no background vacuum runs between the update and the
-- statistics read; the seed's run was short enough that none could have.
DROP TABLE IF EXISTS {table};
CREATE TABLE {table} (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    status  text  NOT NULL,
    payload jsonb NOT NULL
) WITH (fillfactor = 70, autovacuum_enabled = off);
