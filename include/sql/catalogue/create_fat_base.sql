-- The seed's 8 kB documents and their relational twin, loaded once per fat_update task as the
-- pristine originals every repetition copies (copy_fat.sql). Autovacuum is off on both tables and
-- their TOAST tables, here and on the copies, so no TOAST is reclaimed during a measured run.
DROP TABLE IF EXISTS fat_doc_base;
DROP TABLE IF EXISTS fat_rel_base;
CREATE TABLE fat_doc_base (id bigint PRIMARY KEY, data jsonb NOT NULL)
    WITH (autovacuum_enabled = off, toast.autovacuum_enabled = off);
CREATE TABLE fat_rel_base (id bigint PRIMARY KEY, stock int NOT NULL, description text NOT NULL)
    WITH (autovacuum_enabled = off, toast.autovacuum_enabled = off);
