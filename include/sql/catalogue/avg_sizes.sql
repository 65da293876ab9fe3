-- Average pg_column_size of a document, of a whole relational row, and of a tag row.
SELECT (SELECT avg(pg_column_size(data))::float8 FROM products_doc),
       (SELECT avg(pg_column_size(r.*))::float8 FROM products_rel AS r),
       (SELECT avg(pg_column_size(t.*))::float8 FROM product_tags AS t)
