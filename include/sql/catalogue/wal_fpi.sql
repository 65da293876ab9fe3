-- Full-page images in a WAL range (pg_walinspect): their bytes and all bytes of the range.
SELECT coalesce(sum(fpi_size), 0)::float8, coalesce(sum(combined_size), 0)::float8
FROM pg_get_wal_stats(%(start)s::pg_lsn, %(end)s::pg_lsn, false)
