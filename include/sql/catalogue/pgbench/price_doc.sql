-- A price band of 10.00 starting anywhere in 0.00 .. 989.99, cheapest 50 first (expression index).
\set p random(0, 98999)
SELECT id, data ->> 'brand', (data ->> 'price')::numeric AS price FROM products_doc
WHERE (data ->> 'price')::numeric BETWEEN :p / 100.0 AND :p / 100.0 + 10
ORDER BY (data ->> 'price')::numeric LIMIT 50;
