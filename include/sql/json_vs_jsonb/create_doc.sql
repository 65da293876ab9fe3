-- One table per (shape, layout, type, compression): `doc` is json or jsonb, compressed with the
-- given TOAST method when a value crosses the threshold (pglz is PostgreSQL's default).
DROP TABLE IF EXISTS {table};
CREATE TABLE {table} (
    id  bigint NOT NULL,
    doc {type} COMPRESSION {method} NOT NULL
) WITH (autovacuum_enabled = off);
