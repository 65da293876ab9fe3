-- Seed 000's column design: a row id and the rest of the document as JSONB; add_column.sql adds one
-- column per top-level scalar key, named as the key (SQLite columns take any type).
CREATE TABLE {table} ("_row_id" INTEGER PRIMARY KEY, "_rest" BLOB NOT NULL);
