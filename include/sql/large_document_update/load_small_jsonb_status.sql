INSERT INTO {table} (payload)
SELECT jsonb_build_object(
           'status', 'new',
           'customer_id', gs,
           'source', 'api',
           'flags', jsonb_build_array('web', 'promo'),
           'amount', mod(gs, 1000))
FROM generate_series(1, %(rows)s) AS gs;
