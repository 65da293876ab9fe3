-- Category + brand through the B-tree expression index on ->>.
\set c random(0, 49)
\set b random(0, 399)
SELECT id, data ->> 'price' FROM products_doc
WHERE data ->> 'category' = 'cat_' || :c AND data ->> 'brand' = 'brand_' || :b;
