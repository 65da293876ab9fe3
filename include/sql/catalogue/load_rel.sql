INSERT INTO products_rel (id, sku, category, brand, color, price, stock, weight_g, created_at) OVERRIDING SYSTEM VALUE
SELECT n, sku, category, brand, color, price, stock, weight_g, created_at
FROM catalogue_src ORDER BY n;
SELECT setval(pg_get_serial_sequence('products_rel', 'id'), %(products)s);
