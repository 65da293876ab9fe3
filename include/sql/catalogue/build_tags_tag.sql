CREATE INDEX {index} ON product_tags (tag, product_id);
