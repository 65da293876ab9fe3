-- JSONB back to text, as an application that reads whole documents gets it: json() of every row.
SELECT sum(octet_length(json(doc))), count(*) FROM {table};
