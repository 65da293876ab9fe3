-- The document design's secondary indexes: GIN for @>, B-tree expression indexes for ->>.
CREATE INDEX doc_gin_ops ON products_doc USING gin (data jsonb_path_ops);
CREATE INDEX doc_cat_brand ON products_doc ((data ->> 'category'), (data ->> 'brand'));
CREATE INDEX doc_price ON products_doc (((data ->> 'price')::numeric));
