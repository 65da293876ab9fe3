-- The source's tag arrays are already de-duplicated.
INSERT INTO product_tags (product_id, tag)
SELECT s.n, t FROM catalogue_src AS s, unnest(s.tags) AS t;
