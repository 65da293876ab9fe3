CREATE INDEX {index} ON products_rel (category, brand);
