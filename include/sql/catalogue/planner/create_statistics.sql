-- Expression statistics on the uncast text of the colour key (PostgreSQL 14+), then fresh statistics.
DROP STATISTICS IF EXISTS doc_color_stats;
CREATE STATISTICS doc_color_stats ON (data ->> 'color') FROM products_doc;
ANALYZE products_doc;
