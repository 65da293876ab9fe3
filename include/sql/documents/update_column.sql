-- The same key in its own typed column (seed 004's column side, seed 000's twin): the new value goes
-- through the column type's input function, as an application's UPDATE of that column would.
UPDATE {table} AS t
SET {column} = r.{column}
FROM jsonb_populate_record(NULL::{table}, %(row)s::jsonb) AS r
WHERE t."_row_id" = %(id)s
