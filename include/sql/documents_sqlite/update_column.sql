-- The same key in its own column: the new value as the SQL value json_extract gives it.
UPDATE {table} SET {column} = json_extract(:value, '$') WHERE "_row_id" IN (SELECT value FROM json_each(:ids));
