-- Sizes of one relation: heap (main fork), TOAST (with its index), all indexes, total, and the
-- indexes that back a primary key or unique constraint (the seed's "total with PK + unique only").
SELECT pg_relation_size(c.oid),
       coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0),
       pg_indexes_size(c.oid),
       pg_total_relation_size(c.oid),
       coalesce((SELECT sum(pg_relation_size(i.indexrelid)) FROM pg_index AS i
                 WHERE i.indrelid = c.oid AND (i.indisprimary OR i.indisunique)), 0),
       c.reltuples
FROM pg_class AS c WHERE c.oid = %(relation)s::regclass
