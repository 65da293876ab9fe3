INSERT INTO fat_rel SELECT id, (data ->> 'stock')::int, data ->> 'description' FROM fat_doc;
