INSERT INTO {table} (status, payload)
SELECT 'new',
       jsonb_build_object(
           'customer_id', gs,
           'source', 'api',
           'flags', jsonb_build_array('web', 'promo'),
           'amount', mod(gs, 1000))
FROM generate_series(1, %(rows)s) AS gs;
