CREATE INDEX {index} ON products_doc (((data ->> 'price')::numeric));
