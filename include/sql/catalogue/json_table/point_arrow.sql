-- The same columns through ->> and casts.
SELECT data ->> 'category' AS category, (data ->> 'price')::numeric AS price, (data ->> 'stock')::int AS stock
FROM products_doc
WHERE products_doc.id = %(id)s
