-- WAL in a range that the updates of one table did not write (pg_walinspect, PostgreSQL 16+): records of no block of
-- the table, its indexes or its TOAST (another relation's: an autovacuum of the catalog; or none: a checkpoint's, the
-- background's RUNNING_XACTS), except the commits of the transactions that updated it. Their image bytes, their
-- bytes, and the WAL space they took (each record MAXALIGNed).
WITH rels AS (
    SELECT pg_relation_filenode(c.oid) AS node
    FROM pg_class AS c
    WHERE c.oid = %(table)s::regclass
       OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = %(table)s::regclass)
       OR c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = %(table)s::regclass)
       OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = (SELECT reltoastrelid FROM pg_class WHERE oid = %(table)s::regclass))
),
mine AS (
    SELECT DISTINCT b.start_lsn, b.xid
    FROM pg_get_wal_block_info(%(start)s::pg_lsn, %(end)s::pg_lsn, false) AS b
    WHERE b.relfilenode IN (SELECT node FROM rels WHERE node IS NOT NULL)
      AND b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
),
xids AS (SELECT DISTINCT xid FROM mine WHERE xid <> 0)
SELECT coalesce(sum(r.fpi_length), 0)::float8,
       coalesce(sum(r.record_length), 0)::float8,
       coalesce(sum((r.record_length + 7) / 8 * 8), 0)::float8,
       count(*)
FROM pg_get_wal_records_info(%(start)s::pg_lsn, %(end)s::pg_lsn) AS r
WHERE r.start_lsn NOT IN (SELECT start_lsn FROM mine)
  AND NOT (r.resource_manager = 'Transaction' AND r.xid IN (SELECT xid FROM xids))
