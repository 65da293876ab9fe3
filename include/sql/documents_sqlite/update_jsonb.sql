-- The same on JSONB: the result stays JSONB.
UPDATE {table} SET doc = jsonb_replace(doc, :path, json(:value)) WHERE id IN (SELECT value FROM json_each(:ids));
