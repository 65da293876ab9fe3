-- jsonb_set of one key on every JSONB document, as an expression (the function's own cost, no row written).
SELECT sum(octet_length(jsonb_set(doc, :path, :value))), count(*) FROM {table};
