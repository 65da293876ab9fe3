-- The seed's hybrid layout: filtered, sorted and updated fields in columns, the rest in jsonb,
-- tags as a native array, fillfactor 90 so stock updates find room for HOT on the same page.
-- Same source as the two designs; autovacuum off so the HOT count is the update's alone.
DROP TABLE IF EXISTS products_hybrid;
CREATE TABLE products_hybrid (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    sku        text NOT NULL UNIQUE,
    category   text NOT NULL,
    brand      text NOT NULL,
    price      numeric(10,2) NOT NULL CHECK (price >= 0),
    stock      integer NOT NULL DEFAULT 0,
    attributes jsonb NOT NULL DEFAULT jsonb_build_object() CHECK (jsonb_typeof(attributes) = 'object'),
    tags       text[] NOT NULL DEFAULT ARRAY[]::text[]
) WITH (fillfactor = 90, autovacuum_enabled = off);
INSERT INTO products_hybrid (id, sku, category, brand, price, stock, attributes, tags) OVERRIDING SYSTEM VALUE
SELECT n, sku, category, brand, price, stock,
       jsonb_build_object('color', color, 'weight_g', weight_g, 'created_at', created_at),
       tags
FROM catalogue_source(%(products)s) ORDER BY n;
CREATE INDEX products_hybrid_cat_brand ON products_hybrid (category, brand);
CREATE INDEX products_hybrid_price ON products_hybrid (price);
CREATE INDEX products_hybrid_tags ON products_hybrid USING gin (tags);
CREATE INDEX products_hybrid_attrs ON products_hybrid USING gin (attributes jsonb_path_ops);
VACUUM ANALYZE products_hybrid;
