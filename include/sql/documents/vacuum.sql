VACUUM (ANALYZE) {table};
