-- Seed 001's read: one key of every document, no index. On a shape without the key (the integer
-- array) the expression is NULL for every row, but json still parses each whole document to find
-- that out, and jsonb still detoasts each one.
SELECT sum(length(doc->>'first'))
FROM {table}
