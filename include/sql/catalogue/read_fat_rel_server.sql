-- The read of pgbench/read_fat_rel.sql, once per id, timed inside the server: each read is its own
-- statement (a cached plan, its own executor run), with no client round trip and no client to
-- schedule. Returns the mean milliseconds per read. Session-scoped (pg_temp).
CREATE OR REPLACE FUNCTION pg_temp.read_fat_rel_server(ids bigint[]) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    v int;
    i bigint;
BEGIN
    t0 := clock_timestamp();
    FOREACH i IN ARRAY ids LOOP
        SELECT stock INTO v FROM fat_rel WHERE id = i;
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1000.0 / cardinality(ids);
END
$$;
