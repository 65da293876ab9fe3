INSERT INTO {table}
SELECT (jsonb_populate_record(NULL::{table},
          jsonb_build_object('_row_id', d.id, '_doc', d.doc #- %(path)s::text[], '_key', d.doc #> %(path)s::text[]))).*
FROM {source} AS d
ORDER BY d.id;
