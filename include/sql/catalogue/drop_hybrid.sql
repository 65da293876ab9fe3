DROP TABLE IF EXISTS products_hybrid;
