-- jsonb() parses each text document once, in id order.
INSERT INTO {table} (id, doc) SELECT id, jsonb(doc) FROM {source} ORDER BY id;
