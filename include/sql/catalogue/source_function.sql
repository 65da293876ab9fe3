-- Seed 000's deterministic product source, as a function so every table (the two designs now,
-- the hybrid table later) is fed from the same values: hashint4 scatters brands, prices, stock
-- and weights; the three tags are de-duplicated and sorted here, once, for both designs.
-- Dates are pinned to UTC so the documents do not depend on the server's TimeZone.
CREATE OR REPLACE FUNCTION catalogue_source(n_products int)
RETURNS TABLE (n int, sku text, category text, brand text, color text, price numeric(10,2),
               stock int, weight_g int, created_at timestamptz, tags text[])
LANGUAGE sql STABLE AS $$
  SELECT g,
         'SKU-' || lpad(g::text, 8, '0'),
         'cat_' || mod(g, 50),
         'brand_' || mod(hashint4(g) & 1023, 400),
         (ARRAY['red', 'green', 'blue', 'black', 'white', 'grey'])[1 + mod(g, 6)],
         round((mod(hashint4(g * 7) & 2147483647, 100000) / 100.0)::numeric, 2),
         mod(hashint4(g * 13) & 2147483647, 500),
         100 + mod(hashint4(g * 17) & 2147483647, 5000),
         timestamptz '2024-01-01 00:00:00+00' + mod(g, 600) * interval '1 day',
         ARRAY(SELECT DISTINCT t
               FROM unnest(ARRAY['tag_' || mod(g, 200),
                                 'tag_' || mod(hashint4(g * 3) & 2147483647, 200),
                                 'tag_' || mod(hashint4(g * 5) & 2147483647, 200)]) AS t
               ORDER BY t)
  FROM generate_series(1, n_products) AS g
$$;
