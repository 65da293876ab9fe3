-- Category + brand through the B-tree on the columns.
\set c random(0, 49)
\set b random(0, 399)
SELECT id, price FROM products_rel
WHERE category = 'cat_' || :c AND brand = 'brand_' || :b;
