SELECT count(*) FROM {table};
