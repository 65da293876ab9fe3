-- Small-row stock update inside the document (on the update copy, which has the document's indexes).
\set i random(1, :products)
UPDATE products_doc_upd
SET data = jsonb_set(data, ARRAY['stock'], to_jsonb((data ->> 'stock')::int + 1))
WHERE id = :i;
