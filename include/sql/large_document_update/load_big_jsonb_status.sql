INSERT INTO {table} (payload)
SELECT jsonb_build_object(
           'status', 'new',
           'customer_id', gs,
           'source', 'api',
           'flags', jsonb_build_array('web', 'promo'),
           'amount', mod(gs, 1000),
           'description', jsonbench_make_noise(gs, 220),
           'audit', jsonb_build_object(
               'created_by', 'system',
               'request_id', md5(gs::text),
               'trace', jsonbench_make_noise(gs + 100000, 120)))
FROM generate_series(1, %(rows)s) AS gs;
