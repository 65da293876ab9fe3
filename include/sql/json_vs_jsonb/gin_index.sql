CREATE INDEX {index} ON {table} USING gin (doc)
