-- A private copy of products_doc with the same indexes (PK, unique sku, GIN, both expression
-- indexes), so the update workload never changes the shared table. Autovacuum is off on the copy
-- so no background vacuum adds WAL or frees space during the measured run.
DROP TABLE IF EXISTS products_doc_upd;
CREATE TABLE products_doc_upd (LIKE products_doc, PRIMARY KEY (id), UNIQUE (sku)) WITH (autovacuum_enabled = off);
INSERT INTO products_doc_upd SELECT id, sku, data FROM products_doc ORDER BY id;
CREATE INDEX ON products_doc_upd USING gin (data jsonb_path_ops);
CREATE INDEX ON products_doc_upd ((data ->> 'category'), (data ->> 'brand'));
CREATE INDEX ON products_doc_upd (((data ->> 'price')::numeric));
VACUUM ANALYZE products_doc_upd;
