-- The relational design's secondary indexes.
CREATE INDEX rel_cat_brand ON products_rel (category, brand);
CREATE INDEX rel_price ON products_rel (price);
CREATE INDEX tags_tag ON product_tags (tag, product_id);
