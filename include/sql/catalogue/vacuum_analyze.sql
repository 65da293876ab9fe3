DROP TABLE IF EXISTS catalogue_src;
VACUUM ANALYZE products_doc;
VACUUM ANALYZE products_rel;
VACUUM ANALYZE product_tags;
