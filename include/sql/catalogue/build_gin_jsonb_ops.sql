-- The default operator class: also serves the key-exists operators ?, ?| and ?&.
CREATE INDEX {index} ON products_doc USING gin (data);
