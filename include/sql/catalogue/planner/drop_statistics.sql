-- Put products_doc back as the other workloads expect it: no expression statistics.
DROP STATISTICS IF EXISTS doc_color_stats;
ANALYZE products_doc;
