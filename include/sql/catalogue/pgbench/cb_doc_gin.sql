-- Category + brand through the GIN index (jsonb_path_ops) with @>.
\set c random(0, 49)
\set b random(0, 399)
SELECT id, data ->> 'price' FROM products_doc
WHERE data @> jsonb_build_object('category', 'cat_' || :c, 'brand', 'brand_' || :b);
