SELECT count(*) FROM products_rel WHERE stock < 10
