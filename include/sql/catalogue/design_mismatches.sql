-- Products whose document and row disagree (including their tags): 0 when both designs hold the same values.
SELECT count(*)
FROM products_doc AS d
FULL JOIN products_rel AS r ON r.id = d.id
WHERE d.id IS NULL OR r.id IS NULL
   OR d.sku <> r.sku
   OR d.data ->> 'category' <> r.category
   OR d.data ->> 'brand' <> r.brand
   OR d.data ->> 'color' <> r.color
   OR (d.data ->> 'price')::numeric <> r.price
   OR (d.data ->> 'stock')::int <> r.stock
   OR (d.data ->> 'weight_g')::int <> r.weight_g
   OR d.data -> 'tags' <> coalesce((SELECT jsonb_agg(t.tag ORDER BY t.tag) FROM product_tags AS t WHERE t.product_id = r.id), '[]'::jsonb)
