-- Materialise the source once (not timed), as the seed's temporary table.
DROP TABLE IF EXISTS catalogue_src;
CREATE TEMP TABLE catalogue_src AS SELECT * FROM catalogue_source(0);
INSERT INTO catalogue_src SELECT * FROM catalogue_source(%(products)s);
