-- Seed 004's noise generator: `chunks` md5 digests of (seed, chunk), concatenated. Deterministic.
CREATE OR REPLACE FUNCTION jsonbench_make_noise(seed int, chunks int)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(md5(seed::text || ':' || g::text), '') FROM generate_series(1, chunks) AS g
$$;
