-- Average stored bytes per document, and the documents.
SELECT avg(octet_length(doc)), count(*) FROM {table};
