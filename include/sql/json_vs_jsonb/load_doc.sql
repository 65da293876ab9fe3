INSERT INTO {table} (id, doc)
SELECT id, {layout}::{type}
FROM {source}
