CREATE INDEX {index} ON products_rel (price);
