-- The relational twin from the documents, as the seed loaded it.
INSERT INTO fat_rel_base SELECT id, (data ->> 'stock')::int, data ->> 'description' FROM fat_doc_base ORDER BY id;
