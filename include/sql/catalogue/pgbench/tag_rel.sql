-- Products with tag X in category Y: no index spans both tables, so a join.
\set c random(0, 49)
\set t random(0, 199)
SELECT count(*) FROM products_rel AS p JOIN product_tags AS t ON t.product_id = p.id
WHERE p.category = 'cat_' || :c AND t.tag = 'tag_' || :t;
