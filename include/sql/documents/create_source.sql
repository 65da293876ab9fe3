-- The user's documents as they were read: row id (input order, from 1) and the exact text of each
-- document. Every table of the suite is loaded from this one, so json, jsonb and the typed twin
-- hold the same documents.
DROP TABLE IF EXISTS {table};
CREATE TABLE {table} (
    id   bigint PRIMARY KEY,
    body text   NOT NULL
) WITH (autovacuum_enabled = off);
