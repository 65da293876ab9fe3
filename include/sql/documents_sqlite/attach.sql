-- A file-backed database in the engine's private folder (one table per file, so its page count is the table's).
-- SQLite SQL files of this suite are bound by SqliteSession: {schema}/{table} are quoted identifiers, :name parameters.
ATTACH DATABASE :path AS {schema};
