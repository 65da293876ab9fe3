-- About 8 kB of hex md5 digests per document (240 of them): compression helps only a little.
INSERT INTO fat_doc_base
SELECT g, jsonb_build_object(
         'stock', mod(g, 500),
         'description', (SELECT string_agg(md5((g * 1000 + i)::text), ' ') FROM generate_series(1, 240) AS i))
FROM generate_series(1, %(rows)s) AS g;
