-- Documents stored as JSON text. SQLite SQL files of this suite are bound by SqliteSession:
-- {table} is a quoted identifier (or schema.table), :name a parameter.
CREATE TABLE {table} (id INTEGER PRIMARY KEY, doc TEXT NOT NULL);
