VACUUM ANALYZE fat_doc_base;
VACUUM ANALYZE fat_rel_base;
