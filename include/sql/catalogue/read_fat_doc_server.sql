-- The read of pgbench/read_fat_doc.sql, once per id, timed inside the server: each read is its own
-- statement (a cached plan, its own executor run and detoast), with no client round trip and no
-- client to schedule. Returns the mean milliseconds per read. Session-scoped (pg_temp).
CREATE OR REPLACE FUNCTION pg_temp.read_fat_doc_server(ids bigint[]) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    v int;
    i bigint;
BEGIN
    t0 := clock_timestamp();
    FOREACH i IN ARRAY ids LOOP
        SELECT (data ->> 'stock')::int INTO v FROM fat_doc WHERE id = i;
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1000.0 / cardinality(ids);
END
$$;
