-- Copy a table into another (attached, file-backed) database; the target exists already.
INSERT INTO {target} (id, doc) SELECT id, doc FROM {source} ORDER BY id;
