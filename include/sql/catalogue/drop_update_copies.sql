DROP TABLE IF EXISTS products_doc_upd;
DROP TABLE IF EXISTS products_rel_upd;
