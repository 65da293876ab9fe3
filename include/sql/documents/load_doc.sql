-- In row id order, so every run lays the rows out in the same pages (sizes are facts of the input).
INSERT INTO {table} (id, doc)
SELECT id, body::{type}
FROM {source}
ORDER BY id;
