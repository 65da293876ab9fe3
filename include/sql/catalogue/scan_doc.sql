-- The seed's full aggregation over the documents: every row decoded.
SELECT data ->> 'category', avg((data ->> 'price')::numeric), sum((data ->> 'stock')::int)
FROM products_doc GROUP BY 1
