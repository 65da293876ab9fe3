-- Average stored bytes per document.
SELECT avg(octet_length(doc)), count(*) FROM {table};
