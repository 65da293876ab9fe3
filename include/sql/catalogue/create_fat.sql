-- The seed's 8 kB documents and their relational twin. Autovacuum is off on both tables and
-- their TOAST tables so the TOAST growth of the update run is not reclaimed mid-run.
DROP TABLE IF EXISTS fat_doc;
DROP TABLE IF EXISTS fat_rel;
CREATE TABLE fat_doc (id bigint PRIMARY KEY, data jsonb NOT NULL)
    WITH (autovacuum_enabled = off, toast.autovacuum_enabled = off);
CREATE TABLE fat_rel (id bigint PRIMARY KEY, stock int NOT NULL, description text NOT NULL)
    WITH (autovacuum_enabled = off, toast.autovacuum_enabled = off);
