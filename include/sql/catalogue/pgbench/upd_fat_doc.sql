-- Stock inside an 8 kB TOASTed document: the whole value is rewritten.
\set i random(1, :rows)
UPDATE fat_doc
SET data = jsonb_set(data, ARRAY['stock'], to_jsonb((data ->> 'stock')::int + 1))
WHERE id = :i;
