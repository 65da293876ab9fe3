ANALYZE {table};
