-- Text into JSONB: jsonb() of every row (the parse a JSONB column pays once, at write time).
SELECT sum(octet_length(jsonb(doc))), count(*) FROM {table};
