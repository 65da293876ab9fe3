-- Tables with their TOAST tables and every index of both: what a read test prewarms (the seed
-- prewarmed every relation with pg_prewarm before its read tests).
WITH t AS (SELECT unnest(%(tables)s::text[])::regclass AS rel)
SELECT c.oid::regclass::text
FROM pg_class AS c
WHERE c.oid IN (SELECT rel FROM t)
   OR c.oid IN (SELECT reltoastrelid FROM pg_class WHERE oid IN (SELECT rel FROM t))
   OR c.oid IN (SELECT indexrelid FROM pg_index
                WHERE indrelid IN (SELECT rel FROM t)
                   OR indrelid IN (SELECT reltoastrelid FROM pg_class WHERE oid IN (SELECT rel FROM t)))
ORDER BY 1
