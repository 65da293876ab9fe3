CREATE INDEX {index} ON products_doc USING gin (data jsonb_path_ops);
