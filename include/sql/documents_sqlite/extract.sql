-- One key of every document with json_extract (text and JSONB alike): how many have it, and the
-- length of its value (which makes SQLite produce it).
SELECT count(json_extract(doc, :path)), sum(length(json_extract(doc, :path))) FROM {table};
