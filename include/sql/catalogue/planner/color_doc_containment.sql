SELECT count(*) FROM products_doc WHERE data @> jsonb_build_object('color', 'red')
