SELECT category, avg(price), sum(stock) FROM products_rel GROUP BY 1
