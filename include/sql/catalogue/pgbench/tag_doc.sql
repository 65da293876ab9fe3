-- Products with tag X in category Y: one @> probe of the GIN index intersects both conditions.
\set c random(0, 49)
\set t random(0, 199)
SELECT count(*) FROM products_doc
WHERE data @> jsonb_build_object('category', 'cat_' || :c, 'tags', jsonb_build_array('tag_' || :t));
