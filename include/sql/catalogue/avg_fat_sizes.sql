SELECT (SELECT avg(pg_column_size(data))::float8 FROM fat_doc_base),
       (SELECT avg(pg_column_size(description))::float8 FROM fat_rel_base)
