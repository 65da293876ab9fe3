-- One call of a read_fat_<design>_server.sql loop over the given ids: mean milliseconds per read.
SELECT pg_temp.{fn}(%(ids)s::bigint[]);
