-- The integer array has no key "first": change its first element instead (see update_first.sql).
UPDATE {table}
SET doc = jsonb_set(doc::jsonb, ARRAY['0'], to_jsonb((doc->>0)::int + 1))::{type}
