-- Every index of the catalogue's three tables, with its size.
SELECT i.indexrelid::regclass::text, pg_relation_size(i.indexrelid)
FROM pg_index AS i
WHERE i.indrelid IN ('products_doc'::regclass, 'products_rel'::regclass, 'product_tags'::regclass)
ORDER BY 1
