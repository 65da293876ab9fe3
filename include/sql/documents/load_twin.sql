-- Every typed column from the document's key of the same name (PostgreSQL's own input functions do
-- the typing, as an application's INSERT would), the rest of the document in "_rest". LATERAL: the
-- record is built once per document, not once per column as (f(...)).* would.
INSERT INTO {table}
SELECT r.*
FROM {source} AS d
CROSS JOIN LATERAL jsonb_populate_record(NULL::{table},
    d.doc || jsonb_build_object('_row_id', d.id, '_rest', d.doc - %(keys)s::text[])) AS r
ORDER BY d.id;
