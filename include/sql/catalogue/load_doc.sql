-- Ids are the source's n, so both designs and the tag table agree on every id.
INSERT INTO products_doc (id, sku, data) OVERRIDING SYSTEM VALUE
SELECT n, sku, jsonb_build_object(
           'category', category, 'brand', brand, 'color', color,
           'price', price, 'stock', stock, 'weight_g', weight_g,
           'created_at', created_at,
           'tags', to_jsonb(tags))
FROM catalogue_src ORDER BY n;
SELECT setval(pg_get_serial_sequence('products_doc', 'id'), %(products)s);
