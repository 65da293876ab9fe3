-- The whole product, tags included, by id: one index lookup, one tuple.
\set i random(1, :products)
SELECT id, sku, data FROM products_doc WHERE id = :i;
