-- The whole document rewritten by jsonb_set for one key of one row (seed 004's jsonb side; a
-- document without the key is written back unchanged, as the seed's update would).
UPDATE {table}
SET {doc} = jsonb_set({doc}, %(path)s::text[], %(value)s::jsonb, false)
WHERE "_row_id" = %(id)s
