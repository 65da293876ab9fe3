-- Stock of one id: the whole TOASTed document is fetched and decompressed.
\set i random(1, :rows)
SELECT (data ->> 'stock')::int FROM fat_doc WHERE id = :i;
