-- Every typed column from the document's key of the same name (PostgreSQL's own input functions do
-- the typing, as an application's INSERT would), the rest of the document in "_rest".
INSERT INTO {table}
SELECT (jsonb_populate_record(NULL::{table},
          d.doc || jsonb_build_object('_row_id', d.id, '_rest', d.doc - %(keys)s::text[]))).*
FROM {source} AS d
ORDER BY d.id;
