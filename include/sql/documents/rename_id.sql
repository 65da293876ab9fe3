-- The document tables' "id" as the update designs name it, so one update file serves every design.
ALTER TABLE {table} RENAME COLUMN id TO "_row_id";
