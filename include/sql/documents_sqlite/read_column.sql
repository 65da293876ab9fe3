-- The same key from its own column.
SELECT count({column}), sum(length({column})) FROM {table};
