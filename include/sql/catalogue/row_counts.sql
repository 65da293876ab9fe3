SELECT (SELECT count(*) FROM products_doc), (SELECT count(*) FROM products_rel), (SELECT count(*) FROM product_tags)
