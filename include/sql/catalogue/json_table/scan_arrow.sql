SELECT count(*), sum((data ->> 'price')::numeric), sum((data ->> 'stock')::int)
FROM products_doc
