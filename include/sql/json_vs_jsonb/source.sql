-- The documents of one shape, generated once per workload: row id, compact text, pretty text.
-- The json and jsonb tables are both loaded from this table, so they hold the same text.
DROP TABLE IF EXISTS {source};
CREATE TABLE {source} (
    id      bigint NOT NULL,
    compact text   NOT NULL,
    pretty  text   NOT NULL
) WITH (autovacuum_enabled = off);
INSERT INTO {source} (id, compact, pretty)
SELECT n, jvj_compact(d), jvj_pretty(d)
FROM generate_series(1, %(rows)s) AS n
CROSS JOIN LATERAL {generator}(n) AS d;
VACUUM ANALYZE {source};
