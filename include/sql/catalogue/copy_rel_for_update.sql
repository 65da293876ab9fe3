-- A private copy of products_rel with the same indexes (stock is not indexed), autovacuum off.
DROP TABLE IF EXISTS products_rel_upd;
-- LIKE copies the columns and NOT NULLs; the keys are declared here, the secondary indexes built after the load.
CREATE TABLE products_rel_upd (LIKE products_rel, PRIMARY KEY (id), UNIQUE (sku)) WITH (autovacuum_enabled = off);
INSERT INTO products_rel_upd SELECT id, sku, category, brand, color, price, stock, weight_g, created_at FROM products_rel ORDER BY id;
CREATE INDEX ON products_rel_upd (category, brand);
CREATE INDEX ON products_rel_upd (price);
VACUUM ANALYZE products_rel_upd;
