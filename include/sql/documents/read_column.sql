-- The same key from its typed column: the text of the value, as read_doc.sql produces it.
SELECT count({column}), sum(length({column}::text))
FROM {table}
