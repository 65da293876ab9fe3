-- A fresh copy of a design's table for one update run: seed 004's fillfactor 70 (room for HOT), no
-- autovacuum (nothing frees space or adds WAL during the run), rows in id order, indexes included.
DROP TABLE IF EXISTS {copy};
CREATE TABLE {copy} (LIKE {table} INCLUDING ALL) WITH (fillfactor = 70, autovacuum_enabled = off);
INSERT INTO {copy} SELECT * FROM {table} ORDER BY 1;
VACUUM (ANALYZE) {copy};
