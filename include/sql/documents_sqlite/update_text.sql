-- The fixed rows' key replaced in the text (parse, replace, write the whole text back); json_replace,
-- like PostgreSQL's jsonb_set(..., false), leaves a document without the key as it is.
UPDATE {table} SET doc = json_replace(doc, :path, json(:value)) WHERE id IN (SELECT value FROM json_each(:ids));
