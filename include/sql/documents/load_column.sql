-- The key's value into "_key" (typed by the column's input function), the document without it into "_doc".
INSERT INTO {table}
SELECT r.*
FROM {source} AS d
CROSS JOIN LATERAL jsonb_populate_record(NULL::{table},
    jsonb_build_object('_row_id', d.id, '_doc', d.doc #- %(path)s::text[], '_key', d.doc #> %(path)s::text[])) AS r
ORDER BY d.id;
