UPDATE {table} SET payload = jsonb_set(payload, ARRAY['status'], to_jsonb('done'::text), false) WHERE id <= %(half)s
