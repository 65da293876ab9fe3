-- The seed's two designs: one jsonb document per product, or typed columns plus a tag table.
-- The foreign key of product_tags is added after the bulk load (add_foreign_key.sql).
DROP TABLE IF EXISTS product_tags;
DROP TABLE IF EXISTS products_rel;
DROP TABLE IF EXISTS products_doc;
CREATE TABLE products_doc (
    id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    sku  text NOT NULL UNIQUE,
    data jsonb NOT NULL
);
CREATE TABLE products_rel (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    sku        text NOT NULL UNIQUE,
    category   text NOT NULL,
    brand      text NOT NULL,
    color      text NOT NULL,
    price      numeric(10,2) NOT NULL,
    stock      integer NOT NULL,
    weight_g   integer NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE TABLE product_tags (
    product_id bigint NOT NULL,
    tag        text   NOT NULL,
    PRIMARY KEY (product_id, tag)
);
