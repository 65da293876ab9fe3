-- A file-backed database in the engine's private folder (one table per file, so its page count is the table's).
-- Bound by SqliteSession: schema and table names are quoted identifiers, :name a parameter.
ATTACH DATABASE :path AS {schema};
