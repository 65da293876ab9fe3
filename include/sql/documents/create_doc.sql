-- One table per (type, compression): `doc` is json or jsonb, compressed with the given TOAST method
-- when a row crosses the ~2 kB threshold. Default fillfactor: these tables are read, never updated.
DROP TABLE IF EXISTS {table};
CREATE TABLE {table} (
    id  bigint PRIMARY KEY,
    doc {type} COMPRESSION {method} NOT NULL
) WITH (autovacuum_enabled = off);
