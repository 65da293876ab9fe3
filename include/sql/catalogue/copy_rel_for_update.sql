-- A private copy of products_rel with the same indexes (stock is not indexed), autovacuum off.
DROP TABLE IF EXISTS products_rel_upd;
CREATE TABLE products_rel_upd (
    id         bigint PRIMARY KEY,
    sku        text NOT NULL UNIQUE,
    category   text NOT NULL,
    brand      text NOT NULL,
    color      text NOT NULL,
    price      numeric(10,2) NOT NULL,
    stock      integer NOT NULL,
    weight_g   integer NOT NULL,
    created_at timestamptz NOT NULL
) WITH (autovacuum_enabled = off);
INSERT INTO products_rel_upd SELECT id, sku, category, brand, color, price, stock, weight_g, created_at FROM products_rel ORDER BY id;
CREATE INDEX ON products_rel_upd (category, brand);
CREATE INDEX ON products_rel_upd (price);
VACUUM ANALYZE products_rel_upd;
