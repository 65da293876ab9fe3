-- The same price band on the column.
\set p random(0, 98999)
SELECT id, brand, price FROM products_rel
WHERE price BETWEEN :p / 100.0 AND :p / 100.0 + 10
ORDER BY price LIMIT 50;
