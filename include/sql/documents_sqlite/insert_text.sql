-- A batch of documents: :docs is a JSON array of the documents' texts (as JSON strings), so each
-- value arrives as its exact text; ids run from :first + 1 in input order.
INSERT INTO {table} (id, doc)
SELECT :first + key + 1, value FROM json_each(:docs) ORDER BY key;
