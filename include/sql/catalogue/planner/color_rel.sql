SELECT count(*) FROM products_rel WHERE color = 'red'
