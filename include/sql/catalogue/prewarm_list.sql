-- The catalogue's tables with their TOAST tables and every index: what the reads prewarm.
SELECT c.oid::regclass::text
FROM pg_class AS c
WHERE c.oid IN ('products_doc'::regclass, 'products_rel'::regclass, 'product_tags'::regclass)
   OR c.oid IN (SELECT i.indexrelid FROM pg_index AS i
                WHERE i.indrelid IN ('products_doc'::regclass, 'products_rel'::regclass, 'product_tags'::regclass))
   OR c.oid IN (SELECT t.reltoastrelid FROM pg_class AS t
                WHERE t.oid IN ('products_doc'::regclass, 'products_rel'::regclass, 'product_tags'::regclass) AND t.reltoastrelid <> 0)
ORDER BY 1
