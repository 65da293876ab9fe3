-- The same documents as JSONB: jsonb() parses each text document once.
INSERT INTO {table} (id, doc) SELECT id, jsonb(doc) FROM {source} ORDER BY id;
