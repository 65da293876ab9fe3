-- The floor: visiting every row and its document without any JSON function.
SELECT sum(octet_length(doc)), count(*) FROM {table};
