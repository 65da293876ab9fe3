-- A fresh working copy of a pristine fat table for one repetition: every update run starts from
-- the same heap and TOAST (a copied TOASTed value keeps its stored, compressed form), and the
-- pgbench scripts find it under the seed's name (fat_doc, fat_rel). Primary key after the load.
DROP TABLE IF EXISTS {table};
CREATE TABLE {table} (LIKE {base} INCLUDING STORAGE INCLUDING COMPRESSION)
    WITH (autovacuum_enabled = off, toast.autovacuum_enabled = off);
INSERT INTO {table} SELECT * FROM {base} ORDER BY id;
ALTER TABLE {table} ADD PRIMARY KEY (id);
VACUUM ANALYZE {table};
