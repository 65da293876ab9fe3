-- The same documents as JSONB, SQLite's binary JSON (3.45 and newer), in a BLOB column.
CREATE TABLE {table} (id INTEGER PRIMARY KEY, doc BLOB NOT NULL);
