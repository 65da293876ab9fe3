CREATE INDEX {index} ON products_doc ((data ->> 'category'), (data ->> 'brand'));
