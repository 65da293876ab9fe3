-- Change one key of every JSONB document in place; the result stays JSONB.
UPDATE {table} SET doc = jsonb_set(doc, :path, :value);
