-- The seed's first attempt: ORDER BY 1 LIMIT 1 lets the planner walk doc_cat_brand and stop after one group.
SELECT data ->> 'category', avg((data ->> 'price')::numeric), sum((data ->> 'stock')::int)
FROM products_doc GROUP BY 1 ORDER BY 1 LIMIT 1
