-- A key without a column of its own (nested, or of mixed types): replaced inside the twin's rest.
UPDATE {table} SET "_rest" = jsonb_replace("_rest", :path, json(:value)) WHERE "_row_id" IN (SELECT value FROM json_each(:ids));
