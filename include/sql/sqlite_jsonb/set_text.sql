-- json_set of one key on every text document, as an expression (the function's own cost, no row written).
SELECT sum(octet_length(json_set(doc, :path, :value))), count(*) FROM {table};
