SELECT category, avg(price), sum(stock) FROM products_rel GROUP BY 1 ORDER BY 1 LIMIT 1
