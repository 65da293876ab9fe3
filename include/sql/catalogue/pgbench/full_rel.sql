-- The whole product with its tags by id: a primary-key lookup plus an index scan of product_tags.
\set i random(1, :products)
SELECT p.id, p.sku, p.category, p.brand, p.color, p.price, p.stock, p.weight_g, p.created_at,
       array_agg(t.tag ORDER BY t.tag) AS tags
FROM products_rel AS p LEFT JOIN product_tags AS t ON t.product_id = p.id
WHERE p.id = :i
GROUP BY p.id;
